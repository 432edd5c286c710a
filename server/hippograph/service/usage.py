"""Usage: a client's report that it relied on facts, the one way reading leads to evidence."""

from __future__ import annotations

from collections.abc import Sequence

from hippograph.domain import lifecycle as lc
from hippograph.domain import validation as check
from hippograph.domain.errors import InvalidInput
from hippograph.domain.models import FactStatus, UsedFact, UsedOut
from hippograph.service.stores import Stores

# More than a reply can have relied on; a longer list is a mistake (or every search result).
MAX_USED = 50


class Usage:
    """mark_used over the shared stores."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    def mark_used(self, fact_ids: Sequence[str], scope: str | None = None) -> UsedOut:
        """Count a use of each fact (once per call), all or none: every id is checked first,
        and one ``scope`` does not see is not found."""
        if isinstance(fact_ids, str) or not isinstance(fact_ids, Sequence) or not fact_ids:
            raise InvalidInput('fact_ids must be a list of fact ids from search results, e.g. ["f_0123..."]')
        if len(fact_ids) > MAX_USED:
            raise InvalidInput(
                f"fact_ids has {len(fact_ids)} ids, over {MAX_USED}: send only the facts your answer "
                "relied on"
            )
        ids = list(dict.fromkeys(check.fact_id(fid, f"fact_ids[{i}]") for i, fid in enumerate(fact_ids)))
        with self.stores.write_lock:
            now = self.stores.clock()
            used = []
            for fid in ids:
                fact = self.stores.fact(fid, scope)
                newer = self.stores.current_version(fact) if fact.status is FactStatus.SUPERSEDED else None
                used.append((fact, lc.mark_used(fact, now, self.stores.policy, current_id=newer)))
            with self.stores.graph.transaction():
                self.stores.graph.update_fact_states([new for _, new in used])
            for old, new in used:
                if new.status is not old.status:
                    self.stores.vectors.set_status([new.id], new.status.value)
        return UsedOut(
            facts=[UsedFact(id=f.id, status=f.status.value, times_used=f.access_count) for _, f in used]
        )
