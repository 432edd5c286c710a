"""The graph's shape as one caller sees it: the scope rule, applied to every read of the read model.

A caller in a scope sees the facts and entities of that scope and of ``global``
(``domain.visibility.visible_scopes``), nothing else: no id, edge or path of another scope.
``KuzuGraphStore.view(scopes)`` hands out a view; each of its reads drops every fact and entity
outside ``scopes`` (and every edge with such an end) before anything is counted or cut to a
limit, so a walk, a neighbour share or a tag lookup neither returns nor passes through another
scope. ``view(EVERYWHERE)`` is the owner's own look (writes, purge, upkeep, import).

The view reads the ``ReadModel``'s state under its lock; it holds nothing of its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Sequence
from typing import Final

from hippograph.domain.errors import InternalError
from hippograph.domain.models import FACT_EDGES, EdgeType
from hippograph.store.read_model import EdgeRow, ReadModel

EVERYWHERE: Final = None  # ``KuzuGraphStore.view(EVERYWHERE)``: every scope (the owner's upkeep)


class MirrorView:
    """Reads of the read model, restricted to ``scopes`` (None: every scope)."""

    def __init__(self, model: ReadModel, scopes: Collection[str] | None) -> None:
        self._m = model
        self._scopes = None if scopes is None else frozenset(scopes)

    def sees(self, node_id: str) -> bool:
        """The scope rule, the one place it is decided: a fact or entity is seen if its scope is."""
        return self._scopes is None or self._m._scope.get(node_id) in self._scopes

    def statuses(self, fact_ids: Iterable[str]) -> dict[str, str]:
        """The status of each of ``fact_ids`` that exists."""
        m = self._m
        with m._lock:
            return {fid: m._status[fid] for fid in fact_ids if fid in m._status and self.sees(fid)}

    def fact_edges(self, fact_ids: Sequence[str], edge_types: Sequence[str] = FACT_EDGES) -> list[EdgeRow]:
        """Fact-to-fact edges touching ``fact_ids``, either direction, with weight where stored."""
        unknown = set(edge_types) - set(FACT_EDGES)
        if unknown:
            raise InternalError(f"unknown fact edges {sorted(unknown)}")
        m, sees = self._m, self.sees
        with m._lock:
            wanted = set(edge_types)
            found: dict[int, EdgeRow] = {}
            for fid in fact_ids:
                for edge in (*m._out.get(fid, ()), *m._in.get(fid, ())):
                    if edge.type in wanted and sees(edge.src) and sees(edge.dst):
                        found.setdefault(id(edge), edge)
            return list(found.values())

    def about_edges(self, fact_ids: Sequence[str]) -> list[EdgeRow]:
        m, sees = self._m, self.sees
        with m._lock:
            return [
                EdgeRow(EdgeType.ABOUT, fid, eid, {"role": role})
                for fid in dict.fromkeys(fact_ids)
                if sees(fid)
                for eid, role in m._about.get(fid, ())
                if sees(eid)
            ]

    def about_any(self, fact_ids: Iterable[str], entity_ids: Iterable[str]) -> set[str]:
        """Those of ``fact_ids`` that are ABOUT any of ``entity_ids``."""
        m, sees = self._m, self.sees
        with m._lock:
            wanted = {eid for eid in entity_ids if sees(eid)}
            return {
                fid
                for fid in fact_ids
                if sees(fid) and any(eid in wanted for eid, _ in m._about.get(fid, ()))
            }

    def centred_on_any(self, fact_ids: Iterable[str], entity_ids: Iterable[str]) -> set[str]:
        """Those of ``fact_ids`` whose topic is one of ``entity_ids``: the fact's subject or
        object when it has one (a chat turn's speaker is its subject), else any entity it
        mentions. "Joanna: Congrats on the win, Nate!" is Joanna's, not Nate's."""
        m, sees = self._m, self.sees
        with m._lock:
            wanted = {eid for eid in entity_ids if sees(eid)}
            centred = set()
            for fid in fact_ids:
                about = m._about.get(fid, ())
                topics = [eid for eid, role in about if role != "mention"] or [eid for eid, _ in about]
                if sees(fid) and any(eid in wanted for eid in topics):
                    centred.add(fid)
            return centred

    def facts_about(self, entity_id: str, *, limit: int, statuses: Sequence[str]) -> list[str]:
        """The ``limit`` most recently created facts about the entity with one of ``statuses``."""
        m, sees = self._m, self.sees
        with m._lock:
            if not sees(entity_id):
                return []
            allowed = set(statuses)
            newest = (
                fid
                for fid in reversed(m._facts_of.get(entity_id, ()))
                if m._status[fid] in allowed and sees(fid)
            )
            return list(itertools.islice(newest, limit))

    def entity_relations(self, entity_ids: Sequence[str]) -> list[EdgeRow]:
        m, sees = self._m, self.sees
        with m._lock:
            found: dict[int, EdgeRow] = {}
            for eid in entity_ids:
                for edge in m._relates.get(eid, ()):
                    if sees(edge.src) and sees(edge.dst):
                        found.setdefault(id(edge), edge)
            return list(found.values())

    def related_entities(self, entity_ids: Sequence[str], *, limit: int) -> list[tuple[str, str, float]]:
        """(entity, related entity, strongest RELATES weight): the ``limit`` strongest per entity."""
        m, sees = self._m, self.sees
        with m._lock:
            rows = []
            for eid in dict.fromkeys(entity_ids):
                if not sees(eid):
                    continue
                known = m._neighbours.get(eid, {})
                ranked = m._ranked.get(eid)
                if ranked is None:
                    ranked = m._ranked[eid] = sorted(known, key=lambda o: (known[o], o), reverse=True)
                strongest = itertools.islice((other for other in ranked if sees(other)), limit)
                rows += [(eid, other, known[other]) for other in strongest]
            return rows

    def tag_neighbours(self, fact_ids: Sequence[str], *, limit: int) -> list[EdgeRow]:
        """Facts sharing a tag with ``fact_ids``, newest tagged first, ``limit`` rows in all.

        A tag is a name, stored once for every scope: only the facts seen here share it.
        """
        m, sees = self._m, self.sees
        with m._lock:
            rows: list[EdgeRow] = []
            for fid in fact_ids:
                if not sees(fid):
                    continue
                for tag in m._tags.get(fid, ()):
                    for other in reversed(m._tagged.get(tag, ())):
                        if len(rows) >= limit:
                            return rows
                        if other != fid and sees(other):
                            rows.append(EdgeRow(EdgeType.HAS_TAG, fid, other, {"tag": tag}))
            return rows

    def entity_names_for(self, fact_ids: Sequence[str]) -> dict[str, list[str]]:
        m, sees = self._m, self.sees
        with m._lock:
            names: dict[str, list[str]] = {}
            for fid in dict.fromkeys(fact_ids):
                if not sees(fid):
                    continue
                for eid, _ in m._about.get(fid, ()):
                    if eid in m._names and sees(eid):
                        names.setdefault(fid, []).append(m._names[eid])
            return names

    def entity_names(self, prefix: str, *, limit: int) -> list[str]:
        """Names of the seen entities starting with ``prefix`` (any case), sorted, at most ``limit``."""
        m, sees, folded = self._m, self.sees, prefix.casefold()
        with m._lock:
            found = {n for eid, n in m._names.items() if n.casefold().startswith(folded) and sees(eid)}
        return sorted(found, key=str.casefold)[:limit]

    def scopes(self, prefix: str, *, limit: int) -> list[str]:
        """The seen scopes that hold a fact or entity and start with ``prefix``, sorted, at most ``limit``."""
        m, folded = self._m, prefix.casefold()
        with m._lock:
            found = set(m._scope.values())
        seen = found if self._scopes is None else found & self._scopes
        return sorted(s for s in seen if s.casefold().startswith(folded))[:limit]
