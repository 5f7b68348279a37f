return { { type = "delete" }, 42 }
