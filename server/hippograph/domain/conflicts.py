"""Conflicts between claims, pure: does a new subject-predicate-object fact replace an old one?"""

from __future__ import annotations

from enum import StrEnum

from hippograph.domain.lifecycle import DEFAULT_POLICY, LifecyclePolicy, predicate_key
from hippograph.domain.models import Fact, FactKind, Provenance, Source, name_key


class ConflictOutcome(StrEnum):
    NONE = "none"
    SUPERSEDE = "supersede"
    CONTRADICT = "contradict"


def value_key(value: str | None) -> str:
    """How values are compared: they are literals ("Berlin", "$5", "a@b.org"), so punctuation
    matters; case and spacing do not."""
    return " ".join((value or "").casefold().split())


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
    new_value, old_value = value_key(new.object), value_key(old.object)
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
