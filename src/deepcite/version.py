"""The package version, in a module of its own so that code inside the package reads it without importing
the facade (``deepcite/__init__.py`` names the whole API and sits above every layer)."""

__version__ = "0.1.0"
