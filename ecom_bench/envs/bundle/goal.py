"""E_BUNDLE's hidden goal and the one rule that judges a bundle.

`assess` is used by both the verifier (the submitted list) and the user (a list the
agent proposes in a message), so the user never approves a list the verifier would
fault, nor complains about one it accepts.

Counting rule (docs/design.md: F1 over categories, made precise):
* a submitted product *covers* its leaf category when it is in stock at the end,
  meets the bundle-wide constraints (e.g. "rated 4.3 stars or better", "arrives within
  3 days"), and the category is required and not already covered by an earlier
  product in the list;
* precision = covered / |submitted|, recall = covered / n. So a second product in a
  covered category (duplicate), a product in a category the project does not need
  (extra), an out-of-stock product and one that breaks a constraint each lower
  precision; a missing category lowers recall;
* total = the summed price of the submitted products that are in stock (what the
  shopper would pay); over-budget fraction = max(0, total/budget − 1), 0 without a budget;
* r_task = clip(2·F1 − 1 − over, −1, 1).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ecom_bench.catalog import Catalog, Product
from ecom_bench.catalog.taxonomy import LEAF_BY_NAME
from ecom_bench.world import World

#: Words shoppers write in capitals inside product nouns.
_ACRONYMS = frozenset({"USB", "LED", "RC"})
#: Nouns that take "some" rather than "a".
_MASS_NOUNS = frozenset({"Dry Dog Food", "Clumping Cat Litter", "Ground Coffee", "Extra Virgin Olive Oil",
                         "Durum Wheat Pasta", "Granola", "Eau de Parfum", "Sunscreen", "Shampoo", "Body Wash",
                         "Face Moisturizer"})


def item_name(category: str) -> str:
    """What a shopper calls a category's product: "sleeping bag", "USB hub", "wireless earbuds"."""
    leaf = LEAF_BY_NAME.get(category)
    noun = leaf.noun if leaf else category
    return " ".join(w if w in _ACRONYMS else w.lower() for w in noun.split())


def with_article(category: str) -> str:
    """ "a sleeping bag", "an air fryer", "some protein bars"."""
    leaf = LEAF_BY_NAME.get(category)
    noun = leaf.noun if leaf else category
    name = item_name(category)
    if noun in _MASS_NOUNS or noun.endswith("s"):
        return f"some {name}"
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


@dataclass(frozen=True)
class BundleItem:
    """One required category and a feasible in-stock choice for it (the oracle's)."""

    category: str
    product_id: str
    price: float

    @property
    def slot(self) -> str:
        return f"category:{self.category}"


BUDGET_SLOT = "budget"


@dataclass(frozen=True)
class BundleConstraint:
    """A requirement on every product of the bundle: `kind` is a catalog_search filter name."""

    kind: str  # "min_rating" | "max_ship_days"
    value: float

    @property
    def slot(self) -> str:
        return f"constraint:{self.kind}"

    def satisfied(self, p: Product) -> bool:
        if self.kind == "min_rating":
            return p.rating >= self.value
        if self.kind == "max_ship_days":
            return p.ship_days <= self.value
        raise ValueError(f"unknown bundle constraint {self.kind!r}")

    def mask(self, catalog: Catalog, rows: np.ndarray) -> np.ndarray:
        """`satisfied` for each of `rows`, on the catalogue's columns."""
        if self.kind == "min_rating":
            return catalog.ratings[rows] >= self.value
        if self.kind == "max_ship_days":
            return catalog.ship_days[rows] <= self.value
        raise ValueError(f"unknown bundle constraint {self.kind!r}")

    def describe(self) -> str:
        """The requirement in the shopper's words."""
        if self.kind == "min_rating":
            return f"only products rated {self.value:g} stars or higher"
        return f"everything has to arrive within {self.value:g} days"

    def violation(self, p: Product) -> str:
        """Why `p` breaks it, in the shopper's words."""
        if self.kind == "min_rating":
            return f"is rated {p.rating:g} stars, but I want {self.value:g} stars or higher"
        return f"ships in {p.ship_days} days, but I need everything within {self.value:g} days"


@dataclass(frozen=True)
class BundleGoal:
    projects: tuple[str, ...]  # the project names, primary first
    items: tuple[BundleItem, ...]  # one per required category, in the shopper's order
    budget: float | None  # whole dollars, or None when the shopper has none
    constraints: tuple[BundleConstraint, ...] = ()
    stock_out_ids: tuple[str, ...] = ()  # products scheduled to sell out once the agent is shown them

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(i.category for i in self.items)

    def item(self, category: str) -> BundleItem | None:
        return next((i for i in self.items if i.category == category), None)

    def to_dict(self) -> dict[str, Any]:
        return {"projects": list(self.projects), "items": [asdict(i) for i in self.items],
                "budget": self.budget, "required_categories": list(self.required),
                "constraints": [asdict(c) for c in self.constraints],
                "stock_out_ids": list(self.stock_out_ids)}


@dataclass
class Assessment:
    """How a list of product ids measures up against the goal (see the module docstring)."""

    submitted: list[str]
    covered: list[str] = field(default_factory=list)  # required categories covered, in list order
    missing: list[str] = field(default_factory=list)  # required categories not covered
    extra: list[tuple[str, str]] = field(default_factory=list)  # (product id, its category) not required
    duplicates: list[tuple[str, str]] = field(default_factory=list)  # (product id, category already covered)
    out_of_stock: list[tuple[str, str]] = field(default_factory=list)  # (product id, category)
    violations: list[tuple[str, BundleConstraint]] = field(default_factory=list)  # (product id, broken rule)
    unknown: list[str] = field(default_factory=list)  # ids that are no catalogue product
    total: float = 0.0
    budget: float | None = None

    @property
    def precision(self) -> float:
        return len(self.covered) / len(self.submitted) if self.submitted else 0.0

    @property
    def recall(self) -> float:
        n = len(self.covered) + len(self.missing)
        return len(self.covered) / n if n else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0

    @property
    def over_budget(self) -> float:
        """max(0, total/budget − 1); 0 without a budget."""
        if self.budget is None or self.budget <= 0:
            return 0.0
        return max(0.0, self.total / self.budget - 1.0)

    @property
    def task(self) -> float:
        return max(-1.0, min(1.0, 2 * self.f1 - 1 - self.over_budget))

    @property
    def perfect(self) -> bool:
        """Every required category covered, nothing else, within budget (r_task = 1)."""
        return self.f1 == 1.0 and self.over_budget == 0.0


def assess(goal: BundleGoal, product_ids: list[str], world: World) -> Assessment:
    out = Assessment(submitted=list(product_ids), budget=goal.budget)
    required = set(goal.required)
    for pid in product_ids:
        p: Product | None = world.product(pid)
        if p is None:
            out.unknown.append(pid)
            continue
        cat = p.leaf_category
        if not world.in_stock(p):
            out.out_of_stock.append((pid, cat))
            continue
        out.total += p.price
        broken = next((c for c in goal.constraints if not c.satisfied(p)), None)
        if broken is not None:
            out.violations.append((pid, broken))
        elif cat not in required:
            out.extra.append((pid, cat))
        elif cat in out.covered:
            out.duplicates.append((pid, cat))
        else:
            out.covered.append(cat)
    out.total = round(out.total, 2)
    out.missing = [c for c in goal.required if c not in out.covered]
    return out
