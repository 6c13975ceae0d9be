"""Inspect registry: imported by Inspect on every command, so it only imports.

Importing `ecom_bench.tasks` registers every built-in environment's task and the collections.
"""

# ruff: noqa: F401
from inspect_ai.model import modelapi

import ecom_bench.tasks


@modelapi(name="ecom")
def ecom() -> type:
    """Scripted agents: ecom/oracle, ecom/heuristic, ecom/random (and the adversarial policies)."""
    from ecom_bench.providers.scripted import ScriptedModelAPI

    return ScriptedModelAPI


@modelapi(name="ecom-user")
def ecom_user() -> type:
    """Scripted customer models for `--model-role user=`: ecom-user/faithful, ecom-user/leaky, ..."""
    from ecom_bench.providers.customers import ScriptedCustomerAPI

    return ScriptedCustomerAPI
