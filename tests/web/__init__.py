"""Web search as an evidence source (stand-in web)."""
