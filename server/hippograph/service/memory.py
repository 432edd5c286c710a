"""The service facade: one open memory (its stores, background jobs and lifetime) running the API.

``Memory`` opens the stores of a data dir (Kùzu graph = source of truth, LanceDB =
rebuildable index, the embedding model), starts and stops the background jobs, and runs
each operation ``api.MemoryAPI`` declares by handing it to the part that owns it:

    writes.Writer       remember, remember_many, correct
    curation.Curator    confirm, forget, link
    reads.Reader        search, recall
    usage.Usage         mark_used
    explain.Explainer   explain
    subgraph.Subgraphs  subgraph (the explorer's view)
    profiles.Profiles   profile (an entity's facts and connections)
    upkeep.Upkeep       maintain, stats, doctor (+ reconcile, run by the owner)
    transfer            export, import_lines

The parts share one ``stores.Stores``: the stores, the clock, the policies and the write lock.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import inspect
import io
import json
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

from hippograph.api import CONTEXT_QUERY, OPERATIONS, MemoryAPI
from hippograph.config import Settings
from hippograph.domain import lifecycle as lc
from hippograph.domain import validation as check
from hippograph.domain.errors import IndexDamaged, InvalidInput, StoreError
from hippograph.domain.models import RecallOut, SearchOut
from hippograph.retrieval.retriever import NO_CONFIDENT_MATCH, Retriever
from hippograph.service import import_mcp, screening, transfer
from hippograph.service.background import BackgroundJobs
from hippograph.service.consolidation import Consolidator
from hippograph.service.curation import PURGE_PENDING, Curator, finish_purge
from hippograph.service.explain import Explainer
from hippograph.service.in_flight import CallsInFlight
from hippograph.service.overview import Overviews
from hippograph.service.profiles import Profiles
from hippograph.service.reads import Reader
from hippograph.service.review import Reviewer
from hippograph.service.shaping import Clock, iso, utcnow
from hippograph.service.stores import SessionTails, Stores, check_writable, lifecycle_policy
from hippograph.service.subgraph import Subgraphs
from hippograph.service.upkeep import CLOSE_COMPACT_MOST, ReconcileReport, Upkeep
from hippograph.service.usage import Usage
from hippograph.service.writes import Writer
from hippograph.store.backends import open_gaps, open_graph, open_topics, open_vectors
from hippograph.store.code_pages import release_library_pages
from hippograph.store.embed import Embedder, LazyEmbedder
from hippograph.store.entity_index import EntityIndex
from hippograph.store.malloc_arenas import release_free_memory
from hippograph.store.name_typing import NameTyper
from hippograph.store.ner import NameFinder, shared_recogniser
from hippograph.store.seam import GraphStore, VectorStore
from hippograph.text import secrets_scan

Answer = TypeVar("Answer", SearchOut, RecallOut)
log = logging.getLogger(__name__)

# Written at a clean close: the LanceDB table versions that agree with the graph. At open,
# equal versions mean nothing can differ and the full reconcile (~2 s at 100k facts) is
# skipped; the marker is cleared at once, so after a crash the next open reconciles.
_VECTORS_IN_SYNC = "vectors_in_sync_with"


# How long closing waits for the calls under way (a call takes well under a second).
_CALLS_END_S = 60.0
# How long no call must have come before a swollen graph file is rewritten in the background.
_COMPACT_IDLE_S = 600.0
# The libraries' pages read while starting go back on the second of these ticks that finds a call
# answered: 10-20 s after the first answer, the recogniser and the secret rules loaded by then.
_START_CODE_TICK_S = 10.0


class _RequestLocks:
    """One lock per request id in flight: a retry that arrives while the first try still runs
    waits for it, then finds its receipt."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._held: dict[str, tuple[threading.Lock, int]] = {}

    @contextmanager
    def hold(self, request_id: str) -> Iterator[None]:
        with self._mutex:
            lock, users = self._held.get(request_id, (threading.Lock(), 0))
            self._held[request_id] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._mutex:
                lock, users = self._held[request_id]
                if users == 1:
                    del self._held[request_id]
                else:
                    self._held[request_id] = (lock, users - 1)


class Memory(MemoryAPI):
    """The memory of one data dir, open in this process (the owner). Thread-safe."""

    def __init__(
        self,
        settings: Settings,
        graph: GraphStore,
        vectors: VectorStore,
        embedder: Embedder,
        *,
        clock: Clock = utcnow,
    ) -> None:
        entities = graph.names
        policy = lifecycle_policy(settings)
        self.stores = Stores(
            settings=settings,
            graph=graph,
            vectors=vectors,
            embedder=embedder,
            entities=entities,
            retriever=Retriever(graph, vectors, entities, policy),
            policy=policy,
            clock=clock,
            sessions=SessionTails(graph),
            names=NameFinder(shared_recogniser()),  # loads on first use, or with start_background
            typer=NameTyper(embedder),
            topics=open_topics(settings, graph),
            gaps=open_gaps(settings, graph),
        )
        self.stores.write_lock.across = graph.writer
        self.upkeep = Upkeep(self.stores)
        self.reader = Reader(self.stores)
        self.writer = Writer(
            self.stores, self.reader.search, partial(self.reader.empty_scope_note, starting=True)
        )
        self.curator = Curator(self.stores)
        self.usage = Usage(self.stores)
        self.explainer = Explainer(self.stores)
        self.subgraphs = Subgraphs(self.stores)
        self.profiles = Profiles(self.stores, self.reader)
        self.consolidator = Consolidator(self.stores)
        self.overviews = Overviews(self.stores, self.reader)
        self.reviewer = Reviewer(self.stores)
        self._handlers: dict[str, Callable[..., Any]] = {
            "remember": self.writer.remember,
            "remember_many": self.writer.remember_many,
            "correct": self.writer.correct,
            "confirm": self.curator.confirm,
            "forget": self.curator.forget,
            "link": self.curator.link,
            "mark_used": self.usage.mark_used,
            "search": self._logging_gaps(self.reader.search),
            "recall": self._logging_gaps(self._recall),
            "review": self.reviewer.review,
            "names": self.reader.names,
            "subgraph": self.subgraphs.subgraph,
            "profile": self.profiles.profile,
            "consolidate": self.consolidator.consolidate,
            "topics": self.consolidator.topics,
            "topic": self.consolidator.topic,
            "explain": self.explainer.explain,
            "maintain": self.upkeep.maintain,
            "stats": self.upkeep.stats,
            "doctor": self.upkeep.doctor,
            "export": self._export,
            "import_lines": self._import_lines,
        }
        missing = set(OPERATIONS) - set(self._handlers)
        if missing:
            raise StoreError(
                f"the service does not implement {sorted(missing)}"
            )  # a bug, caught by every test
        self._jobs = BackgroundJobs()
        self._closed = False
        self._requests = _RequestLocks()
        self._in_flight = CallsInFlight()
        receipts = graph.receipts
        self.stores.write_lock.give_way = lambda: self._in_flight.closing and receipts.waiting()
        self._repairing = threading.Lock()
        self._warm_names = False  # a long-lived server loads the recogniser after its first call
        self._answered_ticks = 0

    # What in-process callers (CLI, explorer, benchmarks, tests) reach directly.
    @property
    def settings(self) -> Settings:
        """The shared settings."""
        return self.stores.settings

    @property
    def graph(self) -> GraphStore:
        """The shared graph."""
        return self.stores.graph

    @property
    def vectors(self) -> VectorStore:
        """The shared vectors."""
        return self.stores.vectors

    @property
    def embedder(self) -> Embedder:
        """The shared embedder."""
        return self.stores.embedder

    @property
    def entities(self) -> EntityIndex:
        """The shared entities."""
        return self.stores.entities

    @property
    def retriever(self) -> Retriever:
        """The shared retriever."""
        return self.stores.retriever

    @property
    def policy(self) -> lc.LifecyclePolicy:
        """The shared policy."""
        return self.stores.policy

    @property
    def clock(self) -> Clock:
        """The shared clock."""
        return self.stores.clock

    @classmethod
    def open(
        cls,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        clock: Clock = utcnow,
        preload_model: bool = True,
    ) -> Memory:
        """Open (creating on first start) the stores in ``settings.data_dir``. Without an
        ``embedder`` the model loads when first used; ``preload_model`` starts loading it now."""
        data_dir = settings.data_dir
        check_writable(data_dir)
        if embedder is None:
            lazy = LazyEmbedder(settings.embedding_model, settings.model_cache_dir)
            if preload_model:
                # The model (~0.5-1 s: onnxruntime, the session) loads while the graph opens (its
                # index, when it must be built, by Kùzu, Arrow and SQLite code that releases the GIL).
                lazy.preload()
            embedder = lazy
        graph = open_graph(settings)
        try:
            vectors = open_vectors(settings, graph, dim=embedder.dim, model=embedder.name)
            memory = cls(settings, graph, vectors, embedder, clock=clock)
            if vectors.rebuilt or graph.get_meta(_VECTORS_IN_SYNC) != vectors.versions():
                report = memory.reconcile()
                if report.added or report.removed or report.restatused:
                    log.warning("reconciled the vector index with the graph: %s", report)
            graph.set_meta(_VECTORS_IN_SYNC, "")
            if graph.get_meta(PURGE_PENDING):
                log.warning("finishing a purge an earlier process did not complete")
                finish_purge(memory.stores)
        except BaseException:
            graph.close()
            raise
        return memory

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run operation ``name`` (see ``api.MemoryAPI``) here."""
        with self._in_flight.call():
            return self._run(name, arguments)

    def _run(self, name: str, arguments: dict[str, Any]) -> Any:
        handler = self._handlers.get(name)
        if handler is None:
            raise InvalidInput(
                f"there is no operation {check.shown(name)}: use one of {', '.join(sorted(self._handlers))}"
            )
        if not OPERATIONS[name].read_only:
            # The one intake of every write: no path, no field is stored unscreened.
            arguments = screening.screen(arguments, self.settings.secrets)
            self.stores.check_space()
        try:
            return handler(**arguments)
        except IndexDamaged:
            self._repair_index_soon()
            raise
        finally:
            if self._warm_names:  # a server's first call (a command never loads them for a read)
                self._warm_names = False
                threading.Thread(target=self._load_for_writes, name="hippograph-warm", daemon=True).start()

    def _load_for_writes(self) -> None:
        """What only writes use, between hand-backs of the library pages read (the peak RSS)."""
        release_library_pages()
        self.stores.names.load()  # the recogniser: ~1 s holding the GIL, after the first answer
        screening.load()  # the larger secret rule sets
        release_library_pages()

    def _repair_index_soon(self) -> None:
        """Rebuild damaged vector tables in the background (once at a time); calls meanwhile fail
        clearly, and succeed again when it is done."""
        if not self._repairing.acquire(blocking=False):
            return

        def repair() -> None:
            try:
                self.upkeep.repair_index()
            except Exception:
                log.exception("could not rebuild the vector index; hippograph doctor tries again")
            finally:
                self._repairing.release()

        threading.Thread(target=repair, name="hippograph-index-repair", daemon=True).start()

    def call_once(self, name: str, arguments: dict[str, Any], request_id: str) -> Any:
        """Run a write at most once per ``request_id``: its receipt commits in the write's own
        transaction, and a retry gets the stored reply (see ``store.receipts``)."""
        operation = OPERATIONS.get(name)
        if operation is None or operation.read_only:
            return self.call(name, arguments)
        receipts = self.graph.receipts
        with self._in_flight.call(), self._requests.hold(request_id), receipts.holding(request_id):
            done = receipts.get(request_id)
            if done is not None:
                if done.operation != name:
                    raise InvalidInput(f"request id {request_id} was used for {done.operation}, not {name}")
                if done.result is None:
                    raise StoreError(
                        f"this {name} was applied, but the process running it stopped before its reply "
                        "was kept: search for the result instead of sending it again"
                    )
                return operation.parse_result(json.loads(done.result))
            receipts.commit_with_next_write(request_id, name, self.stores.clock())
            try:
                result = self._run(name, arguments)
            except BaseException:
                receipts.abandon()
                raise
            reply = json.dumps(operation.dump_result(result))
            receipts.store_reply(request_id, name, reply, self.stores.clock())
            return result

    # ------------------------------------------------------------ owner-side upkeep

    def reconcile(self) -> ReconcileReport:
        """Make the vector index agree with the graph: re-embed missing rows, drop orphans."""
        return self.upkeep.reconcile()

    def tune_indexes(self) -> None:
        """Build the ANN index once the store is large (afresh once it has split into many
        segments); fold small appends into the indexes once enough wait."""
        built = self.vectors.ensure_vector_index()
        with self.stores.write_lock:
            folded = self.vectors.optimize(when_due=True)
        if built or folded:
            # What LanceDB's fold freed stays in glibc's heaps otherwise: with a fold each time 32
            # appends waited, a server held 501-528 MB after 6k remembers, 476 with this trim.
            release_free_memory()

    def _recall(
        self,
        context: str,
        *,
        budget_tokens: int | None = None,
        scope: str | None = None,
        limit: int = 20,
        granularity: str = "facts",
    ) -> RecallOut:
        if granularity == "overview":
            return self.overviews.overview(context, budget_tokens=budget_tokens, scope=scope)
        return self.reader.recall(context, budget_tokens=budget_tokens, scope=scope, limit=limit)

    def _logging_gaps(self, read: Callable[..., Answer]) -> Callable[..., Answer]:
        """``read`` (search or recall, as a caller asks it), logging a question it has no confident
        match for (review's gaps), unless the question holds a secret (the log is on disk too) or
        is the context resource's own."""

        asked = next(iter(inspect.signature(read).parameters))  # query, or context

        @functools.wraps(read)
        def logged(*args: Any, **arguments: Any) -> Answer:
            out = read(*args, **arguments)
            question = arguments[asked] if asked in arguments else args[0]
            unsure = any(note.startswith(NO_CONFIDENT_MATCH) for note in out.notes)
            if unsure and question != CONTEXT_QUERY and not secrets_scan.scan(question):
                scope = check.scope(arguments.get("scope"))
                try:
                    self.stores.gaps.record(scope, question, iso(self.stores.clock()) or "")
                except Exception:  # a log of questions must never fail the read
                    log.exception("could not log a question without a confident match")
            return out

        return logged

    def _export(self) -> dict[str, Any]:
        buffer = io.StringIO()
        report = transfer.export(self.stores, buffer)
        return {"jsonl": buffer.getvalue(), "report": dataclasses.asdict(report)}

    def _import_lines(self, lines: list[str], format: str, scope: str | None = None) -> dict[str, Any]:
        if format == "mcp-memory":
            report = import_mcp.import_mcp_memory(self.stores, self.upkeep, lines, scope=scope or "global")
        elif format == "hippograph":
            report = transfer.import_hippograph(self.stores, self.upkeep, lines)
        else:
            raise InvalidInput(f"format {check.shown(format)} is not known: use hippograph or mcp-memory")
        return dataclasses.asdict(report)

    # ------------------------------------------------------------ lifetime

    def start_background(self) -> None:
        """Run maintenance, tune the indexes and find topics again when due, on intervals (for
        long-lived servers). The NER model starts loading once the first call is answered (``_run``)."""
        self._warm_names = True
        if self.settings.maintenance_interval_s > 0:
            self._jobs.spawn("hippograph-maintenance", self.settings.maintenance_interval_s, self.maintain)
        # At once, every minute, and when a burst of writes ends with a fold due (Appends.wanted).
        index_job, fold_wanted = self.tune_indexes, self.vectors.fold_wanted
        self._jobs.spawn("hippograph-index", 60.0, index_job, first_run=True, wake=fold_wanted)
        self._jobs.spawn("hippograph-topics", 60.0, self._consolidate_if_due)
        self._jobs.spawn("hippograph-compaction", 60.0, self.compact_when_idle)
        self._jobs.spawn("hippograph-settle", _START_CODE_TICK_S, self._settle_after_start)

    def _settle_after_start(self) -> None:
        """Once started, hand the pages of library code read while starting back to the kernel
        (``code_pages``: 52-66 MB less RSS at 6k facts): what the calls run comes back as they run
        it. And leave the objects made while starting (modules, classes, schemas, models: they
        live as long as the process) out of the garbage collector's full passes (``gc.freeze``):
        each walked ~92k of them, a 55 ms pause every ~100 searches at 5k facts (2 ms after)."""
        if self._in_flight.ended and self._answered_ticks < 2:
            self._answered_ticks += 1
            if self._answered_ticks == 2:
                release_library_pages()
                gc.freeze()

    def _consolidate_if_due(self) -> None:
        """Find the topics again when enough was written since, then hand back the library pages
        that run read in (``code_pages``): code no call runs (scans of every vector, the graph's
        arrays), ~10-15 MB a server held until the next run (2026-11-30, 3k facts). The pages the
        next calls run come back as they run them: at 5k facts the first search after took
        ~0.1 s more, the next few calls 10-30 ms more, once a run (every 10% more facts)."""
        if self.consolidator.due():
            self.consolidate()
            release_library_pages()

    def compact_when_idle(self) -> bool:
        """Rewrite a swollen graph file too large to rewrite at close (``Upkeep.compact_graph``)
        once no call has come for ``_COMPACT_IDLE_S``; whether it was. Calls that come meanwhile
        wait for it (100-165 s at 1M facts)."""
        if self._in_flight.idle_for() < _COMPACT_IDLE_S or not self.upkeep.compaction_due():
            return False
        with self.stores.write_lock:
            return self._in_flight.idle_for() > 0 and self.upkeep.compact_graph()

    @property
    def calls_running(self) -> int:
        """How many calls are under way."""
        return self._in_flight.running

    @property
    def calls_closing(self) -> bool:
        """Whether closing has begun: new calls are refused with ``Closing``."""
        return self._in_flight.closing

    def stop_calls(self) -> None:
        """Refuse new calls (``Closing``), let queued proxied writes give way, and wait for the
        calls under way: the first step of closing, taken before the owner API stops."""
        self._jobs.stop()
        if not self._in_flight.shut(_CALLS_END_S):
            log.warning("calls still run after %.0f s of closing: their replies may be lost", _CALLS_END_S)

    def close(self) -> None:
        """Stop the background jobs and close both stores (again: nothing)."""
        if self._closed:
            return
        self._closed = True
        self.stop_calls()
        self._jobs.join(timeout=30)
        self.retriever.close()
        with self.stores.write_lock:
            try:
                try:
                    self.vectors.close()
                    self.vectors.optimize(closing=True)
                except Exception:  # the graph holds every fact: the next open re-indexes them
                    log.exception("could not write the vector index at close; the next open repairs it")
                if not self.vectors.write_failed:
                    self.graph.set_meta(_VECTORS_IN_SYNC, self.vectors.versions())
                try:
                    self.upkeep.compact_graph(CLOSE_COMPACT_MOST)
                except Exception:  # the old file is whole; the next close tries again
                    log.exception("could not rewrite the graph file compactly")
            finally:
                self.stores.topics.close()
                self.stores.gaps.close()
                self.graph.close()
