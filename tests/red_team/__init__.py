"""Strategies found by outside red teams (fresh helpers with no access to our design notes).

Each module is kept as its author wrote it (reading only what an agent sees); the suite
(`tests/test_red_team.py`) holds each to the soundness bar after the fix it prompted.
"""
