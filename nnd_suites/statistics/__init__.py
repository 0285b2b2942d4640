"""Statistics over test outcomes: the outcome rule, rates with Wilson intervals, paired counts
(McNemar), the bootstrap, and the one order for tables of subsets."""
