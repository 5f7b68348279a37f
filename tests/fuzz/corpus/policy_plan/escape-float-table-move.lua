table.move({}, 1, 1e12, 1, {})
