"""The store's return rule for one order line at the world's clock (`return_check_eligibility`,
the returns generator and verifier all apply this one check)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from ecom_bench.domains.orders.book import returns_of
from ecom_bench.domains.orders.records import (
    DEFAULT_RETURN_WINDOW_DAYS,
    Order,
    OrderLine,
    OrderStatus,
    return_window_days,
)
from ecom_bench.world.state import World


@dataclass(frozen=True)
class Eligibility:
    eligible: bool
    reason: str  # why (readable, for the tool result and the verifier's explanation)
    window_days: int | None
    days_since_delivery: int | None
    last_day: date | None

    @property
    def code(self) -> str:
        return self.reason.split(":", 1)[0]


def check_eligibility(world: World, order: Order, line: OrderLine) -> Eligibility:
    """The store's return rule (`domains/orders/records.py`) for one order line at `world.now`."""
    product = world.product(line.product_id)
    window = return_window_days(product) if product is not None else DEFAULT_RETURN_WINDOW_DAYS
    title = product.title if product else line.product_id
    if order.status is not OrderStatus.DELIVERED or order.delivered_at is None:
        what = "was cancelled, so there is nothing to return" if order.status is OrderStatus.CANCELLED else \
            f"has not been delivered yet (status: {order.status.value}); items can be returned once delivered"
        return Eligibility(False, f"not_delivered: order {order.order_id} {what}.", window, None, None)
    days = (world.now.date() - order.delivered_at.date()).days
    if window is None:
        assert product is not None  # only a catalogue product's category makes it final sale
        return Eligibility(False, f"final_sale: {title} is a final-sale item ({product.top_category}) "
                           "and cannot be returned.", None, days, None)
    last_day = order.delivered_at.date() + timedelta(days=window)
    previous = returns_of(world, line.line_id)
    if previous:
        return Eligibility(False, f"already_returned: line {line.line_id} already has a {previous[0].kind} "
                           f"({previous[0].return_id}).", window, days, last_day)
    if days > window:
        return Eligibility(False, f"window_closed: the {window}-day return window ended on {last_day.isoformat()} "
                           f"(delivered {order.delivered_at.date().isoformat()}, {days} days ago).",
                           window, days, last_day)
    return Eligibility(True, f"eligible: delivered {days} day(s) ago, within the {window}-day window "
                       f"(last day {last_day.isoformat()}).", window, days, last_day)


__all__ = ["Eligibility", "check_eligibility"]
