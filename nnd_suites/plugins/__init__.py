"""Plugins: the one registry every kind of plugin uses (built-in decorators and Python entry
points), declared plugin parameters, and the harness that checks every plugin folder."""
