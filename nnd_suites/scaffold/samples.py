"""The sample texts every scaffolded adapter's fixture is written from (two contexts, their
candidates), shared by the stub writer and the numeric and pairwise stubs, and where the
harness finds a fixture and its expected statistics."""

FIXTURE = "sample.jsonl"
FIXTURES = "fixtures"
EXPECTED_STATS = "expected_stats.json"
CONTEXTS = ("The Eiffel Tower, completed in 1889, stands in Paris.", "Water boils at 100 degrees.")
TEXTS = (
    ("It is in Paris.", "It is in Rome.", "Paris Eiffel 1889 tower is.", "Paris, since 1889."),
    ("At 100 degrees.", "At 50 degrees.", "It freezes at 100 degrees."),
)
