"""Order, tracking and return tools (E_TRACK, E_RETURN), over the world's `OrderBook`.

The store's rules (return windows, fees: `records.py`; the return check: `eligibility.py`) are
the ones the generators and verifiers apply, so the tools enforce exactly what the verifiers score.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, TypeVar

from ecom_bench.catalog.naming import short_name, short_name_at
from ecom_bench.domains.orders.book import OrderBook, find_order, next_return_id, returns_of
from ecom_bench.domains.orders.eligibility import check_eligibility
from ecom_bench.domains.orders.records import (
    REASON_DESCRIPTIONS,
    RETURN_FEES,
    SELLER_FAULT_REASONS,
    Order,
    OrderLine,
    OrderStatus,
    ReturnMethod,
    ReturnReason,
    ReturnRecord,
    line_leaf,
    line_row,
    return_fee,
)
from ecom_bench.world._tooling import ToolBase, ToolError, _json, tool_method

RETURN_OUTCOMES = ("return_started", "exchange_started", "not_eligible")


def _norm_id(value: str | None) -> str | None:
    """Order and line ids are upper case ("ORD-123456-L1"); accept them in any case."""
    return value.strip().upper() if value else value


_E = TypeVar("_E", bound=Enum)


def _choice(value: str, enum_cls: type[_E], what: str) -> _E:
    key = value.strip().lower().replace("-", "_").replace(" ", "_")
    try:
        return enum_cls(key)
    except ValueError:
        options = ", ".join(e.value for e in enum_cls)
        raise ToolError(f"Unknown {what} {value!r}; use one of: {options}.") from None


class OrderTools(ToolBase):
    """Order, tracking and return tools (E_TRACK, E_RETURN)."""

    # ---------------------------------------------------------- helpers
    def _order(self, order_id: str) -> Order:
        order = find_order(self.world, _norm_id(order_id) or "")
        if order is None:
            raise ToolError(f"No order with id {order_id!r} on this account. Use order_list to see the "
                            "customer's orders.")
        return order

    def _line(self, order: Order, line_id: str) -> OrderLine:
        line = order.line(_norm_id(line_id) or "")
        if line is None:
            line_ids = [ln.line_id for ln in order.lines]
            raise self._refusal(f"Line {line_id!r} is not part of order {order.order_id}; its lines are: "
                                f"{', '.join(line_ids)}. Use order_get to see them.", order.order_id, *line_ids)
        return line

    def _item_label(self, line: OrderLine) -> str:
        """ "Short name (variant value)", read from the catalogue's columns: making a Product for
        each of a listing's ~100 lines was most of an order_list call."""
        catalog = self.world.catalog
        row = line_row(catalog, line)
        if row is None:
            return line.product_id
        name = short_name_at(catalog, row)
        value = catalog.variant_value_at(row, line.variant_id) if line.variant_id else None
        return f"{name} ({value})" if value is not None else name

    def _return_state(self, line: OrderLine) -> str | None:
        records = returns_of(self.world, line.line_id)
        if not records:
            return None
        r = records[-1]
        return f"{r.kind} {r.return_id} ({r.reason.value}, {r.method.value})"

    # ------------------------------------------------------------ reads
    @tool_method("read")
    def order_list(self) -> str:
        """List all of this customer's orders, newest first: id, date placed, status, note, items and each item's category."""
        orders = sorted(self.world.state(OrderBook).orders, key=lambda o: o.placed_at, reverse=True)
        out = []
        for o in orders:
            self._see(o.order_id)
            row: dict[str, Any] = {"order_id": o.order_id, "placed_on": o.placed_at.date().isoformat(),
                                   "status": o.status.value}
            if o.note:
                row["note"] = o.note
            row["items"] = [f"{self._item_label(ln)} x{ln.quantity}" for ln in o.lines]
            # each item's kind: a title need not say what the product is ("Hydro Flask Wide Mouth
            # Bottle" is a water bottle), and the customer names their order by its kind
            row["categories"] = [line_leaf(self.world.catalog, ln) or "" for ln in o.lines]
            out.append(row)
        return _json({"orders": out, "count": len(out)})

    @tool_method("read")
    def order_get(self, order_id: str) -> str:
        """Get one order in full: status, dates, carrier and tracking, and its lines (with line ids and return state).

        Args:
            order_id: The order's id, e.g. "ORD-123456" (from the customer or order_list).
        """
        o = self._order(order_id)
        self._see(o.order_id)
        lines = []
        for ln in o.lines:
            p = self.world.product(ln.product_id)
            v = p.variant(ln.variant_id) if p and ln.variant_id else None
            self._see(ln.line_id, ln.product_id, *([ln.variant_id] if ln.variant_id else []))
            line: dict[str, Any] = {"line_id": ln.line_id, "product_id": ln.product_id,
                                    "title": p.title if p else ln.product_id,
                                    "category": p.category_path if p else None, "variant_id": ln.variant_id}
            if v is not None:
                line[v.attribute] = v.value
            line.update(quantity=ln.quantity, unit_price=ln.unit_price, return_state=self._return_state(ln))
            lines.append(line)
        return _json({
            "order_id": o.order_id, "status": o.status.value, "placed_at": o.placed_at.isoformat(timespec="minutes"),
            "eta": o.eta.isoformat() if o.eta else None,
            "delivered_at": o.delivered_at.isoformat(timespec="minutes") if o.delivered_at else None,
            "carrier": o.carrier, "tracking_number": o.tracking_number, "note": o.note, "lines": lines,
            "total": o.total,
        })

    @tool_method("read")
    def datetime_now(self) -> str:
        """The store's current date and time (use it to turn "3 days ago" into a date)."""
        now = self.world.now
        return _json({"now": now.isoformat(timespec="minutes"), "date": now.date().isoformat(),
                      "weekday": now.strftime("%A")})

    @tool_method("read")
    def return_check_eligibility(self, order_id: str, line_id: str) -> str:
        """Check whether an order line can be returned or exchanged now, and what each return method costs.

        Args:
            order_id: The order's id.
            line_id: The line's id within that order (from order_get).
        """
        o = self._order(order_id)
        ln = self._line(o, line_id)
        self._see(o.order_id, ln.line_id)
        e = check_eligibility(self.world, o, ln)
        return _json({
            "order_id": o.order_id, "line_id": ln.line_id, "eligible": e.eligible, "reason": e.reason,
            "return_window_days": e.window_days, "days_since_delivery": e.days_since_delivery,
            "last_return_day": e.last_day.isoformat() if e.last_day else None,
            "fees": {m.value: fee for m, fee in RETURN_FEES.items()},
            "fees_apply_to_reasons": sorted(r.value for r in ReturnReason if r not in SELLER_FAULT_REASONS),
        })

    # ----------------------------------------------------------- writes
    def _eligible_line(self, order_id: str, line_id: str) -> tuple[Order, OrderLine]:
        o = self._order(order_id)
        ln = self._line(o, line_id)
        e = check_eligibility(self.world, o, ln)
        if not e.eligible:
            raise self._refusal(f"Line {ln.line_id} cannot be returned or exchanged: {e.reason.split(': ', 1)[1]}",
                                o.order_id, ln.line_id)
        return o, ln

    def _record(self, o: Order, ln: OrderLine, kind: str, reason: ReturnReason, method: ReturnMethod,
                new_variant_id: str | None = None) -> ReturnRecord:
        fee = return_fee(reason, method)
        refund = 0.0 if kind == "exchange" else round(max(0.0, ln.unit_price * ln.quantity - fee), 2)
        record = ReturnRecord(next_return_id(self.world), o.order_id, ln.line_id, ln.product_id, ln.variant_id,
                              ln.quantity, kind, reason, method, fee, refund, self.world.now, new_variant_id,
                              intent=self.world.intent)
        self.world.state(OrderBook).returns.append(record)
        self._see(record.return_id)
        return record

    @tool_method("write")
    def return_initiate(self, order_id: str, line_id: str, reason: str, method: str) -> str:
        """Start a return (for a refund) of a delivered order line. Fails with the reason if it is not eligible.

        Args:
            order_id: The order's id.
            line_id: The line to return (the whole line's quantity is returned).
            reason: Why it is returned: defective (does not work), damaged (arrived damaged), wrong_item (a
                different item was delivered), not_as_described, does_not_fit, or changed_mind.
            method: How it goes back: pickup (a courier collects it), drop_off (at a drop-off point) or mail
                (prepaid label). Fees apply only to does_not_fit and changed_mind.
        """
        self._reference(_norm_id(order_id), _norm_id(line_id))
        r, m = _choice(reason, ReturnReason, "return reason"), _choice(method, ReturnMethod, "return method")
        o, ln = self._eligible_line(order_id, line_id)
        record = self._record(o, ln, "return", r, m)
        return _json({"return_started": record.to_dict() | {"item": self._item_label(ln),
                                                            "reason_meaning": REASON_DESCRIPTIONS[r]}})

    @tool_method("write")
    def return_exchange(self, order_id: str, line_id: str, new_variant_id: str, reason: str, method: str) -> str:
        """Exchange a delivered order line for another variant (size, colour, ...) of the same product.

        Args:
            order_id: The order's id.
            line_id: The line to exchange.
            new_variant_id: The variant the customer wants instead (see catalog_get_variants); it must be in stock.
            reason: Why: defective, damaged, wrong_item, not_as_described, does_not_fit, or changed_mind.
            method: How the original goes back: pickup, drop_off or mail.
        """
        self._reference(_norm_id(order_id), _norm_id(line_id), new_variant_id)
        r, m = _choice(reason, ReturnReason, "return reason"), _choice(method, ReturnMethod, "return method")
        o, ln = self._eligible_line(order_id, line_id)
        p = self._product(ln.product_id)
        v = p.variant(new_variant_id.strip())
        if v is None:
            variant_ids = [x.id for x in p.variants]
            raise self._refusal(f"Variant {new_variant_id!r} is not a variant of {p.id} ({short_name(p)}); "
                                f"its variants are: {', '.join(variant_ids) or 'none'}.", p.id, *variant_ids)
        if v.id == ln.variant_id:
            raise self._refusal(f"{v.id} is the variant already ordered; choose a different one to exchange for.",
                                p.id, v.id)
        if self.world.stock_of(p, v) < ln.quantity:
            raise self._refusal(f"{v.id} ({v.value}) does not have {ln.quantity} unit(s) in stock.", p.id, v.id)
        record = self._record(o, ln, "exchange", r, m, v.id)
        return _json({"exchange_started": record.to_dict() | {"item": self._item_label(ln),
                                                              "new_variant": {v.attribute: v.value}}})

    # ------------------------------------------------------------ finals
    @tool_method("final")
    def report_order_status(self, order_id: str, status: str) -> str:
        """Your final answer to an order-tracking request: the order the customer means and its current status.

        Args:
            order_id: The order's id.
            status: Its current status: confirmed, shipped, in_transit, delivered or cancelled.
        """
        self._reference(_norm_id(order_id))
        o = self._order(order_id)
        s = _choice(status, OrderStatus, "order status")
        self._answer("report_order_status", {"order_id": o.order_id, "status": s.value})
        return _json({"recorded": {"order_id": o.order_id, "status": s.value}})

    @tool_method("final")
    def report_return_outcome(self, order_id: str, line_id: str, outcome: str,
                              replacement_product_id: str | None = None) -> str:
        """Your final answer to a return or exchange request: the order line concerned and what was done.

        Args:
            order_id: The order's id.
            line_id: The order line the customer wanted to return or exchange.
            outcome: return_started, exchange_started, or not_eligible (the line cannot be returned; nothing
                was started and you told the customer why).
            replacement_product_id: The product you recommend as a replacement, if the customer asked for one;
                omit otherwise.
        """
        self._reference(_norm_id(order_id), _norm_id(line_id), replacement_product_id)
        o = self._order(order_id)
        ln = self._line(o, line_id)
        key = outcome.strip().lower()
        if key not in RETURN_OUTCOMES:
            raise ToolError(f"Unknown outcome {outcome!r}; use one of: {', '.join(RETURN_OUTCOMES)}.")
        replacement = None
        if replacement_product_id:
            replacement = self._product(replacement_product_id).id
        self._answer("report_return_outcome", {"order_id": o.order_id, "line_id": ln.line_id, "outcome": key,
                                               "replacement_product_id": replacement})
        return _json({"recorded": {"order_id": o.order_id, "line_id": ln.line_id, "outcome": key,
                                   "replacement_product_id": replacement}})
