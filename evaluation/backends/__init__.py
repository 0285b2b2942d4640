"""Built-in backends; each is a lazy entry of ``BACKENDS`` in ``evaluation/backend.py``."""
