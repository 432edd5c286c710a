"""What every part of the service shares: the open stores, the clock, the policies and the write lock."""

from __future__ import annotations

import logging
import os
import shutil
import stat
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hippograph.config import Settings
from hippograph.domain import lifecycle as lc
from hippograph.domain import validation as check
from hippograph.domain.errors import DataDirNotWritable, DiskFull, NotFound
from hippograph.domain.models import EdgeType, Entity, Fact
from hippograph.domain.visibility import visible_scopes
from hippograph.retrieval.retriever import Retriever
from hippograph.service.in_flight import WriteLock
from hippograph.service.shaping import Clock
from hippograph.store.embed import Embedder
from hippograph.store.entity_index import EntityIndex
from hippograph.store.name_typing import NameTyper
from hippograph.store.ner import NameFinder
from hippograph.store.seam import EVERYWHERE, GapStore, GraphStore, SessionKey, TopicStore, VectorStore

log = logging.getLogger(__name__)

# Free space a write needs beyond the graph file's size (see ``Stores.check_space``).
_FREE_SPACE_FLOOR = 64 * 2**20

# (id, content) of a session's latest fact.
Turn = tuple[str, str]


def check_writable(path: Path) -> None:
    """Create the data dir (0700: this user's alone) if needed, tightening one an older version
    left readable by others; refuse one we cannot write, saying what to do."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.stat()
        if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077:
            log.info("making %s private to its owner (was %o)", path, stat.S_IMODE(info.st_mode))
            path.chmod(0o700)
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
        dormant_below=settings.dormant_below,
    )


# Sessions whose latest turn is held (a turn's text is at most a few KB).
_HELD = 1024


@dataclass
class SessionTails:
    """Each session's latest fact: the NEXT link and the context of its next turn.

    A session is known by (scope, session id): the same id in two scopes is two conversations,
    so a turn never links to, or is indexed with, another scope's turn. Filled from the graph on
    a session's first write, then kept by the writes that commit; the ``_HELD`` sessions written
    last are held (a session is read from the graph again after that many others: memory does
    not grow with the sessions). Read and changed under the write lock. A graph other servers
    write too is read each time: their turns are not in what this process holds.
    """

    graph: GraphStore
    _tail: OrderedDict[SessionKey, Turn | None] = field(default_factory=OrderedDict)

    def before(self, facts: Sequence[Fact]) -> list[Turn | None]:
        """For each fact, the fact before it in its session, if any: stored, or earlier in ``facts``."""
        sessions = {(f.scope, f.session_id) for f in facts if f.session_id is not None}
        if self.graph.written_elsewhere:
            self._tail.clear()
        unknown = sessions - self._tail.keys()
        if unknown:
            latest = self.graph.last_facts_in_sessions(unknown)
            stored = self.graph.get_facts(list(latest.values()))
            for key in unknown:
                fact = stored.get(latest.get(key, ""))
                # setdefault: a writer that committed to this session meanwhile knows better.
                self._tail.setdefault(key, (fact.id, fact.content) if fact else None)
        tails = {key: self._tail.get(key) for key in sessions}
        self._trim()
        before: list[Turn | None] = []
        for fact in facts:
            if fact.session_id is None:
                before.append(None)
                continue
            key = (fact.scope, fact.session_id)
            before.append(tails[key])
            tails[key] = (fact.id, fact.content)
        return before

    def committed(self, fact: Fact) -> None:
        """A fact of a session has committed: it is the session's latest."""
        if fact.session_id is not None:
            key = (fact.scope, fact.session_id)
            self._tail[key] = (fact.id, fact.content)
            self._tail.move_to_end(key)
            self._trim()

    def _trim(self) -> None:
        while len(self._tail) > _HELD:
            self._tail.popitem(last=False)

    def forget(self, scope: str, session_id: str) -> None:
        """Drop what is known of a session (imported facts may predate it): re-read on next use."""
        self._tail.pop((scope, session_id), None)


@dataclass
class Stores:
    """The open stores of one data dir and what the service's parts need to use them together."""

    settings: Settings
    graph: GraphStore
    vectors: VectorStore
    embedder: Embedder
    entities: EntityIndex
    retriever: Retriever
    policy: lc.LifecyclePolicy
    clock: Clock
    sessions: SessionTails
    names: NameFinder  # names in a new fact's text (people, places, code), typed
    typer: NameTyper  # a new name's type as the embedding model and the recogniser agree on it
    topics: TopicStore  # the topics consolidation found (derived)
    gaps: GapStore  # the questions memory could not answer with confidence
    # Every write takes it: what a write reads to plan it stays true until it commits.
    write_lock: WriteLock = field(default_factory=WriteLock)

    def check_space(self) -> None:
        """Refuse a write, before it touches a store, when the disk could fill during it.

        Kùzu does not recover well from a write cut short (a half-written WAL record, then a
        crash at close, tested), so the margin is checked first: a floor, plus the graph file's
        size, which a checkpoint or a purge's rebuild may write again.
        """
        data_dir = self.settings.data_dir
        graph_file = self.settings.graph_file
        needed = _FREE_SPACE_FLOOR + (graph_file.stat().st_size if graph_file.exists() else 0)
        free = shutil.disk_usage(data_dir).free
        if free < needed:
            raise DiskFull(
                f"the disk holding {data_dir} has {free // 2**20} MiB free and a write needs "
                f"{needed // 2**20} MiB to finish safely: free some space and send it again. "
                "Nothing was written; search and recall still work."
            )

    def fact(self, fact_id: str, scope: str | None) -> Fact:
        """The fact with this id as a caller in ``scope`` (None: global) sees it, or NotFound.

        A fact of a scope the caller does not see is not found, with the very message of an id
        that never existed: an operation on a fact id reveals nothing of another scope.
        """
        fact_id = check.fact_id(fact_id)
        visible = visible_scopes(check.scope(scope))
        fact = self.graph.get_fact(fact_id)
        if fact is None or fact.scope not in visible:
            raise NotFound(
                f"no fact has id {fact_id} in {' or '.join(visible)}: take ids from remember or search "
                "results, and pass the scope they were found in"
            )
        return fact

    def entity(self, entity_id: str, scope: str | None) -> Entity:
        """The entity with this id as a caller in ``scope`` (None: global) sees it, or NotFound
        (the same for an entity of another scope as for an unknown id)."""
        visible = visible_scopes(check.scope(scope))
        entity = self.entities.get(entity_id)
        if entity is None or entity.scope not in visible:
            raise NotFound(
                f"no entity has id {entity_id} in {' or '.join(visible)}: take entity ids from "
                "remember's linked_entities, and pass the scope they were found in"
            )
        return entity

    def current_version(self, fact: Fact) -> str | None:
        """The id of the newest fact that supersedes this one (directly or along a chain), if any,
        of those the fact's own scope sees (so never one its callers do not see)."""
        view = self.graph.view(visible_scopes(fact.scope))
        newer = [
            fid for fid, _ in self.graph.chain(fact.id, EdgeType.SUPERSEDES, newer=True) if view.sees(fid)
        ]
        return newer[-1] if newer else None

    def entity_names(self, fact_id: str) -> list[str]:
        return self.graph.view(EVERYWHERE).entity_names_for([fact_id]).get(fact_id, [])
