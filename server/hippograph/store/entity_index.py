"""In-memory lookup of entities by name and alias, and mention detection in free text.

Loaded from the graph at start and kept current by the service after each commit, so
linking "Alice" in a new fact or spotting "Project Apollo" in a query costs a few dict
lookups instead of a graph scan. A first name finds the one person a caller sees by that
first name ("Priya" -> "Priya Raman"), and nobody when several share it.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Iterable, Mapping
from datetime import datetime

from hippograph.domain.models import Entity, name_key
from hippograph.domain.visibility import visible_scopes
from hippograph.text.query_intent import STOPWORDS

_WORD = re.compile(r"\w+")
_MAX_NGRAM = 5
# One- and two-letter names ("I", "AI") would match half of all prose.
_MIN_KEY_CHARS = 3
# Entities a first name may stand for: people, and names callers gave without a type. A
# place or an organisation is not called by its first word ("New" for "New York").
_FIRST_NAMED = frozenset({"person", "concept"})


class EntityIndex:
    def __init__(self, entities: Iterable[Entity] = ()) -> None:
        self._by_id: dict[str, Entity] = {}
        self._by_key: dict[tuple[str, str], str] = {}  # (scope, key) -> id
        self._by_first: dict[tuple[str, str], set[str]] = {}  # (scope, first word) -> ids
        self._lock = threading.Lock()
        for entity in entities:
            self.put(entity)

    def put(self, entity: Entity) -> None:
        with self._lock:
            self._by_id[entity.id] = entity  # replaces a stale copy (counts, aliases)
            for label in (entity.name, *entity.aliases):
                self._by_key.setdefault((entity.scope, name_key(label)), entity.id)
            first = _first_word(entity)
            if first:
                self._by_first.setdefault((entity.scope, first), set()).add(entity.id)

    def remove(self, entity_ids: Iterable[str]) -> None:
        gone = set(entity_ids)
        if not gone:
            return
        with self._lock:
            for entity_id in gone:
                self._by_id.pop(entity_id, None)
            for key in [k for k, v in self._by_key.items() if v in gone]:
                del self._by_key[key]
            for ids in self._by_first.values():
                ids -= gone

    def count_mentions(self, mentions: Mapping[str, tuple[int, datetime]]) -> None:
        """New mentions committed: entity id -> (how many, when the last one was)."""
        for entity_id, (count, at) in mentions.items():
            entity = self.get(entity_id)
            if entity is not None:
                self.put(
                    dataclasses.replace(entity, mention_count=entity.mention_count + count, last_mentioned=at)
                )

    def differences(self, stored: Iterable[Entity], *, repair: bool) -> int:
        """How many entities differ from ``stored`` (every entity as read); ``repair`` reloads."""
        stored_by_id = {entity.id: entity for entity in stored}
        with self._lock:
            held = dict(self._by_id)
        differ = len(held.keys() ^ stored_by_id.keys())
        differ += sum(held[eid] != entity for eid, entity in stored_by_id.items() if eid in held)
        if differ and repair:
            self.remove(list(held))
            for entity in stored_by_id.values():
                self.put(entity)
        return differ

    def get(self, entity_id: str) -> Entity | None:
        return self._by_id.get(entity_id)

    def resolve(self, name: str, scope: str) -> Entity | None:
        return self._find(name_key(name), scope)

    def _find(self, key: str, scope: str) -> Entity | None:
        for candidate_scope in visible_scopes(scope):
            entity_id = self._by_key.get((candidate_scope, key))
            if entity_id is not None:
                return self._by_id[entity_id]
        return None

    def by_first_name(self, name: str, scope: str) -> Entity | None:
        """The one person (or untyped entity) of several words whose first word is ``name``,
        among those a caller in ``scope`` sees; None if there are none or several."""
        key = name_key(name)
        if " " in key or len(key) < _MIN_KEY_CHARS:
            return None
        ids = self._first_named(key, visible_scopes(scope))
        return self.get(next(iter(ids))) if len(ids) == 1 else None

    def _first_named(self, key: str, scopes: tuple[str, ...]) -> set[str]:
        return {eid for s in scopes for eid in self._by_first.get((s, key), ())}

    def mentions(self, text: str, scope: str) -> list[Entity]:
        """Entities whose name or alias appears in ``text`` as whole words, longest match first,
        then those a capitalised word names by first name."""
        written = _WORD.findall(text)
        words = [w.casefold() for w in written]
        keys = [name_key(word) for word in words]  # a span's key is its words' keys, joined
        found: dict[str, Entity] = {}
        covered = [False] * len(words)
        for size in range(min(_MAX_NGRAM, len(words)), 0, -1):
            for start in range(len(words) - size + 1):
                end = start + size
                if any(covered[start:end]) or len(" ".join(words[start:end])) < _MIN_KEY_CHARS:
                    continue
                entity = self._find(" ".join(key for key in keys[start:end] if key), scope)
                if entity is not None and entity.id not in found:
                    found[entity.id] = entity
                    covered[start:end] = [True] * size
        # A capitalised word left over may be a known person's first name ("Priya").
        for i, word in enumerate(written):
            if covered[i] or not word[0].isupper() or words[i] in STOPWORDS:
                continue
            entity = self.by_first_name(word, scope)
            if entity is not None and entity.id not in found:
                found[entity.id] = entity
        return list(found.values())

    def __len__(self) -> int:
        return len(self._by_id)


class PendingEntities(EntityIndex):
    """Entities a write batch has created or mentioned, seen over the committed index until the
    batch commits: a later fact of the batch finds them as it would after a commit."""

    def __init__(self, committed: EntityIndex) -> None:
        super().__init__()
        self._committed = committed

    def get(self, entity_id: str) -> Entity | None:
        return super().get(entity_id) or self._committed.get(entity_id)

    def _find(self, key: str, scope: str) -> Entity | None:
        # Committed first is exact: the batch creates an entity only where no visible one resolves.
        found = self._committed._find(key, scope)
        if found is None:
            return super()._find(key, scope)
        return super().get(found.id) or found

    def _first_named(self, key: str, scopes: tuple[str, ...]) -> set[str]:
        return self._committed._first_named(key, scopes) | super()._first_named(key, scopes)

    def staged(self) -> list[Entity]:
        """Every entity the batch created or changed, in its latest state."""
        return list(self._by_id.values())


def _first_word(entity: Entity) -> str | None:
    words = name_key(entity.name).split()
    return words[0] if len(words) >= 2 and entity.type in _FIRST_NAMED else None
