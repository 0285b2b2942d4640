"""Summaries by GPT-3, T0 and BRIO ranked best/worst by 3 annotators (Goyal et al., 2022)."""
