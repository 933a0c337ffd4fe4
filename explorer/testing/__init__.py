"""Tools for testing the product against real HTTP model servers (used by the tests and the benchmarks)."""
