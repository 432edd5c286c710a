"""The final order: which fused candidates are weighed, and by what (fused x status x relevance x time).

Fusion (``fusion.py``) says how well each fact matches the query; ranking turns that into
what the caller should read first. A fact's score is its fused match, times its status
weight (staged below confirmed, dormant below staged, history far below), times the square
root of its lifecycle relevance (confidence x source x decay, the decay floored), times a
time factor when the query names a period ("in May 2023", "since last week"): 1 for a fact
whose time (``bitemporal.fact_time``) falls inside, 1 / (1 + distance / the period's length)
outside, so a fact a whole period away counts half and one clearly outside cannot outrank one
inside that matches about as well. When no candidate falls inside, the phrase is taken to
speak of another timeline and nothing is reweighed. How often a fact was returned or used is
no term: popularity never reorders results.

A ``Lookback`` ranks the past instead: only the facts true at its valid time and held at its
record time, each with the status it had then.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hippograph.domain import bitemporal, sameness
from hippograph.domain import lifecycle as lc
from hippograph.domain.models import Fact, FactStatus
from hippograph.retrieval.fusion import Candidate
from hippograph.retrieval.policy import RetrievalPolicy
from hippograph.store.seam import Filter
from hippograph.text.query_intent import QueryPlan

# How many fused candidates per requested result get lifecycle-weighted: the weighting
# reorders the head of the fused list, not its tail, and reading ~200 scattered facts from
# the graph cost ~70 ms at 100k facts.
POOL_PER_RESULT = 3
MIN_POOL = 30


@dataclass(frozen=True)
class Lookback:
    """A look into the past: what was true at ``valid_at`` (valid time: ``as_of``), as memory
    held it at ``known_at`` (record time); either may be None. ``statuses``, if given, keeps
    only the facts whose status then is one of them."""

    valid_at: datetime | None = None
    known_at: datetime | None = None
    statuses: frozenset[str] | None = None

    def status_of(self, fact: Fact) -> FactStatus:
        """The fact's status at the time looked at."""
        if self.known_at is not None:
            return bitemporal.status_at(fact, self.known_at)
        if fact.status is FactStatus.SUPERSEDED:
            return bitemporal.prior_status(fact)  # true then: it was what memory held, not yet replaced
        return fact.status

    def keeps(self, fact: Fact) -> bool:
        if self.known_at is not None and not bitemporal.believed_at(fact, self.known_at):
            return False
        if self.valid_at is not None and not bitemporal.valid_at(fact, self.valid_at, known_at=self.known_at):
            return False
        return self.statuses is None or self.status_of(fact).value in self.statuses


@dataclass(frozen=True)
class Ranked:
    """A fact in the final order, with its score, what made it, and its status (then, for a
    ``Lookback``)."""

    candidate: Candidate
    fact: Fact
    score: float
    detail: dict[str, Any]
    status: FactStatus
    # How close in meaning the fact is to the query: the cosine similarity of their vectors
    # (0..1 in practice; the same scale for every query, unlike ``score``).
    relevance: float = 0.0

    @property
    def reasons(self) -> dict[str, Any]:
        """Each channel's rank and score, then the ranking's terms."""
        return {**self.candidate.channels, **self.detail}


def pool_size(limit: int, *, lookback: Lookback | None) -> int | None:
    """How many of the best fused candidates ranking weighs for ``limit`` results (None: all of
    them, for a look into the past, where the facts true or held then may lie deep in today's order)."""
    return None if lookback is not None else max(limit * POOL_PER_RESULT, MIN_POOL)


def pool(candidates: Sequence[Candidate], limit: int, *, lookback: Lookback | None) -> list[Candidate]:
    """The head of the fused list that ranking weighs (``pool_size``)."""
    return list(candidates[: pool_size(limit, lookback=lookback)])


def score(
    candidate: Candidate,
    fact: Fact,
    *,
    now: datetime,
    plan: QueryPlan,
    lifecycle: lc.LifecyclePolicy,
    policy: RetrievalPolicy,
    status: FactStatus | None = None,
    window_holds_any: bool = True,
) -> tuple[float, dict[str, Any]]:
    """One fact's final score and the terms that made it (weighed as ``status``, default its own;
    ``window_holds_any``: whether any candidate falls inside the query's period)."""
    rel = lc.relevance(fact, now, lifecycle)
    status_w = lc.status_weight(status or fact.status, lifecycle)
    value = candidate.fused * status_w * math.sqrt(max(rel.value, 0.0))
    # "weight", not "relevance": a hit's relevance is the cosine; this is the lifecycle's confidence x
    # source x decay.
    detail: dict[str, Any] = {"fused": round(candidate.fused, 6), "weight": round(rel.value, 4)}
    detail["status_weight"] = status_w
    if _names_a_period(plan):
        factor = time_factor(bitemporal.fact_time(fact), plan)
        detail["time"] = {"phrase": plan.time_phrase, "inside": factor == 1.0}
        if window_holds_any:
            value *= factor
            detail["time"]["factor"] = round(factor, 4)
    return value, detail


def _names_a_period(plan: QueryPlan) -> bool:
    return bool(plan.time_phrase) and (plan.after is not None or plan.before is not None)


def time_factor(moment: datetime, plan: QueryPlan) -> float:
    """1 inside the query's period; outside, 1 / (1 + distance / grain), the grain being the
    length of the period the phrase names (a day for "on 8 May", a month for "in May 2023")."""
    if plan.after is not None and moment < plan.after:
        distance = plan.after - moment
    elif plan.before is not None and moment >= plan.before:
        distance = moment - plan.before + timedelta(microseconds=1)  # `before` itself is outside
    else:
        return 1.0
    grain = plan.grain or (plan.before - plan.after if plan.before and plan.after else timedelta(days=1))
    return 1.0 / (1.0 + distance / grain)


def rank(
    candidates: Sequence[Candidate],
    facts: Mapping[str, Fact],
    *,
    limit: int,
    now: datetime,
    plan: QueryPlan,
    lifecycle: lc.LifecyclePolicy,
    policy: RetrievalPolicy,
    lookback: Lookback | None = None,
) -> list[Ranked]:
    """The best ``limit`` candidates whose facts are given (and, with a ``lookback``, that it
    keeps), best first; ties go to the smaller id so the order is stable."""
    kept = []
    for candidate in candidates:
        fact = facts.get(candidate.id)
        if fact is not None and (lookback is None or lookback.keeps(fact)):
            kept.append((candidate, fact))
    holds_any = _names_a_period(plan) and any(
        time_factor(bitemporal.fact_time(fact), plan) == 1.0 for _, fact in kept
    )
    ranked = []
    for candidate, fact in kept:
        status = lookback.status_of(fact) if lookback is not None else fact.status
        value, detail = score(
            candidate,
            fact,
            now=now,
            plan=plan,
            lifecycle=lifecycle,
            policy=policy,
            status=status,
            window_holds_any=holds_any,
        )
        if status is not fact.status:
            detail["status_now"] = fact.status.value
        ranked.append(Ranked(candidate, fact, value, detail, status))
    ranked.sort(key=lambda r: (-r.score, r.candidate.id))
    return ranked[:limit]


# How many of the best results may show that they answer a question in so many words.
_READ_FOR_WORDS = 3


def without_padding(ranked: list[Ranked], where: Filter, floor: float) -> list[Ranked]:
    """``ranked`` without the results after the first whose relevance is under ``floor``, but a
    match's neighbouring turn (its context) and a fact dated in the query's period; all where an
    entity, tags or a time range chose them."""
    if where.entity_ids_any or where.tags_any or where.after or where.before:
        return ranked
    return ranked[:1] + [r for r in ranked[1:] if r.relevance >= floor or _chosen(r)]


def _chosen(r: Ranked) -> bool:
    """Whether something besides its meaning put ``r`` here: a match's turn beside it, or its
    time inside the query's period."""
    return "neighbour" in r.candidate.channels or bool(r.detail.get("time", {}).get("inside"))


def holds_query(query: str, ranked: Sequence[Ranked]) -> bool:
    """Whether one of the first results holds every content word and number of ``query``
    ("who is Juniper" and "Juniper Mwangi co-supervises my thesis", "when is my talk" and "My talk
    at the symposium is on April 4"): an answer in so many words, however short the query and so
    low its cosine."""
    return any(sameness.answers(query, r.fact.content) for r in ranked[:_READ_FOR_WORDS])
