"""FRANK factuality annotations (artidoro/frank)."""
