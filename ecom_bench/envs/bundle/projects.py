"""E_BUNDLE's project templates: what a shopper needs for a project, as catalogue leaves.

Every category named here is a leaf of `ecom_bench.catalog.taxonomy` (checked at
import: docs/design.md §Upstream pitfalls, 4: upstream's required categories never matched the catalogue).
A task needs n = min(12, 3+⌊d/2⌋) categories; one project holds 6-10, so a larger
task *composes* projects: the primary one first, then further projects (in a seeded
order) until n categories are available ("a camping trip, and I'm also getting a new
puppy"). `compose` also drops the categories a catalogue has no in-stock product in,
so a loaded catalogue that lacks some leaves still yields solvable tasks, or a clear
error when it cannot.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from ecom_bench.catalog.taxonomy import LEAF_BY_NAME


@dataclass(frozen=True)
class Project:
    name: str  # "camping trip"
    phrase: str  # how the shopper introduces it: "I'm going on a camping trip"
    also: str  # how it is added to another project: "I'm also going camping"
    categories: tuple[str, ...]  # leaf category names, most essential first


PROJECTS: tuple[Project, ...] = (
    Project("home office setup", "I'm setting up a home office", "I'm also kitting out my home office",
            ("Monitors", "Office Chairs", "Desk Organizers", "USB Hubs", "Keypads", "LED Light Bulbs",
             "Extension Cords", "Charging Cables", "Spiral Notebooks", "Gel Pens")),
    Project("camping trip", "I'm going on a camping trip", "I'm also packing for a camping trip",
            ("Camping Tents", "Sleeping Bags", "Water Bottles", "Power Banks", "Rain Jackets", "Socks",
             "Sunscreens", "Mixed Nuts", "Protein Bars", "Bluetooth Speakers")),
    Project("new puppy", "We're bringing home a new puppy", "we're also getting a new puppy",
            ("Dry Dog Food", "Dog Collars", "Dog Beds", "Dog Treats", "Food Storage Containers",
             "Stuffed Animals")),
    Project("first kitchen", "I'm stocking the kitchen of my first apartment",
            "I'm also stocking my first kitchen",
            ("Frying Pans", "Cutting Boards", "Food Storage Containers", "Air Fryers",
             "Water Filter Pitchers", "Olive Oil", "Pasta", "Ground Coffee", "Travel Mugs")),
    Project("back to school", "My kid is going back to school", "it's also back-to-school time",
            ("Spiral Notebooks", "Gel Pens", "Highlighters", "Ring Binders", "Power Banks",
             "Wireless Earbuds", "Water Bottles", "Hoodies", "Running Shoes")),
    Project("home gym", "I'm putting together a home gym", "I'm also setting up a home gym",
            ("Yoga Mats", "Resistance Bands", "Dumbbells", "Water Bottles", "Protein Bars", "Leggings",
             "Tank Tops", "Running Shoes", "Bluetooth Speakers", "Wireless Earbuds")),
    Project("DIY repair weekend", "I'm doing a weekend of DIY repairs around the house",
            "I'm also planning some DIY repairs",
            ("Cordless Drills", "Screwdriver Sets", "Tape Measures", "Work Gloves", "Drawer Pulls",
             "LED Light Bulbs", "Extension Cords", "Shower Heads", "Label Makers")),
    Project("spa weekend at home", "I'm treating myself to a spa weekend at home",
            "I also want a spa weekend at home",
            ("Face Moisturizers", "Body Washes", "Shampoos", "Eau de Parfum", "Makeup Brush Sets",
             "Lipsticks", "Green Tea", "Sheet Sets")),
    Project("family game night", "We're hosting a family game night", "we're also hosting a game night",
            ("Board Games", "Jigsaw Puzzles", "Building Block Sets", "Mixed Nuts", "Bluetooth Speakers",
             "RC Cars", "Modeling Clay Kits")),
)

PROJECT_BY_NAME: dict[str, Project] = {p.name: p for p in PROJECTS}


def _validate() -> None:
    for p in PROJECTS:
        unknown = [c for c in p.categories if c not in LEAF_BY_NAME]
        if unknown:
            raise ValueError(f"bundle project {p.name!r} names categories that are not catalogue leaves: "
                             f"{unknown}")
        if len(set(p.categories)) != len(p.categories):
            raise ValueError(f"bundle project {p.name!r} lists a category twice")


_validate()


#: Categories of the primary project's template that a task always leaves out (see `compose`).
UNREQUIRED_PER_PROJECT = 2


def compose(n: int, rng: random.Random, available: Callable[[str], bool]) -> tuple[list[Project], list[str]]:
    """The projects of one task and its n required categories (in the order the shopper lists them).

    The primary project contributes a seeded sample of its categories, never more than all
    but UNREQUIRED_PER_PROJECT of them; further projects fill the rest. Only categories for which
    `available(category)` holds (the world's catalogue has in-stock products in them)
    are used.
    """
    usable = {p.name: [c for c in p.categories if available(c)] for p in PROJECTS}
    candidates = [p for p in PROJECTS if len(usable[p.name]) >= min(n, 3)]
    if not candidates:
        covered = sorted({c for cats in usable.values() for c in cats})
        raise ValueError(
            f"no bundle project has enough categories with in-stock products in this catalogue (need {min(n, 3)} "
            f"of one project's; it has {len(covered)} of the {len({c for p in PROJECTS for c in p.categories})} "
            "the projects name): bundle, and a journey that draws a bundle request, needs leaf categories named "
            "as the synthetic catalogue's ('Camping Tents', 'Sleeping Bags', 'Water Bottles', ...), so in "
            "practice the synthetic catalogue (docs/catalogue.md)")
    primary = rng.choice(candidates)
    chosen = [primary]
    pool = usable[primary.name]
    # Never the whole template, nor all of it but one: the templates are public, so a shopping
    # list equal to one (or one short of it) could be guessed without reading the request.
    share = min(n, max(len(pool) - UNREQUIRED_PER_PROJECT, min(n, 3)))
    required = sorted(rng.sample(pool, share), key=pool.index)
    others = [p for p in PROJECTS if p is not primary]
    rng.shuffle(others)
    for extra in others:
        if len(required) >= n:
            break
        fresh = [c for c in usable[extra.name] if c not in required]
        if not fresh:
            continue
        chosen.append(extra)
        required += sorted(rng.sample(fresh, min(n - len(required), len(fresh))), key=fresh.index)
    if len(required) < n:
        raise ValueError(f"this catalogue has in-stock products in only {len(required)} of the bundle "
                         f"projects' categories; a task at this difficulty needs {n}")
    return chosen, required
