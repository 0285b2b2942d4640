"""Built-in backends; every concrete Backend subclass in this package is registered."""
