"""Domain values and the typed shapes at the boundary.

Enums and the frozen ``Fact`` / ``Entity`` records are what every layer passes around;
the pydantic models are the structured output the MCP tools return. This module imports
no database, MCP or I/O library: it is the bottom of the dependency graph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class FactKind(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    PROCEDURE = "procedure"
    DECISION = "decision"
    CORRECTION = "correction"
    NEGATIVE = "negative"
    EPISODE = "episode"


class FactStatus(StrEnum):
    STAGED = "staged"
    CONFIRMED = "confirmed"
    # A staged fact nobody used or restated for long: still believed and found, weighed less.
    DORMANT = "dormant"
    SUPERSEDED = "superseded"
    RETRACTED = "retracted"
    PURGED = "purged"  # forgotten and erased: a tombstone without content that keeps chains

    @property
    def is_active(self) -> bool:
        return self.value in ACTIVE_STATUSES


# What memory currently believes: the statuses search shows by default and the lifecycle maintains.
ACTIVE_STATUSES: tuple[str, ...] = (
    FactStatus.STAGED.value,
    FactStatus.CONFIRMED.value,
    FactStatus.DORMANT.value,
)
ALL_STATUSES: tuple[str, ...] = tuple(s.value for s in FactStatus)
# What search may show with include_history: a purged fact has nothing left to show.
HISTORY_STATUSES: tuple[str, ...] = tuple(s for s in ALL_STATUSES if s != FactStatus.PURGED.value)


class EdgeType(StrEnum):
    """Every edge table of the graph (graph_schema/kuzu)."""

    # fact -> fact
    SUPERSEDES = "SUPERSEDES"
    CONTRADICTS = "CONTRADICTS"
    DERIVED_FROM = "DERIVED_FROM"
    RELATES_TO = "RELATES_TO"
    CAUSES = "CAUSES"
    NEXT = "NEXT"
    # fact -> entity, entity -> entity, fact -> tag
    ABOUT = "ABOUT"
    RELATES = "RELATES"
    HAS_TAG = "HAS_TAG"


FACT_EDGES: tuple[EdgeType, ...] = (
    EdgeType.SUPERSEDES,
    EdgeType.CONTRADICTS,
    EdgeType.DERIVED_FROM,
    EdgeType.RELATES_TO,
    EdgeType.CAUSES,
    EdgeType.NEXT,
)
# Properties each edge type carries besides created_at (the schema's, in one place).
EDGE_PROPS: dict[EdgeType, dict[str, type]] = {
    EdgeType.SUPERSEDES: {"reason": str},
    EdgeType.CONTRADICTS: {},
    EdgeType.DERIVED_FROM: {"weight": float},
    EdgeType.RELATES_TO: {"relation": str, "weight": float},
    EdgeType.CAUSES: {"weight": float},
    EdgeType.NEXT: {},
    EdgeType.ABOUT: {"role": str},
    EdgeType.RELATES: {"predicate": str, "weight": float, "fact_id": str},
    EdgeType.HAS_TAG: {},
}


class Source(StrEnum):
    USER_EDIT = "user_edit"
    FILE = "file"
    SYSTEM = "system"
    CONVERSATION = "conversation"
    IMPORT = "import"


class Provenance(StrEnum):
    USER_STATED = "user_stated"
    USER_CORRECTED = "user_corrected"
    OBSERVED = "observed"
    INFERRED = "inferred"
    EXTRACTED = "extracted"


class TtlPolicy(StrEnum):
    DECAY = "decay"
    KEEP_FOREVER = "keep_forever"
    EPHEMERAL = "ephemeral"


GLOBAL_SCOPE = "global"

_WORDS = re.compile(r"\w+")


def name_key(name: str) -> str:
    """How entity names and aliases are compared: case-, punctuation- and spacing-insensitive."""
    return " ".join(_WORDS.findall(name.casefold()))


@dataclass(frozen=True, slots=True)
class Fact:
    """One natural-language statement and its lifecycle state (times are UTC-aware).

    Two clocks (bi-temporal): valid time says when the statement was true in the world,
    from ``event_time`` (else ``valid_from``) until ``valid_until``; record time says when
    memory held it, from ``created_at`` until ``believed_until`` (set when it is superseded
    or forgotten, with the status it had until then in ``prior_status``).
    ``last_accessed`` and ``access_count`` are the last time and the number of times a client
    reported using it (or, for ``last_accessed``, it was stated again): reads leave them alone.
    """

    id: str
    content: str
    kind: FactKind
    status: FactStatus
    confidence: float
    source: Source
    provenance: Provenance
    scope: str
    created_at: datetime
    valid_from: datetime
    valid_until: datetime | None = None
    event_time: datetime | None = None
    last_accessed: datetime | None = None
    access_count: int = 0
    pinned: bool = False
    ttl_policy: TtlPolicy = TtlPolicy.DECAY
    expires_at: datetime | None = None
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    tags: tuple[str, ...] = ()
    session_id: str | None = None
    evidence: str | None = None
    status_reason: str | None = None
    believed_until: datetime | None = None
    prior_status: FactStatus | None = None
    corroborations: int = 1  # times it was stated (remember of the same statement corroborates)
    sources: tuple[Source, ...] = ()  # every source that stated it, first first ((): just ``source``)
    last_stated: datetime | None = None  # when it was last stated again, if it was


@dataclass(frozen=True, slots=True)
class Entity:
    id: str
    name: str
    type: str
    scope: str
    aliases: tuple[str, ...] = ()
    summary: str = ""
    mention_count: int = 0
    first_seen: datetime | None = None
    last_mentioned: datetime | None = None


@dataclass(frozen=True, slots=True)
class EntityRef:
    """An entity named by a caller: a name, optionally typed."""

    name: str
    type: str = "concept"
    aliases: tuple[str, ...] = field(default=())


# ---------------------------------------------------------------- tool outputs


class EntityOut(BaseModel):
    id: str = Field(description="Stable entity id.")
    name: str = Field(description="Canonical name.")
    type: str = Field(description="person, project, organization, place, concept, tool, ...")
    created: bool = Field(default=False, description="True if this call created the entity.")


def _empty(value: Any) -> bool:
    return not value


def _none(value: Any) -> bool:
    return value is None


def _once(value: Any) -> bool:
    return bool(value == 1)


class FactOut(BaseModel):
    id: str = Field(description="Stable fact id, usable with correct/confirm/explain/forget/link.")
    content: str
    kind: str
    status: str = Field(
        description="staged, confirmed, dormant (unused for long), superseded, retracted or purged."
    )
    confidence: float
    scope: str
    source: str
    tags: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list, description="Names of linked entities.")
    created_at: str = Field(description="ISO 8601, UTC.")
    event_time: str | None = Field(default=None, description="When the fact happened (ISO 8601), if known.")
    valid_until: str | None = Field(default=None, description="When it stopped being true, if it did.")
    session_id: str | None = None
    # Replies leave out fields that say nothing (exclude_if): a model reading them pays per token.
    corroborations: int = Field(
        default=1, description="Times it was stated (shown from 2).", exclude_if=_once
    )
    note: str | None = Field(
        default=None,
        description="Worth knowing about this change, e.g. where a purge cannot erase.",
        exclude_if=_empty,
    )


class SimilarFact(BaseModel):
    id: str
    content: str
    similarity: float = Field(description="Cosine similarity to the new statement, 0..1.")
    conflict: str | None = Field(
        default=None,
        description="Set only on evidence that a value changed about the same thing: what differs "
        "(number, name, date, negation, order, structure).",
        exclude_if=_empty,
    )
    restates: bool = Field(
        default=False, description="True: it says what the new statement says.", exclude_if=_empty
    )
    note: str | None = Field(
        default=None,
        description="'reworded or changed?': same subject, other words; the server cannot tell which. "
        "'says something changed: does it replace this?': the new statement reports a change and this "
        "is the stored fact nearest it. 'same words, another day: stored as its own event': send "
        "restates=<id> instead if it is one fact, not two events. 'dated another day, a value differs: "
        "changed since, or another event?': correct the old fact if it changed.",
        exclude_if=_empty,
    )


class RememberOut(FactOut):
    corroborated: bool = Field(
        default=False,
        description="True: memory already held this statement; that fact (this id) was strengthened.",
        exclude_if=_empty,
    )
    superseded: list[str] = Field(default_factory=list, description="Ids of facts this one replaced.")
    contradicts: list[str] = Field(
        default_factory=list, description="Ids of active facts this one conflicts with (both kept)."
    )
    similar: list[SimilarFact] = Field(
        default_factory=list,
        description="The closest other active facts of its scope, closest first.",
        exclude_if=_empty,
    )
    linked_entities: list[EntityOut] = Field(default_factory=list)
    note: str | None = Field(
        default=None,
        description="Worth knowing about this write, e.g. that its scope held nothing before (a typo?).",
        exclude_if=_empty,
    )


class SearchHit(BaseModel):
    """A search result: compact unless the search asked for detail (then the rest is filled)."""

    id: str = Field(description="Fact id, for correct/confirm/explain/forget/link/mark_used.")
    content: str
    kind: str
    status: str = Field(description="staged, confirmed, dormant, superseded, retracted or purged.")
    score: float = Field(description="Rank score (3 significant digits): orders this query's results only.")
    relevance: float = Field(
        description="Closeness in meaning to the query, 0..1, comparable across queries (cosine)."
    )
    time: str = Field(description="When it happened if known, else when it was stored (ISO 8601, UTC).")
    entities: list[str] = Field(default_factory=list)
    contested_by: list[str] = Field(
        default_factory=list, description="Ids of active facts that contradict this one.", exclude_if=_empty
    )
    corroborations: int = Field(
        default=1, description="Times it was stated (shown from 2).", exclude_if=_once
    )
    replaces: str | None = Field(
        default=None, description="The content of the fact it superseded, if any.", exclude_if=_none
    )
    # detail=true
    confidence: float | None = Field(default=None, exclude_if=_none)
    scope: str | None = Field(default=None, exclude_if=_none)
    source: str | None = Field(default=None, exclude_if=_none)
    tags: list[str] = Field(default_factory=list, exclude_if=_empty)
    created_at: str | None = Field(default=None, exclude_if=_none)
    event_time: str | None = Field(default=None, exclude_if=_none)
    valid_until: str | None = Field(default=None, exclude_if=_none)
    session_id: str | None = Field(default=None, exclude_if=_none)
    reasons: dict[str, Any] = Field(
        default_factory=dict,
        description="Per channel (vector, fts, entity, graph): rank, score, path; weight (confidence x "
        "source x decay, not the cosine relevance) and status_weight.",
        exclude_if=_empty,
    )


class WarningOut(BaseModel):
    id: str
    content: str
    trigger: str = Field(description="The trigger's words, as the query or context holds them.")


_WARNINGS = "Negative memories whose trigger the text holds, whatever their rank."


class SearchOut(BaseModel):
    results: list[SearchHit]
    warnings: list[WarningOut] = Field(default_factory=list, description=_WARNINGS, exclude_if=_empty)
    notes: list[str] = Field(default_factory=list, description="Anything degraded or worth knowing.")


class CorrectOut(RememberOut):
    corrected: str = Field(description="Id of the fact this correction replaced (now superseded).")


class RelevanceOut(BaseModel):
    value: float = Field(description="confidence x source_weight x decay.")
    confidence: float
    source_weight: float
    decay: float = Field(
        description="Freshness since last use or restatement (1 in the grace period, never below 0.25)."
    )
    status_weight: float = Field(description="How much retrieval counts this status (confirmed 1.0).")


class LinkedFact(BaseModel):
    id: str
    content: str
    status: str
    hops: int | None = Field(default=None, description="Links away along the chain.")


class EntityLink(BaseModel):
    id: str
    name: str
    type: str
    role: str = Field(description="subject, object or mention.")


class EdgeOut(BaseModel):
    type: str
    direction: str = Field(description="'out' (this fact -> other) or 'in' (other -> this fact).")
    other_id: str
    props: dict[str, Any] = Field(default_factory=dict)


class ExplainOut(BaseModel):
    fact: FactOut
    provenance: str
    sources: list[str] = Field(description="Every source that stated it, first first.")
    last_stated: str | None = Field(default=None, description="When it was last stated again, if it was.")
    evidence: str | None = None
    status_reason: str | None = None
    pinned: bool
    ttl_policy: str
    access_count: int = Field(description="Times a client reported using it (mark_used).")
    last_accessed: str | None = Field(
        default=None, description="Last use or restatement; decay counts from here."
    )
    valid_from: str
    believed_until: str | None = Field(
        default=None, description="When memory stopped holding it (superseded or forgotten)."
    )
    relevance: RelevanceOut
    supersedes: list[LinkedFact] = Field(description="Older versions this fact replaced, nearest first.")
    superseded_by: list[LinkedFact] = Field(
        description="Newer versions that replaced this fact, nearest first."
    )
    contradicts: list[LinkedFact]
    entities: list[EntityLink]
    edges: list[EdgeOut]


class RecallOut(BaseModel):
    narrative: str = Field(description="Markdown: facts by entity, then entities, timeline, evidence.")
    fact_ids: list[str] = Field(default_factory=list, description="The facts it shows, best first.")
    tokens: int = Field(description="Tokens of this whole reply as sent (the embedding model's tokenizer).")
    warnings: list[WarningOut] = Field(default_factory=list, description=_WARNINGS, exclude_if=_empty)
    notes: list[str] = Field(default_factory=list)


class LinkOut(BaseModel):
    from_id: str
    to_id: str
    relation: str
    edge_type: str = Field(description="The stored edge: RELATES_TO, CAUSES, DERIVED_FROM, ... or RELATES.")
    weight: float


class UsedFact(BaseModel):
    id: str
    status: str
    times_used: int


class UsedOut(BaseModel):
    facts: list[UsedFact]


class MaintenanceChange(BaseModel):
    id: str
    content: str
    status: str = Field(description="Its status before the pass.")
    becomes: str = Field(description="Its status after the pass.")
    reason: str


class MaintenanceOut(BaseModel):
    now: str = Field(description="The time the pass judged decay and expiry at.")
    dry_run: bool = Field(description="True: nothing was written.")
    examined: int
    expired: int
    dormant: int
    revived: int
    orphan_entities_removed: int
    changes: list[MaintenanceChange] = Field(default_factory=list)


# ---------------------------------------------------------------- the explorer's subgraph


class SubgraphFact(BaseModel):
    id: str
    content: str
    kind: str
    status: str
    scope: str
    confidence: float
    relevance: float = Field(description="Its lifecycle relevance now: confidence x source weight x decay.")
    created_at: str = Field(description="ISO 8601, UTC.")
    event_time: str | None = Field(default=None, description="When it happened, if known.")


class SubgraphEntity(BaseModel):
    id: str
    name: str
    type: str
    scope: str
    aliases: list[str] = Field(default_factory=list)
    summary: str = ""
    mention_count: int = 0


class SubgraphEdge(BaseModel):
    type: str = Field(description="The stored edge: SUPERSEDES, ..., ABOUT (fact to entity) or RELATES.")
    source: str
    target: str
    label: str = Field(description="ABOUT: the role; RELATES: the predicate; else the type in words.")


class SubgraphOut(BaseModel):
    facts: list[SubgraphFact] = Field(description="Newest first.")
    entities: list[SubgraphEntity] = Field(description="Those the facts are about, by name.")
    edges: list[SubgraphEdge] = Field(description="Among the facts and entities listed, nothing else.")
    facts_total: int = Field(description="Facts the scope sees that pass the filters; the newest are listed.")
    limit: int
