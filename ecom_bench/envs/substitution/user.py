"""E_SUB's template shopper: names the out-of-stock original, asks for a compatible substitute.

Everything else (questions, omission, feedback, patience) is `users.constraints.ConstraintUser`;
this adds the compatibility requirement as one more withholdable constraint and its
own gate problems: proposing the original itself, or an incompatible product (whose
complaint names the feature, and its value only once the customer has said it).
"""

from __future__ import annotations

import random
from functools import cached_property

from ecom_bench.catalog import Product
from ecom_bench.catalog.naming import agreement, catalogue_name, product_noun
from ecom_bench.envs._ranking import Constraint, in_stock_for
from ecom_bench.envs.substitution.goal import SubstitutionGoal
from ecom_bench.users import render
from ecom_bench.users.constraints import ConstraintUser, fmt
from ecom_bench.world import World


class SubstitutionUser(ConstraintUser):
    goal: SubstitutionGoal

    @property
    def _original(self) -> Product:
        p0 = self.catalog.get(self.goal.original_id)
        assert p0 is not None
        return p0

    @cached_property
    def original_name(self) -> str:
        """The sold-out original's name, told apart from the look-alikes of its kind."""
        return catalogue_name(self.catalog, self._original)

    def stated_constraints(self) -> tuple[Constraint, ...]:
        return (self.goal.compatibility, *self.goal.requirements)

    def _intro(self, rng: random.Random) -> str:
        return render(rng.choice((
            "I wanted to buy the {name} again, but {its} out of stock. Can you suggest a substitute?",
            "My usual {name} {is} out of stock. I need something similar instead.",
        )), name=self.original_name, **agreement(self.original_name, product_noun(self._original)))

    def _protected(self) -> set[str]:
        return {self.original_name}

    def sentence(self, c: Constraint, rng: random.Random) -> str:
        if c == self.goal.compatibility:
            return render("The {label} must be {value}, like my old one.", label=c.label, value=fmt(c.value))
        return super().sentence(c, rng)

    def _gate_problem(self, p: Product, name: str) -> str:
        if p.id == self.goal.original_id:
            return render("The {name} {is} what's out of stock; I need a substitute.", name=self.original_name,
                          **agreement(self.original_name, product_noun(p)))
        c = self.goal.compatibility
        if c.satisfaction(p) == 1.0:
            return ""
        if self.told(c.slot):
            return render("The {name} {isnt} available with that {label}; the {label} must be {value}, "
                          "like my old one.", name=name, label=c.label, value=fmt(c.value),
                          **agreement(name, product_noun(p)))
        return render("The {name} won't work with what I had; the {label} has to match my old one.",
                      name=name, label=c.label)

    def in_stock(self, world: World, p: Product) -> bool:
        return in_stock_for(self.goal, world, p)
