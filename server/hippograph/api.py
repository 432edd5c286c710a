"""The public API, declared once: every operation's parameters, descriptions, result and tool metadata.

``MemoryAPI`` is the only place an operation's signature is written. Each method is a
declaration: its body is empty, and ``@operation`` turns it into a call of
``self.call(name, arguments)``, which the service (``service.Memory``: runs it) and the
proxy (``sharing.SharedMemory``: runs it here or sends it to the owner) implement. From the
same declarations come the MCP tools (``mcp_app``: signature -> input schema, docstring ->
description, return type -> output schema, metadata -> annotations), the owner's RPC
(argument validation and result decoding), and the tests' tables of tools and fields.

Adding a parameter to a tool is one change here (plus the golden schema file the tests pin),
and its implementation in ``service/``.
"""

# The declarations have no bodies by design: @operation supplies them.
# mypy: disable-error-code="empty-body"

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from hippograph.domain.models import (
    HISTORY_STATUSES,
    CorrectOut,
    ExplainOut,
    FactKind,
    FactOut,
    LinkOut,
    MaintenanceOut,
    RecallOut,
    RememberOut,
    SearchOut,
    Source,
    SubgraphOut,
    TtlPolicy,
    UsedOut,
)
from hippograph.domain.profile import EntityProfileOut
from hippograph.domain.review_replies import ReviewKind, ReviewOut
from hippograph.domain.topic_replies import ConsolidateOut, TopicDetailOut, TopicsOut
from hippograph.operations import INTERNAL, OPERATIONS, Internal, Operation, operation

__all__ = [
    "CONTEXT_QUERY",
    "INTERNAL",
    "OPERATIONS",
    "FactScope",
    "Internal",
    "MemoryAPI",
    "Operation",
    "operation",
]

# What the memory://context resource recalls for: memory's own standing question, never a
# caller's, so no answer to it is a gap for review to ask the user about.
CONTEXT_QUERY = "the user: who they are, their preferences, projects and recent decisions"


def _names(enum: type[StrEnum]) -> Any:
    """A ``Literal`` of an enum's values, so the tool schema lists them (made from the enum: never copied)."""
    return Literal[tuple(member.value for member in enum)]


if TYPE_CHECKING:
    KindName = str
    ReviewKindName = str
    SourceName = str
    StatusName = str
    TtlName = str
else:
    KindName = _names(FactKind)
    ReviewKindName = _names(ReviewKind)
    SourceName = _names(Source)
    StatusName = Literal[HISTORY_STATUSES]  # a purged fact has nothing to show
    TtlName = _names(TtlPolicy)


# The scope a fact-id operation acts from: it sees the facts of that scope and of global
# (``domain.visibility``), and any other id is not found.
FactScope = Annotated[
    str | None,
    Field(description="Scope of the search the id(s) came from (default: the server's scope)."),
]


class MemoryAPI:
    """What a memory offers its callers: MCP tools, the CLI, the explorer, benchmarks and tests."""

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run operation ``name`` with its arguments, complete and bound by name."""
        raise NotImplementedError

    def call_once(self, name: str, arguments: dict[str, Any], request_id: str) -> Any:
        """``call``, but a write sent again with the same ``request_id`` (a retry after the
        answer was lost) is answered with the first one's reply instead of running twice."""
        return self.call(name, arguments)

    # ------------------------------------------------------------ tools

    @operation(title="Remember a fact")
    def remember(
        self,
        content: Annotated[
            str, Field(description="One natural-language statement, e.g. 'Alice prefers tea'.")
        ],
        *,
        kind: Annotated[
            KindName | None, Field(description="What sort of memory this is (default fact).")
        ] = None,
        tags: Annotated[list[str] | None, Field(description="Short labels, e.g. ['diet', 'work'].")] = None,
        entities: Annotated[
            list[str] | None,
            Field(description="Names of people, projects, places or things the fact is about."),
        ] = None,
        subject: Annotated[str | None, Field(description="Entity the fact is about, e.g. 'Alice'.")] = None,
        predicate: Annotated[str | None, Field(description="Relation, e.g. 'lives_in', 'prefers'.")] = None,
        object: Annotated[str | None, Field(description="Value or entity, e.g. 'Berlin'.")] = None,
        confidence: Annotated[
            float | None, Field(description="0 (unsure) to 1 (certain); default 0.8.")
        ] = None,
        source: Annotated[
            SourceName | None,
            Field(description="Where it came from: user_edit if the user said it directly."),
        ] = None,
        scope: Annotated[
            str | None,
            Field(
                description="'global', 'project:NAME' or 'session:ID' (default: the server's, else global)."
            ),
        ] = None,
        event_time: Annotated[
            str | None, Field(description="When it happened, ISO 8601 (e.g. 2024-05-08), if known.")
        ] = None,
        session_id: Annotated[
            str | None, Field(description="Conversation id: facts of one session are linked in order.")
        ] = None,
        evidence: Annotated[
            str | None, Field(description="The text the fact was taken from."), INTERNAL
        ] = None,
        ttl: Annotated[
            TtlName | None,
            Field(
                description="decay (default): fades unless used; keep_forever; ephemeral: expires in a day."
            ),
        ] = None,
        restates: Annotated[
            str | None,
            Field(
                description="Id of a fact of the same scope that this statement says again in other "
                "words: that fact is strengthened (corroborated=true) and nothing new is stored."
            ),
        ] = None,
        triggers: Annotated[
            list[str] | None,
            Field(
                description="kind='negative' only: words that, when a search or recall holds them, "
                "return this memory as a warning, e.g. ['force push']."
            ),
        ] = None,
    ) -> RememberOut:
        """Store one durable fact, preference, decision or procedure. Known entities named in it
        are linked. Restating a stored fact strengthens it (the reply has its id and
        corroborated=true). `similar` lists stored facts about the same thing: `conflict` marks
        evidence of a changed value (a number, name, negation); `note: "reworded or changed?"`
        means the words differ and the server cannot tell; a statement that reports a change
        ("moved", "switched", "now", "no longer") is shown the stored fact nearest it, noted "says
        something changed: does it replace this?". You judge: if it is the same in other
        words, remember with restates=<its id> instead (or forget the new one); if the value
        changed, correct(fact_id=<its id>, content=...) with the new words (the copy just stored
        is superseded with it); if both hold, leave them.
        Example:
        remember(content="Alice moved to Berlin in May 2024", subject="Alice", predicate="lives_in",
                 object="Berlin", entities=["Alice", "Berlin"], event_time="2024-05-01")
        """

    @operation(title="Search memory", read_only=True, idempotent=True)
    def search(
        self,
        query: Annotated[str, Field(description="Words or a question, e.g. 'where does Alice live'.")],
        *,
        limit: Annotated[int | None, Field(description="How many results (1-100, default 10).")] = None,
        kind: Annotated[
            list[KindName] | None, Field(description="Only these kinds, e.g. ['preference'].")
        ] = None,
        entity: Annotated[str | None, Field(description="Only facts about this entity (name or id).")] = None,
        tags: Annotated[list[str] | None, Field(description="Only facts with any of these tags.")] = None,
        status: Annotated[
            list[StatusName] | None,
            Field(description="Only these statuses (default: staged, confirmed, dormant)."),
        ] = None,
        after: Annotated[
            str | None,
            Field(description="Only facts from this time on: ISO date or 'last week', 'in May 2023'."),
        ] = None,
        before: Annotated[str | None, Field(description="Only facts before this time (same forms).")] = None,
        scope: Annotated[
            str | None, Field(description="Search this scope and global (default: the server's scope).")
        ] = None,
        include_history: Annotated[
            bool, Field(description="Also return superseded and forgotten facts.")
        ] = False,
        as_of: Annotated[
            str | None,
            Field(description="What was true at this time: ISO date or 'in 2023'; statuses as they were."),
        ] = None,
        known_at: Annotated[
            str | None, Field(description="What memory believed then (record time), ISO 8601.")
        ] = None,
        detail: Annotated[
            bool,
            Field(description="Also each hit's scope, source, tags, times, confidence and why it matched."),
        ] = False,
    ) -> SearchOut:
        """Find stored facts by meaning, keyword, named entities and graph links, best first.

        Use it before answering anything that may depend on what you were told earlier. It
        changes nothing; report the facts your answer relied on with mark_used. Examples:
        search(query="what does Alice drink in the morning", limit=5)
        search(query="deploy steps", kind=["procedure"], entity="Project Apollo")
        search(query="where did Alice live", as_of="2023-06-01")
        """

    @operation(title="Recall context", read_only=True, idempotent=True)
    def recall(
        self,
        context: Annotated[
            str, Field(description="What you are working on or asked, e.g. 'planning Alice's birthday'.")
        ],
        *,
        budget_tokens: Annotated[
            int | None, Field(description="Most tokens the whole reply may use (default 1000).")
        ] = None,
        scope: Annotated[
            str | None, Field(description="Scope to recall from, plus global (default: the server's scope).")
        ] = None,
        limit: Annotated[int, Field(description="How many ranked facts to draw on."), INTERNAL] = 20,
        granularity: Annotated[
            Literal["facts", "overview"],
            Field(description="overview: one line per storyline and topic, with where to read more."),
        ] = "facts",
    ) -> RecallOut:
        """Recall what memory holds about a task as markdown within a token budget: the best
        facts by entity (lower-ranked ones dropped to fit), then entities, timeline, evidence.

        Use it at the start of a task. It changes nothing; report the facts you relied on with
        mark_used. Example:
        recall(context="Alice's travel plans", budget_tokens=600)
        """

    @operation(title="Correct a fact")
    def correct(
        self,
        content: Annotated[str, Field(description="The corrected statement, e.g. 'Alice lives in Paris'.")],
        *,
        fact_id: Annotated[
            str | None, Field(description="Id of the wrong fact (from search results).")
        ] = None,
        query: Annotated[
            str | None,
            Field(description="Or: words only the wrong fact holds; else the error lists candidates."),
        ] = None,
        kind: Annotated[
            KindName | None, Field(description="Kind of the new fact (default: the old one's).")
        ] = None,
        tags: Annotated[list[str] | None, Field(description="Tags (default: the old one's).")] = None,
        object: Annotated[str | None, Field(description="The corrected value, if the fact has one.")] = None,
        event_time: Annotated[
            str | None,
            Field(
                description="When it became true, ISO 8601 (e.g. the day Alice moved); "
                "the old fact was true until then."
            ),
        ] = None,
        scope: Annotated[
            str | None,
            Field(
                description="Scope of the search fact_id came from; query looks there and in global "
                "(default: the server's scope)."
            ),
        ] = None,
        # The rest default to the old fact's, as remember would take them.
        entities: Annotated[list[str] | None, Field(description="Entity names."), INTERNAL] = None,
        subject: Annotated[str | None, Field(description="Subject."), INTERNAL] = None,
        predicate: Annotated[str | None, Field(description="Predicate."), INTERNAL] = None,
        confidence: Annotated[float | None, Field(description="0..1."), INTERNAL] = None,
        source: Annotated[SourceName | None, Field(description="Source."), INTERNAL] = None,
        evidence: Annotated[str | None, Field(description="Evidence text."), INTERNAL] = None,
        ttl: Annotated[TtlName | None, Field(description="Decay policy."), INTERNAL] = None,
    ) -> CorrectOut:
        """Replace a wrong or outdated fact. The old fact is kept as history (superseded) and
        linked to the new one, so the change can be explained. Prefer this to remembering a
        contradicting fact; if a remember already stored the new value, correct the old fact with
        the same words: the stored copy is superseded too, one fact holds the value. Example:
        correct(fact_id="f_0123456789abcdef", content="Alice moved to Paris in 2025")
        """

    @operation(title="Confirm a fact", idempotent=True)
    def confirm(
        self,
        fact_id: Annotated[str, Field(description="Id of the fact the user confirmed.")],
        scope: FactScope = None,
    ) -> FactOut:
        """Pin a fact the user confirmed: confidence 1, status confirmed, it never decays.
        Example: confirm(fact_id="f_0123456789abcdef")
        """

    @operation(title="Report facts used")
    def mark_used(
        self,
        fact_ids: Annotated[list[str], Field(description="Ids of the facts your answer relied on.")],
        scope: FactScope = None,
    ) -> UsedOut:
        """Report which facts from search or recall your answer relied on: the only way reading
        strengthens memory. A used fact stays fresh, a dormant one wakes, a staged one used
        repeatedly becomes confirmed; facts used together are linked, so one brings up the other.
        Example: mark_used(fact_ids=["f_0123456789abcdef"])
        """

    @operation(title="Forget a fact", destructive=True, idempotent=True)
    def forget(
        self,
        fact_id: Annotated[str, Field(description="Id of the fact to forget.")],
        reason: Annotated[str | None, Field(description="Why, e.g. 'user asked', 'no longer true'.")] = None,
        # strict: only a JSON true erases ("yes", "false", 1 are refused, never read as true)
        purge: Annotated[
            bool,
            Field(
                strict=True, description="Erase its text everywhere, for good (when the user says 'delete')."
            ),
        ] = False,
        scope: FactScope = None,
    ) -> FactOut:
        """Retract a fact: it no longer appears in search or recall, but stays in history
        (search with include_history=true, explain). With purge=true its text is erased from
        every file of memory and cannot be recovered; only an empty tombstone keeps its place in
        chains. Example: forget(fact_id="f_0123456789abcdef", reason="user asked to forget it")
        """

    @operation(title="Explain a fact", read_only=True, idempotent=True)
    def explain(
        self,
        fact_id: Annotated[str, Field(description="Id of the fact to explain.")],
        scope: FactScope = None,
    ) -> ExplainOut:
        """Show where a fact came from and how it stands: source, provenance, evidence,
        supersedes chain both ways, contradictions, linked entities, edges, access count and
        its current relevance with each term. Example: explain(fact_id="f_0123456789abcdef")
        """

    @operation(title="Link facts or entities", idempotent=True)
    def link(
        self,
        from_id: Annotated[str, Field(description="Fact id (f_...) or entity id (e_...).")],
        to_id: Annotated[str, Field(description="Fact id (f_...) or entity id (e_...).")],
        relation: Annotated[
            str,
            Field(
                description="Between facts: relates_to, causes, derived_from, contradicts, supersedes. "
                "Between entities: any predicate, e.g. 'works_at'. Fact to entity: 'about'."
            ),
        ],
        weight: Annotated[float | None, Field(description="0..1, how strong (default 1).")] = None,
        scope: FactScope = None,
    ) -> LinkOut:
        """Add a typed edge that later retrieval follows, e.g. that one fact caused another.
        Example: link(from_id="f_aaa...", to_id="f_bbb...", relation="causes")
        """

    # ------------------------------------------------------------ for the CLI and benchmarks

    @operation(title="Review memory", read_only=True, idempotent=True)
    def review(
        self,
        scope: Annotated[
            str | None, Field(description="Scope to review, plus global (default: the server's).")
        ] = None,
        kinds: Annotated[
            list[ReviewKindName] | None, Field(description="Only these kinds (default: all).")
        ] = None,
        limit: Annotated[int, Field(description="Most items (1-100).")] = 20,
    ) -> ReviewOut:
        """What memory asks you to look at with the user: conflicts, pairs to compare (reworded
        or changed?), duplicates, weak facts (unsure, or soon dormant) and gaps (questions it
        could not answer). Changes nothing; act with correct, forget, confirm or remember.
        Example: review(kinds=["conflict"])
        """

    @operation(tool=False)
    def remember_many(self, items: list[dict[str, Any]]) -> list[RememberOut]:
        """Remember many facts, with the outcome of calling ``remember`` for each in turn, faster.

        Each item holds ``remember``'s arguments by name. Every item is checked before anything
        is written: a bad one raises an error naming it (``items[3]: content is empty ...``)
        and nothing is stored. Each batch is embedded in one model call and written in one
        graph transaction; a fact sees the entities, session turns and conflicts of the facts
        before it. Results come in input order. If a write fails, the batches before it stay.
        """

    @operation(tool=False)
    def maintain(self, now: datetime | None = None, dry_run: bool = False) -> MaintenanceOut:
        """Expiry, dormancy and orphan cleanup over every active fact, judged at ``now`` (default:
        the clock). Idempotent; ``dry_run`` reports the changes and writes nothing."""

    @operation(tool=False, read_only=True)
    def stats(self) -> dict[str, Any]:
        """Counts of facts by kind, status and scope, entities, edges, disk use, schema version."""

    @operation(tool=False, read_only=True)
    def profile(self, name: str, scope: str | None = None, budget_tokens: int = 800) -> EntityProfileOut:
        """What memory holds about one entity (a name, alias or id ``scope`` sees) within
        ``budget_tokens``: its current facts best first, the entities named with it, its dated
        facts in order, the values that replaced older ones, and the facts contradicted."""

    @operation(tool=False)
    def consolidate(self, scope: str | None = None, dry_run: bool = False) -> ConsolidateOut:
        """Find the topics of every scope (or ``scope``) afresh from the facts' neighbours by
        meaning, sessions, co-use and shared entities; no fact changes. Idempotent; ``dry_run``
        reports what would be added, changed and removed, and keeps none of it."""

    @operation(tool=False, read_only=True)
    def topics(self, scope: str | None = None) -> TopicsOut:
        """The topics ``scope`` sees (it and global), the most recently active first: label,
        size, names, most central fact ids, time span."""

    @operation(tool=False, read_only=True)
    def topic(self, topic_id: str, scope: str | None = None) -> TopicDetailOut:
        """One topic ``scope`` sees: every fact id it holds, the most central with content."""

    @operation(tool=False, read_only=True)
    def names(
        self, prefix: str, of: Literal["entity", "scope"], scope: str | None = None, limit: int = 20
    ) -> list[str]:
        """Known entity names (those ``scope`` and global see) or known scopes starting with
        ``prefix`` (any case), sorted, at most ``limit``: completions for a client's argument."""

    @operation(tool=False, read_only=True)
    def subgraph(
        self,
        scope: str | None = None,
        limit: int = 500,
        kinds: list[KindName] | None = None,
        statuses: list[StatusName] | None = None,
    ) -> SubgraphOut:
        """The ``limit`` (1-5000) newest facts ``scope`` sees (it and global), of ``kinds`` and
        ``statuses`` if given (default: all but purged), the entities they are about and the edges
        among them: what the explorer draws."""

    @operation(tool=False)
    def doctor(self) -> dict[str, Any]:
        """Check that the stores agree, repair what does not, and report what was done."""

    @operation(tool=False, read_only=True)
    def export(self) -> dict[str, Any]:
        """The whole memory: ``{"jsonl": hippograph's JSON Lines, "report": counts}``."""

    @operation(tool=False)
    def import_lines(self, lines: list[str], format: str, scope: str | None = None) -> dict[str, Any]:
        """Import JSON Lines in ``format`` (``hippograph`` or ``mcp-memory``); returns what was added."""
