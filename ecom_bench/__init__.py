"""ecom-bench: verifiable, adaptive e-commerce customer-service environments.

The core (catalogue, world, difficulty, envs, users, rewards, episode) imports no
Inspect; `ecom_bench.tasks`, `ecom_bench.tools`, `ecom_bench.scorers` and
`ecom_bench.providers` are the Inspect front over it.
"""

__version__ = "0.1.0"
