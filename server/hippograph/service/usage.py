"""Usage: a client's report that it relied on facts, the one way reading leads to evidence."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import combinations

from hippograph.domain import lifecycle as lc
from hippograph.domain import validation as check
from hippograph.domain.errors import InvalidInput
from hippograph.domain.models import EdgeType, Fact, FactStatus, UsedFact, UsedOut
from hippograph.service.stores import Stores
from hippograph.store.seam import EVERYWHERE, FactLink

# More than a reply can have relied on; a longer list is a mistake (or every search result).
MAX_USED = 50
# Facts a reply relied on together are linked (RELATES_TO of this relation), and the graph walk
# follows the link: the first few only, as a long list says less about each pair.
CO_USED = "used together"
CO_USE_MAX = 8


def co_use_weight(previous: float | None) -> float:
    """A co-use link's weight after one more co-use: 1/2 at first, then halfway to 1 each time."""
    return 0.5 if previous is None else previous + (1.0 - previous) / 2


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
            links, weights = self._co_use([new for _, new in used], now)
            with self.stores.graph.transaction():
                self.stores.graph.update_fact_states([new for _, new in used])
                self.stores.graph.link_facts_many(EdgeType.RELATES_TO, links)
                self.stores.graph.reweigh_relations(CO_USED, weights)
            for old, new in used:
                if new.status is not old.status:
                    self.stores.vectors.set_status([new.id], new.status.value)
        return UsedOut(
            facts=[UsedFact(id=f.id, status=f.status.value, times_used=f.access_count) for _, f in used]
        )

    def _co_use(
        self, facts: Sequence[Fact], now: datetime
    ) -> tuple[list[FactLink], list[tuple[str, str, float]]]:
        """The co-use links to create and those to strengthen, for facts used together: each pair
        of the first few active ones of one scope (a link never joins two scopes)."""
        active = [f for f in facts if f.status.is_active][:CO_USE_MAX]
        view = self.stores.graph.view(EVERYWHERE)
        known = {
            (e.src, e.dst): float(e.props.get("weight") or 0.0)
            for e in view.fact_edges([f.id for f in active], [EdgeType.RELATES_TO])
            if e.props.get("relation") == CO_USED
        }
        links: list[FactLink] = []
        weights: list[tuple[str, str, float]] = []
        for a, b in combinations(sorted(active, key=lambda f: f.id), 2):
            if a.scope != b.scope:
                continue
            if (a.id, b.id) in known:
                weights.append((a.id, b.id, co_use_weight(known[a.id, b.id])))
            else:
                links.append((a.id, b.id, now, {"relation": CO_USED, "weight": co_use_weight(None)}))
        return links, weights
