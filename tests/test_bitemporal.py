"""Valid time and record time with literal facts: what was true when, what memory held when."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hippograph.domain import bitemporal as bt
from hippograph.domain import lifecycle as lc
from hippograph.domain.models import Fact, FactStatus, TtlPolicy
from testkit.facts import make_fact

STATED = datetime(2024, 1, 15, tzinfo=UTC)  # when memory was told "Alice lives in Berlin"
MOVED_IN = datetime(2023, 1, 10, tzinfo=UTC)  # its event time
MOVED_OUT = datetime(2024, 3, 1, tzinfo=UTC)  # the correction's event time
CORRECTED = datetime(2024, 6, 1, tzinfo=UTC)  # when memory was told she moved


def berlin(**overrides: object) -> Fact:
    defaults: dict[str, object] = {"id": "f_berlin", "status": FactStatus.CONFIRMED, "event_time": MOVED_IN}
    return make_fact(at=STATED, **{"content": "Alice lives in Berlin", **defaults, **overrides})


MOVED = lc.supersede(berlin(), CORRECTED, "corrected by f_paris", valid_until=MOVED_OUT)


@pytest.mark.parametrize(
    ("moment", "true"),
    [
        (MOVED_IN - timedelta(days=1), False),
        (MOVED_IN, True),
        (datetime(2023, 6, 1, tzinfo=UTC), True),  # before memory was told: valid time is the world's
        (MOVED_OUT - timedelta(seconds=1), True),
        (MOVED_OUT, False),
        (CORRECTED + timedelta(days=1), False),
    ],
)
def test_a_moved_fact_is_true_from_its_event_time_until_the_move(moment: datetime, true: bool) -> None:
    assert bt.valid_at(MOVED, moment) is true


def test_without_an_event_time_a_fact_is_true_from_when_it_was_stated() -> None:
    undated = berlin(event_time=None)
    assert not bt.valid_at(undated, STATED - timedelta(days=1))
    assert bt.valid_at(undated, STATED)


@pytest.mark.parametrize(
    ("moment", "held", "status"),
    [
        (STATED - timedelta(days=1), False, None),
        (STATED, True, FactStatus.CONFIRMED),
        (CORRECTED - timedelta(seconds=1), True, FactStatus.CONFIRMED),
        (CORRECTED, False, FactStatus.SUPERSEDED),
    ],
)
def test_memory_held_the_fact_from_its_statement_until_its_correction(
    moment: datetime, held: bool, status: FactStatus | None
) -> None:
    assert bt.believed_at(MOVED, moment) is held
    if status is not None:
        assert bt.status_at(MOVED, moment) is status


def test_as_memory_knew_it_before_the_correction_the_fact_had_no_end() -> None:
    later = datetime(2025, 1, 1, tzinfo=UTC)
    assert not bt.valid_at(MOVED, later)
    assert bt.valid_at(MOVED, later, known_at=CORRECTED - timedelta(days=1))
    assert not bt.valid_at(MOVED, later, known_at=CORRECTED)


def test_an_ephemeral_fact_ends_at_its_expiry_as_known_from_the_start() -> None:
    ephemeral = lc.admit(berlin(event_time=None, ttl_policy=TtlPolicy.EPHEMERAL), STATED)
    assert ephemeral.expires_at == STATED + timedelta(days=1)
    assert not bt.valid_at(ephemeral, STATED + timedelta(days=2), known_at=STATED)


def test_active_facts_show_todays_status_at_any_time() -> None:
    dormant = berlin(status=FactStatus.DORMANT)
    assert bt.believed_until(dormant) is None
    assert bt.status_at(dormant, STATED) is FactStatus.DORMANT
    assert bt.prior_status(dormant) is FactStatus.DORMANT


@pytest.mark.parametrize(("pinned", "then"), [(True, FactStatus.CONFIRMED), (False, FactStatus.STAGED)])
def test_history_stored_before_record_time_existed_reads_its_end_from_valid_until(
    pinned: bool, then: FactStatus
) -> None:
    # Schema v1 wrote superseded facts with valid_until = the time of the correction, and no more.
    old = berlin(status=FactStatus.SUPERSEDED, valid_until=CORRECTED, pinned=pinned, event_time=None)
    assert bt.believed_until(old) == CORRECTED
    assert bt.believed_at(old, CORRECTED - timedelta(days=1))
    assert bt.status_at(old, CORRECTED - timedelta(days=1)) is then
