"""Browser tests of the web UI."""
