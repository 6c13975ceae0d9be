"""E_SUB's template shopper: names the out-of-stock original, asks for a compatible substitute.

Everything else (questions, omission, feedback, patience) is `users.constraints.ConstraintUser`;
this adds the compatibility requirement as one more withholdable constraint and its
own gate problems: proposing the original itself, or an incompatible product (whose
complaint names the feature, and its value only once the customer has said it).
"""

from __future__ import annotations

import random
from functools import cached_property
from typing import ClassVar

from ecom_bench.catalog import Product
from ecom_bench.catalog.naming import agreement, catalogue_name, product_noun
from ecom_bench.envs._ranking import Constraint, in_stock_for
from ecom_bench.envs.substitution.goal import SubstitutionGoal
from ecom_bench.envs.substitution.phrases import PHRASES
from ecom_bench.users.constraints import ConstraintUser, StatedConstraint, fmt
from ecom_bench.users.phrases import PhraseTable
from ecom_bench.users.phrasing import Phrase
from ecom_bench.world import World


class SubstitutionUser(ConstraintUser):
    goal: SubstitutionGoal
    phrases: ClassVar[PhraseTable] = {**ConstraintUser.phrases, **PHRASES}

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

    def _intro(self, rng: random.Random) -> Phrase:
        return self.pick(rng, "intro", name=self.original_name,
                         **agreement(self.original_name, product_noun(self._original)))

    def _protected(self) -> set[str]:
        return {self.original_name}

    def sentence(self, c: StatedConstraint, rng: random.Random) -> Phrase:
        if c == self.goal.compatibility:
            return self.line("state_compatibility", label=c.label, value=fmt(c.value))
        return super().sentence(c, rng)

    def _gate_problem(self, p: Product, name: str) -> Phrase | None:
        if p.id == self.goal.original_id:
            return self.line("proposed_original", name=self.original_name,
                             **agreement(self.original_name, product_noun(p)))
        c = self.goal.compatibility
        if c.satisfaction(p) == 1.0:
            return None
        if self.told(c.slot):
            return self.line("incompatible_as_said", name=name, label=c.label, value=fmt(c.value),
                             **agreement(name, product_noun(p)))
        return self.line("incompatible", name=name, label=c.label)

    def in_stock(self, world: World, p: Product) -> bool:
        return in_stock_for(self.goal, world, p)
