"""Declarative sources: an annotation file that is one table, read by a ``source.yaml`` with no
Python (see CONTRIBUTING.md, "Declare a source")."""
