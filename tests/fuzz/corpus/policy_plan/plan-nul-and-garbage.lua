return { actions = { { type = "drain", node = "w-1\0evil", reason = "r" }, nil,
  { type = "label", node = "w-1", key = "luascale.io/group", value = "other", reason = "r", extra = true } },
  notes = { ["w-1\0x"] = { candidate = true, why = "\0" } } }
