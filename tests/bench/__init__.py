"""Benchmarks (not run by pytest): ``python -m tests.bench [name ...]``."""
