"""The chaos soak of issue 43 (``python -m tests.soak``, ``make soak``): see tests/soak/soak.py."""
