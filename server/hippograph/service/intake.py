"""Intake: what a caller sent to remember, checked and normalised, becomes an unstored Fact.

Secrets were screened before this point, by ``screening.screen`` (``Memory.call`` runs it on
every write's arguments): nothing here scans.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hippograph.domain import lifecycle as lc
from hippograph.domain import validation as check
from hippograph.domain.errors import InvalidInput
from hippograph.domain.models import Fact, FactKind, FactStatus, Provenance, Source, TtlPolicy
from hippograph.domain.triggers import as_tag as trigger_tag
from hippograph.service.shaping import new_id
from hippograph.service.stores import Stores
from hippograph.text.time_phrases import parse_event_time

# remember's arguments: what each item of remember_many may hold.
REMEMBER_FIELDS = (
    "content kind tags entities subject predicate object confidence source scope event_time session_id "
    "evidence ttl triggers"
).split()


def build_item(stores: Stores, index: int, item: Mapping[str, Any]) -> tuple[Fact, tuple[str, ...]]:
    """One item of remember_many, checked like remember's arguments; errors name the item."""
    where = f"items[{index}]"
    if not isinstance(item, Mapping):
        raise InvalidInput(f"{where} must be an object of remember's fields, e.g. {{'content': '...'}}")
    unknown = sorted(str(name) for name in set(item) - set(REMEMBER_FIELDS))
    if unknown:
        raise InvalidInput(
            f"{where} has unknown field(s) {', '.join(unknown)}: use {', '.join(REMEMBER_FIELDS)}"
        )
    fields: dict[str, Any] = {name: item.get(name) for name in REMEMBER_FIELDS}
    try:
        return build_fact(stores, **fields)
    except InvalidInput as err:
        raise type(err)(f"{where}: {err}") from None


def build_fact(
    stores: Stores,
    content: str,
    *,
    kind: str | None,
    tags: Sequence[str] | None,
    entities: Sequence[str] | None,
    subject: str | None,
    predicate: str | None,
    object: str | None,
    confidence: float | None,
    source: str | None,
    scope: str | None,
    event_time: str | None,
    session_id: str | None,
    evidence: str | None,
    ttl: str | None,
    triggers: Sequence[str] | None = None,
    provenance: Provenance | None = None,
) -> tuple[Fact, tuple[str, ...]]:
    """Validate everything a caller sent; build the fact (not yet stored)."""
    s = stores.settings
    content = check.text(content, "content", max_bytes=s.max_content_bytes, statement=True)
    fact_source = check.choice(source, Source, "source", Source.CONVERSATION)
    subject = check.optional_text(subject, "subject", max_bytes=200)
    predicate = check.optional_text(predicate, "predicate", max_bytes=100)
    if predicate:
        # One spelling per relation, so "Lives In" and "lives_in" meet in conflict checks.
        predicate = lc.predicate_key(predicate)
    object = check.optional_text(object, "object", max_bytes=1000)
    if predicate and not subject:
        raise InvalidInput("predicate needs a subject: send subject too, e.g. subject='Alice'")
    when = None
    if event_time:
        when = parse_event_time(event_time) if isinstance(event_time, str) else None
        if when is None:
            raise InvalidInput("event_time must be a string: send ISO 8601, e.g. 2024-05-08")
    now = stores.clock()
    user = fact_source is Source.USER_EDIT
    fact_kind = check.choice(kind, FactKind, "kind", FactKind.FACT)
    trigger_tags = _trigger_tags(triggers, fact_kind, max_count=s.max_tags_per_call)
    fact = Fact(
        id=new_id("f"),
        content=content,
        kind=fact_kind,
        status=FactStatus.STAGED,
        confidence=check.confidence(confidence, default=1.0 if user else 0.8),
        source=fact_source,
        provenance=provenance or (Provenance.USER_STATED if user else Provenance.OBSERVED),
        scope=check.scope(scope),
        created_at=now,
        valid_from=now,
        event_time=when,
        ttl_policy=check.choice(ttl, TtlPolicy, "ttl", TtlPolicy.DECAY),
        subject=subject,
        predicate=predicate,
        object=object,
        tags=tuple(dict.fromkeys((*check.tags(tags, max_count=s.max_tags_per_call), *trigger_tags))),
        session_id=check.session_id(session_id),
        evidence=check.optional_text(evidence, "evidence", max_bytes=s.max_content_bytes),
    )
    names = check.names(entities, "entities", max_count=s.max_entities_per_call)
    return lc.admit(fact, now, stores.policy), names


def _trigger_tags(values: str | Sequence[str] | None, kind: FactKind, *, max_count: int) -> tuple[str, ...]:
    """The tags that keep a negative memory's triggers (``domain.triggers``)."""
    if not values:
        return ()
    if kind is not FactKind.NEGATIVE:
        raise InvalidInput(
            "triggers are for kind='negative' memories (what not to do): send kind='negative' too, "
            "or leave triggers out"
        )
    listed = [values] if isinstance(values, str) else list(values)
    if len(listed) > max_count:
        raise InvalidInput(
            f"{len(listed)} triggers is over the limit of {max_count}: send the most telling ones"
        )
    return tuple(dict.fromkeys(trigger_tag(value) for value in listed))
