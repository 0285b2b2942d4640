"""Infrastructure, the lowest layer: atomic writes and folder swaps, locks, the cache root,
bounded reading of data files, HTTP, Markdown formatting and the output-folder guard. It knows
nothing of suites, pairs or models."""
