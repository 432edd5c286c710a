"""Upkeep: lifecycle maintenance, and keeping the vector index true to the graph."""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hippograph.domain import lifecycle as lc
from hippograph.domain.models import EdgeType, Fact, FactKind, FactStatus, MaintenanceChange, MaintenanceOut
from hippograph.service.consolidation import LAST_CONSOLIDATION
from hippograph.service.shaping import entity_row, entity_text, index_text, iso
from hippograph.service.stores import Stores
from hippograph.store.seam import COMPACT_BYTES, COMPACT_FACTS, EVERYWHERE, fact_row

LAST_MAINTENANCE = "last_maintenance"


log = logging.getLogger(__name__)

# How long a proxied write's reply is kept for a retry (retries come within a minute).
_KEEP_RECEIPTS = timedelta(days=1)
# The graph file is rewritten once it is over this and twice its compact size (the meta
# ``COMPACT_BYTES``): a store of a few facts stays under it, and one of 5,000 (44 MiB, 12 MiB
# compact) is rewritten in 0.7 s.
COMPACT_FLOOR = 16 << 20
# The largest file rewritten at close: an MCP client that closes a stdio server's stdin kills it
# 2-4 s later, and 1M facts (~300 MB) take 100-165 s to copy. Larger ones wait for an idle server.
CLOSE_COMPACT_MOST = 64 << 20


@dataclass(frozen=True)
class ReconcileReport:
    added: int
    removed: int
    restatused: int


class Upkeep:
    """What keeps memory current and consistent: maintenance, reconcile, doctor, stats."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    def compact_graph(self, most_bytes: int | None = None) -> bool:
        """Rewrite the graph file if it is swollen (``_swollen``) and, when ``most_bytes`` is
        given, no larger than that, and the disk has room for a second copy; say whether it was
        rewritten. Run holding the write lock: at a clean close for a file small enough to copy
        in a close's time (``CLOSE_COMPACT_MOST``), else by a server's background job once no
        call has come for a while (``Memory.compact_when_idle``).

        Why it swells: a checkpoint rewrites the node groups it touches and keeps the copy before
        it as free space, and a relationship table's group carries a CSR header sized for a
        whole group: kuzu 0.11.3 reached ~9 MiB per edge type in use for a few facts written in
        many sessions (71 MiB for 50 facts). ladybug 0.22 swells less (600 facts in 30 sessions:
        5.4 MiB, 3.3 rewritten; 1M facts built in one run: 368 MB, 291 rewritten). README: "Files".

        A failed or interrupted rewrite leaves the old file whole (``KuzuSession.rebuild``).
        """
        graph = self.stores.graph
        path = graph.file
        if path is None:
            return False  # a graph with no file of its own (a server database): nothing to rewrite
        graph.checkpoint()
        size = path.stat().st_size
        if not self._swollen(size) or (most_bytes is not None and size > most_bytes):
            return False
        if shutil.disk_usage(self.stores.settings.data_dir).free < 2 * size:
            log.info("graph file is %d MiB; too little disk free to rewrite it compactly", size >> 20)
            return False
        graph.rebuild()
        log.info("rewrote the graph file compactly: %d -> %s bytes", size, graph.get_meta(COMPACT_BYTES))
        return True

    def compaction_due(self) -> bool:
        """Whether the graph file is swollen enough to be rewritten (cheap: a stat and two reads)."""
        path = self.stores.graph.file
        return path is not None and path.exists() and self._swollen(path.stat().st_size)

    def _swollen(self, size: int) -> bool:
        """A file of ``size`` bytes is swollen past ``COMPACT_FLOOR`` and twice what its last
        rewrite would be for the facts it holds now: the size after that rewrite, times how many
        more facts there are since (a memory that doubled is not swollen for being twice as big)."""
        graph = self.stores.graph
        compact = int(graph.get_meta(COMPACT_BYTES) or 0)
        then = int(graph.get_meta(COMPACT_FACTS) or 0)
        growth = max(1.0, graph.fact_count() / then) if then else 1.0
        return size > max(COMPACT_FLOOR, 2 * compact * growth)

    def maintain(self, now: datetime | None = None, dry_run: bool = False) -> MaintenanceOut:
        """Expiry, dormancy and orphan cleanup over every active fact, judged at ``now`` (default:
        the clock). Idempotent. ``dry_run`` reports what would change and writes nothing.

        The time stored as the last maintenance is the clock's, whatever ``now`` pretends.
        """
        with self.stores.write_lock:
            at = now or self.stores.clock()
            counts = dict.fromkeys(lc.MaintenanceKind, 0)
            changed: list[tuple[Fact, Fact]] = []
            examined = 0
            for fact in self.stores.graph.active_facts():
                examined += 1
                result = lc.maintain(fact, at, self.stores.policy)
                counts[result.action] += 1
                if result.fact is not None:
                    changed.append((fact, result.fact))
            orphans = self.stores.graph.orphan_entities()
            if not dry_run:
                self._write(changed, orphans)
                self.stores.graph.receipts.drop_before(self.stores.clock() - _KEEP_RECEIPTS)
        changed.sort(key=lambda pair: (pair[0].created_at, pair[0].id))
        return MaintenanceOut(
            now=iso(at) or "",
            dry_run=dry_run,
            examined=examined,
            expired=counts[lc.MaintenanceKind.EXPIRE],
            dormant=counts[lc.MaintenanceKind.DORMANT],
            revived=counts[lc.MaintenanceKind.REVIVE],
            orphan_entities_removed=len(orphans),
            changes=[
                MaintenanceChange(
                    id=old.id,
                    content=old.content,
                    status=old.status.value,
                    becomes=new.status.value,
                    reason=new.status_reason or "",
                )
                for old, new in changed
            ],
        )

    def _write(self, changed: list[tuple[Fact, Fact]], orphans: list[str]) -> None:
        facts = [new for _, new in changed]
        with self.stores.graph.transaction():
            self.stores.graph.update_fact_states(facts)
            self.stores.graph.delete_entities(orphans)
            self.stores.graph.set_meta(LAST_MAINTENANCE, iso(self.stores.clock()) or "")
        for status in {f.status.value for f in facts}:
            self.stores.vectors.set_status([f.id for f in facts if f.status.value == status], status)
        self.stores.vectors.delete("entities", orphans)

    def reconcile(self) -> ReconcileReport:
        """Make the vector index agree with the graph: re-embed missing rows, drop orphans."""
        with self.stores.write_lock:
            indexed = self.stores.vectors.ids("facts")
            # Statuses from the graph index: reading every fact row took ~6 s at 100k facts.
            statuses = self.stores.graph.fact_statuses()
            # A purged fact is a tombstone with nothing to index: a row of one is an orphan.
            purged = FactStatus.PURGED.value
            statuses = {fid: s for fid, s in statuses.items() if s != purged}
            # Compared as sets of keys and of (id, status) pairs: at 850k facts, after a killed
            # process, the loops over both dicts took 5.5 s of the open's 13.
            missing_ids = sorted(statuses.keys() - indexed.keys())
            orphans = sorted(indexed.keys() - statuses.keys())
            stale = sorted(fid for fid, _ in statuses.items() - indexed.items() if fid in indexed)
            for start in range(0, len(missing_ids), 256):
                batch_ids = missing_ids[start : start + 256]
                facts = self.stores.graph.get_facts(batch_ids)
                batch = [facts[fid] for fid in batch_ids if fid in facts]
                about: dict[str, list[str]] = {}
                view = self.stores.graph.view(EVERYWHERE)
                for edge in view.about_edges(batch_ids):
                    about.setdefault(edge.src, []).append(edge.dst)
                before = {e.dst: e.src for e in view.fact_edges(batch_ids, [EdgeType.NEXT])}
                previous = self.stores.graph.get_facts(list(before.values()))
                texts = [
                    index_text(
                        f,
                        previous[before[f.id]].content
                        if f.kind is FactKind.EPISODE and _same_scope(f, previous.get(before.get(f.id, "")))
                        else None,
                    )
                    for f in batch
                ]
                self.stores.vectors.add(
                    "facts",
                    [fact_row(f, about.get(f.id, []), text) for f, text in zip(batch, texts, strict=True)],
                    self.stores.embedder.embed(texts),
                )
            self.stores.vectors.delete("facts", orphans)
            for status in {statuses[fid] for fid in stale}:
                self.stores.vectors.set_status([fid for fid in stale if statuses[fid] == status], status)

            indexed_entities = self.stores.vectors.ids("entities")
            entities = {e.id: e for e in self.stores.graph.all_entities()}
            missing_entities = [e for eid, e in entities.items() if eid not in indexed_entities]
            orphan_entities = [eid for eid in indexed_entities if eid not in entities]
            if missing_entities:
                self.stores.vectors.add(
                    "entities",
                    [entity_row(e) for e in missing_entities],
                    self.stores.embedder.embed([entity_text(e) for e in missing_entities]),
                )
            self.stores.vectors.delete("entities", orphan_entities)
            return ReconcileReport(
                added=len(missing_ids) + len(missing_entities),
                removed=len(orphans) + len(orphan_entities),
                restatused=len(stale),
            )

    def repair_index(self) -> list[str]:
        """Rebuild, from the graph, every vector table some file of which is missing or cut short;
        the tables rebuilt."""
        vectors = self.stores.vectors
        with self.stores.write_lock:
            # A refill that failed last time is done again.
            damaged = vectors.damaged() | {name: "refill unfinished" for name in vectors.refilling}
            if damaged:
                log.warning("rebuilding damaged vector tables from the graph: %s", damaged)
                vectors.rebuild(damaged)
                self.reconcile()
                vectors.refilling.clear()
        return sorted(damaged)

    def doctor(self) -> dict[str, Any]:
        """Check the stores agree and repair what does not; report what was done."""
        mirror_problems = self.stores.graph.check_mirror(repair=True)  # reconcile reads the mirror
        rebuilt = self.repair_index()
        report = self.reconcile()
        return {
            "vector_tables_rebuilt": rebuilt,
            "reindexed": report.added,
            "orphan_rows_removed": report.removed,
            "statuses_fixed": report.restatused,
            "graph_mirror_repaired": mirror_problems,
            **self.stats(),
        }

    def stats(self) -> dict[str, Any]:
        return {
            **self.stores.graph.census.counts(),
            "by_kind": self.stores.graph.census.count_by("kind"),
            "by_status": self.stores.graph.census.count_by("status"),
            "by_scope": self.stores.graph.census.count_by("scope"),
            "indexed_facts": self.stores.vectors.count("facts"),
            "disk_bytes": sum(
                p.stat().st_size
                for p in self.stores.settings.data_dir.rglob("*")
                if p.is_file() and "models" not in p.relative_to(self.stores.settings.data_dir).parts
            ),
            "schema_version": self.stores.graph.schema_version(),
            "last_maintenance": self.stores.graph.get_meta(LAST_MAINTENANCE),
            "last_consolidation": self.stores.topics.get_meta(LAST_CONSOLIDATION),
        }

    # ------------------------------------------------------------ shaping


def _same_scope(fact: Fact, turn: Fact | None) -> bool:
    """Whether ``turn`` (the turn before ``fact``) is of its scope: a store written before sessions
    were kept apart by scope may join two scopes' turns, and a turn is indexed with its own only."""
    return turn is not None and turn.scope == fact.scope
