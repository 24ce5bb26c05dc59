"""Evaluation commands' logic: retrieval quality on BEIR-format benchmarks."""
