"""The domain API: what the MCP tools, the CLI, the benchmarks and the tests all call.

``Memory`` owns the stores (Kùzu graph = source of truth, LanceDB = rebuildable index),
the embedder, the entity index and the access log, and is the only place that sequences
writes across them: a write commits to Kùzu in one transaction, then updates LanceDB;
at start, ``reconcile`` repairs LanceDB from Kùzu, so an acknowledged write is never
lost. Every status or confidence change goes through ``lifecycle``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from hippograph.config import Settings
from hippograph.domain import lifecycle as lc
from hippograph.domain import validation as check
from hippograph.domain.errors import (
    DataDirNotWritable,
    InvalidInput,
    InvalidTransition,
    NotFound,
    SecretDetected,
)
from hippograph.domain.models import (
    ACTIVE_STATUSES,
    CorrectOut,
    EdgeOut,
    Entity,
    EntityLink,
    EntityOut,
    ExplainOut,
    Fact,
    FactKind,
    FactOut,
    FactStatus,
    LinkedFact,
    LinkOut,
    MaintenanceOut,
    Provenance,
    RecallOut,
    RelevanceOut,
    RememberOut,
    SearchHit,
    SearchOut,
    Source,
    TtlPolicy,
)
from hippograph.retrieval.retriever import Retriever
from hippograph.store.access_log import AccessLog
from hippograph.store.embed import Embedder, FastEmbedder
from hippograph.store.entity_index import EntityIndex, PendingEntities, visible_scopes
from hippograph.store.graph import GraphStore, Relation
from hippograph.store.read_model import ClaimKey, claim_key
from hippograph.store.vectors import Filter, VectorStore, fact_row
from hippograph.text import secrets_scan
from hippograph.text.narrative import NarrativeFact, Profile, build_narrative, count_tokens
from hippograph.text.query_intent import parse_event_time, parse_time_bound, plan

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
_CONTEXT_CHARS = 400
_APPLIED_SEQ = "access_applied_seq"
# Written at a clean close: the LanceDB table versions that agree with the graph. At open,
# equal versions mean nothing can differ and the full reconcile (~2 s at 100k facts) is
# skipped; the marker is cleared at once, so after a crash the next open reconciles.
_VECTORS_IN_SYNC = "vectors_in_sync_with"
_LAST_MAINTENANCE = "last_maintenance"
# remember's arguments: what each item of remember_many may hold.
_REMEMBER_FIELDS = (
    "content kind tags entities subject predicate object confidence source scope event_time session_id "
    "evidence ttl"
).split()
# Facts per write batch of remember_many: one embedding call, one graph transaction, one
# vector-index append. 128 was 12% slower on the perf corpus; 1,024 no faster.
_WRITE_BATCH = 256

# link(relation=...) between two facts -> the stored edge type.
FACT_RELATIONS = {
    "relates_to": "RELATES_TO",
    "causes": "CAUSES",
    "derived_from": "DERIVED_FROM",
    "contradicts": "CONTRADICTS",
    "supersedes": "SUPERSEDES",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z") if value is not None else None


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


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


def lifecycle_policy(settings: Settings) -> lc.LifecyclePolicy:
    return lc.LifecyclePolicy(
        promotion_accesses=settings.promotion_accesses,
        grace_days=settings.grace_days,
        retract_below=settings.retract_below,
    )


@dataclass(frozen=True)
class ReconcileReport:
    added: int
    removed: int
    restatused: int


@dataclass(frozen=True)
class _Planned:
    """What storing one fact writes, decided under the write lock."""

    fact: Fact
    text: str  # what the vector index holds for it
    linked: list[tuple[str, Entity]]  # (role, entity) it is ABOUT
    created: list[Entity]  # the new ones among them
    previous: str | None  # the fact before it in its session
    superseded: list[Fact]  # in their new state
    contradicted: list[Fact]
    relation: Relation | None  # subject -[predicate]-> object


@dataclass
class _Batch:
    """What the earlier facts of a write batch did, for the later ones to see before it commits."""

    entities: PendingEntities
    candidates: dict[ClaimKey, list[Fact]]  # stored active facts by key, then the batch's own
    states: dict[str, Fact] = field(default_factory=dict)  # fact id -> its state after the batch
    mentions: dict[str, tuple[int, datetime]] = field(default_factory=dict)  # entity id -> (count, last)

    def active_with(self, key: ClaimKey) -> list[Fact]:
        latest = (self.states.get(f.id, f) for f in self.candidates.get(key, ()))
        return [f for f in latest if f.status.is_active]

    def add(self, planned: _Planned) -> None:
        fact, now = planned.fact, planned.fact.created_at
        for entity in planned.created:
            self.entities.put(entity)
        for _, entity in planned.linked:
            if entity not in planned.created:
                self.mentions[entity.id] = (self.mentions.get(entity.id, (0, now))[0] + 1, now)
                mentioned = dataclasses.replace(
                    entity, mention_count=entity.mention_count + 1, last_mentioned=now
                )
                self.entities.put(mentioned)
        for old in planned.superseded:
            self.states[old.id] = old
        key = claim_key(fact.subject, fact.predicate, fact.scope)
        if key is not None:
            self.candidates.setdefault(key, []).append(fact)


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
        self.policy = lifecycle_policy(settings)
        self.entities = EntityIndex(graph.all_entities())
        self.retriever = Retriever(graph, vectors, self.entities, self.policy)
        self._write_lock = threading.RLock()
        # session id -> (id, content) of its latest fact (None: it has none yet): NEXT links and
        # episode context.
        self._session_tail: dict[str, tuple[str, str] | None] = {}
        self.accesses = AccessLog(settings.data_dir / "access.log", int(graph.get_meta(_APPLIED_SEQ) or 0))
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._closed = False

    @classmethod
    def open(cls, settings: Settings, *, embedder: Embedder | None = None, clock: Clock = utcnow) -> Memory:
        """Open (creating on first start) the stores in ``settings.data_dir``."""
        data_dir = settings.data_dir
        _check_writable(data_dir)
        # The model (imports ~2.5 s, mostly fastembed's) loads while the graph opens: the graph's
        # mirror is built by Kùzu and Arrow code that releases the GIL much of the time.
        loading: Future[FastEmbedder] | None = None
        if embedder is None:
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model-load")
            loading = pool.submit(FastEmbedder, settings.embedding_model, settings.model_cache_dir)
            pool.shutdown(wait=False)  # the thread ends when the model is loaded
        graph = GraphStore(
            data_dir / "graph.kuzu",
            max_db_size=settings.kuzu_max_db_size,
            buffer_pool_bytes=settings.kuzu_buffer_pool_bytes,
        )
        try:
            embedder = loading.result() if loading is not None else embedder
            assert embedder is not None
            vectors = VectorStore(data_dir / "vectors", dim=embedder.dim, model=embedder.name)
            memory = cls(settings, graph, vectors, embedder, clock=clock)
            memory.apply_accesses()
            if vectors.rebuilt or graph.get_meta(_VECTORS_IN_SYNC) != vectors.versions():
                report = memory.reconcile()
                if report.added or report.removed or report.restatused:
                    log.warning("reconciled the vector index with the graph: %s", report)
            graph.set_meta(_VECTORS_IN_SYNC, "")
        except BaseException:
            graph.close()
            raise
        return memory

    def start_background(self) -> None:
        """Apply recorded accesses, and run maintenance, on intervals (for long-lived servers)."""
        self._spawn("hippograph-accesses", self.settings.access_flush_s, self.apply_accesses)
        if self.settings.maintenance_interval_s > 0:
            self._spawn("hippograph-maintenance", self.settings.maintenance_interval_s, self.maintain)
        self._spawn("hippograph-index", 60.0, self.tune_indexes, first_run=True)

    def tune_indexes(self) -> None:
        """Fold small appends into the indexes; build the ANN index once the store is large."""
        if self.vectors.ensure_vector_index():
            log.info("built the ANN vector index")
        with self._write_lock:
            self.vectors.optimize()

    def _spawn(self, name: str, interval: float, job: Callable[[], object], first_run: bool = False) -> None:
        def loop() -> None:
            if first_run and not self._stop.is_set():
                try:
                    job()
                except Exception:
                    log.exception("%s failed; will retry", name)
            while not self._stop.wait(interval):
                try:
                    job()
                except Exception:  # a background job must not die silently nor kill the server
                    log.exception("%s failed; will retry", name)

        thread = threading.Thread(target=loop, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def close(self) -> None:
        """Stop the background jobs and close both stores (again: nothing)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)
        self.retriever.close()
        with self._write_lock:
            try:
                self.apply_accesses()
                try:
                    self.vectors.close()
                    self.vectors.optimize(closing=True)
                except Exception:  # the graph holds every fact: the next open re-indexes them
                    log.exception("could not write the vector index at close; the next open repairs it")
                if not self.vectors.write_failed:
                    self.graph.set_meta(_VECTORS_IN_SYNC, self.vectors.versions())
            finally:
                self.graph.close()

    # ------------------------------------------------------------ remember / correct

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
        ttl: str | None = None,
    ) -> RememberOut:
        fact, entity_names = self._build_fact(
            content,
            kind=kind,
            tags=tags,
            entities=entities,
            subject=subject,
            predicate=predicate,
            object=object,
            confidence=confidence,
            source=source,
            scope=scope,
            event_time=event_time,
            session_id=session_id,
            evidence=evidence,
            ttl=ttl,
        )
        return self._store([(fact, entity_names)])[0]

    def remember_many(self, items: Sequence[Mapping[str, Any]]) -> list[RememberOut]:
        """Remember many facts, with the outcome of calling ``remember`` for each in turn, faster.

        Each item holds ``remember``'s arguments by name. Every item is checked before anything
        is written: a bad one raises an error naming it (``items[3]: content is empty ...``)
        and nothing is stored. Then each batch is embedded in one model call and written in one
        graph transaction; a fact sees the entities, session turns and conflicts of the facts
        before it, in its batch or earlier ones. Results come in input order, and only once
        their batch has committed. If a write fails, the batches before it stay stored.
        """
        built = [self._build_item(i, item) for i, item in enumerate(items)]
        stored: list[RememberOut] = []
        for start in range(0, len(built), _WRITE_BATCH):
            try:
                stored += self._store(built[start : start + _WRITE_BATCH])
            except Exception as err:
                err.add_note(f"remember_many: the first {start} items were stored before this error")
                raise
        return stored

    def _build_item(self, index: int, item: Mapping[str, Any]) -> tuple[Fact, tuple[str, ...]]:
        where = f"items[{index}]"
        if not isinstance(item, Mapping):
            raise InvalidInput(f"{where} must be an object of remember's fields, e.g. {{'content': '...'}}")
        unknown = sorted(str(name) for name in set(item) - set(_REMEMBER_FIELDS))
        if unknown:
            raise InvalidInput(
                f"{where} has unknown field(s) {', '.join(unknown)}: use {', '.join(_REMEMBER_FIELDS)}"
            )
        fields: dict[str, Any] = {name: item.get(name) for name in _REMEMBER_FIELDS}
        try:
            return self._build_fact(**fields)
        except InvalidInput as err:
            raise type(err)(f"{where}: {err}") from None

    def _build_fact(
        self,
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
        provenance: Provenance | None = None,
    ) -> tuple[Fact, tuple[str, ...]]:
        """Validate everything a caller sent; build the fact (not yet stored)."""
        s = self.settings
        content = check.text(content, "content", max_bytes=s.max_content_bytes)
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
        now = self.clock()
        user = fact_source is Source.USER_EDIT
        fact = Fact(
            id=new_id("f"),
            content=content,
            kind=check.choice(kind, FactKind, "kind", FactKind.FACT),
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
            tags=check.tags(tags, max_count=s.max_tags_per_call),
            session_id=check.session_id(session_id),
            evidence=check.optional_text(evidence, "evidence", max_bytes=s.max_content_bytes),
        )
        names = check.names(entities, "entities", max_count=s.max_entities_per_call)
        fact, names = self._screen_secrets(fact, names)
        return lc.admit(fact, now, self.policy), names

    def _screen_secrets(self, fact: Fact, names: tuple[str, ...]) -> tuple[Fact, tuple[str, ...]]:
        """Refuse (or mask, by setting) credentials in anything a fact would store."""
        texts: dict[str, str | None] = {
            "content": fact.content,
            "subject": fact.subject,
            "object": fact.object,
            "evidence": fact.evidence,
            **{f"entities[{i}]": name for i, name in enumerate(names)},
        }
        found = {field: secrets_scan.scan(value) for field, value in texts.items() if value}
        found = {field: hits for field, hits in found.items() if hits}
        if not found:
            return fact, names
        if self.settings.secrets == "refuse":
            field, hits = next(iter(found.items()))
            message = secrets_scan.describe(hits)
            raise SecretDetected(message.replace("the content contains", f"{field} contains", 1))
        masked = {field: secrets_scan.redact(texts[field] or "", hits) for field, hits in found.items()}
        fact = dataclasses.replace(
            fact,
            content=masked.get("content", fact.content),
            subject=masked.get("subject", fact.subject),
            object=masked.get("object", fact.object),
            evidence=masked.get("evidence", fact.evidence),
        )
        return fact, tuple(masked.get(f"entities[{i}]", name) for i, name in enumerate(names))

    def _store(
        self, built: Sequence[tuple[Fact, tuple[str, ...]]], *, corrects: Fact | None = None
    ) -> list[RememberOut]:
        """Store facts made by ``_build_fact`` as one batch, with the outcome of storing them in order.

        One embedding call, one graph transaction, one vector-index append: each fact sees the
        entities, session turns and conflicts of the facts before it, as separate calls would.
        """
        facts = [fact for fact, _ in built]
        texts = [
            self._index_text(fact, before[1] if before and fact.kind is FactKind.EPISODE else None)
            for fact, before in zip(facts, self._sessions_before(facts), strict=True)
        ]
        vectors = self.embedder.embed(texts)
        with self._write_lock:
            keys = {key for fact in facts if (key := claim_key(fact.subject, fact.predicate, fact.scope))}
            batch = _Batch(PendingEntities(self.entities), self.graph.active_facts_with(keys))
            planned = [
                self._plan(fact, names, text, before[0] if before else None, batch, corrects)
                for (fact, names), text, before in zip(
                    built, texts, self._sessions_before(facts), strict=True
                )
            ]
            self._commit(planned, batch, vectors)
        return [
            RememberOut(
                **self._fact_out(p.fact, [e.name for _, e in p.linked]).model_dump(),
                superseded=[old.id for old in p.superseded if corrects is None or old.id != corrects.id],
                contradicts=[old.id for old in p.contradicted],
                linked_entities=[
                    EntityOut(id=e.id, name=e.name, type=e.type, created=e in p.created) for _, e in p.linked
                ],
            )
            for p in planned
        ]

    def _plan(
        self,
        fact: Fact,
        entity_names: Sequence[str],
        text: str,
        previous: str | None,
        batch: _Batch,
        corrects: Fact | None,
    ) -> _Planned:
        """What storing ``fact`` writes, given what the batch's earlier facts did (under the write lock)."""
        now = fact.created_at
        linked, created = self._plan_entities(fact, entity_names, now, batch.entities)
        superseded: list[Fact] = []
        contradicted: list[Fact] = []
        if corrects is not None:
            current = self.graph.get_fact(corrects.id)
            if current is None:
                raise NotFound(f"fact {corrects.id} no longer exists")
            newest = self._current_version(current) if current.status is FactStatus.SUPERSEDED else None
            superseded.append(lc.supersede(current, now, f"corrected by {fact.id}", current_id=newest))
        key = claim_key(fact.subject, fact.predicate, fact.scope)
        if key is not None:
            for old in batch.active_with(key):
                if corrects is not None and old.id == corrects.id:
                    continue
                outcome = lc.resolve_conflict(fact, old, self.policy)
                if outcome is lc.ConflictOutcome.SUPERSEDE:
                    superseded.append(lc.supersede(old, now, f"superseded by {fact.id}"))
                elif outcome is lc.ConflictOutcome.CONTRADICT:
                    contradicted.append(old)
        subj = next((e for r, e in linked if r == "subject"), None)
        obj = next((e for r, e in linked if r == "object"), None)
        relation = None
        if subj is not None and obj is not None:
            relation = Relation(subj.id, obj.id, fact.predicate or "related_to", 1.0, fact.id, now)
        planned = _Planned(fact, text, linked, created, previous, superseded, contradicted, relation)
        batch.add(planned)
        return planned

    def _commit(self, planned: Sequence[_Planned], batch: _Batch, vectors: np.ndarray) -> None:
        """Write a planned batch: the graph in one transaction, then the vector index."""
        g = self.graph
        created = [e for p in planned for e in p.created]
        # Before the transaction: if the model fails, nothing is written. (Embedding beside the
        # graph's statements, in a thread, made remember slower on two cores: 18 vs 16 ms p50.)
        entity_vectors = self.embedder.embed([self._entity_text(e) for e in created]) if created else None
        with g.transaction():
            g.insert_facts([p.fact for p in planned])
            g.insert_entities([e for p in planned for e in p.created])
            g.touch_entities(batch.mentions)
            g.link_about_many([(p.fact.id, e.id, role) for p in planned for role, e in p.linked])
            g.link_entities_many([p.relation for p in planned if p.relation is not None])
            g.tag_facts([(p.fact.id, tag) for p in planned for tag in p.fact.tags])
            g.link_facts_many(
                "NEXT", [(p.previous, p.fact.id, p.fact.created_at, {}) for p in planned if p.previous]
            )
            g.update_fact_states(list(batch.states.values()))
            g.link_facts_many(
                "SUPERSEDES",
                [
                    (p.fact.id, old.id, p.fact.created_at, {"reason": old.status_reason})
                    for p in planned
                    for old in p.superseded
                ],
            )
            g.link_facts_many(
                "CONTRADICTS",
                [(p.fact.id, old.id, p.fact.created_at, {}) for p in planned for old in p.contradicted],
            )
        # Committed: from here on the facts survive a crash (reconcile re-indexes them).
        for entity in batch.entities.staged():
            self.entities.put(entity)
        for p in planned:
            if p.fact.session_id is not None:
                self._session_tail[p.fact.session_id] = (p.fact.id, p.fact.content)
        rows = [
            fact_row(batch.states.get(p.fact.id, p.fact), [e.id for _, e in p.linked], p.text)
            for p in planned
        ]
        self.vectors.add("facts", rows, vectors)
        written = {p.fact.id for p in planned}
        self.vectors.set_status(
            [fid for fid in batch.states if fid not in written], FactStatus.SUPERSEDED.value
        )
        if entity_vectors is not None:
            self.vectors.add("entities", [self._entity_row(e) for e in created], entity_vectors)

    def correct(
        self,
        content: str,
        *,
        fact_id: str | None = None,
        query: str | None = None,
        scope: str | None = None,
        **overrides: Any,
    ) -> CorrectOut:
        """Replace a fact with a corrected one; the old one stays as superseded history."""
        if (fact_id is None) == (query is None):
            raise InvalidInput(
                "send exactly one of fact_id (from search results) or query (to find the fact)"
            )
        if fact_id is not None:
            old = self._get(fact_id)
        else:
            hits = self.search(query or "", limit=1, scope=scope, record=False).results
            if not hits:
                raise NotFound(f"no active fact matches {query!r}: search first, then correct by fact_id")
            old = self._get(hits[0].id)
        lc.check_correctable(old, self._current_version(old))
        # The corrected fact keeps what the old one was about, except the value it got wrong.
        names = [n for n in self.graph.read.entity_names_for([old.id]).get(old.id, []) if n != old.object]
        inherited: dict[str, Any] = {
            "kind": old.kind.value,
            "tags": list(old.tags),
            "entities": names,
            "subject": old.subject,
            "predicate": old.predicate,
            "object": None if old.predicate else old.object,
            "source": Source.USER_EDIT.value,
            "scope": old.scope,
            "event_time": iso(old.event_time),
            "session_id": None,
            "evidence": None,
            "ttl": old.ttl_policy.value,
            "confidence": None,
        }
        inherited.update({k: v for k, v in overrides.items() if v is not None})
        fact, entity_names = self._build_fact(content, provenance=Provenance.USER_CORRECTED, **inherited)
        out = self._store([(fact, entity_names)], corrects=old)[0]
        return CorrectOut(**out.model_dump(), corrected=old.id)

    def _current_version(self, fact: Fact) -> str | None:
        newer = self.graph.chain(fact.id, "SUPERSEDES", newer=True)
        return newer[-1][0] if newer else None

    def _plan_entities(
        self, fact: Fact, explicit: Sequence[str], now: datetime, index: EntityIndex
    ) -> tuple[list[tuple[str, Entity]], list[Entity]]:
        """Which entities the fact is ABOUT (role, entity), and which of them are new."""
        linked: list[tuple[str, Entity]] = []
        created: list[Entity] = []

        def resolve(name: str, create: bool) -> Entity | None:
            found = index.resolve(name, fact.scope)
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
        for entity in index.mentions(fact.content, fact.scope):
            add("mention", entity)
        return linked, created

    @staticmethod
    def _index_text(fact: Fact, context: str | None) -> str:
        # A turn of a conversation ("Yes, last Tuesday!") often means nothing alone: it is
        # indexed (vector and full text) with the turn before it. Results show only its content.
        if not context:
            return fact.content
        return f"{context[:_CONTEXT_CHARS]}\n{fact.content}"

    def _sessions_before(self, facts: Sequence[Fact]) -> list[tuple[str, str] | None]:
        """For each fact, (id, content) of the fact before it in its session, if any: stored, or
        earlier in ``facts``."""
        sessions = {f.session_id for f in facts if f.session_id is not None}
        unknown = sessions - self._session_tail.keys()
        if unknown:
            latest = self.graph.read.last_facts_in_sessions(unknown)
            stored = self.graph.get_facts(list(latest.values()))
            for sid in unknown:
                fact = stored.get(latest.get(sid, ""))
                # setdefault: a writer that committed to this session meanwhile knows better.
                self._session_tail.setdefault(sid, (fact.id, fact.content) if fact else None)
        tails = {sid: self._session_tail.get(sid) for sid in sessions}
        before: list[tuple[str, str] | None] = []
        for fact in facts:
            if fact.session_id is None:
                before.append(None)
                continue
            before.append(tails[fact.session_id])
            tails[fact.session_id] = (fact.id, fact.content)
        return before

    # ------------------------------------------------------------ confirm / forget / link

    def _get(self, fact_id: str) -> Fact:
        fact = self.graph.get_fact(check.fact_id(fact_id))
        if fact is None:
            raise NotFound(f"no fact has id {fact_id}: take ids from remember or search results")
        return fact

    def confirm(self, fact_id: str) -> FactOut:
        with self._write_lock:
            self.apply_accesses()
            fact = self._get(fact_id)
            current = self._current_version(fact) if fact.status is FactStatus.SUPERSEDED else None
            confirmed = lc.confirm(fact, self.clock(), current_id=current)
            if confirmed != fact:
                self.graph.update_fact_state(confirmed)
                self.vectors.set_status([fact.id], confirmed.status.value)
        return self._fact_out(confirmed, self.graph.read.entity_names_for([fact.id]).get(fact.id, []))

    def forget(self, fact_id: str, reason: str | None = None) -> FactOut:
        why = check.optional_text(reason, "reason", max_bytes=500) or "forgotten on request"
        with self._write_lock:
            self.apply_accesses()
            fact = self._get(fact_id)
            retracted = lc.retract(fact, self.clock(), why)
            if retracted != fact:
                self.graph.update_fact_state(retracted)
                self.vectors.set_status([fact.id], retracted.status.value)
        return self._fact_out(retracted, self.graph.read.entity_names_for([fact.id]).get(fact.id, []))

    def link(self, from_id: str, to_id: str, relation: str, weight: float | None = None) -> LinkOut:
        src = check.node_id(from_id, "from_id")
        dst = check.node_id(to_id, "to_id")
        if src == dst:
            raise InvalidInput("from_id and to_id are the same: link two different facts or entities")
        rel = check.text(relation, "relation", max_bytes=64).lower().replace(" ", "_")
        w = check.confidence(weight, default=1.0) if weight is not None else 1.0
        with self._write_lock:
            now = self.clock()
            kinds = (src[0], dst[0])
            if kinds == ("f", "f"):
                edge = FACT_RELATIONS.get(rel)
                if edge is None:
                    allowed = ", ".join(FACT_RELATIONS)
                    raise InvalidInput(f"relation {relation!r} cannot join two facts: use one of {allowed}")
                a, b = self._get(src), self._get(dst)
                if self.graph.has_edge(edge, a.id, b.id):
                    return LinkOut(from_id=src, to_id=dst, relation=rel, edge_type=edge, weight=w)
                if edge == "SUPERSEDES":
                    if any(fid == a.id for fid, _ in self.graph.chain(b.id, "SUPERSEDES", newer=False)):
                        raise InvalidTransition(
                            f"{b.id} already supersedes {a.id} (directly or through a chain): linking "
                            "them the other way would make a cycle; correct the newest fact instead"
                        )
                    old = lc.supersede(b, now, f"superseded by {a.id} (link)")
                    with self.graph.transaction():
                        self.graph.update_fact_state(old)
                        self.graph.link_facts(edge, a.id, b.id, now, reason=old.status_reason)
                    self.vectors.set_status([b.id], old.status.value)
                else:
                    self.graph.link_facts(edge, a.id, b.id, now, weight=w, relation=rel)
                return LinkOut(from_id=src, to_id=dst, relation=rel, edge_type=edge, weight=w)
            if kinds == ("e", "e"):
                for eid in (src, dst):
                    if self.entities.get(eid) is None:
                        raise NotFound(
                            f"no entity has id {eid}: take entity ids from remember's linked_entities"
                        )
                self.graph.link_entities(src, dst, rel, w, None, now)
                return LinkOut(from_id=src, to_id=dst, relation=rel, edge_type="RELATES", weight=w)
            fact = self._get(src if kinds[0] == "f" else dst)
            entity_id = dst if kinds[0] == "f" else src
            if self.entities.get(entity_id) is None:
                raise NotFound(
                    f"no entity has id {entity_id}: take entity ids from remember's linked_entities"
                )
            self.graph.link_about(fact.id, entity_id, "mention")
            linked = sorted({e.dst for e in self.graph.read.about_edges([fact.id])})
            self.vectors.update("facts", [fact.id], {"entity_ids": linked})
            return LinkOut(from_id=src, to_id=dst, relation=rel, edge_type="ABOUT", weight=w)

    # ------------------------------------------------------------ search / recall

    def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        scope: str | None = None,
        kind: str | Sequence[str] | None = None,
        entity: str | None = None,
        tags: Sequence[str] | None = None,
        status: str | Sequence[str] | None = None,
        after: str | None = None,
        before: str | None = None,
        include_history: bool = False,
        as_of: str | None = None,
        record: bool = True,
    ) -> SearchOut:
        s = self.settings
        query = check.text(query, "query", max_bytes=s.max_query_chars * 4)
        if len(query) > s.max_query_chars:
            raise InvalidInput(
                f"query is {len(query)} characters, over the {s.max_query_chars} limit: "
                "send the key words or one question"
            )
        count = check.limit(limit, default=10, maximum=s.max_limit)
        now = self.clock()
        scopes = visible_scopes(check.scope(scope))
        moment = parse_time_bound(as_of, now, end=True) if as_of else None
        statuses = self._statuses(status, history=include_history or moment is not None)
        where = Filter(
            statuses=statuses,
            scopes=scopes,
            kinds=self._kinds(kind),
            tags_any=list(check.tags(tags, max_count=s.max_tags_per_call)) or None,
            entity_ids_any=self._entity_filter(entity, scopes[0]),
            after=parse_time_bound(after, now, end=False) if after else None,
            before=parse_time_bound(before, now, end=True) if before else None,
        )
        if where.after and where.before and where.after >= where.before:
            raise InvalidInput("after must be earlier than before: swap them or widen the range")
        query_plan = plan(query, now)
        vector = self.embedder.embed([query])[0]
        ranked, notes = self.retriever.search(query, vector, where, count, query_plan, now=now, as_of=moment)
        names = self.graph.read.entity_names_for([r.fact.id for r in ranked])
        results = [
            SearchHit(
                **self._fact_out(r.fact, names.get(r.fact.id, [])).model_dump(),
                score=round(r.score, 6),
                reasons=r.reasons,
            )
            for r in ranked
        ]
        if record and results:
            self.accesses.append([r.id for r in results], now)
        return SearchOut(query=query, results=results, notes=notes)

    def recall(
        self, context: str, *, budget_tokens: int | None = None, scope: str | None = None, limit: int = 20
    ) -> RecallOut:
        s = self.settings
        budget = budget_tokens if budget_tokens is not None else s.default_budget_tokens
        if isinstance(budget, bool) or not isinstance(budget, int) or not 50 <= budget <= s.max_budget_tokens:
            raise InvalidInput(f"budget_tokens must be a whole number from 50 to {s.max_budget_tokens}")
        found = self.search(context, limit=min(limit, s.max_limit), scope=scope)
        facts = self.graph.get_facts([h.id for h in found.results])
        narrative_facts = [
            NarrativeFact(
                id=h.id,
                content=h.content,
                kind=h.kind,
                status=h.status,
                entities=tuple(h.entities),
                when=(h.event_time or "")[:10] or None,
                why=_why(h.reasons),
                evidence=facts[h.id].evidence if h.id in facts else None,
            )
            for h in found.results
        ]
        mentioned: dict[str, Entity] = {}
        for hit in found.results:
            for name in hit.entities:
                entity = self.entities.resolve(name, check.scope(scope))
                if entity is not None:
                    mentioned.setdefault(entity.id, entity)
        profiles = [
            Profile(e.name, e.type, e.summary, e.aliases, e.mention_count)
            for e in sorted(mentioned.values(), key=lambda e: -e.mention_count)
        ]
        narrative = build_narrative(context, narrative_facts, profiles, budget)
        return RecallOut(
            context=context,
            narrative=narrative,
            tokens=count_tokens(narrative),
            budget_tokens=budget,
            facts=found.results,
            notes=found.notes,
        )

    def _statuses(self, status: str | Sequence[str] | None, *, history: bool) -> tuple[str, ...] | None:
        if status is None or status == [] or status == "":
            return None if history else ACTIVE_STATUSES
        values = [status] if isinstance(status, str) else list(status)
        return tuple(check.choice(v, FactStatus, "status", FactStatus.STAGED).value for v in values)

    def _kinds(self, kind: str | Sequence[str] | None) -> tuple[str, ...] | None:
        if kind is None or kind == [] or kind == "":
            return None
        values = [kind] if isinstance(kind, str) else list(kind)
        return tuple(check.choice(v, FactKind, "kind", FactKind.FACT).value for v in values)

    def _entity_filter(self, entity: str | None, scope: str) -> list[str] | None:
        if not entity:
            return None
        name = check.text(entity, "entity", max_bytes=200)
        found = self.entities.get(name) if name.startswith("e_") else self.entities.resolve(name, scope)
        if found is None:
            raise NotFound(f"no entity is called {entity!r} in this scope: search without the entity filter")
        return [found.id]

    # ------------------------------------------------------------ accesses & maintenance

    def apply_accesses(self) -> int:
        """Apply recorded accesses to the graph (reinforcement, promotion); return how many."""
        pending = self.accesses.pending()
        if not pending:
            return 0
        with self._write_lock:
            facts = self.graph.get_facts(sorted({a.fact_id for a in pending}))
            changed: dict[str, Fact] = {}
            for access in pending:
                fact = changed.get(access.fact_id) or facts.get(access.fact_id)
                if fact is not None:
                    changed[fact.id] = lc.record_access(fact, access.at, self.policy)
            last = pending[-1].seq
            with self.graph.transaction():
                self.graph.update_fact_states(list(changed.values()))
                self.graph.set_meta(_APPLIED_SEQ, str(last))
            self.accesses.mark_applied(last)
            promoted = [f.id for f in changed.values() if f.status != facts[f.id].status]
            self.vectors.set_status(promoted, FactStatus.CONFIRMED.value)
        return len(pending)

    def maintain(self, now: datetime | None = None) -> MaintenanceOut:
        """Promotion, decay, expiry and orphan cleanup over every active fact. Idempotent."""
        with self._write_lock:
            self.apply_accesses()
            now = now or self.clock()
            counts = dict.fromkeys(lc.MaintenanceKind, 0)
            changed: list[Fact] = []
            examined = 0
            for fact in self.graph.active_facts():
                examined += 1
                result = lc.maintain(fact, now, self.policy)
                counts[result.action] += 1
                if result.fact is not None:
                    changed.append(result.fact)
            orphans = self.graph.orphan_entities()
            with self.graph.transaction():
                self.graph.update_fact_states(changed)
                self.graph.delete_entities(orphans)
                self.graph.set_meta(_LAST_MAINTENANCE, iso(now) or "")
            for status in {f.status.value for f in changed}:
                self.vectors.set_status([f.id for f in changed if f.status.value == status], status)
            self.vectors.delete("entities", orphans)
            for eid in orphans:
                self.entities.remove(eid)
        return MaintenanceOut(
            now=iso(now) or "",
            examined=examined,
            promoted=counts[lc.MaintenanceKind.PROMOTE],
            expired=counts[lc.MaintenanceKind.EXPIRE],
            retracted_decayed=counts[lc.MaintenanceKind.RETRACT_DECAYED],
            orphan_entities_removed=len(orphans),
        )

    # ------------------------------------------------------------ explain

    def explain(self, fact_id: str) -> ExplainOut:
        self.apply_accesses()
        fact = self._get(fact_id)
        now = self.clock()
        older = self.graph.chain(fact.id, "SUPERSEDES", newer=False)
        newer = self.graph.chain(fact.id, "SUPERSEDES", newer=True)
        edges = self.graph.read.fact_edges([fact.id])
        contradicting = sorted(
            {e.dst if e.src == fact.id else e.src for e in edges if e.type == "CONTRADICTS"}
        )
        related = self.graph.get_facts([fid for fid, _ in older + newer] + contradicting)
        about = self.graph.read.about_edges([fact.id])
        entities = self.graph.entities([e.dst for e in about])
        rel = lc.relevance(fact, now, self.policy)

        def linked(fid: str, hops: int | None = None) -> LinkedFact:
            other = related[fid]
            return LinkedFact(id=fid, content=other.content, status=other.status.value, hops=hops)

        return ExplainOut(
            fact=self._fact_out(fact, [entities[e.dst].name for e in about if e.dst in entities]),
            provenance=fact.provenance.value,
            evidence=fact.evidence,
            status_reason=fact.status_reason,
            pinned=fact.pinned,
            ttl_policy=fact.ttl_policy.value,
            access_count=fact.access_count,
            last_accessed=iso(fact.last_accessed),
            valid_from=iso(fact.valid_from) or "",
            relevance=RelevanceOut(
                value=round(rel.value, 6),
                confidence=rel.confidence,
                source_weight=rel.source_weight,
                decay=round(rel.decay, 6),
                usage_boost=round(rel.usage_boost, 6),
                status_weight=lc.status_weight(fact.status, self.policy),
            ),
            supersedes=[linked(fid, hops) for fid, hops in older if fid in related],
            superseded_by=[linked(fid, hops) for fid, hops in newer if fid in related],
            contradicts=[linked(fid) for fid in contradicting if fid in related],
            entities=[
                EntityLink(
                    id=e.dst, name=entities[e.dst].name, type=entities[e.dst].type, role=e.props["role"]
                )
                for e in about
                if e.dst in entities
            ],
            edges=[
                EdgeOut(
                    type=e.type,
                    direction="out" if e.src == fact.id else "in",
                    other_id=e.dst if e.src == fact.id else e.src,
                    props={k: (iso(v) if isinstance(v, datetime) else v) for k, v in e.props.items()},
                )
                for e in edges
            ],
        )

    # ------------------------------------------------------------ consistency

    def reconcile(self) -> ReconcileReport:
        """Make the vector index agree with the graph: re-embed missing rows, drop orphans."""
        with self._write_lock:
            indexed = self.vectors.ids("facts")
            # Statuses from the graph mirror: reading every fact row took ~6 s at 100k facts.
            statuses = self.graph.read.fact_statuses()
            missing_ids = [fid for fid in statuses if fid not in indexed]
            orphans = [fid for fid in indexed if fid not in statuses]
            stale = [fid for fid, status in statuses.items() if fid in indexed and indexed[fid] != status]
            for start in range(0, len(missing_ids), 256):
                batch_ids = missing_ids[start : start + 256]
                facts = self.graph.get_facts(batch_ids)
                batch = [facts[fid] for fid in batch_ids if fid in facts]
                about: dict[str, list[str]] = {}
                for edge in self.graph.read.about_edges(batch_ids):
                    about.setdefault(edge.src, []).append(edge.dst)
                before = {e.dst: e.src for e in self.graph.read.fact_edges(batch_ids, ["NEXT"])}
                previous = self.graph.get_facts(list(before.values()))
                texts = [
                    self._index_text(
                        f,
                        previous[before[f.id]].content
                        if f.kind is FactKind.EPISODE and before.get(f.id) in previous
                        else None,
                    )
                    for f in batch
                ]
                self.vectors.add(
                    "facts",
                    [fact_row(f, about.get(f.id, []), text) for f, text in zip(batch, texts, strict=True)],
                    self.embedder.embed(texts),
                )
            self.vectors.delete("facts", orphans)
            for status in {statuses[fid] for fid in stale}:
                self.vectors.set_status([fid for fid in stale if statuses[fid] == status], status)

            indexed_entities = self.vectors.ids("entities")
            entities = {e.id: e for e in self.graph.all_entities()}
            missing_entities = [e for eid, e in entities.items() if eid not in indexed_entities]
            orphan_entities = [eid for eid in indexed_entities if eid not in entities]
            if missing_entities:
                self.vectors.add(
                    "entities",
                    [self._entity_row(e) for e in missing_entities],
                    self.embedder.embed([self._entity_text(e) for e in missing_entities]),
                )
            self.vectors.delete("entities", orphan_entities)
            return ReconcileReport(
                added=len(missing_ids) + len(missing_entities),
                removed=len(orphans) + len(orphan_entities),
                restatused=len(stale),
            )

    def doctor(self) -> dict[str, Any]:
        """Check the stores agree and repair what does not; report what was done."""
        self.apply_accesses()
        mirror_problems = self.graph.check_mirror(repair=True)  # reconcile reads the mirror
        report = self.reconcile()
        return {
            "reindexed": report.added,
            "orphan_rows_removed": report.removed,
            "statuses_fixed": report.restatused,
            "graph_mirror_repaired": mirror_problems,
            **self.stats(),
        }

    def stats(self) -> dict[str, Any]:
        return {
            **self.graph.counts(),
            "by_kind": self.graph.count_by("kind"),
            "by_status": self.graph.count_by("status"),
            "by_scope": self.graph.count_by("scope"),
            "indexed_facts": self.vectors.count("facts"),
            "disk_bytes": sum(
                p.stat().st_size
                for p in self.settings.data_dir.rglob("*")
                if p.is_file() and "models" not in p.relative_to(self.settings.data_dir).parts
            ),
            "schema_version": self.graph.schema_version(),
            "last_maintenance": self.graph.get_meta(_LAST_MAINTENANCE),
        }

    # ------------------------------------------------------------ shaping

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


def _why(reasons: dict[str, Any]) -> str:
    parts = []
    for channel in ("vector", "fts", "prf", "entity", "graph", "neighbour"):
        detail = reasons.get(channel)
        if not detail:
            continue
        if channel == "graph":
            via = f" via {detail['via_entity']}" if detail.get("via_entity") else ""
            parts.append(f"graph {detail['hops']} hop(s) over {detail['edge']}{via}")
        elif channel == "entity":
            parts.append(f"about {detail.get('via', 'a named entity')}")
        elif channel == "neighbour":
            parts.append("next to a match in its conversation")
        else:
            parts.append(f"{channel} #{detail['rank']}")
    return ", ".join(parts) or "matched"
