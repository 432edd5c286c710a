"""Every lifecycle rule with literal inputs and expected outputs, plus properties."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippograph.domain import lifecycle as lc
from hippograph.domain.conflicts import ConflictOutcome as Outcome
from hippograph.domain.conflicts import is_single_valued, resolve_conflict
from hippograph.domain.errors import InvalidTransition
from hippograph.domain.models import Fact, FactKind, FactStatus, Provenance, Source, TtlPolicy
from testkit.facts import make_fact

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)


def fact(**overrides: object) -> Fact:
    claim = {"id": "f_old", "subject": "Alice", "predicate": "lives_in", "object": "Berlin"}
    return make_fact(at=NOW, **{"content": "Alice lives in Berlin", **claim, **overrides})


def newer(**overrides: object) -> Fact:
    return fact(**{"id": "f_new", "content": "Alice lives in Paris", "object": "Paris", **overrides})


# ---------------------------------------------------------------- policy


def test_policy_is_hashable_and_compares_by_value() -> None:
    assert lc.LifecyclePolicy() == lc.DEFAULT_POLICY
    assert hash(lc.LifecyclePolicy()) == hash(lc.DEFAULT_POLICY)
    assert lc.LifecyclePolicy(source_weights={Source.FILE: 3.0}) != lc.DEFAULT_POLICY


def test_policy_freezes_a_copy_of_mappings_from_settings() -> None:
    weights = {Source.FILE: 3.0}
    policy = lc.LifecyclePolicy(source_weights=weights)
    weights[Source.FILE] = 9.0
    assert policy.source_weights[Source.FILE] == 3.0
    with pytest.raises(TypeError):
        policy.source_weights[Source.FILE] = 1.0  # type: ignore[index]


def test_policy_normalises_configured_multi_valued_predicates() -> None:
    policy = lc.LifecyclePolicy(multi_valued_predicates=frozenset({"Plays With"}))
    assert not is_single_valued("plays_with", policy)


@pytest.mark.parametrize(
    "bad",
    [
        {"promotion_accesses": 0},
        {"weekly_decay": 1.5},
        {"half_life_days": {FactKind.FACT: 0.0}},
        {"inferred_half_life_days": -1.0},
        {"ephemeral_ttl_days": 0.0},
        {"min_freshness": 1.5},
        {"dormant_below": -0.1},
    ],
)
def test_nonsensical_policy_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="invalid lifecycle policy"):
        lc.LifecyclePolicy(**bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------- relevance


def test_relevance_of_month_old_fact_is_the_product_of_its_terms() -> None:
    r = lc.relevance(fact(), NOW + 30 * DAY)
    assert (r.confidence, r.source_weight) == (0.8, 1.0)
    assert r.decay == pytest.approx(0.5 ** (23 / 30))
    assert r.value == pytest.approx(0.8 * 1.0 * 0.5 ** (23 / 30))


def test_relevance_value_is_always_the_product() -> None:
    assert lc.Relevance(confidence=0.5, source_weight=2.0, decay=0.5).value == 0.5


def test_decay_lowers_relevance_down_to_a_floor_never_to_nothing() -> None:
    # 0.5^(t/30) reaches 0.25 after two half-lives past the grace period (67 days).
    assert lc.decay_factor(fact(), NOW + 2000 * DAY) < 1e-15
    assert lc.relevance(fact(), NOW + 60 * DAY).decay == pytest.approx(0.5 ** (53 / 30))
    assert lc.relevance(fact(), NOW + 2000 * DAY).decay == 0.25
    assert lc.relevance(fact(), NOW + 2000 * DAY).value == pytest.approx(0.8 * 0.25)
    assert lc.relevance(fact(), NOW + 2000 * DAY, lc.LifecyclePolicy(min_freshness=0.0)).value < 1e-15


def test_relevance_ignores_how_often_a_fact_was_used() -> None:
    assert lc.relevance(fact(access_count=99), NOW) == lc.relevance(fact(), NOW)


def test_no_decay_within_grace_period() -> None:
    assert lc.decay_factor(fact(), NOW + 7 * DAY) == 1.0
    assert lc.decay_factor(fact(), NOW + 8 * DAY) < 1.0


@pytest.mark.parametrize(
    ("source", "weight"),
    [
        (Source.USER_EDIT, 2.0),
        (Source.FILE, 1.5),
        (Source.SYSTEM, 1.2),
        (Source.CONVERSATION, 1.0),
        (Source.IMPORT, 1.0),
    ],
)
def test_source_weights(source: Source, weight: float) -> None:
    assert lc.relevance(fact(source=source), NOW).value == pytest.approx(0.8 * weight)


@pytest.mark.parametrize(
    ("kind", "days"),
    [
        (FactKind.CORRECTION, 365),
        (FactKind.DECISION, 180),
        (FactKind.PREFERENCE, 90),
        (FactKind.NEGATIVE, 90),
        (FactKind.PROCEDURE, 60),
        (FactKind.FACT, 30),
        (FactKind.EPISODE, 30),
    ],
)
def test_each_kind_halves_after_its_half_life(kind: FactKind, days: int) -> None:
    assert lc.decay_factor(fact(kind=kind), NOW + (7 + days) * DAY) == pytest.approx(0.5)


def test_inferred_fact_halves_in_a_week_whatever_its_kind() -> None:
    inferred = fact(kind=FactKind.CORRECTION, provenance=Provenance.INFERRED)
    assert lc.half_life(inferred) == 7.0
    assert lc.decay_factor(inferred, NOW + 14 * DAY) == pytest.approx(0.5)


def test_kind_without_half_life_loses_five_percent_a_week() -> None:
    policy = lc.LifecyclePolicy(half_life_days={})
    assert lc.half_life(fact(), policy) is None
    assert lc.decay_factor(fact(), NOW + 21 * DAY, policy) == pytest.approx(0.95**2)


def test_decay_counts_from_last_access() -> None:
    used = fact(last_accessed=NOW + 100 * DAY)
    assert lc.decay_factor(used, NOW + 105 * DAY) == 1.0
    assert lc.decay_factor(used, NOW + 137 * DAY) == pytest.approx(0.5)


def test_pinned_and_keep_forever_facts_never_decay() -> None:
    far = NOW + 5000 * DAY
    assert lc.decay_factor(fact(pinned=True), far) == 1.0
    assert lc.decay_factor(fact(ttl_policy=TtlPolicy.KEEP_FOREVER), far) == 1.0


def test_pinned_fact_counts_as_certain() -> None:
    r = lc.relevance(fact(pinned=True, confidence=0.3), NOW + 400 * DAY)
    assert (r.confidence, r.decay, r.value) == (1.0, 1.0, 1.0)


def test_expired_ephemeral_fact_has_no_relevance_left() -> None:
    f = fact(ttl_policy=TtlPolicy.EPHEMERAL, expires_at=NOW + DAY)
    assert lc.decay_factor(f, NOW + 23 * timedelta(hours=1)) == 1.0
    assert lc.decay_factor(f, NOW + DAY) == 0.0
    assert lc.relevance(f, NOW + DAY).value == 0.0


def test_pinning_outlives_an_ephemeral_expiry() -> None:
    f = fact(ttl_policy=TtlPolicy.EPHEMERAL, expires_at=NOW + DAY, pinned=True)
    assert not lc.is_expired(f, NOW + 10 * DAY)
    assert lc.decay_factor(f, NOW + 10 * DAY) == 1.0


@pytest.mark.parametrize(
    ("status", "weight"),
    [
        (FactStatus.CONFIRMED, 1.0),
        (FactStatus.STAGED, 0.8),
        (FactStatus.DORMANT, 0.6),
        (FactStatus.SUPERSEDED, 0.3),
        (FactStatus.RETRACTED, 0.1),
        (FactStatus.PURGED, 0.0),
    ],
)
def test_status_weights(status: FactStatus, weight: float) -> None:
    assert lc.status_weight(status) == weight


# ---------------------------------------------------------------- admission


def test_ephemeral_fact_gets_a_one_day_expiry_unless_given() -> None:
    assert lc.admit(fact(ttl_policy=TtlPolicy.EPHEMERAL), NOW).expires_at == NOW + DAY
    given_expiry = fact(ttl_policy=TtlPolicy.EPHEMERAL, expires_at=NOW + 3 * DAY)
    assert lc.admit(given_expiry, NOW).expires_at == NOW + 3 * DAY
    assert lc.admit(fact(), NOW).expires_at is None


@pytest.mark.parametrize(
    ("given_confidence", "kept"), [(1.7, 1.0), (-0.2, 0.0), (float("nan"), 0.0), (0.6, 0.6)]
)
def test_admit_clamps_confidence(given_confidence: float, kept: float) -> None:
    assert lc.admit(fact(confidence=given_confidence), NOW).confidence == kept


def test_admit_leaves_the_rest_alone() -> None:
    f = fact()
    assert lc.admit(f, NOW) == f


# ---------------------------------------------------------------- evidence: uses and restatements


def test_a_staged_fact_is_confirmed_at_its_third_use_and_its_confidence_stays() -> None:
    f = fact()
    for expected in (FactStatus.STAGED, FactStatus.STAGED, FactStatus.CONFIRMED):
        f = lc.mark_used(f, NOW + DAY)
        assert f.status is expected
    assert (f.access_count, f.last_accessed, f.confidence) == (3, NOW + DAY, 0.8)
    assert f.status_reason == "confirmed after 3 uses"


def test_promotion_threshold_follows_the_policy() -> None:
    once = lc.mark_used(fact(), NOW, lc.LifecyclePolicy(promotion_accesses=1))
    assert once.status is FactStatus.CONFIRMED


def test_a_use_wakes_a_dormant_fact() -> None:
    woken = lc.mark_used(fact(status=FactStatus.DORMANT), NOW + 400 * DAY)
    assert (woken.status, woken.status_reason, woken.last_accessed) == (
        FactStatus.STAGED,
        "woken: used again",
        NOW + 400 * DAY,
    )
    assert not lc.is_faded(woken, NOW + 400 * DAY)


def test_a_use_never_moves_last_accessed_backwards() -> None:
    f = lc.mark_used(fact(last_accessed=NOW + 5 * DAY), NOW + DAY)
    assert (f.last_accessed, f.access_count) == (NOW + 5 * DAY, 1)


@pytest.mark.parametrize("status", [FactStatus.SUPERSEDED, FactStatus.RETRACTED])
def test_history_cannot_be_used_or_restated(status: FactStatus) -> None:
    with pytest.raises(InvalidTransition, match="f_old was"):
        lc.mark_used(fact(status=status), NOW)
    with pytest.raises(InvalidTransition, match="f_old was"):
        lc.corroborate(fact(status=status), fact(), NOW)


def test_using_a_superseded_fact_names_the_newer_one() -> None:
    with pytest.raises(InvalidTransition, match=r"superseded by a newer fact \(f_new\); use that one"):
        lc.mark_used(fact(status=FactStatus.SUPERSEDED), NOW, current_id="f_new")


@pytest.mark.parametrize("status", [FactStatus.STAGED, FactStatus.DORMANT])
def test_a_fact_stated_again_is_confirmed_and_fresh(status: FactStatus) -> None:
    again = lc.corroborate(fact(status=status, confidence=0.6), fact(confidence=0.9), NOW + 300 * DAY)
    assert (again.status, again.last_stated, again.access_count) == (FactStatus.CONFIRMED, NOW + 300 * DAY, 0)
    assert again.confidence == pytest.approx(0.96)
    assert again.status_reason == "stated 2 times"
    assert lc.decay_factor(again, NOW + 300 * DAY) == 1.0


def test_a_restatement_never_lowers_confidence_nor_unpins() -> None:
    pinned = lc.confirm(fact(), NOW)
    again = lc.corroborate(pinned, fact(confidence=0.3), NOW + DAY)
    assert (again.confidence, again.pinned, again.status_reason) == (1.0, True, "confirmed by user")


# ---------------------------------------------------------------- confirm, supersede, retract, correct


def test_confirm_pins_the_fact() -> None:
    f = lc.confirm(fact(), NOW)
    assert (f.status, f.pinned, f.confidence, f.status_reason) == (
        FactStatus.CONFIRMED,
        True,
        1.0,
        "confirmed by user",
    )


def test_confirming_a_pinned_fact_changes_nothing() -> None:
    pinned = lc.confirm(fact(), NOW)
    assert lc.confirm(pinned, NOW + DAY) == pinned


def test_confirm_of_superseded_fact_points_at_the_newer_one() -> None:
    with pytest.raises(
        InvalidTransition, match=r"f_old was superseded by a newer fact \(f_new\); confirm that one"
    ):
        lc.confirm(fact(status=FactStatus.SUPERSEDED), NOW, current_id="f_new")
    with pytest.raises(InvalidTransition, match="explain"):
        lc.confirm(fact(status=FactStatus.SUPERSEDED), NOW)


def test_confirm_of_forgotten_fact_says_how_to_restore_it() -> None:
    with pytest.raises(InvalidTransition, match="remember it again"):
        lc.confirm(fact(status=FactStatus.RETRACTED, status_reason="user asked"), NOW)


def test_supersede_closes_the_validity_of_the_old_fact() -> None:
    f = lc.supersede(fact(status=FactStatus.CONFIRMED), NOW + DAY, "corrected by f_new")
    assert (f.status, f.valid_until, f.status_reason) == (
        FactStatus.SUPERSEDED,
        NOW + DAY,
        "corrected by f_new",
    )
    assert (f.believed_until, f.prior_status) == (NOW + DAY, FactStatus.CONFIRMED)


def test_supersede_closes_valid_time_when_the_world_changed() -> None:
    lived = fact(event_time=NOW - 300 * DAY)
    moved = NOW - 30 * DAY  # the newer fact's event time: the day Alice moved
    f = lc.supersede(lived, NOW, "corrected by f_new", valid_until=moved)
    assert (f.valid_until, f.believed_until) == (moved, NOW)


def test_a_fact_wrong_from_the_start_was_never_true() -> None:
    lived = fact(event_time=NOW - 300 * DAY)
    f = lc.supersede(lived, NOW, "corrected by f_new", valid_until=NOW - 400 * DAY)
    assert f.valid_until == NOW - 300 * DAY


def test_superseding_twice_asks_for_the_newest_fact() -> None:
    old = lc.supersede(fact(), NOW, "corrected")
    with pytest.raises(InvalidTransition, match=r"correct the newest fact in its chain \(f_new\)"):
        lc.supersede(old, NOW, "again", current_id="f_new")


def test_superseding_a_forgotten_fact_is_refused() -> None:
    with pytest.raises(InvalidTransition, match="forgotten"):
        lc.supersede(fact(status=FactStatus.RETRACTED), NOW, "corrected")


def test_only_active_facts_can_be_corrected() -> None:
    assert lc.can_correct(fact())
    assert lc.can_correct(fact(status=FactStatus.CONFIRMED))
    assert not lc.can_correct(fact(status=FactStatus.SUPERSEDED))
    assert not lc.can_correct(fact(status=FactStatus.RETRACTED))
    lc.check_correctable(fact())
    with pytest.raises(InvalidTransition, match="was forgotten"):
        lc.check_correctable(fact(status=FactStatus.RETRACTED))
    with pytest.raises(InvalidTransition, match="f_2"):
        lc.check_correctable(fact(status=FactStatus.SUPERSEDED), current_id="f_2")


def test_retract_keeps_the_fact_as_history() -> None:
    f = lc.retract(fact(status=FactStatus.DORMANT), NOW, "user asked")
    assert (f.status, f.believed_until, f.prior_status, f.status_reason, f.content) == (
        FactStatus.RETRACTED,
        NOW,
        FactStatus.DORMANT,
        "user asked",
        "Alice lives in Berlin",
    )
    assert f.valid_until is None  # forgetting says nothing about the world


def test_retracting_twice_changes_nothing() -> None:
    once = lc.retract(fact(), NOW, "user asked")
    assert lc.retract(once, NOW + DAY, "again") == once


def test_retracting_a_superseded_fact_keeps_when_and_as_what_it_was_last_held() -> None:
    old = lc.supersede(fact(), NOW, "corrected")
    f = lc.retract(old, NOW + DAY, "user asked")
    assert (f.status, f.valid_until, f.believed_until, f.prior_status) == (
        FactStatus.RETRACTED,
        NOW,
        NOW,
        FactStatus.STAGED,
    )


# ---------------------------------------------------------------- conflicts


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (newer(confidence=0.95), Outcome.SUPERSEDE),
        (newer(confidence=0.9), Outcome.CONTRADICT),
        (newer(confidence=0.7), Outcome.CONTRADICT),
        (newer(confidence=0.5, source=Source.USER_EDIT), Outcome.SUPERSEDE),
        (newer(confidence=0.5, provenance=Provenance.USER_CORRECTED), Outcome.SUPERSEDE),
        (
            newer(confidence=0.95, subject=" ALICE ", predicate="Lives In"),
            Outcome.SUPERSEDE,
        ),
        (newer(confidence=0.95, object=" berlin "), Outcome.NONE),
        (newer(confidence=0.95, subject="Bob"), Outcome.NONE),
        (newer(confidence=0.95, predicate="works_at"), Outcome.NONE),
        (newer(confidence=0.95, predicate="likes"), Outcome.NONE),
        (newer(confidence=0.95, subject=None), Outcome.NONE),
        (newer(confidence=0.95, predicate=""), Outcome.NONE),
        (newer(confidence=0.95, object=None), Outcome.NONE),
        (newer(confidence=0.95, scope="project:x"), Outcome.NONE),
    ],
    ids=[
        "confident-supersedes",
        "exactly-threshold-contradicts",
        "unsure-contradicts",
        "user-edit-supersedes",
        "user-correction-supersedes",
        "subject-and-predicate-compare-loosely",
        "same-value-normalised",
        "other-subject",
        "other-predicate",
        "multi-valued-predicate",
        "no-subject",
        "no-predicate",
        "no-value",
        "other-scope",
    ],
)
def test_conflict_rule(new: Fact, expected: Outcome) -> None:
    assert resolve_conflict(new, fact()) is expected


@pytest.mark.parametrize("status", [FactStatus.SUPERSEDED, FactStatus.RETRACTED])
def test_conflict_ignores_history(status: FactStatus) -> None:
    assert resolve_conflict(newer(confidence=1.0), fact(status=status)) is Outcome.NONE


def test_a_fact_never_conflicts_with_itself() -> None:
    assert resolve_conflict(fact(confidence=1.0), fact(object="Paris")) is Outcome.NONE


def test_pinned_fact_yields_only_to_the_user() -> None:
    pinned = lc.confirm(fact(), NOW)
    assert resolve_conflict(newer(confidence=0.99), pinned) is Outcome.CONTRADICT
    assert resolve_conflict(newer(source=Source.USER_EDIT), pinned) is Outcome.SUPERSEDE


def test_denial_conflicts_with_the_same_assertion_even_on_multi_valued_predicates() -> None:
    likes = fact(predicate="likes", object="jazz")
    denial = fact(id="f_new", kind=FactKind.NEGATIVE, predicate="likes", object="Jazz", confidence=0.95)
    assert resolve_conflict(denial, likes) is Outcome.SUPERSEDE
    assert resolve_conflict(replace(likes, id="f_new", confidence=0.5), replace(denial, id="f_old")) is (
        Outcome.CONTRADICT
    )


def test_denials_of_different_values_do_not_conflict() -> None:
    not_berlin = fact(kind=FactKind.NEGATIVE)
    assert resolve_conflict(newer(kind=FactKind.NEGATIVE, confidence=1.0), not_berlin) is Outcome.NONE
    assert resolve_conflict(newer(confidence=1.0), not_berlin) is Outcome.NONE


@pytest.mark.parametrize(
    ("predicate", "single"),
    [
        ("lives_in", True),
        ("works_at", True),
        ("prefers", True),
        ("email", True),
        ("birthday", True),
        ("likes", False),
        ("Member Of", False),
        ("friend-of", False),
        ("knows", False),
    ],
)
def test_which_predicates_hold_one_value(predicate: str, single: bool) -> None:
    assert is_single_valued(predicate) is single


# ---------------------------------------------------------------- maintenance


def test_maintenance_two_years_on_makes_an_unused_fact_dormant_and_keeps_a_pinned_one() -> None:
    later = NOW + 730 * DAY
    unused = lc.maintain(fact(), later)
    assert unused.action is lc.MaintenanceKind.DORMANT
    assert unused.fact == replace(
        fact(), status=FactStatus.DORMANT, status_reason="dormant: not used or restated since 2026-01-01"
    )
    assert lc.maintain(lc.confirm(fact(), NOW), later) == lc.MaintenanceAction(lc.MaintenanceKind.NONE)


@pytest.mark.parametrize(
    "kept",
    [
        fact(status=FactStatus.CONFIRMED, confidence=0.1),
        fact(ttl_policy=TtlPolicy.KEEP_FOREVER, confidence=0.1),
        fact(source=Source.USER_EDIT, provenance=Provenance.USER_STATED, status=FactStatus.CONFIRMED),
    ],
    ids=["confirmed", "keep-forever", "user-stated-confirmed"],
)
def test_nothing_but_expiry_ever_leaves_the_active_statuses(kept: Fact) -> None:
    assert lc.maintain(kept, NOW + 5000 * DAY).action is lc.MaintenanceKind.NONE


def test_maintenance_gives_a_fresh_unsure_fact_its_grace_period() -> None:
    unsure = fact(confidence=0.1)
    assert lc.maintain(unsure, NOW + 7 * DAY).action is lc.MaintenanceKind.NONE
    assert lc.maintain(unsure, NOW + 8 * DAY).action is lc.MaintenanceKind.DORMANT


def test_a_fact_turns_dormant_once_it_fades_below_the_threshold() -> None:
    # 0.8 × 0.5^(t/30) < 0.2 once t > 60 idle days past the grace period.
    assert lc.maintain(fact(), NOW + 66 * DAY).action is lc.MaintenanceKind.NONE
    assert lc.maintain(fact(), NOW + 68 * DAY).action is lc.MaintenanceKind.DORMANT
    # A user's word weighs double: 2.0 × 0.5^(t/30) < 0.2 once t > 99.7 days.
    stated = fact(source=Source.USER_EDIT, confidence=1.0)
    assert lc.maintain(stated, NOW + 106 * DAY).action is lc.MaintenanceKind.NONE
    assert lc.maintain(stated, NOW + 107 * DAY).action is lc.MaintenanceKind.DORMANT


def test_a_dormant_fact_that_no_longer_fades_is_staged_again() -> None:
    dormant = fact(status=FactStatus.DORMANT)
    assert lc.maintain(dormant, NOW + 400 * DAY).action is lc.MaintenanceKind.NONE
    woken = lc.maintain(dormant, NOW + DAY)  # e.g. after `maintain --now` looked far ahead
    assert woken.action is lc.MaintenanceKind.REVIVE
    assert woken.fact == replace(dormant, status=FactStatus.STAGED, status_reason="woken: no longer faded")


def test_ephemeral_fact_expires_after_a_day() -> None:
    f = lc.admit(fact(ttl_policy=TtlPolicy.EPHEMERAL, status=FactStatus.CONFIRMED, access_count=50), NOW)
    assert lc.maintain(f, NOW + 23 * timedelta(hours=1)).action is lc.MaintenanceKind.NONE
    expired = lc.maintain(f, NOW + 3 * DAY)
    assert expired.action is lc.MaintenanceKind.EXPIRE
    assert expired.fact is not None
    assert (
        expired.fact.status,
        expired.fact.status_reason,
        expired.fact.valid_until,
        expired.fact.believed_until,
        expired.fact.prior_status,
    ) == (FactStatus.RETRACTED, "expired", NOW + DAY, NOW + 3 * DAY, FactStatus.CONFIRMED)


def test_maintenance_never_promotes() -> None:
    assert lc.maintain(fact(access_count=30), NOW).action is lc.MaintenanceKind.NONE


@pytest.mark.parametrize("status", [FactStatus.SUPERSEDED, FactStatus.RETRACTED])
def test_maintenance_leaves_history_alone(status: FactStatus) -> None:
    old = fact(status=status, ttl_policy=TtlPolicy.EPHEMERAL, expires_at=NOW)
    assert lc.maintain(old, NOW + 900 * DAY) == lc.MaintenanceAction(lc.MaintenanceKind.NONE)


def test_maintaining_the_output_of_maintenance_does_nothing() -> None:
    for f, when in [
        (fact(), NOW + 200 * DAY),
        (fact(status=FactStatus.DORMANT), NOW),
        (lc.admit(fact(ttl_policy=TtlPolicy.EPHEMERAL), NOW), NOW + 2 * DAY),
    ]:
        first = lc.maintain(f, when)
        assert first.fact is not None
        assert lc.maintain(first.fact, when).action is lc.MaintenanceKind.NONE


# ---------------------------------------------------------------- properties

deterministic = settings(derandomize=True, database=None, max_examples=300)

facts = st.builds(
    fact,
    kind=st.sampled_from(FactKind),
    source=st.sampled_from(Source),
    provenance=st.sampled_from(Provenance),
    status=st.sampled_from(FactStatus),
    confidence=st.floats(0, 1),
    access_count=st.integers(0, 50),
    pinned=st.booleans(),
    ttl_policy=st.sampled_from(TtlPolicy),
    last_accessed=st.none() | st.floats(0, 400).map(lambda d: NOW + timedelta(days=d)),
    expires_at=st.none() | st.floats(0, 400).map(lambda d: NOW + timedelta(days=d)),
)
days = st.floats(0, 3000)


@deterministic
@given(facts, days, days)
def test_relevance_never_rises_with_idle_time(f: Fact, a: float, b: float) -> None:
    early, late = sorted((a, b))
    assert (
        lc.relevance(f, NOW + timedelta(days=late)).value
        <= lc.relevance(f, NOW + timedelta(days=early)).value
    )


@deterministic
@given(facts, days)
def test_pinned_fact_never_decays(f: Fact, d: float) -> None:
    assert lc.decay_factor(replace(f, pinned=True), NOW + timedelta(days=d)) == 1.0


@deterministic
@given(facts, st.integers(1, 10))
def test_uses_never_change_confidence_and_count_one_each(f: Fact, times: int) -> None:
    if not f.status.is_active:
        return
    used = f
    for _ in range(times):
        used = lc.mark_used(used, NOW)
    assert (used.confidence, used.access_count) == (f.confidence, f.access_count + times)
    assert used.status.is_active and used.pinned == f.pinned


@deterministic
@given(facts, days)
def test_maintenance_is_idempotent(f: Fact, d: float) -> None:
    now = NOW + timedelta(days=d)
    first = lc.maintain(lc.admit(f, NOW), now)
    settled = first.fact or lc.admit(f, NOW)
    assert lc.maintain(settled, now) == lc.MaintenanceAction(lc.MaintenanceKind.NONE)


@deterministic
@given(facts, days)
def test_maintenance_never_revives_history_unpins_or_hides_what_did_not_expire(f: Fact, d: float) -> None:
    result = lc.maintain(f, NOW + timedelta(days=d))
    if result.fact is not None:
        assert f.status.is_active
        assert (result.fact.pinned, result.fact.confidence) == (f.pinned, f.confidence)
        if result.fact.status is FactStatus.RETRACTED:
            assert result.action is lc.MaintenanceKind.EXPIRE and f.ttl_policy is TtlPolicy.EPHEMERAL
        else:
            assert result.fact.status in (FactStatus.STAGED, FactStatus.DORMANT)


def test_a_correction_of_a_confirmed_fact_starts_confirmed_and_pinned_as_it_was() -> None:
    correction = newer(content="Alice lives in Lisbon")
    staged = fact()
    assert lc.correction_of(correction, staged) == correction
    confirmed = lc.confirm(fact(), NOW)
    started = lc.correction_of(correction, confirmed)
    assert (started.status, started.pinned) == (FactStatus.CONFIRMED, True)
    used = replace(fact(), status=FactStatus.CONFIRMED, status_reason="confirmed after 3 uses")
    assert (lc.correction_of(correction, used).status, lc.correction_of(correction, used).pinned) == (
        FactStatus.CONFIRMED,
        False,
    )
