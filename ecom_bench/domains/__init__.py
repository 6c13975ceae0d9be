"""The store's domains beyond the shopping core: each keeps its data model, its generator, its
state in a `World` and its tools together (`orders/`, `policy/`).

The shopping core every env shares (catalogue view, cart, stock, the ids shown and acted on, the
final answers, the clock) stays in `ecom_bench.world`; a domain keeps its own per-episode state
in a typed object reached through `World.state(...)`, so `World` knows no domain.
"""
