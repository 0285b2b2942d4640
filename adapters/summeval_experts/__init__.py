"""SummEval expert ratings as republished by THumB, joined with the SummEval articles."""
