"""Consolidation: the topics memory proposes over its facts, found, kept current and read.

``consolidate`` finds each scope's topics afresh (``domain/topics.py``) from what the stores
already hold: each fact's nearest facts by meaning, the order of a session's turns, facts used
together, facts naming the same uncommon entity. It changes no fact: topics are derived
structure, stored apart (``TopicStore``) and thrown away at the next run. Between runs a new fact
joins the topic of the facts nearest it (``join_topics``: one lookup on the write path), a
forgotten one leaves its topic (``leave_topics``), and the background maintenance runs
``consolidate`` again once enough facts were written (``due``).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from hippograph.domain import validation as check
from hippograph.domain.bitemporal import fact_time
from hippograph.domain.errors import NotFound
from hippograph.domain.models import ACTIVE_STATUSES, GLOBAL_SCOPE, EdgeType, Fact, FactKind
from hippograph.domain.sameness import LIST_SIMILARITY
from hippograph.domain.topic_replies import (
    ConsolidateOut,
    ScopeConsolidated,
    TopicDetailOut,
    TopicFact,
    TopicOut,
    TopicsOut,
)
from hippograph.domain.topics import MIN_TOPIC, stable_ids
from hippograph.domain.visibility import visible_scopes
from hippograph.service.fact_columns import FactColumns, Rows
from hippograph.service.shaping import iso
from hippograph.service.stores import Stores
from hippograph.service.topic_graph import FactGraph
from hippograph.service.usage import CO_USED
from hippograph.store.malloc_arenas import release_free_memory
from hippograph.store.seam import EVERYWHERE, Filter, Neighbours, TopicRow
from hippograph.text.topic_labels import labels, still_shared

# Each fact's nearest facts by meaning that join it in the fact graph. Chosen with the LoCoMo
# conversations conv-26 and conv-30 (bench/topics.py), reported on the other three.
NEIGHBOURS = 10
CENTRAL = 5  # a topic's most central facts: listed by id, and with content in memory://topic/
ENTITIES = 3  # the names its facts mention most (each by two of its facts at least)
LISTED = 50  # topics memory://topics lists, the most recently active first
_CHUNK = 500  # facts read at once
# Topics are found again once the facts written since the last run are a tenth of those it
# found topics for, and at least a topic's worth.
_BUILT = "facts_at_consolidate"
LAST_CONSOLIDATION = "last_consolidation"  # when the last run of every scope ended (memory://stats)
_LABEL_JOIN = ", "
log = logging.getLogger(__name__)
_PAIRED = 2  # a fact's nearest facts whose pairs review may list


@dataclass
class _Found:
    """One scope's active facts (row i is ``ids[i]``) and the graph among them."""

    ids: list[str]
    graph: FactGraph
    columns: FactColumns  # when each happened, the entities each is about
    pairs: _NearPairs  # facts alike enough to be listed together (review's candidates)


class Consolidator:
    """consolidate, and the topic reads."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    def consolidate(self, scope: str | None = None, dry_run: bool = False) -> ConsolidateOut:
        """Find every scope's topics (or ``scope``'s) afresh; ``dry_run`` reports and keeps none."""
        started = time.monotonic()
        if scope is not None:
            scopes = [check.scope(scope)]
        else:
            scopes = self.stores.graph.view(EVERYWHERE).scopes("", limit=1_000_000)
        written = self.stores.graph.fact_count()
        done = [self._scope(one, dry_run) for one in scopes]
        release_free_memory()  # the graph's arrays (~100 MB at 100k facts) go back to the system
        if not dry_run and scope is None:
            self.stores.topics.set_meta(_BUILT, str(written))
            self.stores.topics.set_meta(LAST_CONSOLIDATION, iso(self.stores.clock()) or "")
        return ConsolidateOut(dry_run=dry_run, scopes=done, seconds=round(time.monotonic() - started, 3))

    def due(self) -> bool:
        """Whether enough facts were written since the last run (of every scope) to run it again:
        a tenth more, and at least a topic's fewest (a new memory's review lists its near pairs
        from its first facts on, not from its 30th)."""
        built = int(self.stores.topics.get_meta(_BUILT) or 0)
        return self.stores.graph.fact_count() - built >= max(MIN_TOPIC, built // 10)

    def _scope(self, scope: str, dry_run: bool) -> ScopeConsolidated:
        found = self._read(scope)
        communities = found.graph.communities()  # rows
        groups = [[found.ids[row] for row in group] for group in communities]
        # The old topics' members as the very strings of ``found.ids``: the store's copies (one
        # per fact, ~7 MB of small objects at 100k facts) live no longer than this line.
        known = {fid: fid for fid in found.ids}
        old = {
            tid: [known.get(f, f) for f in fids] for tid, fids in self.stores.topics.of_scope(scope).items()
        }
        del known
        ids = stable_ids(groups, old)
        kept = [tid for tid, group in zip(ids, groups, strict=True) if tid in old]
        changed = sum(
            set(old[tid]) != set(group) for tid, group in zip(ids, groups, strict=True) if tid in old
        )
        report = ScopeConsolidated(
            scope=scope,
            facts=len(found.ids),
            in_topics=sum(map(len, groups)),
            topics=len(groups),
            added=len(groups) - len(kept),
            changed=changed,
            removed=len(set(old) - set(kept)),
        )
        if not dry_run:
            words = labels(lambda: self._texts(groups))
            rows = [
                self._row(tid, scope, group, label, found)
                for tid, group, label in zip(ids, communities, words, strict=True)
            ]
            with self.stores.write_lock:  # what was forgotten while this ran stays out
                gone = self._gone([fid for group in groups for fid in group])
                members = {
                    tid: [f for f in group if f not in gone] for tid, group in zip(ids, groups, strict=True)
                }
                self.stores.topics.replace(
                    scope,
                    [
                        r._replace(size=len(members[r.id]), central=[f for f in r.central if f not in gone])
                        for r in rows
                    ],
                    members,
                    found.pairs.named(found.ids, gone),
                )
        return report

    def _read(self, scope: str) -> _Found:
        """The scope's active facts and the edges among them."""
        where = Filter(statuses=ACTIVE_STATUSES, scopes=[scope])
        near = self.stores.vectors.neighbours("facts", where, NEIGHBOURS)
        ids = near.ids
        graph = FactGraph(len(ids))
        graph.add(near.src, near.dst, near.similarity)
        # Every other kind of edge weighs as much as a typical neighbour by meaning.
        typical = float(np.median(near.similarity)) if len(near.similarity) else 1.0
        columns = FactColumns(ids, self.stores.vectors.fact_times("facts", where, ids))
        view = self.stores.graph.view([scope])
        for start in range(0, len(ids), _CHUNK):
            chunk = list(ids[start : start + _CHUNK])
            row_of = {fid: start + i for i, fid in enumerate(chunk)}
            about = view.about_edges(chunk)
            columns.add_about([row_of[edge.src] for edge in about], [edge.dst for edge in about])
            used = [
                edge
                for edge in view.fact_edges(chunk, [EdgeType.RELATES_TO])
                if edge.props.get("relation") == CO_USED
            ]
            src, dst = columns.rows([e.src for e in used]), columns.rows([e.dst for e in used])
            weight = np.asarray(
                [typical * float(e.props.get("weight") or 0.0) for e in used], dtype=np.float32
            )
            kept = (src >= 0) & (dst >= 0)
            graph.add(src[kept], dst[kept], weight[kept])
        turns = columns.session_turns()
        graph.add(*turns, np.full(len(turns[0]), typical, dtype=np.float32))
        graph.add(*columns.shared_entities(typical))
        return _Found(ids, graph, columns, _near_pairs(near))

    def _gone(self, fact_ids: Sequence[str]) -> set[str]:
        """Those of ``fact_ids`` no longer active (forgotten, purged or replaced meanwhile)."""
        view = self.stores.graph.view(EVERYWHERE)
        gone: set[str] = set()
        for start in range(0, len(fact_ids), _CHUNK):  # not a status read of every fact held at once
            chunk = fact_ids[start : start + _CHUNK]
            statuses = view.statuses(chunk)
            gone.update(fid for fid in chunk if statuses.get(fid) not in ACTIVE_STATUSES)
        return gone

    def _texts(self, groups: Sequence[Sequence[str]]) -> Iterator[list[str]]:
        """Each group's facts' contents, read ``_CHUNK`` facts at a time (not one read a topic).
        From the graph: the vector store's text of a conversation's turn holds the turn before."""
        start = 0
        while start < len(groups):
            end, size = start, 0
            while end < len(groups) and (size < _CHUNK or end == start):
                size, end = size + len(groups[end]), end + 1
            facts = self.stores.graph.get_facts(
                [fid for group in groups[start:end] for fid in group], keep=False
            )
            for group in groups[start:end]:
                yield [facts[fid].content for fid in group if fid in facts]
            start = end

    def _row(self, tid: str, scope: str, rows: Rows, words: list[str], found: _Found) -> TopicRow:
        named = found.columns.named_in(rows)
        # Most facts first, ties by id: a set's order (and so most_common's among ties) changes
        # with each process's string hashing, and a topic's entities must not.
        ranked = sorted(named.items(), key=lambda kv: (-kv[1], kv[0]))[:ENTITIES]
        common = [eid for eid, n in ranked if n >= 2]
        names = self.stores.graph.entities(common)
        first, last = found.columns.span(rows)
        return TopicRow(
            id=tid,
            scope=scope,
            label=_LABEL_JOIN.join(words),
            size=len(rows),
            first=first,
            last=last,
            entities=[names[eid].name for eid in common if eid in names],
            central=[found.ids[row] for row in rows[:CENTRAL]],
        )

    # ------------------------------------------------------------ reads

    def topics(self, scope: str | None = None) -> TopicsOut:
        """The topics ``scope`` sees (it and global), the most recently active first."""
        scopes = visible_scopes(check.scope(scope))
        rows = self.stores.topics.topics(scopes, limit=LISTED)
        return TopicsOut(
            topics=[TopicOut(**_described(row), fact_ids=row.central) for row in rows],
            more=max(0, self.stores.topics.count(scopes) - len(rows)),
        )

    def topic(self, topic_id: str, scope: str | None = None) -> TopicDetailOut:
        """One topic ``scope`` sees: every fact id, and the content of the most central."""
        scope = check.scope(scope)
        row = self.stores.topics.get(topic_id)
        if row is None or row.scope not in visible_scopes(scope):
            seen = "global" if scope == GLOBAL_SCOPE else f"scope {scope!r} or global"
            raise NotFound(
                f"no topic {check.shown(topic_id)} in {seen}: read memory://topics "
                "(with ?scope= for a project's) for the topics there are"
            )
        central = self.stores.graph.get_facts(row.central)
        return TopicDetailOut(
            **_described(row),
            scope=row.scope,
            central=[
                TopicFact(id=fid, content=central[fid].content) for fid in row.central if fid in central
            ],
            fact_ids=self.stores.topics.members(row.id),
        )


def _described(row: TopicRow) -> dict[str, Any]:
    """What both topic replies say of a topic."""
    return {key: getattr(row, key) for key in ("id", "label", "size", "entities", "first", "last")}


class _NearPairs(NamedTuple):
    """Pairs of rows (``a`` < ``b``) of facts alike enough to be listed together, and how alike."""

    a: np.ndarray
    b: np.ndarray
    similarity: np.ndarray

    def named(self, ids: Sequence[str], gone: Collection[str]) -> Iterator[tuple[str, str, float]]:
        """The pairs as (id, id, similarity), the lesser id first, but those with a fact ``gone``."""
        for a, b, sim in zip(self.a.tolist(), self.b.tolist(), self.similarity.tolist(), strict=True):
            first, second = sorted((ids[a], ids[b]))
            if first not in gone and second not in gone:
                yield first, second, sim


def _near_pairs(near: Neighbours) -> _NearPairs:
    """Each fact and its ``_PAIRED`` nearest facts, when at least ``LIST_SIMILARITY`` alike: the
    pairs review judges (a restatement or a changed value is almost always a fact's nearest).
    Each pair once, where it first comes (by fact, the nearer first), with its last similarity.
    Held as arrays: at 100k facts, ~150k pairs of Python tuples took ~15 MB (``fact_columns``).
    The pairs under ``LIST_SIMILARITY`` go first (a fact's nearest above it are its nearest): the
    sort of all 1M pairs at 100k facts took ~34 MB more at the peak."""
    strong = near.similarity >= LIST_SIMILARITY
    src, dst, sim = near.src[strong], near.dst[strong], near.similarity[strong]
    order = np.lexsort((-sim, src))
    src, dst, sim = src[order], dst[order], sim[order]
    first = np.searchsorted(src, src)  # where each row's neighbours begin
    keep = np.arange(len(src)) - first < _PAIRED
    low, high, sim = np.minimum(src, dst)[keep], np.maximum(src, dst)[keep], sim[keep]
    key = low.astype(np.int64) * max(len(near.ids), 1) + high
    _, first_at = np.unique(key, return_index=True)
    _, last_from_end = np.unique(key[::-1], return_index=True)
    last_at = len(key) - 1 - last_from_end
    in_order = np.argsort(first_at, kind="stable")
    return _NearPairs(low[first_at][in_order], high[first_at][in_order], sim[last_at][in_order])


def join_topics(stores: Stores, joining: Sequence[tuple[Fact, str | None, Mapping[str, float]]]) -> None:
    """New facts join a topic: each (fact, the turn before it in its session, the stored facts
    nearest it by meaning: id -> similarity) the one that turn, for a conversation turn, or else
    its nearest facts are most in. Called once the facts have committed: topics are derived, so
    a failure here is logged (the next consolidate places the facts), never the write's."""
    try:
        _join(stores, joining)
    except Exception:
        log.exception("could not add new facts to their topics; the next consolidate will")


def _join(stores: Stores, joining: Sequence[tuple[Fact, str | None, Mapping[str, float]]]) -> None:
    if not joining or not stores.topics.count(sorted({f.scope for f, _, _ in joining})):
        return
    voters = [
        (fact, {previous: 1.0} if fact.kind is FactKind.EPISODE and previous else near)
        for fact, previous, near in joining
    ]
    topic_of = stores.topics.topic_of({fid for _, near in voters for fid in near})
    joins = []
    for fact, near in voters:
        votes: dict[str, float] = defaultdict(float)
        for fid, weight in near.items():
            if fid in topic_of:
                votes[topic_of[fid]] += weight
        if votes:
            topic_of[fact.id] = max(votes, key=lambda tid: (votes[tid], tid))  # for the batch's next facts
            joins.append((fact.id, topic_of[fact.id], iso(fact_time(fact)) or ""))
    stores.topics.join(joins)


def leave_topics(stores: Stores, fact_ids: Iterable[str]) -> None:
    """Facts forgotten or purged leave their topics, whose labels and names keep only what the
    facts left in them still share. Called once the forget has committed: a failure is logged
    (the next consolidate leaves them out), never the forget's."""
    try:
        _leave(stores, fact_ids)
    except Exception:
        log.exception("could not take forgotten facts out of their topics; the next consolidate will")


def _leave(stores: Stores, fact_ids: Iterable[str]) -> None:
    for tid in sorted(stores.topics.drop(set(fact_ids))):
        row = stores.topics.get(tid)
        if row is None:
            continue
        members = stores.topics.members(tid)
        texts = [f.content for f in stores.graph.get_facts(members).values()]
        named = {
            n for names in stores.graph.view(EVERYWHERE).entity_names_for(members).values() for n in names
        }
        words = still_shared(row.label.split(_LABEL_JOIN) if row.label else [], texts)
        stores.topics.describe(tid, _LABEL_JOIN.join(words), [n for n in row.entities if n in named])
