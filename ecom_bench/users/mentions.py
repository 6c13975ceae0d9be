"""Which catalogue products an agent's message names: by id, or by the name of one a tool showed it.

The discovery, substitution and bundle customers review the products an agent proposes in a
plain message. A capable model names them as a person would ("the TrailForge SummitCamp Yoga
Mat"), by title rather than id; both count, on any catalogue's ids. Only products the agent was
shown can be named by name, so naming never reaches past what the tools returned.
"""

from __future__ import annotations

import re

from ecom_bench.catalog.naming import NameIndex, name_forms, short_name
from ecom_bench.world import World

#: An id-like token ("P0001234", "B0NCBTL002"); a variant id names its product ("P0001234-v2").
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*")
_VARIANT_SUFFIX = re.compile(r"-v\d+$")


class ProductMentions:
    """Reads messages for product mentions; kept per customer, which reads every shown product's
    name on every reply (the lower-cased short names are looked up once)."""

    def __init__(self) -> None:
        self._names: dict[str, str | None] = {}

    def __call__(self, text: str, world: World) -> list[str]:
        """The ids of the products `text` names: by id in order, then by name, each once."""
        found: dict[str, None] = {}
        for token in _TOKEN.findall(text):
            for candidate in (token, _VARIANT_SUFFIX.sub("", token)):
                if world.product(candidate) is not None:
                    found.setdefault(candidate)
                    break
        text_l = text.lower()
        # the shown products whose name can be in the text (a cheap test), each phrase read as the
        # one it names longest: "... Jeans Rinse" is not also the Dark Stonewash listing's "... Jeans"
        maybe = [pid for pid in sorted(world.seen_ids)
                 if (name := self._name(pid, world)) is not None and name[:3] in text_l]
        shown = {pid: name_forms(p) for pid in maybe if (p := world.product(pid)) is not None}
        named = {pid for m in NameIndex(shown).mentions(text) for pid in m.ids}
        for pid in sorted(named - found.keys()):
            found.setdefault(pid)
        return list(found)

    def _name(self, pid: str, world: World) -> str | None:
        """The lower-cased short name of product `pid` (None: not a product id, such as a variant's)."""
        if pid not in self._names:
            p = world.product(pid)
            self._names[pid] = None if p is None else short_name(p).lower()
        return self._names[pid]
