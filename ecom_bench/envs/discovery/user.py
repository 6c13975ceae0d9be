"""E_PD's template shopper: "I'm looking for a mouse." and the constraints (`users.constraints`)."""

from __future__ import annotations

import random

from ecom_bench.catalog import Product
from ecom_bench.envs._ranking import in_stock_for
from ecom_bench.users import render
from ecom_bench.users.constraints import ConstraintUser
from ecom_bench.world import World


class DiscoveryUser(ConstraintUser):
    """E_PD: "I'm looking for a mouse." plus the constraints."""

    def _intro(self, rng: random.Random) -> str:
        noun = self._noun()
        return render(rng.choice(("I'm looking for {a_noun}.", "I need {a_new_noun}.", "Can you help me find {a_noun}?")),
                      a_noun=noun.a(), a_new_noun=noun.a("new"))

    def _protected(self) -> set[str]:
        return {self._noun().one}

    def in_stock(self, world: World, p: Product) -> bool:
        return in_stock_for(self.goal, world, p)
