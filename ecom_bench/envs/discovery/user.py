"""E_PD's template shopper: "I'm looking for a mouse." and the constraints (`users.constraints`)."""

from __future__ import annotations

import random
from typing import ClassVar

from ecom_bench.catalog import Product
from ecom_bench.envs._ranking import in_stock_for
from ecom_bench.envs.discovery.goal import DiscoveryGoal
from ecom_bench.envs.discovery.phrases import PHRASES
from ecom_bench.users.constraints import ConstraintUser
from ecom_bench.users.phrases import PhraseTable
from ecom_bench.users.phrasing import Phrase
from ecom_bench.world import World


class DiscoveryUser(ConstraintUser):
    """E_PD: "I'm looking for a mouse." plus the constraints."""

    goal: DiscoveryGoal
    phrases: ClassVar[PhraseTable] = {**ConstraintUser.phrases, **PHRASES}

    def _intro(self, rng: random.Random) -> Phrase:
        noun = self._noun()
        return self.pick(rng, "intro", a_noun=noun.a(), a_new_noun=noun.a("new"))

    def _protected(self) -> set[str]:
        return {self._noun().one}

    def in_stock(self, world: World, p: Product) -> bool:
        return in_stock_for(self.goal, world, p)
