"""E_POLICY generator: a target rule with B_branch clauses, distractor rules, a customer.

All draws come from one RNG seeded by (env, seed, d). The world's rule book is appended to,
never replaced (E_JOURNEY builds several envs into one world), and a (family, scope)
pair already covered by the rule book is never drawn again, so "the shipping-fee policy for
Alaska" always names exactly one document.

The rule book holds the target, look-alikes (same family, other scopes: the same title but
another region, department or channel, with other thresholds and amounts) and rules
of other families, half of them for the target's own scope value (the delivery-time
policy for Alaska next to the shipping-fee policy for Alaska), so retrieval and
reading both matter.

Guessing without the customer's facts: a numeric answer scales with one of the
customer's amounts (`Family.amount_slot`, always among the rule's slots, so it can be
withheld and asked for); a categorical answer is one of B + 1 outcomes, so categorical
targets are drawn at `p_categorical(B)`, which keeps that 1-in-(B+1) guess to ~1% of
all policy episodes.
"""

from __future__ import annotations

import random

from ecom_bench._seeding import derive_seed, seeded_rng
from ecom_bench.difficulty import Difficulty
from ecom_bench.domains.policy.rulebook import Rulebook
from ecom_bench.envs.base import EnvAxis, SubTask
from ecom_bench.envs.policy.goal import PolicyGoal
from ecom_bench.envs.policy.user import PolicyUser
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World
from ecom_bench.domains.policy.generator import make_rule
from ecom_bench.domains.policy.rules import FAMILIES, SLOTS, Family, PolicyQuestion

#: Share of questions with a categorical answer (the rest are amounts, days or months) ...
P_CATEGORICAL = 0.1
#: ... capped so that guessing a decision list's decisive clause, right 1 time in B + 1 by chance,
#: is right in at most this share of all policy episodes. The bar for any guess without the customer's
#: facts is 5% with a 95% upper bound of 8% over 200 episodes (at most 8 hits), and such a guess pairs
#: with a numeric guess (right ~1-1.5% of the time): at 1% (2 expected hits) the pair stays under the
#: bar in a 200-episode measurement with high probability.
CATEGORICAL_GUESS_SHARE = 0.01


def p_categorical(n_clauses: int) -> float:
    """The share of categorical targets at B = n_clauses: .02 at B = 1, .03 at 2, .04 at 3, ..., .1 at 9."""
    return min(P_CATEGORICAL, CATEGORICAL_GUESS_SHARE * (n_clauses + 1))


#: E_POLICY's own difficulty axes (beside the shared B_branch, `n_policy_clauses`).
LOOKALIKES = EnvAxis("lookalike_rules", "rules on the same topic for other scopes, beside the one asked "
                     "about", "1 + ⌊d/3⌋", lambda d: 1 + d // 3)
OTHER_RULES = EnvAxis("other_rules", "rules on other topics in the policy base", "2 + ⌊d/3⌋",
                      lambda d: 2 + d // 3)
POLICY_AXES = (LOOKALIKES, OTHER_RULES)


def n_lookalikes(d: int) -> int:
    return int(LOOKALIKES.at(d))


def n_other_rules(d: int) -> int:
    return int(OTHER_RULES.at(d))


def _fits(fam: Family, n_clauses: int) -> bool:
    return fam.max_clauses is None or n_clauses <= fam.max_clauses


def _free_scopes(rulebook: Rulebook, fam: Family) -> list[str]:
    return [v for v in SLOTS[fam.scope].choices if not rulebook.covers(fam.key, v)]


def _pick_target(rng: random.Random, rulebook: Rulebook, n_clauses: int) -> tuple[Family, str]:
    numeric = [f for f in FAMILIES.values() if f.kind == "number" and _free_scopes(rulebook, f)]
    choice = [f for f in FAMILIES.values() if f.kind == "choice" and _fits(f, n_clauses) and _free_scopes(rulebook, f)]
    pool = choice if choice and (rng.random() < p_categorical(n_clauses) or not numeric) else numeric
    if not pool:
        raise RuntimeError("the rule book covers every (family, scope) already")
    fam = rng.choice(pool)
    return fam, rng.choice(_free_scopes(rulebook, fam))


def _add_rule(rng: random.Random, rulebook: Rulebook, fam: Family, scope: str, n_clauses: int) -> None:
    n = min(n_clauses, fam.max_clauses or n_clauses)
    rule, _ = make_rule(rng, fam.key, scope, max(1, n), rulebook.new_rule_id(fam.key, rng))
    rulebook.add(rule)


def build_policy(world: World, seed: int, difficulty: Difficulty, intent: int = 0,
                customer: type[PolicyUser] = PolicyUser) -> SubTask:
    rng = seeded_rng("policy", seed, difficulty.level)
    rulebook = world.state(Rulebook)
    n_clauses = difficulty.n_policy_clauses
    fam, scope = _pick_target(rng, rulebook, n_clauses)
    rule, situation = make_rule(rng, fam.key, scope, n_clauses, rulebook.new_rule_id(fam.key, rng))
    rulebook.add(rule)

    # Distractors: look-alikes of the target's family, then other families.
    others = _free_scopes(rulebook, fam)
    rng.shuffle(others)
    for other_scope in others[: n_lookalikes(difficulty.level)]:
        _add_rule(rng, rulebook, fam, other_scope, rng.randint(max(1, n_clauses - 1), n_clauses + 1))
    for _ in range(n_other_rules(difficulty.level)):
        same_scope = [f for f in FAMILIES.values() if f.scope == fam.scope and not rulebook.covers(f.key, scope)]
        if same_scope and rng.random() < 0.5:
            other, other_scope = rng.choice(same_scope), scope
        else:
            candidates = [f for f in FAMILIES.values() if f.key != fam.key and _free_scopes(rulebook, f)]
            if not candidates:
                break
            other = rng.choice(candidates)
            other_scope = rng.choice(_free_scopes(rulebook, other))
        _add_rule(rng, rulebook, other, other_scope, rng.randint(1, n_clauses + 1))

    # The customer knows every fact of their situation; only the rule's facts can be withheld.
    profile_rng = seeded_rng("policy-profile", seed, difficulty.level)
    full = {key: slot.draw(profile_rng) for key, slot in SLOTS.items()}
    full.update(situation)
    disclosure = Disclosure()
    for key in rule.slots():
        disclosure.add(key, rng.random() >= difficulty.p_missing)
    goal = PolicyGoal(rule_id=rule.rule_id, family=fam.key, title=rule.title, question=rng.choice(fam.questions),
                      kind=rule.kind, unit=rule.unit, n_clauses=len(rule.clauses), slots=rule.slots(),
                      scope_slot=fam.scope, situation=full, answer=rule.compute(full))
    rulebook.questions[intent] = PolicyQuestion(fam.key, dict(full))  # what the answer tool reads answers against
    user = customer(goal, difficulty, derive_seed("policy-user", seed, difficulty.level), disclosure)
    return SubTask(env="policy", goal=goal, user=user, intent=intent)
