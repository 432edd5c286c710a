"""Upkeep: recorded accesses, lifecycle maintenance, and keeping the vector index true to the graph."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hippograph.domain import lifecycle as lc
from hippograph.domain.models import EdgeType, Fact, FactKind, FactStatus, MaintenanceOut
from hippograph.service.shaping import entity_row, entity_text, index_text, iso
from hippograph.service.stores import Stores
from hippograph.store.vectors import fact_row

APPLIED_SEQ = "access_applied_seq"
LAST_MAINTENANCE = "last_maintenance"


@dataclass(frozen=True)
class ReconcileReport:
    added: int
    removed: int
    restatused: int


class Upkeep:
    """What keeps memory current and consistent: accesses, maintenance, reconcile, doctor, stats."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    def apply_accesses(self) -> int:
        """Apply recorded accesses to the graph (reinforcement, promotion); return how many."""
        pending = self.stores.accesses.pending()
        if not pending:
            return 0
        with self.stores.write_lock:
            facts = self.stores.graph.get_facts(sorted({a.fact_id for a in pending}))
            changed: dict[str, Fact] = {}
            for access in pending:
                fact = changed.get(access.fact_id) or facts.get(access.fact_id)
                if fact is not None:
                    changed[fact.id] = lc.record_access(fact, access.at, self.stores.policy)
            last = pending[-1].seq
            with self.stores.graph.transaction():
                self.stores.graph.update_fact_states(list(changed.values()))
                self.stores.graph.set_meta(APPLIED_SEQ, str(last))
            self.stores.accesses.mark_applied(last)
            promoted = [f.id for f in changed.values() if f.status != facts[f.id].status]
            self.stores.vectors.set_status(promoted, FactStatus.CONFIRMED.value)
        return len(pending)

    def maintain(self, now: datetime | None = None) -> MaintenanceOut:
        """Promotion, decay, expiry and orphan cleanup over every active fact. Idempotent."""
        with self.stores.write_lock:
            self.apply_accesses()
            now = now or self.stores.clock()
            counts = dict.fromkeys(lc.MaintenanceKind, 0)
            changed: list[Fact] = []
            examined = 0
            for fact in self.stores.graph.active_facts():
                examined += 1
                result = lc.maintain(fact, now, self.stores.policy)
                counts[result.action] += 1
                if result.fact is not None:
                    changed.append(result.fact)
            orphans = self.stores.graph.orphan_entities()
            with self.stores.graph.transaction():
                self.stores.graph.update_fact_states(changed)
                self.stores.graph.delete_entities(orphans)
                self.stores.graph.set_meta(LAST_MAINTENANCE, iso(now) or "")
            for status in {f.status.value for f in changed}:
                self.stores.vectors.set_status([f.id for f in changed if f.status.value == status], status)
            self.stores.vectors.delete("entities", orphans)
            for eid in orphans:
                self.stores.entities.remove(eid)
        return MaintenanceOut(
            now=iso(now) or "",
            examined=examined,
            promoted=counts[lc.MaintenanceKind.PROMOTE],
            expired=counts[lc.MaintenanceKind.EXPIRE],
            retracted_decayed=counts[lc.MaintenanceKind.RETRACT_DECAYED],
            orphan_entities_removed=len(orphans),
        )

    def reconcile(self) -> ReconcileReport:
        """Make the vector index agree with the graph: re-embed missing rows, drop orphans."""
        with self.stores.write_lock:
            indexed = self.stores.vectors.ids("facts")
            # Statuses from the graph mirror: reading every fact row took ~6 s at 100k facts.
            statuses = self.stores.graph.read.fact_statuses()
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
                for edge in self.stores.graph.read.about_edges(batch_ids):
                    about.setdefault(edge.src, []).append(edge.dst)
                before = {e.dst: e.src for e in self.stores.graph.read.fact_edges(batch_ids, [EdgeType.NEXT])}
                previous = self.stores.graph.get_facts(list(before.values()))
                texts = [
                    index_text(
                        f,
                        previous[before[f.id]].content
                        if f.kind is FactKind.EPISODE and before.get(f.id) in previous
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

    def doctor(self) -> dict[str, Any]:
        """Check the stores agree and repair what does not; report what was done."""
        self.apply_accesses()
        mirror_problems = self.stores.graph.check_mirror(repair=True)  # reconcile reads the mirror
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
            **self.stores.graph.counts(),
            "by_kind": self.stores.graph.count_by("kind"),
            "by_status": self.stores.graph.count_by("status"),
            "by_scope": self.stores.graph.count_by("scope"),
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
