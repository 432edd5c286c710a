"""Valid time and record time, pure: what was true when, and what memory held when.

Valid time is the world's: a statement is true from its ``event_time`` (else ``valid_from``,
when it was stated) until ``valid_until``. Record time is memory's: it held a fact from
``created_at`` until ``believed_until`` (superseded or forgotten), and the fact had
``prior_status`` until then. ``search(as_of=...)`` reads the first, ``known_at`` the second.
"""

from __future__ import annotations

from datetime import datetime

from hippograph.domain.models import Fact, FactStatus, TtlPolicy


def valid_start(fact: Fact) -> datetime:
    """When the statement became true in the world: its event time if known, else when stated."""
    return fact.event_time or fact.valid_from


def fact_time(fact: Fact) -> datetime:
    """The time a fact is filed under: its event time if known, else when it was stated.

    ``search(after=, before=)`` filter on it and a time phrase in the query ranks by it.
    """
    return fact.event_time or fact.created_at


def believed_until(fact: Fact) -> datetime | None:
    """When memory stopped holding the fact, if it did.

    History stored before ``believed_until`` existed kept that time in ``valid_until``.
    """
    if fact.status.is_active:
        return None
    return fact.believed_until or fact.valid_until


def believed_at(fact: Fact, moment: datetime) -> bool:
    """Record time: did memory hold this fact at ``moment``?"""
    until = believed_until(fact)
    return fact.created_at <= moment and (until is None or moment < until)


def valid_at(fact: Fact, moment: datetime, *, known_at: datetime | None = None) -> bool:
    """Valid time: was the statement true at ``moment``, as memory knows now (or at ``known_at``:
    a fact still held then had no end yet, except an ephemeral fact's expiry)?"""
    end = fact.valid_until
    if known_at is not None and believed_at(fact, known_at):
        end = fact.expires_at if fact.ttl_policy is TtlPolicy.EPHEMERAL else None
    return valid_start(fact) <= moment and (end is None or moment < end)


def status_at(fact: Fact, moment: datetime) -> FactStatus:
    """The status memory gave the fact at record time ``moment`` (history shows what it was
    before it was superseded or forgotten; facts held today show today's status)."""
    until = believed_until(fact)
    if until is not None and moment < until:
        return prior_status(fact)
    return fact.status


def prior_status(fact: Fact) -> FactStatus:
    """The status a superseded or forgotten fact had while held (for history stored before
    ``prior_status`` existed: confirmed if pinned, else staged)."""
    if fact.status.is_active:
        return fact.status
    return fact.prior_status or (FactStatus.CONFIRMED if fact.pinned else FactStatus.STAGED)
