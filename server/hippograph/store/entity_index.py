"""In-memory lookup of entities by name and alias, and mention detection in free text.

Loaded from the graph at start and kept current by the service after each commit, so
linking "Alice" in a new fact or spotting "Project Apollo" in a query costs a few dict
lookups instead of a graph scan.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

from hippograph.domain.models import Entity, name_key
from hippograph.domain.visibility import visible_scopes

_WORD = re.compile(r"\w+")
_MAX_NGRAM = 5
# One- and two-letter names ("I", "AI") would match half of all prose.
_MIN_KEY_CHARS = 3


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
        return self._find(name_key(name), scope)

    def _find(self, key: str, scope: str) -> Entity | None:
        for candidate_scope in visible_scopes(scope):
            entity_id = self._by_key.get((candidate_scope, key))
            if entity_id is not None:
                return self._by_id[entity_id]
        return None

    def mentions(self, text: str, scope: str) -> list[Entity]:
        """Entities whose name or alias appears in ``text`` as whole words, longest match first."""
        words = [w.casefold() for w in _WORD.findall(text)]
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

    def staged(self) -> list[Entity]:
        """Every entity the batch created or changed, in its latest state."""
        return list(self._by_id.values())
