"""deepcite: answers hard questions from a corpus you own, every sentence tied to a passage you can check."""

__version__ = "0.1.0"
