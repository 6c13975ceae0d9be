"""E_CART verifier: unit F1 over (product, variant, quantity); r_task = 2·F1 − 1."""

from __future__ import annotations

from ecom_bench.envs.base import SubTask, Verdict
from ecom_bench.envs.cart.goal import CartGoal, unit_f1
from ecom_bench.world import World


def verify_cart(task: SubTask, world: World) -> Verdict:
    goal: CartGoal = task.goal
    want, have = goal.goal_units(), goal.cart_units(world.cart)
    f1, matched = unit_f1(want, have)
    r_task = 2 * f1 - 1
    problems: list[str] = []
    for t in goal.targets:
        lines = [ln for ln in world.cart if ln.product_id == t.product_id]
        spec = f"{t.variant_attribute}={t.variant_value} " if t.variant_required else ""
        if not lines:
            problems.append(f"missing {t.short_name} ({spec}x{t.quantity})")
            continue
        for ln in lines:
            if goal.line_key(ln) != t.key:
                p = world.product(ln.product_id)
                v = p.variant(ln.variant_id) if p and ln.variant_id else None
                problems.append(
                    f"wrong variant of {t.short_name}: {v.value if v else ln.variant_id} x{ln.quantity} "
                    f"(wanted {t.variant_value} x{t.quantity})"
                )
        n = have.get(t.key, 0)
        if 0 < n != t.quantity:
            problems.append(f"{t.short_name} quantity {n} (wanted {t.quantity})")
    for ln in world.cart:
        if goal.target(ln.product_id) is None:
            p = world.product(ln.product_id)
            problems.append(f"extra item {p.title if p else ln.product_id} x{ln.quantity}")
    status = "Cart correct." if f1 == 1.0 else "Cart wrong: " + "; ".join(problems) + "."
    if not world.checked_out:
        status += " The order was never placed (no checkout)."
    explanation = (
        f"{status} Unit F1 {f1:.2f} ({matched} of {sum(want.values())} required units matched, "
        f"{sum(have.values())} in cart) -> task {r_task:+.2f}."
    )
    return Verdict(
        task=r_task,
        success=f1 == 1.0 and world.checked_out,
        explanation=explanation,
        details={"f1": f1, "matched_units": matched, "required_units": sum(want.values()),
                 "cart_units": sum(have.values()), "problems": problems},
    )
