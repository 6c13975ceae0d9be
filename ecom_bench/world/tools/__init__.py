"""The tool groups by domain; an environment names the ones it needs (`Environment.toolkits`)."""
