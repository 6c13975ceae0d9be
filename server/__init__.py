"""OpenEnv's layout for a Space: `server/app.py` is the app and its entry point."""
