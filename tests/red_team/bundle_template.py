"""bundle_template (third red team): never reads the request. Finds the project phrase of the
opening ("We're bringing home a new puppy"), searches every category of that project's public
template (`envs/bundle/projects.py`) and submits the cheapest in-stock product of each (4.5+
stars and 2-day shipping preferred), skipping what the customer said sold out. When the task's
category count equalled the template's size, the hidden list was the whole template (9-12% at
d = 12). `drop` leaves that many template categories out at random: guessing a subset."""
from __future__ import annotations

import random
import re

from ecom_bench.envs.bundle.projects import PROJECTS
from red_team.common import Conv

_SOLD_OUT = re.compile(r"\((P\d+)\)")


def primary_project(opening: str):  # noqa: ANN201
    text = opening.lower()
    found = [(text.find(p.phrase.lower()), p) for p in PROJECTS if p.phrase.lower() in text]
    return min(found, key=lambda f: f[0])[1] if found else None


class BundleTemplate:
    name = "bundle_template"
    reads_hidden_goal = False

    def __init__(self, drop: int = 0) -> None:
        self.drop = drop

    def act(self, messages, hidden, status):  # noqa: ANN001, ANN201 (returns an AgentAction)
        c = Conv(messages)
        project = primary_project(c.opening)
        categories = list(project.categories) if project else []
        if self.drop and categories:
            rng = random.Random(c.opening)
            categories = [x for x in categories if x not in rng.sample(categories, min(self.drop, len(categories)))]
        sold = set(_SOLD_OUT.findall(" ".join(t for t in c.users if "sold out" in t)))
        searched: dict[str, list[dict]] = {}
        for call, result in c.results:
            data = result.json() if call.name == "catalog_search" else None
            if isinstance(data, dict) and data.get("results"):
                searched[call.arguments.get("category")] = data["results"]
        todo = [x for x in categories if not c.made("catalog_search", {"query": x, "category": x, "limit": 20})]
        if todo and status.calls_left > 0:
            return c.calls([("catalog_search", {"query": x, "category": x, "limit": 20})
                            for x in todo[:status.calls_left]])
        if todo:
            return c.say("Let me look a bit more.")
        picks = []
        for x in categories:
            rows = [r for r in searched.get(x, []) if r.get("in_stock") and r["product_id"] not in sold]
            if rows:
                good = [r for r in rows if r["rating"] >= 4.5 and r["ship_days"] <= 2] or rows
                picks.append(min(good, key=lambda r: r["price"])["product_id"])
        return c.calls([("submit_bundle", {"product_ids": picks})])


def guessing(drop: int):  # noqa: ANN201
    return lambda: BundleTemplate(drop)

