"""The fact lifecycle, pure: status, relevance, reinforcement, conflicts, maintenance.

Every path that changes a fact's status or confidence (remember, search/recall access,
correct, confirm, forget, the maintenance pass, import) goes through these functions.
They take values and return new values: no I/O, no clock reads (``now`` is a parameter,
UTC-aware), no randomness, so each rule is tested with literal inputs.

    staged --(promotion_accesses accesses | confirm | stated again)--> confirmed (confirm also pins)
    staged/confirmed --(correct | confident conflicting fact)--> superseded
    any but retracted --(forget | decayed below threshold | ephemeral expiry)--> retracted
    any --(forget with purge)--> purged: a tombstone, its text erased

Superseded and retracted facts are history: they are never revived, only read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from types import MappingProxyType

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
    FactStatus.SUPERSEDED: 0.3,
    FactStatus.RETRACTED: 0.0,
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


def _value_key(value: str | None) -> str:
    # Values are literals ("Berlin", "$5", "a@b.org"): punctuation matters, case and spacing do not.
    return " ".join((value or "").casefold().split())


@dataclass(frozen=True)
class LifecyclePolicy:
    """The lifecycle's tunable numbers; every default is the documented behaviour.

    Mapping fields are frozen on construction (plain dicts from settings are fine) and left
    out of the hash, so a policy can be a cache key while still comparing by value.
    """

    promotion_accesses: int = 3
    grace_days: float = 7.0
    # Only for kinds missing from half_life_days: 0.95 per idle week after the grace period.
    weekly_decay: float = 0.95
    half_life_days: Mapping[FactKind, float] = field(default_factory=lambda: _HALF_LIFE_DAYS, hash=False)
    # A guess the assistant made should fade within weeks unless someone uses it.
    inferred_half_life_days: float = 7.0
    source_weights: Mapping[Source, float] = field(default_factory=lambda: _SOURCE_WEIGHTS, hash=False)
    retract_below: float = 0.2
    protect_access_count: int = 5
    access_confidence_boost: float = 0.02
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
        if self.inferred_half_life_days <= 0 or any(d <= 0 for d in self.half_life_days.values()):
            problems.append("half-lives must be positive numbers of days")
        if problems:
            raise ValueError("invalid lifecycle policy: " + "; ".join(problems))


DEFAULT_POLICY = LifecyclePolicy()


@dataclass(frozen=True)
class Relevance:
    """How much a fact matters now: ``value`` is the product of the four terms explain shows."""

    confidence: float
    source_weight: float
    decay: float
    usage_boost: float
    value: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "value", self.confidence * self.source_weight * self.decay * self.usage_boost
        )


class ConflictOutcome(StrEnum):
    NONE = "none"
    SUPERSEDE = "supersede"
    CONTRADICT = "contradict"


class MaintenanceKind(StrEnum):
    NONE = "none"
    PROMOTE = "promote"
    EXPIRE = "expire"
    RETRACT_DECAYED = "retract_decayed"


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


def usage_boost(access_count: int) -> float:
    """1 + 0.5·log10(accesses + 1): 1.0 unused, 1.5 at 9 accesses, 2.0 at 99."""
    return 1.0 + 0.5 * math.log10(max(0, access_count) + 1)


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
    """Freshness in [0, 1] from the time since the fact was last used."""
    if is_expired(fact, now):
        return 0.0
    if fact.pinned or fact.ttl_policy is TtlPolicy.KEEP_FOREVER:
        return 1.0
    # Counting from the last use or statement, not from creation, keeps facts someone still needs fresh.
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
    """confidence × source weight × decay × usage boost; a pinned fact counts as certain and fresh."""
    return Relevance(
        confidence=1.0 if fact.pinned else fact.confidence,
        source_weight=policy.source_weights.get(fact.source, 1.0),
        decay=decay_factor(fact, now, policy),
        usage_boost=usage_boost(fact.access_count),
    )


def status_weight(status: FactStatus, policy: LifecyclePolicy = DEFAULT_POLICY) -> float:
    """Retrieval's multiplier for a status: staged counts less than confirmed, history far less."""
    return policy.status_weights.get(status, 0.0)


# ---------------------------------------------------------------- transitions


def _promoted(fact: Fact, policy: LifecyclePolicy) -> Fact:
    if fact.status is FactStatus.STAGED and fact.access_count >= policy.promotion_accesses:
        return replace(
            fact, status=FactStatus.CONFIRMED, status_reason=f"promoted after {fact.access_count} accesses"
        )
    return fact


def record_access(fact: Fact, now: datetime, policy: LifecyclePolicy = DEFAULT_POLICY) -> Fact:
    """A search or recall returned this fact: count it, reinforce it, promote it at the threshold.

    Superseded and retracted facts are counted (explain shows it) but keep their status
    and confidence: history is never revived by being looked at.
    """
    accessed = replace(
        fact,
        access_count=fact.access_count + 1,
        # Out-of-order writers must not move the decay clock backwards.
        last_accessed=max(now, fact.last_accessed) if fact.last_accessed else now,
    )
    if not fact.status.is_active:
        return accessed
    confidence = 1.0 if fact.pinned else min(1.0, fact.confidence + policy.access_confidence_boost)
    return _promoted(replace(accessed, confidence=confidence), policy)


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


def supersede(old: Fact, now: datetime, reason: str, *, current_id: str | None = None) -> Fact:
    """A newer fact replaces ``old``: it stops being believed at ``now`` and becomes history."""
    check_correctable(old, current_id)
    return replace(old, status=FactStatus.SUPERSEDED, valid_until=now, status_reason=reason)


def retract(fact: Fact, now: datetime, reason: str) -> Fact:
    """Forget: the fact leaves every active result but stays in history. Idempotent.

    A superseded fact keeps the ``valid_until`` its successor gave it.
    """
    if fact.status in (FactStatus.RETRACTED, FactStatus.PURGED):
        return fact
    return replace(
        fact, status=FactStatus.RETRACTED, valid_until=fact.valid_until or now, status_reason=reason
    )


def corroborate(fact: Fact, statement: Fact, now: datetime, policy: LifecyclePolicy = DEFAULT_POLICY) -> Fact:
    """``statement`` says again what the active ``fact`` says: strengthen ``fact`` instead of copying it.

    Independent statements combine like independent evidence: confidence 1 - (1-c)(1-c')
    (0.8 twice: 0.96). The fact is confirmed (not pinned: only the user pins), counts one more
    statement, keeps every source that stated it and weighs as the strongest of them, takes the
    latest evidence, and its decay restarts from ``now``. Its content, id and claim do not change.
    """
    sources = tuple(dict.fromkeys((*(fact.sources or (fact.source,)), statement.source)))
    strongest = max(sources, key=lambda s: (policy.source_weights.get(s, 1.0), s is statement.source))
    by_user = (Provenance.USER_STATED, Provenance.USER_CORRECTED)
    user = fact.provenance
    if statement.provenance is Provenance.USER_STATED and fact.provenance not in by_user:
        user = Provenance.USER_STATED
    confirmed = fact.status is FactStatus.STAGED
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
        valid_until=fact.valid_until or now,
        content="",
        evidence=None,
        subject=None,
        predicate=None,
        object=None,
        tags=(),
        pinned=False,
    )


# ---------------------------------------------------------------- conflicts


def is_single_valued(predicate: str, policy: LifecyclePolicy = DEFAULT_POLICY) -> bool:
    """lives_in, works_at, prefers, email... hold one value at a time; likes, knows... hold many."""
    return predicate_key(predicate) not in policy.multi_valued_predicates


def resolve_conflict(new: Fact, old: Fact, policy: LifecyclePolicy = DEFAULT_POLICY) -> ConflictOutcome:
    """Does ``new`` replace ``old`` (SUPERSEDE), sit beside it flagged (CONTRADICT), or neither?

    They conflict when both are about the same subject and predicate in the same scope,
    ``old`` is active, and either the predicate is single-valued and the values differ,
    or one of them denies (kind negative) exactly what the other asserts. Only a confident
    fact (> supersede_confidence) or the user (user_edit source, user_corrected provenance)
    supersedes; a pinned fact yields to the user alone.
    """
    if not old.status.is_active or new.id == old.id or new.scope != old.scope:
        return ConflictOutcome.NONE
    subject, predicate = name_key(new.subject or ""), predicate_key(new.predicate)
    if not subject or not predicate:
        return ConflictOutcome.NONE
    if subject != name_key(old.subject or "") or predicate != predicate_key(old.predicate):
        return ConflictOutcome.NONE
    new_value, old_value = _value_key(new.object), _value_key(old.object)
    if not new_value or not old_value:
        return ConflictOutcome.NONE
    negations = (new.kind is FactKind.NEGATIVE) + (old.kind is FactKind.NEGATIVE)
    if negations == 1:
        conflicting = new_value == old_value
    else:
        # Two denials never clash ("not Berlin", "not Paris"); two assertions clash on one-value slots.
        conflicting = negations == 0 and new_value != old_value and is_single_valued(predicate, policy)
    if not conflicting:
        return ConflictOutcome.NONE
    from_user = new.source is Source.USER_EDIT or new.provenance is Provenance.USER_CORRECTED
    if from_user or (new.confidence > policy.supersede_confidence and not old.pinned):
        return ConflictOutcome.SUPERSEDE
    return ConflictOutcome.CONTRADICT


# ---------------------------------------------------------------- maintenance


def maintain(fact: Fact, now: datetime, policy: LifecyclePolicy = DEFAULT_POLICY) -> MaintenanceAction:
    """What the periodic pass does to one fact; applying it to its own output does nothing.

    Only active facts are touched. In order: an expired ephemeral fact is retracted
    ("expired"); a staged fact with enough accesses is promoted; a fact whose relevance has
    decayed below ``retract_below`` is retracted ("decayed") unless it is pinned,
    keep_forever, used at least ``protect_access_count`` times, or still in its grace period
    (a fresh low-confidence fact gets the same chance to be used as any other).
    """
    if not fact.status.is_active:
        return MaintenanceAction(MaintenanceKind.NONE)
    if is_expired(fact, now):
        return MaintenanceAction(MaintenanceKind.EXPIRE, retract(fact, now, "expired"))
    current = _promoted(fact, policy)
    protected = (
        current.pinned
        or current.ttl_policy is TtlPolicy.KEEP_FOREVER
        or current.access_count >= policy.protect_access_count
    )
    score = relevance(current, now, policy)
    if not protected and score.decay < 1.0 and score.value < policy.retract_below:
        return MaintenanceAction(MaintenanceKind.RETRACT_DECAYED, retract(current, now, "decayed"))
    if current is not fact:
        return MaintenanceAction(MaintenanceKind.PROMOTE, current)
    return MaintenanceAction(MaintenanceKind.NONE)
