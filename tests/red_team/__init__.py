"""Strategies found by outside red teams (fresh helpers with no access to our design notes).

Each module is kept as its author wrote it (reading only what an agent sees); the suite
(`tests/test_red_team.py`) holds each to the soundness bar after the fix it prompted.
`exploits.py` is the exception: the first red team's strategy classes, each rebuilt as the
strongest version we could make of it, played by `tests/test_exploits.py`,
`tests/test_exploit_soundness.py` and `benchmarks/exploits.py`. None of it ships in the
package: it is test and benchmark code.
"""
