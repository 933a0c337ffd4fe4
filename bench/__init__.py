"""Benchmarks: scripts that print figures (python -m bench.NAME). Never timed tests."""
