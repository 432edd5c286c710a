"""Upkeep: lifecycle maintenance, and keeping the vector index true to the graph."""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hippograph.domain import lifecycle as lc
from hippograph.domain.models import EdgeType, Fact, FactKind, FactStatus, MaintenanceChange, MaintenanceOut
from hippograph.service.shaping import entity_row, entity_text, index_text, iso
from hippograph.service.stores import Stores
from hippograph.store.seam import COMPACT_BYTES, EVERYWHERE, fact_row

LAST_MAINTENANCE = "last_maintenance"


log = logging.getLogger(__name__)

# How long a proxied write's reply is kept for a retry (retries come within a minute).
_KEEP_RECEIPTS = timedelta(days=1)
# The graph file is rewritten at close once it is over this and twice its compact size (the
# meta ``COMPACT_BYTES``): a store of a few facts stays under it, and one of 5,000
# (44 MiB, 12 MiB compact) is rewritten in 0.7 s.
COMPACT_FLOOR = 16 << 20


@dataclass(frozen=True)
class ReconcileReport:
    added: int
    removed: int
    restatused: int


class Upkeep:
    """What keeps memory current and consistent: maintenance, reconcile, doctor, stats."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    def compact_graph(self) -> bool:
        """Rewrite the graph file if it has grown past ``COMPACT_FLOOR`` and twice its size after
        its last rewrite, and the disk has room for a second copy; say whether it was rewritten.

        Why it grows: kuzu 0.11.3 gives a relationship table whose node group a checkpoint
        rewrites a CSR header sized for a whole node group (2^17 nodes), ~3 MiB of mostly zero
        pages per rewrite, and keeps the copy before it as free space. A store written in many
        small sessions so comes to ~9 MiB per edge type in use, however few its edges (71 MiB
        for 50 facts using every edge type); rewritten (EXPORT/IMPORT) it is 8 MiB and grows
        slowly after. README: "Files".

        Run at a clean close, holding the write lock. A failed or interrupted rewrite leaves the
        old file whole (``KuzuSession.rebuild``).
        """
        graph = self.stores.graph
        path = graph.file
        if path is None:
            return False  # a graph with no file of its own (a server database): nothing to rewrite
        graph.checkpoint()
        size = path.stat().st_size
        if size <= max(COMPACT_FLOOR, 2 * int(graph.get_meta(COMPACT_BYTES) or 0)):
            return False
        if shutil.disk_usage(self.stores.settings.data_dir).free < 2 * size:
            log.info("graph file is %d MiB; too little disk free to rewrite it compactly", size >> 20)
            return False
        graph.rebuild()
        log.info("rewrote the graph file compactly: %d -> %s bytes", size, graph.get_meta(COMPACT_BYTES))
        return True

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
            statuses = {fid: s for fid, s in statuses.items() if s != FactStatus.PURGED.value}
            missing_ids = [fid for fid in statuses if fid not in indexed]
            orphans = [fid for fid in indexed if fid not in statuses]
            stale = [fid for fid, status in statuses.items() if fid in indexed and indexed[fid] != status]
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
        }

    # ------------------------------------------------------------ shaping


def _same_scope(fact: Fact, turn: Fact | None) -> bool:
    """Whether ``turn`` (the turn before ``fact``) is of its scope: a store written before sessions
    were kept apart by scope may join two scopes' turns, and a turn is indexed with its own only."""
    return turn is not None and turn.scope == fact.scope
