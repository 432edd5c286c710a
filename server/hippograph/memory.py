"""The domain API: what the MCP tools, the CLI, the benchmarks and the tests all call.

``Memory`` owns the stores (Kùzu graph = source of truth, LanceDB = rebuildable index),
the embedder and the entity index, and is the only place that sequences writes across
them: a write commits to Kùzu in one transaction, then updates LanceDB; at start,
``reconcile`` repairs LanceDB from Kùzu, so an acknowledged write is never lost.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hippograph import validation as check
from hippograph.config import Settings
from hippograph.embed import Embedder, FastEmbedder
from hippograph.entity_index import EntityIndex, visible_scopes
from hippograph.errors import DataDirNotWritable, InvalidInput
from hippograph.graph import GraphStore
from hippograph.models import (
    Entity,
    EntityOut,
    Fact,
    FactKind,
    FactOut,
    FactStatus,
    Provenance,
    RememberOut,
    SearchHit,
    SearchOut,
    Source,
    TtlPolicy,
)
from hippograph.retrieval import Retriever
from hippograph.vectors import Filter, VectorStore

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
ACTIVE = (FactStatus.STAGED.value, FactStatus.CONFIRMED.value)


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z") if value is not None else None


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def _parse_time(value: str | None, field: str) -> datetime | None:
    if value is None or value == "":
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        raise InvalidInput(
            f"{field} {value!r} is not a date: send ISO 8601, e.g. 2024-05-08 or 2024-05-08T14:30:00Z"
        ) from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _check_writable(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise DataDirNotWritable(
            f"cannot create the data dir {path} ({err.strerror}): set HIPPOGRAPH_DATA_DIR or --data-dir "
            "to a directory you can write"
        ) from err
    if not os.access(path, os.W_OK | os.X_OK):
        raise DataDirNotWritable(
            f"the data dir {path} is not writable: fix its permissions, or set HIPPOGRAPH_DATA_DIR or "
            "--data-dir to a directory you can write"
        )


@dataclass(frozen=True)
class ReconcileReport:
    added: int
    removed: int
    restatused: int


class Memory:
    def __init__(
        self,
        settings: Settings,
        graph: GraphStore,
        vectors: VectorStore,
        embedder: Embedder,
        *,
        clock: Clock = utcnow,
    ) -> None:
        self.settings = settings
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.clock = clock
        self.entities = EntityIndex(graph.all_entities())
        self.retriever = Retriever(vectors)
        self._write_lock = threading.RLock()
        self._session_tail: dict[str, str] = {}

    @classmethod
    def open(cls, settings: Settings, *, embedder: Embedder | None = None, clock: Clock = utcnow) -> Memory:
        """Open (creating on first start) the stores in ``settings.data_dir``."""
        data_dir = settings.data_dir
        _check_writable(data_dir)
        graph = GraphStore(
            data_dir / "graph.kuzu",
            max_db_size=settings.kuzu_max_db_size,
            buffer_pool_bytes=settings.kuzu_buffer_pool_bytes,
        )
        try:
            embedder = embedder or FastEmbedder(settings.embedding_model, settings.model_cache_dir)
            vectors = VectorStore(data_dir / "vectors", dim=embedder.dim, model=embedder.name)
            memory = cls(settings, graph, vectors, embedder, clock=clock)
            report = memory.reconcile()
            if report.added or report.removed or report.restatused:
                log.warning("reconciled the vector index with the graph: %s", report)
        except BaseException:
            graph.close()
            raise
        return memory

    def close(self) -> None:
        with self._write_lock:
            self.vectors.optimize()
            self.graph.close()

    # ------------------------------------------------------------ remember

    def remember(
        self,
        content: str,
        *,
        kind: str | None = None,
        tags: Sequence[str] | None = None,
        entities: Sequence[str] | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        confidence: float | None = None,
        source: str | None = None,
        scope: str | None = None,
        event_time: str | None = None,
        session_id: str | None = None,
        evidence: str | None = None,
    ) -> RememberOut:
        s = self.settings
        content = check.text(content, "content", max_bytes=s.max_content_bytes)
        fact_kind = check.choice(kind, FactKind, "kind", FactKind.FACT)
        fact_source = check.choice(source, Source, "source", Source.CONVERSATION)
        fact_tags = check.tags(tags, max_count=s.max_tags_per_call)
        entity_names = check.names(entities, "entities", max_count=s.max_entities_per_call)
        subject = check.optional_text(subject, "subject", max_bytes=200)
        predicate = check.optional_text(predicate, "predicate", max_bytes=100)
        object = check.optional_text(object, "object", max_bytes=1000)
        if predicate and not subject:
            raise InvalidInput("predicate needs a subject: send subject too, e.g. subject='Alice'")
        fact_scope = check.scope(scope)
        when = _parse_time(event_time, "event_time")
        session = check.session_id(session_id)
        evidence = check.optional_text(evidence, "evidence", max_bytes=s.max_content_bytes)
        conf = check.confidence(confidence, default=1.0 if fact_source is Source.USER_EDIT else 0.8)

        vector = self.embedder.embed([content])[0]
        with self._write_lock:
            now = self.clock()
            fact = Fact(
                id=new_id("f"),
                content=content,
                kind=fact_kind,
                status=FactStatus.STAGED,
                confidence=conf,
                source=fact_source,
                provenance=Provenance.USER_STATED if fact_source is Source.USER_EDIT else Provenance.OBSERVED,
                scope=fact_scope,
                created_at=now,
                valid_from=now,
                event_time=when,
                ttl_policy=TtlPolicy.DECAY,
                subject=subject,
                predicate=predicate,
                object=object,
                tags=fact_tags,
                session_id=session,
                evidence=evidence,
            )
            linked, created = self._plan_entities(fact, entity_names, now)
            previous = self._previous_in_session(session)
            with self.graph.transaction():
                self.graph.insert_fact(fact)
                for entity in created:
                    self.graph.insert_entity(entity)
                for role, entity in linked:
                    if entity not in created:
                        self.graph.touch_entity(entity.id, now)
                    self.graph.link_about(fact.id, entity.id, role)
                subj = next((e for r, e in linked if r == "subject"), None)
                obj = next((e for r, e in linked if r == "object"), None)
                if subj is not None and obj is not None:
                    self.graph.link_entities(subj.id, obj.id, predicate or "related_to", 1.0, fact.id, now)
                self.graph.tag_fact(fact.id, fact_tags)
                if previous is not None:
                    self.graph.link_facts("NEXT", previous, fact.id, now)
            # Committed: from here on the fact survives a crash (reconcile re-indexes it).
            for entity in created:
                self.entities.put(entity)
            if session is not None:
                self._session_tail[session] = fact.id
            self.vectors.add("facts", [self._fact_row(fact)], vector[None, :])
            if created:
                self.vectors.add(
                    "entities",
                    [self._entity_row(e) for e in created],
                    self.embedder.embed([self._entity_text(e) for e in created]),
                )
        return RememberOut(
            **self._fact_out(fact, [e.name for _, e in linked]).model_dump(),
            linked_entities=[
                EntityOut(id=e.id, name=e.name, type=e.type, created=e in created) for _, e in linked
            ],
        )

    def _plan_entities(
        self, fact: Fact, explicit: Sequence[str], now: datetime
    ) -> tuple[list[tuple[str, Entity]], list[Entity]]:
        """Which entities the fact is ABOUT (role, entity), and which of them are new."""
        linked: list[tuple[str, Entity]] = []
        created: list[Entity] = []

        def resolve(name: str, create: bool) -> Entity | None:
            found = self.entities.resolve(name, fact.scope)
            if found is None:
                found = next((e for e in created if e.name.casefold() == name.casefold()), None)
            if found is None and create:
                found = Entity(
                    id=new_id("e"),
                    name=name,
                    type="concept",
                    scope=fact.scope,
                    mention_count=1,
                    first_seen=now,
                    last_mentioned=now,
                )
                created.append(found)
            return found

        def add(role: str, entity: Entity | None) -> None:
            if entity is not None and all(entity.id != e.id for _, e in linked):
                linked.append((role, entity))

        if fact.subject:
            add("subject", resolve(fact.subject, create=True))
        if fact.object:
            add("object", resolve(fact.object, create=fact.object in explicit))
        for name in explicit:
            add("mention", resolve(name, create=True))
        for entity in self.entities.mentions(fact.content, fact.scope):
            add("mention", entity)
        return linked, created

    def _previous_in_session(self, session: str | None) -> str | None:
        if session is None:
            return None
        if session not in self._session_tail:
            previous = self.graph.last_fact_in_session(session)
            if previous is None:
                return None
            self._session_tail[session] = previous
        return self._session_tail[session]

    # ------------------------------------------------------------ search

    def search(self, query: str, *, limit: int | None = None, scope: str | None = None) -> SearchOut:
        query = check.text(query, "query", max_bytes=self.settings.max_query_chars * 4)
        if len(query) > self.settings.max_query_chars:
            raise InvalidInput(
                f"query is {len(query)} characters, over the {self.settings.max_query_chars} limit: "
                "send the key words or one question"
            )
        count = check.limit(limit, default=10, maximum=self.settings.max_limit)
        where = Filter(statuses=ACTIVE, scopes=visible_scopes(check.scope(scope)))
        vector = self.embedder.embed([query])[0]
        candidates = self.retriever.candidates(query, vector, where, count)[:count]
        facts = self.graph.get_facts([c.id for c in candidates])
        names = self.graph.entity_names_for(list(facts))
        results = [
            SearchHit(
                **self._fact_out(facts[c.id], names.get(c.id, [])).model_dump(),
                score=round(c.fused, 6),
                reasons=c.reasons(),
            )
            for c in candidates
            if c.id in facts and facts[c.id].status.is_active
        ]
        return SearchOut(query=query, results=results)

    # ------------------------------------------------------------ consistency

    def reconcile(self) -> ReconcileReport:
        """Make the vector index agree with the graph: re-embed missing rows, drop orphans."""
        with self._write_lock:
            indexed = self.vectors.ids("facts")
            facts = {f.id: f for f in self.graph.all_facts()}
            missing = [f for fid, f in facts.items() if fid not in indexed]
            orphans = [fid for fid in indexed if fid not in facts]
            stale = [f for fid, f in facts.items() if fid in indexed and indexed[fid] != f.status.value]
            for start in range(0, len(missing), 256):
                batch = missing[start : start + 256]
                self.vectors.add(
                    "facts",
                    [self._fact_row(f) for f in batch],
                    self.embedder.embed([f.content for f in batch]),
                )
            self.vectors.delete("facts", orphans)
            for status in {f.status.value for f in stale}:
                self.vectors.set_status([f.id for f in stale if f.status.value == status], status)

            indexed_entities = self.vectors.ids("entities")
            entities = {e.id: e for e in self.graph.all_entities()}
            missing_entities = [e for eid, e in entities.items() if eid not in indexed_entities]
            if missing_entities:
                self.vectors.add(
                    "entities",
                    [self._entity_row(e) for e in missing_entities],
                    self.embedder.embed([self._entity_text(e) for e in missing_entities]),
                )
            self.vectors.delete("entities", [eid for eid in indexed_entities if eid not in entities])
            return ReconcileReport(
                added=len(missing) + len(missing_entities),
                removed=len(orphans) + sum(1 for eid in indexed_entities if eid not in entities),
                restatused=len(stale),
            )

    def stats(self) -> dict[str, Any]:
        return {**self.graph.counts(), "indexed_facts": self.vectors.count("facts")}

    # ------------------------------------------------------------ shaping

    @staticmethod
    def _fact_row(fact: Fact) -> dict[str, Any]:
        return {
            "id": fact.id,
            "text": fact.content,
            "kind": fact.kind.value,
            "status": fact.status.value,
            "scope": fact.scope,
            "session_id": fact.session_id,
            "created_at": fact.created_at,
            "event_time": fact.event_time,
        }

    @staticmethod
    def _entity_text(entity: Entity) -> str:
        return " / ".join((entity.name, *entity.aliases, entity.summary)).strip(" /")

    @staticmethod
    def _entity_row(entity: Entity) -> dict[str, Any]:
        return {
            "id": entity.id,
            "text": Memory._entity_text(entity),
            "type": entity.type,
            "scope": entity.scope,
        }

    @staticmethod
    def _fact_out(fact: Fact, entity_names: Sequence[str]) -> FactOut:
        return FactOut(
            id=fact.id,
            content=fact.content,
            kind=fact.kind.value,
            status=fact.status.value,
            confidence=round(fact.confidence, 4),
            scope=fact.scope,
            source=fact.source.value,
            tags=list(fact.tags),
            entities=list(entity_names),
            created_at=iso(fact.created_at) or "",
            event_time=iso(fact.event_time),
            valid_until=iso(fact.valid_until),
            session_id=fact.session_id,
        )
