"""Entities by name and alias, and mention detection in free text.

Linking "Alice" in a new fact or spotting "Project Apollo" in a query asks for the entities
whose names are among a text's word spans: ``IndexedEntities`` asks the graph index (one lookup
for all the spans of a text), kept current by the graph store after each commit; memory does not
grow with the entities. A first name finds the one person a caller sees by that first name
("Priya" -> "Priya Raman"), and nobody when several share it. ``HeldEntities`` holds a few
entities in dicts (those one import introduces); ``PendingEntities`` lays a write batch's new
and mentioned entities over the committed ones until the batch commits.
"""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable
from typing import Protocol

from hippograph.domain.models import Entity, name_key
from hippograph.domain.visibility import visible_scopes
from hippograph.text.name_cues import HONORIFIC
from hippograph.text.query_intent import STOPWORDS

_WORD = re.compile(r"\w+")
_MAX_NGRAM = 5
# One- and two-letter names ("I", "AI") would match half of all prose.
_MIN_KEY_CHARS = 3
# Entities a first name may stand for: people, and names callers gave without a type. A
# place or an organisation is not called by its first word ("New" for "New York").
_FIRST_NAMED = frozenset({"person", "concept"})

# Where several entities a scope holds share a name or alias, the first made has it.
KeyedIds = dict[tuple[str, str], str]  # (scope, key) -> entity id


def name_keys(entity: Entity) -> list[str]:
    """The keys an entity is found by: its name's and aliases' ``name_key``, name first."""
    return list(dict.fromkeys(name_key(label) for label in (entity.name, *entity.aliases)))


def first_word(entity: Entity) -> str | None:
    """The first name a person (or untyped entity) of several words is also found by."""
    words = name_key(entity.name).split()
    return words[0] if len(words) >= 2 and entity.type in _FIRST_NAMED else None


def surname(entity: Entity) -> str | None:
    """The last name a person of several words is also found by after a title ("Dr. Lee")."""
    return surname_of(entity.name, entity.type)


def surname_of(name: str, kind: str) -> str | None:
    """``surname`` of an entity named ``name`` of type ``kind``."""
    words = name_key(name).split()
    return words[-1] if len(words) >= 2 and kind == "person" else None


class EntityIndex(ABC):
    """Finding entities by name in the scopes a caller sees."""

    @abstractmethod
    def get(self, entity_id: str) -> Entity | None: ...

    def get_many(self, ids: Collection[str]) -> dict[str, Entity]:
        """Those of ``ids`` that are entities (one read where the index is a database's)."""
        found = {eid: self.get(eid) for eid in dict.fromkeys(ids)}
        return {eid: entity for eid, entity in found.items() if entity is not None}

    @abstractmethod
    def _keyed(self, keys: Collection[str], scopes: tuple[str, ...]) -> KeyedIds:
        """Which entity of each of ``scopes`` has each of ``keys``, where one has it."""

    @abstractmethod
    def _first_named(self, key: str, scopes: tuple[str, ...]) -> set[str]:
        """The ids of the entities of ``scopes`` whose ``first_word`` is ``key``."""

    def _resolve(self, keys: Collection[str], scope: str) -> dict[str, str]:
        """key -> the id of the entity a caller in ``scope`` finds by it (the nearest scope's)."""
        scopes = visible_scopes(scope)
        keyed = self._keyed(keys, scopes)
        found = {}
        for key in keys:
            entity_id = next((keyed[s, key] for s in scopes if (s, key) in keyed), None)
            if entity_id is not None:
                found[key] = entity_id
        return found

    def resolve(self, name: str, scope: str) -> Entity | None:
        """The entity a caller in ``scope`` finds by ``name``; "The Lanterns" finds "Lanterns" and
        "Dr. Osei" finds the person "Osei" (a name is found without its article, a person's without
        a title, as the text it came from wrote it; "Dr Pepper" is no person "Pepper"'s name only
        if no entity is so named)."""
        key = name_key(name)
        first, _, rest = key.partition(" ")
        titled = bool(rest) and HONORIFIC.fullmatch(first) is not None
        keys = [key, rest] if rest and (first == "the" or titled) else [key]
        found = self._resolve(keys, scope)
        entity_id = next((found[k] for k in keys if k in found), None)
        entity = None if entity_id is None else self.get(entity_id)
        if entity is not None and titled and entity_id != found.get(key) and entity.type != "person":
            return None  # "Captain America" is not the place America
        return entity

    def by_first_name(self, name: str, scope: str) -> Entity | None:
        """The one person (or untyped entity) of several words whose first word is ``name``,
        among those a caller in ``scope`` sees; None if there are none or several."""
        return self._the_one_named(self._first_named, name, scope)

    def by_surname(self, name: str, scope: str) -> Entity | None:
        """The one person of several words whose last word is ``name`` ("Dr. Lee" is Helen Lee),
        among those a caller in ``scope`` sees; None if there are none or several."""
        return self._the_one_named(self._last_named, name, scope)

    def _the_one_named(
        self, named: Callable[[str, tuple[str, ...]], set[str]], name: str, scope: str
    ) -> Entity | None:
        """The one entity ``named`` finds by the single word ``name`` in ``scope``'s view."""
        key = name_key(name)
        if " " in key or len(key) < _MIN_KEY_CHARS:
            return None
        ids = named(key, visible_scopes(scope))
        return self.get(next(iter(ids))) if len(ids) == 1 else None

    @abstractmethod
    def _last_named(self, key: str, scopes: tuple[str, ...]) -> set[str]:
        """The ids of the people of ``scopes`` whose name of several words ends with ``key``."""

    def mentions(self, text: str, scope: str) -> list[Entity]:
        """Entities whose name or alias appears in ``text`` as whole words, longest match first,
        then those a capitalised word names by first name."""
        written = _WORD.findall(text)
        words = [w.casefold() for w in written]
        keys = [name_key(word) for word in words]  # a span's key is its words' keys, joined
        spans: dict[tuple[int, int], str] = {}  # (start, end) -> the span's key, longest first
        for size in range(min(_MAX_NGRAM, len(words)), 0, -1):
            for start in range(len(words) - size + 1):
                end = start + size
                if len(" ".join(words[start:end])) >= _MIN_KEY_CHARS:
                    spans[start, end] = " ".join(key for key in keys[start:end] if key)
        named = self._resolve(set(spans.values()), scope)
        found: dict[str, Entity] = {}
        covered = [False] * len(words)
        for (start, end), key in spans.items():
            entity_id = named.get(key)
            if entity_id is None or entity_id in found or any(covered[start:end]):
                continue
            entity = self.get(entity_id)
            if entity is not None:
                found[entity_id] = entity
                covered[start:end] = [True] * (end - start)
        # A capitalised word left over may be a known person's first name ("Priya").
        for i, word in enumerate(written):
            if covered[i] or not word[0].isupper() or words[i] in STOPWORDS:
                continue
            entity = self.by_first_name(word, scope)
            if entity is not None and entity.id not in found:
                found[entity.id] = entity
        return list(found.values())


class NameSource(Protocol):
    """Where ``IndexedEntities`` reads (the graph index)."""

    def entity(self, entity_id: str) -> Entity | None: ...
    def entities(self, ids: Collection[str]) -> dict[str, Entity]: ...
    def entity_keys(self, keys: Collection[str], scopes: Collection[str]) -> KeyedIds: ...
    def first_named(self, key: str, scopes: Collection[str]) -> set[str]: ...
    def last_named(self, key: str, scopes: Collection[str]) -> set[str]: ...


class IndexedEntities(EntityIndex):
    """Every committed entity, as the graph index holds them."""

    def __init__(self, source: NameSource) -> None:
        self._source = source

    def get(self, entity_id: str) -> Entity | None:
        return self._source.entity(entity_id)

    def get_many(self, ids: Collection[str]) -> dict[str, Entity]:
        return self._source.entities(ids)

    def _keyed(self, keys: Collection[str], scopes: tuple[str, ...]) -> KeyedIds:
        return self._source.entity_keys(keys, scopes)

    def _first_named(self, key: str, scopes: tuple[str, ...]) -> set[str]:
        return self._source.first_named(key, scopes)

    def _last_named(self, key: str, scopes: tuple[str, ...]) -> set[str]:
        return self._source.last_named(key, scopes)


class HeldEntities(EntityIndex):
    """A few entities, held in dicts."""

    def __init__(self, entities: Iterable[Entity] = ()) -> None:
        self._by_id: dict[str, Entity] = {}
        self._by_key: KeyedIds = {}
        self._by_first: dict[tuple[str, str], set[str]] = {}  # (scope, first word) -> ids
        self._lock = threading.Lock()
        for entity in entities:
            self.put(entity)

    def put(self, entity: Entity) -> None:
        """Hold ``entity`` (a newer copy of one held replaces it: its mention count)."""
        with self._lock:
            self._by_id[entity.id] = entity
            for key in name_keys(entity):
                self._by_key.setdefault((entity.scope, key), entity.id)
            first = first_word(entity)
            if first:
                self._by_first.setdefault((entity.scope, first), set()).add(entity.id)

    def get(self, entity_id: str) -> Entity | None:
        return self._by_id.get(entity_id)

    def _keyed(self, keys: Collection[str], scopes: tuple[str, ...]) -> KeyedIds:
        return {(s, k): self._by_key[s, k] for s in scopes for k in keys if (s, k) in self._by_key}

    def _first_named(self, key: str, scopes: tuple[str, ...]) -> set[str]:
        return {eid for s in scopes for eid in self._by_first.get((s, key), ())}

    def _last_named(self, key: str, scopes: tuple[str, ...]) -> set[str]:
        with self._lock:
            held = list(self._by_id.values())
        return {e.id for e in held if e.scope in scopes and surname(e) == key}


class PendingEntities(HeldEntities):
    """Entities a write batch has created or mentioned, seen over the committed index until the
    batch commits: a later fact of the batch finds them as it would after a commit."""

    def __init__(self, committed: EntityIndex) -> None:
        super().__init__()
        self._committed = committed

    def get(self, entity_id: str) -> Entity | None:
        return super().get(entity_id) or self._committed.get(entity_id)

    def _resolve(self, keys: Collection[str], scope: str) -> dict[str, str]:
        # Committed first is exact: the batch creates an entity only where no visible one resolves.
        found = self._committed._resolve(keys, scope)
        return {**super()._resolve([key for key in keys if key not in found], scope), **found}

    def _first_named(self, key: str, scopes: tuple[str, ...]) -> set[str]:
        return self._committed._first_named(key, scopes) | super()._first_named(key, scopes)

    def _last_named(self, key: str, scopes: tuple[str, ...]) -> set[str]:
        return self._committed._last_named(key, scopes) | super()._last_named(key, scopes)

    def staged(self) -> list[Entity]:
        """Every entity the batch created or changed, in its latest state."""
        return list(self._by_id.values())
