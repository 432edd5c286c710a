"""In-memory lookup of entities by name and alias, and mention detection in free text.

Loaded from the graph at start and kept current by the service after each commit, so
linking "Alice" in a new fact or spotting "Project Apollo" in a query costs a few dict
lookups instead of a graph scan.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

from hippograph.models import GLOBAL_SCOPE, Entity, name_key

_WORD = re.compile(r"\w+")
_MAX_NGRAM = 5
# One- and two-letter names ("I", "AI") would match half of all prose.
_MIN_KEY_CHARS = 3


def visible_scopes(scope: str) -> tuple[str, ...]:
    """Scopes whose entities and facts a caller in ``scope`` sees: its own, and global."""
    return (scope,) if scope == GLOBAL_SCOPE else (scope, GLOBAL_SCOPE)


class EntityIndex:
    def __init__(self, entities: Iterable[Entity] = ()) -> None:
        self._by_id: dict[str, Entity] = {}
        self._by_key: dict[tuple[str, str], str] = {}  # (scope, key) -> id
        self._lock = threading.Lock()
        for entity in entities:
            self.put(entity)

    def put(self, entity: Entity) -> None:
        with self._lock:
            self._by_id[entity.id] = entity  # replaces a stale copy (counts, aliases)
            for label in (entity.name, *entity.aliases):
                self._by_key.setdefault((entity.scope, name_key(label)), entity.id)

    def remove(self, entity_id: str) -> None:
        with self._lock:
            self._by_id.pop(entity_id, None)
            for key in [k for k, v in self._by_key.items() if v == entity_id]:
                del self._by_key[key]

    def get(self, entity_id: str) -> Entity | None:
        return self._by_id.get(entity_id)

    def resolve(self, name: str, scope: str) -> Entity | None:
        key = name_key(name)
        for candidate_scope in visible_scopes(scope):
            entity_id = self._by_key.get((candidate_scope, key))
            if entity_id is not None:
                return self._by_id[entity_id]
        return None

    def mentions(self, text: str, scope: str) -> list[Entity]:
        """Entities whose name or alias appears in ``text`` as whole words, longest match first."""
        words = [w.casefold() for w in _WORD.findall(text)]
        found: dict[str, Entity] = {}
        covered: set[int] = set()
        for size in range(min(_MAX_NGRAM, len(words)), 0, -1):
            for start in range(len(words) - size + 1):
                span = set(range(start, start + size))
                if span & covered:
                    continue
                key = " ".join(words[start : start + size])
                if len(key) < _MIN_KEY_CHARS:
                    continue
                entity = self.resolve(key, scope)
                if entity is not None and entity.id not in found:
                    found[entity.id] = entity
                    covered |= span
        return list(found.values())

    def __len__(self) -> int:
        return len(self._by_id)
