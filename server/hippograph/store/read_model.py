"""The read model: the graph's shape in memory, so a graph walk costs microseconds, not queries.

Kùzu stays the source of truth. ``KuzuGraphStore`` loads this model (the mirror of the graph) when
it opens and hands it each of its own writes once the write commits (``publish``), so the two
never disagree inside the one process that owns the data dir. The model holds ids and edges
only (no fact text): for 100k facts with ~3 entities and ~2 tags each it is a few tens of MB.
Callers read it as ``graph.read``: it is thread-safe on its own (every method takes its lock,
and ``publish`` applies all the changes of one commit under it, so a reader sees all or none).

Measured on 100k facts (2 cores, loaded machine): one Kùzu traversal query costs 10-180 ms
(``WHERE id IN $ids`` scans the node table; an ``UNWIND`` of primary keys makes the planner
scan the edges), and a depth-2 walk issues ~30 of them. The same walk here is dict lookups.
"""

from __future__ import annotations

import bisect
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from hippograph.domain.models import ACTIVE_STATUSES, EdgeType


class EdgeRow(NamedTuple):
    """A typed edge as stored (fact-fact, ABOUT, RELATES, HAS_TAG): for explain, export, the walk.

    A tuple, not a dataclass: the mirror holds ~2 per fact, and a frozen dataclass took 3x as
    long to build (a 100k-fact store opens ~1 s sooner).
    """

    type: str
    src: str
    dst: str
    props: Mapping[str, Any]


ClaimKey = tuple[str, str, str]  # (subject casefolded, predicate casefolded, scope)
SessionKey = tuple[str, str]  # (scope, session id)

_ACTIVE = frozenset(ACTIVE_STATUSES)


def claim_key(subject: str | None, predicate: str | None, scope: str) -> ClaimKey | None:
    """The conflict rule's key for a fact, or None when it states no subject-predicate claim."""
    if not subject or not predicate:
        return None
    return sys.intern(subject.casefold()), sys.intern(predicate.casefold()), scope


class ReadModel:
    """Ids, statuses, edges, tags, conflict keys and session tails; every method takes the lock.

    Writes come from the store's commit hooks (through ``publish``), or fill a model nobody else
    holds yet (the ``load_*`` methods at open, and the copy ``check_mirror`` compares with).
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._status: dict[str, str] = {}
        # fact or entity -> its scope: what ``MirrorView`` shows a caller (graph_view.py).
        self._scope: dict[str, str] = {}
        self._created: dict[str, datetime] = {}
        self._names: dict[str, str] = {}
        self._out: dict[str, list[EdgeRow]] = {}  # fact-fact edges by source
        self._in: dict[str, list[EdgeRow]] = {}  # fact-fact edges by target
        self._about: dict[str, list[tuple[str, str]]] = {}  # fact -> (entity, role)
        # One tuple per (entity, role) for all the facts about it: ~150 B an edge otherwise.
        self._links: dict[tuple[str, str], tuple[str, str]] = {}
        self._facts_of: dict[str, list[str]] = {}  # entity -> facts about it
        self._relates: dict[str, list[EdgeRow]] = {}  # entity -> RELATES touching it
        self._neighbours: dict[str, dict[str, float]] = {}  # entity -> related entity -> max weight
        # entity -> its related entities, strongest first: a walk asks for each walked entity's
        # strongest few (heapq over a hub's ~600 neighbours per step cost ~4 ms a search at 100k).
        self._ranked: dict[str, list[str]] = {}
        self._tags: dict[str, list[str]] = {}  # fact -> tags
        self._tagged: dict[str, list[str]] = {}  # tag -> facts
        # The conflict rule's lookup (a write checks the active facts of its subject and
        # predicate): a Kùzu scan of Fact by lower(subject) cost ~200 ms per remember at 100k.
        self._claim_of: dict[str, ClaimKey] = {}  # fact -> its key, whatever its status
        self._claims: dict[ClaimKey, set[str]] = {}  # key -> its active facts
        # (scope, session id) -> (created_at, id) of its latest fact: the NEXT link and the context
        # of a new turn (a Kùzu scan of Fact by session_id cost ~7-23 ms per new session at 100k).
        # A session id used in two scopes is two conversations: a turn never joins another scope's.
        self._session_last: dict[SessionKey, tuple[datetime, str]] = {}

    # ------------------------------------------------------------ loading (whole tables)

    def load_facts(
        self,
        ids: Sequence[str],
        scopes: Sequence[str],
        statuses: Sequence[str],
        created: Sequence[datetime],
        claims: Sequence[ClaimKey | None],
        sessions: Sequence[str | None],
    ) -> None:
        """``claims``: each fact's ``claim_key``; ``sessions``: its session id, if any."""
        with self._lock:
            self._scope.update(zip(ids, map(sys.intern, scopes), strict=True))
            self._status.update(zip(ids, statuses, strict=True))
            self._created.update(zip(ids, created, strict=True))
            rows = zip(ids, scopes, statuses, created, claims, sessions, strict=True)
            for fid, scope, status, at, key, session in rows:
                self._file_claim(fid, status, key)
                if session is not None:
                    self._file_turn((scope, session), at, fid)

    def load_entities(self, ids: Sequence[str], names: Sequence[str], scopes: Sequence[str]) -> None:
        with self._lock:
            self._names.update(zip(ids, names, strict=True))
            self._scope.update(zip(ids, map(sys.intern, scopes), strict=True))

    def load_fact_edges(
        self, edge_type: str, srcs: Sequence[str], dsts: Sequence[str], props: Sequence[Mapping[str, Any]]
    ) -> None:
        """Edges read from the store (both ends exist), in one pass: ``link_facts`` per row is ~3x slower."""
        with self._lock:
            out, into = self._out, self._in
            for src, dst, values in zip(srcs, dsts, props, strict=True):
                edge = EdgeRow(edge_type, src, dst, values)
                if src in out:
                    out[src].append(edge)
                else:
                    out[src] = [edge]
                if dst in into:
                    into[dst].append(edge)
                else:
                    into[dst] = [edge]

    def load_about(self, entity_ids: Sequence[str], fact_ids: Sequence[str], roles: Sequence[str]) -> None:
        """ABOUT edges read from the store into an empty mirror, ordered by entity, then by the
        fact's (created_at, id): as ``link_about`` per row would leave them, in one pass (the
        bulk of opening a large store: per-row calls and a sort per entity took ~1.4 s at 100k)."""
        with self._lock:
            about, facts_of = self._about, self._facts_of
            last: str | None = None
            current: list[str] = []
            for eid, fid, role in zip(entity_ids, fact_ids, roles, strict=True):
                link = self._links.setdefault((eid, role), (eid, role))
                links = about.get(fid)
                if links is None:
                    about[fid] = [link]
                elif link in links:
                    continue
                else:
                    links.append(link)
                if eid != last:
                    current = facts_of[eid] = []
                    last = eid
                if not current or current[-1] != fid:  # a fact's roles for one entity are adjacent
                    current.append(fid)

    def load_tags(self, fact_ids: Sequence[str], tags: Sequence[str]) -> None:
        """HAS_TAG edges read from the store into an empty mirror, ordered by the fact's
        (created_at, id), so each tag's facts are oldest first, in one pass."""
        with self._lock:
            by_fact, by_tag = self._tags, self._tagged
            for fid, tag in zip(fact_ids, tags, strict=True):
                have = by_fact.get(fid)
                if have is None:
                    by_fact[fid] = [tag]
                elif tag in have:
                    continue
                else:
                    have.append(tag)
                facts = by_tag.get(tag)
                if facts is None:
                    by_tag[tag] = [fid]
                else:
                    facts.append(fid)

    # ------------------------------------------------------------ writes (after commit)

    def publish(self, changes: Sequence[Callable[[], None]]) -> None:
        """Apply the changes of one commit (calls of the writes below) together: a reader sees
        all of them or none."""
        with self._lock:
            for change in changes:
                change()

    def add_fact(
        self,
        fact_id: str,
        scope: str,
        status: str,
        created_at: datetime,
        claim: ClaimKey | None,
        session: str | None,
    ) -> None:
        with self._lock:
            self._scope[fact_id] = sys.intern(scope)
            self._status[fact_id] = status
            self._created[fact_id] = created_at
            self._file_claim(fact_id, status, claim)
            if session is not None:
                self._file_turn((scope, session), created_at, fact_id)

    def _file_turn(self, session: SessionKey, created_at: datetime, fact_id: str) -> None:
        last = self._session_last.get(session)
        if last is None or (created_at, fact_id) > last:
            self._session_last[session] = (created_at, fact_id)

    def _file_claim(self, fact_id: str, status: str, claim: ClaimKey | None) -> None:
        if claim is not None:
            self._claim_of[fact_id] = claim
            if status in _ACTIVE:
                self._claims.setdefault(claim, set()).add(fact_id)

    def set_status(self, fact_id: str, status: str) -> None:
        with self._lock:
            if fact_id not in self._status:
                return
            self._status[fact_id] = status
            key = self._claim_of.get(fact_id)
            if key is None:
                return
            if status in _ACTIVE:
                self._claims.setdefault(key, set()).add(fact_id)
            elif key in self._claims:
                self._claims[key].discard(fact_id)
                if not self._claims[key]:
                    del self._claims[key]

    def add_entity(self, entity_id: str, name: str, scope: str) -> None:
        with self._lock:
            self._names[entity_id] = name
            self._scope[entity_id] = sys.intern(scope)

    def link_facts(self, edge_type: str, src: str, dst: str, props: Mapping[str, Any]) -> None:
        with self._lock:
            if src not in self._status or dst not in self._status:
                return  # Kùzu's MATCH ... CREATE makes nothing when an end is missing
            edge = EdgeRow(edge_type, src, dst, dict(props))
            self._out.setdefault(src, []).append(edge)
            self._in.setdefault(dst, []).append(edge)

    def reweigh(self, src: str, dst: str, relation: str, weight: float) -> None:
        """The RELATES_TO edge of ``relation`` from ``src`` to ``dst`` now weighs ``weight``."""
        with self._lock:
            for edges in (self._out.get(src, []), self._in.get(dst, [])):
                for i, edge in enumerate(edges):
                    if edge.src == src and edge.dst == dst and edge.props.get("relation") == relation:
                        edges[i] = edge._replace(props={**edge.props, "weight": weight})

    def link_about(self, fact_id: str, entity_id: str, role: str) -> None:
        with self._lock:
            if self._add_about(fact_id, entity_id, role):
                # Kept in creation order (imports may add old facts late), newest last.
                bisect.insort(self._facts_of.setdefault(entity_id, []), fact_id, key=self._age)

    def _add_about(self, fact_id: str, entity_id: str, role: str) -> bool:
        """Record an ABOUT edge (once: MERGE); True if it is the fact's first to that entity,
        which the caller then adds to the entity's facts."""
        if fact_id not in self._status or entity_id not in self._names:
            return False
        links = self._about.setdefault(fact_id, [])
        if (entity_id, role) in links:
            return False
        first = all(e != entity_id for e, _ in links)
        links.append(self._links.setdefault((entity_id, role), (entity_id, role)))
        return first

    def link_entities(self, src: str, dst: str, props: Mapping[str, Any]) -> None:
        with self._lock:
            if src not in self._names or dst not in self._names:
                return
            edge = EdgeRow(EdgeType.RELATES, src, dst, dict(props))
            self._relates.setdefault(src, []).append(edge)
            if dst != src:
                self._relates.setdefault(dst, []).append(edge)
            weight = _weight(props)
            for here, there in ((src, dst), (dst, src)):
                known = self._neighbours.setdefault(here, {})
                known[there] = max(weight, known.get(there, 0.0))
                self._ranked.pop(here, None)

    def tag(self, fact_id: str, tags: Iterable[str]) -> None:
        with self._lock:
            if fact_id not in self._status:
                return
            have = self._tags.setdefault(fact_id, [])
            for tag in tags:
                if tag not in have:
                    have.append(tag)
                    self._tagged.setdefault(tag, []).append(fact_id)

    def purge_fact(self, fact_id: str, status: str) -> None:
        """A fact became a tombstone: it keeps its fact-to-fact edges and loses everything else."""
        with self._lock:
            self.set_status(fact_id, status)  # which drops it from the active claims
            self._claim_of.pop(fact_id, None)
            for eid, _ in self._about.pop(fact_id, []):
                self._facts_of[eid] = [f for f in self._facts_of.get(eid, []) if f != fact_id]
            for tag in self._tags.pop(fact_id, []):
                self._tagged[tag] = [f for f in self._tagged.get(tag, []) if f != fact_id]
            stated = {
                id(e) for edges in self._relates.values() for e in edges if e.props.get("fact_id") == fact_id
            }
            for end in [eid for eid, edges in self._relates.items() if any(id(e) in stated for e in edges)]:
                self._relates[end] = [e for e in self._relates[end] if id(e) not in stated]
                self._neighbours[end] = {}
                self._ranked.pop(end, None)
                for e in self._relates[end]:
                    other = e.dst if e.src == end else e.src
                    self._neighbours[end][other] = max(
                        _weight(e.props), self._neighbours[end].get(other, 0.0)
                    )

    def delete_entities(self, entity_ids: Iterable[str]) -> None:
        with self._lock:
            gone = set(entity_ids)
            for eid in gone:
                self._names.pop(eid, None)
                self._scope.pop(eid, None)
                for fid in self._facts_of.pop(eid, []):
                    self._about[fid] = [link for link in self._about.get(fid, []) if link[0] != eid]
                for edge in self._relates.pop(eid, []):
                    other = edge.dst if edge.src == eid else edge.src
                    if other in self._relates:
                        self._relates[other] = [e for e in self._relates[other] if e is not edge]
                for other in self._neighbours.pop(eid, {}):
                    self._neighbours.get(other, {}).pop(eid, None)
                    self._ranked.pop(other, None)
                self._ranked.pop(eid, None)
            for link in [link for link in self._links if link[0] in gone]:
                del self._links[link]

    # ------------------------------------------------------------ reads

    def last_facts_in_sessions(self, sessions: Iterable[SessionKey]) -> dict[SessionKey, str]:
        """The id of the latest fact (by creation time, then id) of each (scope, session) that has one."""
        with self._lock:
            return {key: self._session_last[key][1] for key in sessions if key in self._session_last}

    def fact_count(self) -> int:
        """Every fact, whatever its scope (the walk's entity specificity is over the whole store)."""
        with self._lock:
            return len(self._status)

    def fact_statuses(self) -> dict[str, str]:
        """Every fact id and its status."""
        with self._lock:
            return dict(self._status)

    def has_about(self, fact_id: str, entity_id: str, role: str) -> bool:
        with self._lock:
            return (entity_id, role) in self._about.get(fact_id, ())

    def active_claims(self, keys: Iterable[ClaimKey]) -> dict[ClaimKey, list[str]]:
        """The active facts of each ``claim_key``, oldest first."""
        with self._lock:
            return {key: sorted(self._claims.get(key, ()), key=self._age) for key in keys}

    def _age(self, fact_id: str) -> tuple[datetime, str]:
        return self._created[fact_id], fact_id

    def differences(self, stored: ReadModel, *, repair: bool) -> list[str]:
        """How this model differs from ``stored`` (one just loaded from the graph), by part;
        ``repair`` makes this one a copy of ``stored``, which nobody else may hold."""
        with self._lock:
            live, disk = self.snapshot(), stored.snapshot()
            problems = [
                f"graph mirror {part}: {len(live[part] - disk[part])} extra, "
                f"{len(disk[part] - live[part])} missing"
                for part in disk
                if live[part] != disk[part]
            ]
            if problems and repair:
                for name, value in vars(stored).items():
                    if name != "_lock":
                        setattr(self, name, value)
        return problems

    def snapshot(self) -> dict[str, set[Any]]:
        """Everything the model holds, order-free, to compare two models."""

        def edges(rows: Iterable[EdgeRow]) -> set[Any]:
            return {(e.type, e.src, e.dst, tuple(sorted(e.props.items()))) for e in rows}

        with self._lock:
            return {
                "facts": {(fid, status, self._created[fid]) for fid, status in self._status.items()},
                "scopes": set(self._scope.items()),
                "entities": set(self._names.items()),
                "fact_edges": edges(e for rows in self._out.values() for e in rows),
                "about": {(fid, eid, role) for fid, links in self._about.items() for eid, role in links},
                "facts_of": {(eid, tuple(fids)) for eid, fids in self._facts_of.items()},  # in order
                "relates": edges(e for rows in self._relates.values() for e in rows),
                "neighbours": {(a, b, w) for a, known in self._neighbours.items() for b, w in known.items()},
                "tags": {(fid, tag) for fid, tags in self._tags.items() for tag in tags},
                "tagged": {(fid, tag) for tag, fids in self._tagged.items() for fid in fids},
                "claims": set(self._claim_of.items()),
                "active_claims": {(key, fid) for key, fids in self._claims.items() for fid in fids},
                "session_last": {(sid, fid) for sid, (_, fid) in self._session_last.items()},
            }


def _weight(props: Mapping[str, Any]) -> float:
    """A RELATES edge's weight as the walk uses it: 1 if unset, clamped to 0..1."""
    weight = props.get("weight")
    return 1.0 if weight is None else max(0.0, min(1.0, float(weight)))
