"""Infrastructure, the lowest layer: atomic writes and folder swaps, locks, the cache root,
bounded reading of data files, HTTP, Markdown formatting, the output-folder guard and the strict
pydantic base model. It knows nothing of suites, pairs or models."""
