"""The final order: which fused candidates are weighed, and by what (fused x status x relevance x time).

Fusion (``fusion.py``) says how well each fact matches the query; ranking turns that into
what the caller should read first. A fact's score is its fused match, times its status
weight (staged below confirmed, history far below), times the square root of its lifecycle
relevance (confidence x source x decay x usage), times a time factor when the query names a
period ("in May 2023"): inside it counts more, outside less.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hippograph.domain import lifecycle as lc
from hippograph.domain.models import Fact
from hippograph.retrieval.fusion import Candidate
from hippograph.retrieval.policy import RetrievalPolicy
from hippograph.text.query_intent import QueryPlan

# How many fused candidates per requested result get lifecycle-weighted: the weighting
# reorders the head of the fused list, not its tail, and reading ~200 scattered facts from
# the graph cost ~70 ms at 100k facts.
POOL_PER_RESULT = 3
MIN_POOL = 30


@dataclass(frozen=True)
class Ranked:
    """A fact in the final order, with its score and what made it."""

    candidate: Candidate
    fact: Fact
    score: float
    detail: dict[str, Any]

    @property
    def reasons(self) -> dict[str, Any]:
        """Each channel's rank and score, then the ranking's terms."""
        return {**self.candidate.channels, **self.detail}


def pool(candidates: Sequence[Candidate], limit: int, *, as_of: datetime | None) -> list[Candidate]:
    """The head of the fused list that ranking weighs (all of it for a look into the past,
    where the facts believed then may lie deep in today's order)."""
    if as_of is not None:
        return list(candidates)
    return list(candidates[: max(limit * POOL_PER_RESULT, MIN_POOL)])


def believed_at(fact: Fact, moment: datetime) -> bool:
    """Was this fact part of what memory held at ``moment``?"""
    return fact.created_at <= moment and (fact.valid_until is None or fact.valid_until > moment)


def score(
    candidate: Candidate,
    fact: Fact,
    *,
    now: datetime,
    plan: QueryPlan,
    lifecycle: lc.LifecyclePolicy,
    policy: RetrievalPolicy,
) -> tuple[float, dict[str, Any]]:
    """One fact's final score and the terms that made it."""
    rel = lc.relevance(fact, now, lifecycle)
    status_w = lc.status_weight(fact.status, lifecycle)
    value = candidate.fused * status_w * math.sqrt(max(rel.value, 0.0))
    detail: dict[str, Any] = {"fused": round(candidate.fused, 6), "relevance": round(rel.value, 4)}
    detail["status_weight"] = status_w
    if plan.time_phrase and (plan.after or plan.before):
        moment = fact.event_time or fact.created_at
        inside = (plan.after is None or moment >= plan.after) and (
            plan.before is None or moment < plan.before
        )
        value *= policy.time_match_boost if inside else policy.time_miss_factor
        detail["time"] = {"phrase": plan.time_phrase, "inside": inside}
    return value, detail


def rank(
    candidates: Sequence[Candidate],
    facts: Mapping[str, Fact],
    *,
    limit: int,
    now: datetime,
    plan: QueryPlan,
    lifecycle: lc.LifecyclePolicy,
    policy: RetrievalPolicy,
    as_of: datetime | None = None,
) -> list[Ranked]:
    """The best ``limit`` candidates whose facts are given (and, with ``as_of``, were believed
    then), best first; ties go to the smaller id so the order is stable."""
    ranked = []
    for candidate in candidates:
        fact = facts.get(candidate.id)
        if fact is None or (as_of is not None and not believed_at(fact, as_of)):
            continue
        value, detail = score(candidate, fact, now=now, plan=plan, lifecycle=lifecycle, policy=policy)
        ranked.append(Ranked(candidate, fact, value, detail))
    ranked.sort(key=lambda r: (-r.score, r.candidate.id))
    return ranked[:limit]
