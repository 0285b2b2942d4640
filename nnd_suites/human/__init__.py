"""Human judgments beyond single tests: each system's human score (``systems``) and the raters'
agreement with each other, the ceiling a model's agreement is read against."""
