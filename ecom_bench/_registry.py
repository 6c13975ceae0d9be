"""Inspect registry: imported by Inspect on every command, so it only imports."""
