"""The fact lifecycle, pure: status, relevance, evidence, conflicts, maintenance, time travel.

Every path that changes a fact's status or confidence (remember, correct, confirm, forget,
mark_used, the maintenance pass, import) goes through these functions. They take values and
return new values: no I/O, no clock reads (``now`` is a parameter, UTC-aware), no randomness,
so each rule is tested with literal inputs.

Reads are reads: being returned by search or recall is not evidence and changes nothing.
Only evidence promotes or revives: ``confirm``, the same fact stated again (``corroborate``)
and a client's report that it used a fact (``mark_used``). ``forget`` with purge leaves a
tombstone whose text is erased (status purged).

    staged --(promotion_accesses uses | corroborate | confirm)--> confirmed (confirm also pins)
    staged --(unused and unrestated until relevance < dormant_below)--> dormant
    dormant --(use | corroborate)--> staged or confirmed; --(confirm)--> confirmed
    any active --(correct | confident conflicting fact)--> superseded
    any active --(forget | ephemeral expiry)--> retracted

Fading is not forgetting: decay lowers a fact's rank down to a floor, and a dormant fact is
still found. Only ephemeral facts expire. Superseded and retracted facts are history: they are
never revived, only read, and remember the status they had (``prior_status``) and when memory
stopped holding them (``believed_until``), so a look into the past shows them as they were.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from types import MappingProxyType

from hippograph.domain import bitemporal
from hippograph.domain.errors import InvalidTransition
from hippograph.domain.models import Fact, FactKind, FactStatus, Provenance, Source, TtlPolicy, name_key

_SECONDS_PER_DAY = 86400.0

_HALF_LIFE_DAYS = {
    FactKind.CORRECTION: 365.0,
    FactKind.DECISION: 180.0,
    FactKind.PREFERENCE: 90.0,
    FactKind.NEGATIVE: 90.0,
    FactKind.PROCEDURE: 60.0,
    FactKind.FACT: 30.0,
    FactKind.EPISODE: 30.0,
}
_SOURCE_WEIGHTS = {
    Source.USER_EDIT: 2.0,
    Source.FILE: 1.5,
    Source.SYSTEM: 1.2,
    Source.CONVERSATION: 1.0,
    Source.IMPORT: 1.0,
}
_STATUS_WEIGHTS = {
    FactStatus.CONFIRMED: 1.0,
    FactStatus.STAGED: 0.8,
    FactStatus.DORMANT: 0.6,
    FactStatus.SUPERSEDED: 0.3,
    # Only a search that asks for history sees a forgotten fact: ranked below what is still held,
    # but by its relevance (at 0 it came last, behind any unrelated fact, whatever it said).
    FactStatus.RETRACTED: 0.1,
    FactStatus.PURGED: 0.0,
}
_MULTI_VALUED = frozenset(
    {
        "likes",
        "dislikes",
        "knows",
        "uses",
        "has",
        "owns",
        "visited",
        "speaks",
        "member_of",
        "works_with",
        "friend_of",
        "related_to",
        "tag",
    }
)


def predicate_key(predicate: str | None) -> str:
    """How predicates are compared: "Lives In", "lives-in" and "lives_in" are one predicate."""
    return name_key(predicate or "").replace(" ", "_")


@dataclass(frozen=True)
class LifecyclePolicy:
    """The lifecycle's tunable numbers; every default is the documented behaviour.

    Mapping fields are frozen on construction (plain dicts from settings are fine) and left
    out of the hash, so a policy can be a cache key while still comparing by value.
    """

    # Uses (mark_used) that confirm a staged fact.
    promotion_accesses: int = 3
    grace_days: float = 7.0
    # Only for kinds missing from half_life_days: 0.95 per idle week after the grace period.
    weekly_decay: float = 0.95
    half_life_days: Mapping[FactKind, float] = field(default_factory=lambda: _HALF_LIFE_DAYS, hash=False)
    # A guess the assistant made should fade within weeks unless someone uses it.
    inferred_half_life_days: float = 7.0
    source_weights: Mapping[Source, float] = field(default_factory=lambda: _SOURCE_WEIGHTS, hash=False)
    # A staged fact whose relevance (with its unfloored decay) falls below this turns dormant.
    dormant_below: float = 0.2
    # Ranking's decay never goes below this (two half-lives): an old fact that is the best
    # answer still outranks a fresh, weaker match.
    min_freshness: float = 0.25
    supersede_confidence: float = 0.9
    ephemeral_ttl_days: float = 1.0
    status_weights: Mapping[FactStatus, float] = field(default_factory=lambda: _STATUS_WEIGHTS, hash=False)
    multi_valued_predicates: frozenset[str] = _MULTI_VALUED

    def __post_init__(self) -> None:
        # Freeze copies so a caller mutating its settings dict cannot change a live policy.
        for name in ("half_life_days", "source_weights", "status_weights"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        object.__setattr__(
            self, "multi_valued_predicates", frozenset(map(predicate_key, self.multi_valued_predicates))
        )
        problems = []
        if self.promotion_accesses < 1:
            problems.append("promotion_accesses must be at least 1")
        if self.grace_days < 0 or self.ephemeral_ttl_days <= 0:
            problems.append("grace_days must be >= 0 and ephemeral_ttl_days > 0")
        if not 0 < self.weekly_decay <= 1:
            problems.append("weekly_decay must be in (0, 1]")
        if not 0 <= self.min_freshness <= 1 or self.dormant_below < 0:
            problems.append("min_freshness must be in [0, 1] and dormant_below >= 0")
        if self.inferred_half_life_days <= 0 or any(d <= 0 for d in self.half_life_days.values()):
            problems.append("half-lives must be positive numbers of days")
        if problems:
            raise ValueError("invalid lifecycle policy: " + "; ".join(problems))


DEFAULT_POLICY = LifecyclePolicy()


@dataclass(frozen=True)
class Relevance:
    """How much a fact matters now: ``value`` is the product of the three terms explain shows.

    ``decay`` is ranking's freshness, floored at ``min_freshness``. How often a fact was
    returned or used is no term: popularity never reorders results.
    """

    confidence: float
    source_weight: float
    decay: float
    value: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", self.confidence * self.source_weight * self.decay)


class MaintenanceKind(StrEnum):
    NONE = "none"
    EXPIRE = "expire"
    DORMANT = "dormant"
    REVIVE = "revive"


@dataclass(frozen=True)
class MaintenanceAction:
    """What the maintenance pass does to one fact; ``fact`` is what to write, None if nothing."""

    action: MaintenanceKind
    fact: Fact | None = None


# ---------------------------------------------------------------- admission and relevance


def admit(fact: Fact, now: datetime, policy: LifecyclePolicy = DEFAULT_POLICY) -> Fact:
    """Normalise a freshly built fact before its first write.

    Confidence is clamped to [0, 1] (NaN becomes 0) and an ephemeral fact without an
    expiry gets ``now + ephemeral_ttl_days``. Status, times and pinning are the caller's:
    a new fact is built staged, unpinned, with ``created_at = valid_from = now``.
    """
    confidence = 0.0 if math.isnan(fact.confidence) else min(1.0, max(0.0, fact.confidence))
    expires_at = fact.expires_at
    if fact.ttl_policy is TtlPolicy.EPHEMERAL and expires_at is None:
        expires_at = now + timedelta(days=policy.ephemeral_ttl_days)
    return replace(fact, confidence=confidence, expires_at=expires_at)


def half_life(fact: Fact, policy: LifecyclePolicy = DEFAULT_POLICY) -> float | None:
    """Days for relevance to halve after the grace period; None means the weekly fallback rate."""
    if fact.provenance is Provenance.INFERRED:
        return policy.inferred_half_life_days
    return policy.half_life_days.get(fact.kind)


def is_expired(fact: Fact, now: datetime) -> bool:
    """An ephemeral fact past its expiry. Pinning wins: confirm is the user's later, explicit word."""
    return (
        fact.ttl_policy is TtlPolicy.EPHEMERAL
        and not fact.pinned
        and fact.expires_at is not None
        and now >= fact.expires_at
    )


def decay_factor(fact: Fact, now: datetime, policy: LifecyclePolicy = DEFAULT_POLICY) -> float:
    """Freshness in [0, 1] from the time since the fact was stated, last restated or last used."""
    if is_expired(fact, now):
        return 0.0
    if fact.pinned or fact.ttl_policy is TtlPolicy.KEEP_FOREVER:
        return 1.0
    # Counting from the last use or statement, not from creation, keeps facts someone still needs
    # fresh. Only evidence moves this clock: a search that returns the fact does not.
    last_used = max(
        fact.created_at, fact.last_accessed or fact.created_at, fact.last_stated or fact.created_at
    )
    idle_days = (now - last_used).total_seconds() / _SECONDS_PER_DAY - policy.grace_days
    if idle_days <= 0:
        return 1.0
    days = half_life(fact, policy)
    if days is None:
        return float(policy.weekly_decay ** (idle_days / 7.0))
    return float(0.5 ** (idle_days / days))


def relevance(fact: Fact, now: datetime, policy: LifecyclePolicy = DEFAULT_POLICY) -> Relevance:
    """confidence × source weight × decay (floored at ``min_freshness`` unless expired);
    a pinned fact counts as certain and fresh."""
    decay = decay_factor(fact, now, policy)
    return Relevance(
        confidence=1.0 if fact.pinned else fact.confidence,
        source_weight=policy.source_weights.get(fact.source, 1.0),
        decay=decay if is_expired(fact, now) else max(decay, policy.min_freshness),
    )


def is_faded(fact: Fact, now: datetime, policy: LifecyclePolicy = DEFAULT_POLICY) -> bool:
    """Has this fact gone unused and unrestated so long that its relevance, decay unfloored,
    is below ``dormant_below``? Never within the grace period, nor for pinned or keep-forever facts."""
    decay = decay_factor(fact, now, policy)
    if decay >= 1.0:
        return False
    weight = policy.source_weights.get(fact.source, 1.0)
    return fact.confidence * weight * decay < policy.dormant_below


def status_weight(status: FactStatus, policy: LifecyclePolicy = DEFAULT_POLICY) -> float:
    """Retrieval's multiplier for a status: staged counts less than confirmed, dormant less
    again, history far less."""
    return policy.status_weights.get(status, 0.0)


# ---------------------------------------------------------------- transitions


def _history_error(fact: Fact, current_id: str | None, doing: str) -> InvalidTransition:
    """Why a superseded or forgotten fact cannot be ``doing`` (used, restated), and what instead."""
    if fact.status is FactStatus.SUPERSEDED:
        newer = f" ({current_id})" if current_id else ""
        return InvalidTransition(
            f"fact {fact.id} was superseded by a newer fact{newer}; {doing} that one instead "
            "(explain shows the supersedes chain)"
        )
    return InvalidTransition(
        f"fact {fact.id} was forgotten ({fact.status_reason or 'retracted'}); remember it again if it is true"
    )


def _later(a: datetime | None, b: datetime) -> datetime:
    # Out-of-order writers must not move the decay clock backwards.
    return max(a, b) if a is not None else b


def _revived(fact: Fact, reason: str) -> Fact:
    if fact.status is FactStatus.DORMANT:
        return replace(fact, status=FactStatus.STAGED, status_reason=reason)
    return fact


def mark_used(
    fact: Fact, now: datetime, policy: LifecyclePolicy = DEFAULT_POLICY, *, current_id: str | None = None
) -> Fact:
    """A client reports it used this fact: count the use, refresh the decay clock, wake a
    dormant fact, and confirm a staged one at its ``promotion_accesses``-th use.

    Confidence is left alone: using a fact does not make it truer. Raises InvalidTransition
    for history (superseded or forgotten), naming the newer fact if ``current_id`` is given.
    """
    if not fact.status.is_active:
        raise _history_error(fact, current_id, "use")
    used = _revived(
        replace(fact, access_count=fact.access_count + 1, last_accessed=_later(fact.last_accessed, now)),
        "woken: used again",
    )
    if used.status is FactStatus.STAGED and used.access_count >= policy.promotion_accesses:
        return replace(
            used, status=FactStatus.CONFIRMED, status_reason=f"confirmed after {used.access_count} uses"
        )
    return used


def confirm(fact: Fact, now: datetime, *, current_id: str | None = None) -> Fact:
    """Pin a fact: confirmed, confidence 1, never decays nor expires. Idempotent.

    ``now`` is unused today but kept so every transition has the same shape. ``current_id``,
    if the caller knows it, names the newest fact in a supersedes chain in the error.
    """
    if fact.status is FactStatus.SUPERSEDED:
        newer = f" ({current_id})" if current_id else ""
        raise InvalidTransition(
            f"fact {fact.id} was superseded by a newer fact{newer}; confirm that one instead "
            "(explain shows the supersedes chain)"
        )
    if fact.status in (FactStatus.RETRACTED, FactStatus.PURGED):
        raise InvalidTransition(
            f"fact {fact.id} was forgotten ({fact.status_reason or 'retracted'}); to restore it, "
            "remember it again and confirm the new fact"
        )
    if fact.pinned and fact.status is FactStatus.CONFIRMED and fact.confidence == 1.0:
        return fact
    return replace(
        fact, status=FactStatus.CONFIRMED, pinned=True, confidence=1.0, status_reason="confirmed by user"
    )


def correction_of(correction: Fact, old: Fact) -> Fact:
    """``correction`` as it starts when it replaces ``old``: confirmed (and pinned) if ``old`` was,
    since the user replaced a value memory held as sure; else as it is (staged)."""
    if old.status is not FactStatus.CONFIRMED:
        return correction
    return replace(
        correction,
        status=FactStatus.CONFIRMED,
        pinned=old.pinned,
        status_reason=f"corrects confirmed fact {old.id}",
    )


def check_correctable(fact: Fact, current_id: str | None = None) -> None:
    """Raise InvalidTransition unless ``fact`` is active and so may be corrected or superseded."""
    if fact.status in (FactStatus.RETRACTED, FactStatus.PURGED):
        raise InvalidTransition(
            f"fact {fact.id} was forgotten ({fact.status_reason or 'retracted'}); remember the right "
            "statement as a new fact instead of correcting it"
        )
    if fact.status is FactStatus.SUPERSEDED:
        newer = f" ({current_id})" if current_id else ""
        raise InvalidTransition(
            f"fact {fact.id} was already superseded; correct the newest fact in its chain{newer} "
            "instead (explain shows the chain)"
        )


def can_correct(fact: Fact) -> bool:
    return fact.status.is_active


def supersede(
    old: Fact,
    now: datetime,
    reason: str,
    *,
    current_id: str | None = None,
    valid_until: datetime | None = None,
) -> Fact:
    """A newer fact replaces ``old``: memory stops holding it at ``now`` and it becomes history.

    Its valid time closes at ``valid_until`` (the newer fact's event time: when Alice moved),
    else at ``now``; never before it began, so a fact corrected as wrong from the start was
    simply never true.
    """
    check_correctable(old, current_id)
    until = now if valid_until is None else max(valid_until, bitemporal.valid_start(old))
    return replace(
        old,
        status=FactStatus.SUPERSEDED,
        valid_until=until,
        believed_until=now,
        prior_status=old.status,
        status_reason=reason,
    )


def retract(fact: Fact, now: datetime, reason: str) -> Fact:
    """Forget: the fact leaves every active result but stays in history. Idempotent.

    Memory stops holding it at ``now``; forgetting says nothing of the world, so its valid
    time is left alone. A superseded fact keeps when and as what it was last held.
    """
    if fact.status in (FactStatus.RETRACTED, FactStatus.PURGED):
        return fact
    if fact.status is FactStatus.SUPERSEDED:
        return replace(fact, status=FactStatus.RETRACTED, status_reason=reason)
    return replace(
        fact,
        status=FactStatus.RETRACTED,
        believed_until=now,
        prior_status=fact.status,
        status_reason=reason,
    )


def corroborate(
    fact: Fact,
    statement: Fact,
    now: datetime,
    policy: LifecyclePolicy = DEFAULT_POLICY,
    *,
    current_id: str | None = None,
) -> Fact:
    """``statement`` says again what the active ``fact`` says: strengthen ``fact`` instead of copying it.

    Independent statements combine like independent evidence: confidence 1 - (1-c)(1-c')
    (0.8 twice: 0.96). The fact is confirmed (not pinned: only the user pins), counts one more
    statement, keeps every source that stated it and weighs as the strongest of them, takes the
    latest evidence, and its decay restarts from ``now``; a dormant fact wakes. Its content, id
    and claim do not change. Raises InvalidTransition for history, as ``mark_used`` does.
    """
    if not fact.status.is_active:
        raise _history_error(fact, current_id, "restate")
    sources = tuple(dict.fromkeys((*(fact.sources or (fact.source,)), statement.source)))
    strongest = max(sources, key=lambda s: (policy.source_weights.get(s, 1.0), s is statement.source))
    by_user = (Provenance.USER_STATED, Provenance.USER_CORRECTED)
    user = fact.provenance
    if statement.provenance is Provenance.USER_STATED and fact.provenance not in by_user:
        user = Provenance.USER_STATED
    confirmed = fact.status in (FactStatus.STAGED, FactStatus.DORMANT)
    return replace(
        fact,
        status=FactStatus.CONFIRMED if confirmed else fact.status,
        status_reason=f"stated {fact.corroborations + 1} times" if confirmed else fact.status_reason,
        confidence=1.0 - (1.0 - fact.confidence) * (1.0 - statement.confidence),
        corroborations=fact.corroborations + 1,
        sources=sources,
        source=strongest,
        provenance=user,
        evidence=statement.evidence or fact.evidence,
        last_stated=max(now, fact.last_stated) if fact.last_stated else now,
    )


def purge(fact: Fact, now: datetime) -> Fact:
    """Forget and erase: a tombstone with the fact's id, times and status history but none of its
    text (content, evidence, claim, tags, reason). Idempotent."""
    if fact.status is FactStatus.PURGED:
        return fact
    return replace(
        fact,
        status=FactStatus.PURGED,
        status_reason="purged",
        believed_until=fact.believed_until or now,
        prior_status=fact.prior_status or fact.status,
        content="",
        evidence=None,
        subject=None,
        predicate=None,
        object=None,
        tags=(),
        pinned=False,
    )


# ---------------------------------------------------------------- maintenance


def maintain(fact: Fact, now: datetime, policy: LifecyclePolicy = DEFAULT_POLICY) -> MaintenanceAction:
    """What the periodic pass does to one fact; applying it to its own output does nothing.

    Only active facts are touched. An expired ephemeral fact is retracted ("expired"), the
    only way time removes a fact. A staged fact that has faded (``is_faded``) turns dormant;
    a dormant one that has not (the policy or the clock changed) is staged again. Confirmed
    facts never turn dormant: their decay only lowers their rank, down to the floor.
    """
    if not fact.status.is_active:
        return MaintenanceAction(MaintenanceKind.NONE)
    if is_expired(fact, now):
        expired = replace(retract(fact, now, "expired"), valid_until=fact.expires_at)
        return MaintenanceAction(MaintenanceKind.EXPIRE, expired)
    faded = is_faded(fact, now, policy)
    if fact.status is FactStatus.STAGED and faded:
        last = max(fact.created_at, fact.last_accessed or fact.created_at)
        reason = f"dormant: not used or restated since {last.date().isoformat()}"
        return MaintenanceAction(
            MaintenanceKind.DORMANT, replace(fact, status=FactStatus.DORMANT, status_reason=reason)
        )
    if fact.status is FactStatus.DORMANT and not faded:
        return MaintenanceAction(MaintenanceKind.REVIVE, _revived(fact, "woken: no longer faded"))
    return MaintenanceAction(MaintenanceKind.NONE)
