"""Inspect registry: imported by Inspect on every command, so it only imports."""

# ruff: noqa: F401
from inspect_ai.model import modelapi

from ecom_bench.tasks import bundle, cart, collection, discovery, journey, policy, returns, substitution, tracking


@modelapi(name="ecom")
def ecom() -> type:
    """Scripted agents: ecom/oracle, ecom/heuristic, ecom/random (and the adversarial policies)."""
    from ecom_bench.providers.scripted import ScriptedModelAPI

    return ScriptedModelAPI
