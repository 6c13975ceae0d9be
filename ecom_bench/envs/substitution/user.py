"""E_SUB's template shopper: names the out-of-stock original, asks for a compatible substitute.

Everything else (questions, omission, feedback, patience) is E_PD's `ConstraintUser`;
this adds the compatibility requirement as one more withholdable constraint and its
own gate problems: proposing the original itself, or an incompatible product (whose
complaint names the feature, and its value only once the customer has said it).
"""

from __future__ import annotations

import random

from ecom_bench.catalog import Product
from ecom_bench.catalog.naming import short_name
from ecom_bench.envs._ranking import Constraint
from ecom_bench.envs.discovery.user import ConstraintUser, fmt
from ecom_bench.envs.substitution.goal import SubstitutionGoal
from ecom_bench.users import render


class SubstitutionUser(ConstraintUser):
    goal: SubstitutionGoal

    @property
    def original_name(self) -> str:
        p0 = self.catalog.get(self.goal.original_id)
        assert p0 is not None
        return short_name(p0)

    def stated_constraints(self) -> tuple[Constraint, ...]:
        return (self.goal.compatibility, *self.goal.requirements)

    def _intro(self, rng: random.Random) -> str:
        return render(rng.choice((
            "I wanted to buy the {name} again, but it's out of stock. Can you suggest a substitute?",
            "My usual {name} is out of stock. I need something similar instead.",
        )), name=self.original_name)

    def _protected(self) -> set[str]:
        return {self.original_name}

    def sentence(self, c: Constraint, rng: random.Random) -> str:
        if c == self.goal.compatibility:
            return render("The {label} must be {value}, like my old one.", label=c.label, value=fmt(c.value))
        return super().sentence(c, rng)

    def _gate_problem(self, p: Product, name: str) -> str:
        if p.id == self.goal.original_id:
            return render("The {name} is the one that's out of stock; I need a substitute.", name=name)
        c = self.goal.compatibility
        if c.satisfaction(p) == 1.0:
            return ""
        if self.told(c.slot):
            return render("The {name} isn't available with that {label}; the {label} must be {value}, "
                          "like my old one.", name=name, label=c.label, value=fmt(c.value))
        return render("The {name} won't work with what I had; the {label} has to match my old one.",
                      name=name, label=c.label)
