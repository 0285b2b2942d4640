"""Records: what flows between the steps, as typed values with no behaviour beyond checking
themselves: candidates and groups, judgments, votes, pooled ratings, text equivalence, NND tests
(pairs), context templates and conversations."""
