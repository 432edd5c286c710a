"""Fusion and ranking on literal inputs: no store, no model."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from hippograph.domain import bitemporal
from hippograph.domain import lifecycle as lc
from hippograph.domain.lifecycle import LifecyclePolicy
from hippograph.domain.models import Fact, FactStatus
from hippograph.retrieval import ranking
from hippograph.retrieval.fusion import Candidate, fuse
from hippograph.retrieval.policy import RetrievalPolicy
from hippograph.store.vectors import Hit
from hippograph.text.query_intent import Intent, QueryPlan
from testkit.facts import make_fact

NOW = datetime(2026, 6, 1, tzinfo=UTC)
MAY = (datetime(2026, 5, 1, tzinfo=UTC), datetime(2026, 6, 1, tzinfo=UTC))
LIFECYCLE = LifecyclePolicy()
POLICY = RetrievalPolicy()
NO_TIME = QueryPlan(Intent.GENERAL, None, None, None, None, False, (), ())
IN_MAY = QueryPlan(Intent.GENERAL, MAY[0], MAY[1], "in May", MAY[1] - MAY[0], False, (), ())


def fact(fid: str, *, status: FactStatus = FactStatus.CONFIRMED, event: datetime | None = None) -> Fact:
    # Pinned, from a conversation: relevance exactly 1 (certain, fresh, weight 1).
    created = datetime(2026, 1, 1, tzinfo=UTC)
    return make_fact(fid, at=created, id=fid, status=status, confidence=1.0, event_time=event, pinned=True)


def test_fusion_sums_weighted_reciprocal_ranks_scaled_by_score() -> None:
    fused = fuse(
        {
            "vector": [Hit("a", 0.9, 1), Hit("b", 0.45, 2)],
            "fts": [Hit("b", 8.0, 1)],
        },
        {"vector": 1.0, "fts": 2.0},
        k=60,
        score_power=1.0,
    )
    assert fused["a"].fused == pytest.approx(1 / 61)
    assert fused["b"].fused == pytest.approx(0.5 / 62 + 2 / 61)
    assert fused["b"].channels == {"vector": {"rank": 2, "score": 0.45}, "fts": {"rank": 1, "score": 8.0}}


def test_plain_rrf_ignores_scores() -> None:
    fused = fuse({"vector": [Hit("a", 0.9, 1), Hit("b", 0.1, 2)]}, {}, k=60, score_power=0.0)
    assert fused["b"].fused == pytest.approx(1 / 62)


def test_score_is_fused_times_status_weight_times_root_relevance() -> None:
    value, detail = ranking.score(
        Candidate("a", fused=0.02),
        fact("a", status=FactStatus.STAGED),
        now=NOW,
        plan=NO_TIME,
        lifecycle=LIFECYCLE,
        policy=POLICY,
    )
    assert value == pytest.approx(0.02 * 0.8 * math.sqrt(1.0))
    assert detail == {"fused": 0.02, "weight": 1.0, "status_weight": 0.8}


def test_a_time_phrase_weighs_facts_outside_its_period_by_their_distance() -> None:
    inside = fact("in", event=datetime(2026, 5, 10, tzinfo=UTC))
    # 31 days after May, May being 31 days long: one period away counts half.
    outside = fact("out", event=datetime(2026, 7, 2, tzinfo=UTC) - timedelta(microseconds=1))
    kw = {"now": NOW, "plan": IN_MAY, "lifecycle": LIFECYCLE, "policy": POLICY}
    inside_score, inside_detail = ranking.score(Candidate("in", fused=0.01), inside, **kw)
    outside_score, outside_detail = ranking.score(Candidate("out", fused=0.01), outside, **kw)
    assert inside_score == pytest.approx(0.01)
    assert outside_score == pytest.approx(0.01 / 2)
    assert inside_detail["time"] == {"phrase": "in May", "inside": True, "factor": 1.0}
    assert outside_detail["time"] == {"phrase": "in May", "inside": False, "factor": 0.5}


@pytest.mark.parametrize(
    ("moment", "factor"),
    [
        (datetime(2026, 5, 1, tzinfo=UTC), 1.0),  # the first instant is inside
        (datetime(2026, 6, 1, tzinfo=UTC) - timedelta(microseconds=1), 1.0),
        (datetime(2026, 3, 31, tzinfo=UTC), 1 / 2),  # 31 days before
        (datetime(2026, 8, 2, tzinfo=UTC) - timedelta(microseconds=1), 1 / 3),  # 62 days after
    ],
)
def test_the_time_factor_is_one_inside_and_falls_with_distance_in_periods(
    moment: datetime, factor: float
) -> None:
    assert ranking.time_factor(moment, IN_MAY) == pytest.approx(factor)


def test_an_open_period_is_scaled_by_the_period_its_bound_names() -> None:
    since_last_week = QueryPlan(
        Intent.CHANGE, datetime(2026, 5, 25, tzinfo=UTC), None, "since last week", timedelta(days=7),
        False, (), (),
    )  # fmt: skip
    assert ranking.time_factor(datetime(2026, 6, 30, tzinfo=UTC), since_last_week) == 1.0
    assert ranking.time_factor(datetime(2026, 5, 11, tzinfo=UTC), since_last_week) == pytest.approx(1 / 3)


def test_a_fact_clearly_outside_never_outranks_one_inside_that_matches_as_well() -> None:
    inside = fact("in", event=datetime(2026, 5, 30, tzinfo=UTC))
    august = fact("aug", event=datetime(2026, 8, 12, tzinfo=UTC))
    # Even a better match (up to the factor: ~2.4 periods away, ~3.4x) stays behind.
    candidates = [Candidate("aug", 0.03), Candidate("in", 0.01)]
    ranked = ranking.rank(
        candidates, {"in": inside, "aug": august}, limit=2, now=NOW, plan=IN_MAY, lifecycle=LIFECYCLE,
        policy=POLICY,
    )  # fmt: skip
    assert [r.fact.id for r in ranked] == ["in", "aug"]


def test_a_period_that_holds_no_candidate_reweighs_nothing() -> None:
    # "in May" read against today's clock, in a memory whose facts are all from other years.
    old = fact("old", event=datetime(2023, 5, 10, tzinfo=UTC))
    older = fact("older", event=datetime(2022, 1, 10, tzinfo=UTC))
    ranked = ranking.rank(
        [Candidate("older", 0.02), Candidate("old", 0.01)], {"old": old, "older": older}, limit=2, now=NOW,
        plan=IN_MAY, lifecycle=LIFECYCLE, policy=POLICY,
    )  # fmt: skip
    assert [r.fact.id for r in ranked] == ["older", "old"]
    assert ranked[0].score == pytest.approx(0.02)
    assert ranked[0].detail["time"] == {"phrase": "in May", "inside": False}


def test_an_undated_fact_is_timed_by_when_it_was_stated() -> None:
    stated_in_may = make_fact("s", at=datetime(2026, 5, 20, tzinfo=UTC), id="s", confidence=1.0, pinned=True)
    assert ranking.time_factor(bitemporal.fact_time(stated_in_may), IN_MAY) == 1.0


def test_rank_orders_by_score_then_id_and_keeps_the_limit() -> None:
    candidates = [Candidate("c", 0.01), Candidate("b", 0.02), Candidate("a", 0.02), Candidate("d", 0.03)]
    facts = {f: fact(f) for f in "abc"}  # d's fact is gone: it cannot rank
    facts["b"] = replace(facts["b"], status=FactStatus.SUPERSEDED)
    ranked = ranking.rank(
        candidates, facts, limit=2, now=NOW, plan=NO_TIME, lifecycle=LIFECYCLE, policy=POLICY
    )
    assert [r.fact.id for r in ranked] == ["a", "c"]
    assert ranked[0].reasons == {"fused": 0.02, "weight": 1.0, "status_weight": 1.0}


def test_a_lookback_keeps_what_was_held_then_with_the_status_it_had() -> None:
    old = lc.supersede(fact("old"), datetime(2026, 3, 1, tzinfo=UTC), "corrected by new")
    march = datetime(2026, 3, 1, tzinfo=UTC)
    new = replace(fact("new"), created_at=march, valid_from=march)
    facts = {"old": old, "new": new}
    candidates = [Candidate("new", 0.02), Candidate("old", 0.01)]
    feb = datetime(2026, 2, 1, tzinfo=UTC)
    kw = {"limit": 5, "now": NOW, "plan": NO_TIME, "lifecycle": LIFECYCLE, "policy": POLICY}
    then = ranking.rank(candidates, facts, lookback=ranking.Lookback(known_at=feb), **kw)
    assert [(r.fact.id, r.status) for r in then] == [("old", FactStatus.CONFIRMED)]
    assert then[0].reasons == {
        "fused": 0.01,
        "weight": 1.0,
        "status_weight": 1.0,
        "status_now": "superseded",
    }
    assert [r.fact.id for r in ranking.rank(candidates, facts, **kw)] == ["new", "old"]
    true_then = ranking.rank(candidates, facts, lookback=ranking.Lookback(valid_at=feb), **kw)
    assert [(r.fact.id, r.status) for r in true_then] == [("old", FactStatus.CONFIRMED)]
    staged_only = ranking.Lookback(known_at=feb, statuses=frozenset({"staged"}))
    assert ranking.rank(candidates, facts, lookback=staged_only, **kw) == []


def test_dormant_facts_rank_lower_and_popularity_not_at_all() -> None:
    quiet = replace(fact("quiet", status=FactStatus.DORMANT), pinned=False)
    popular = replace(fact("popular"), access_count=500, last_accessed=NOW)
    kw = {"now": NOW, "plan": NO_TIME, "lifecycle": LIFECYCLE, "policy": POLICY}
    quiet_score, _ = ranking.score(Candidate("quiet", fused=0.01), quiet, **kw)
    assert quiet_score == pytest.approx(0.01 * 0.6 * math.sqrt(0.25))  # decayed to the floor
    popular_score, _ = ranking.score(Candidate("popular", fused=0.01), popular, **kw)
    assert popular_score == ranking.score(Candidate("x", fused=0.01), fact("x"), **kw)[0]


def test_the_pool_is_the_head_of_the_fused_list_unless_looking_back() -> None:
    candidates = [Candidate(f"f{i}", 1.0 / (i + 1)) for i in range(100)]
    assert len(ranking.pool(candidates, 5, lookback=None)) == ranking.MIN_POOL
    assert len(ranking.pool(candidates, 20, lookback=None)) == 20 * ranking.POOL_PER_RESULT
    assert len(ranking.pool(candidates, 5, lookback=ranking.Lookback(valid_at=NOW))) == 100
