return { actions = { { type = "scale_up", group = "workers", count = 1, reason = "x" },
  { type = "cordon", node = "w-1", reason = "y" } }, notes = {}, messages = { "hi" } }
