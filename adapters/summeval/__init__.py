"""SummEval human ratings (Yale-LILY/SummEval)."""
