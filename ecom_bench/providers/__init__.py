"""Inspect model providers: the scripted agents as `--model ecom/<policy>`."""
