"""Entity profiles: what memory holds about one entity, shaped for a model's context window.

A profile is read from one search restricted to the entity (so it ranks, scopes and hides what
search does), then laid out: the facts best first, the entities named with them, the dated ones
in order, what replaced what, what is contradicted. The whole reply fits ``budget_tokens``: the
lowest-ranked facts go first, and every other section names only facts the reply still holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import partial
from typing import Any

from hippograph.domain import validation as check
from hippograph.domain.errors import InvalidInput
from hippograph.domain.models import SearchHit
from hippograph.domain.profile import (
    EntityProfileOut,
    ProfileChange,
    ProfileContest,
    ProfileEvent,
    ProfileFact,
    ProfileSummary,
    RelatedEntity,
)
from hippograph.domain.visibility import visible_scopes
from hippograph.service.reads import Reader
from hippograph.service.shaping import measured
from hippograph.service.stores import Stores

# A summary of an entity is a fact about it with this tag, written by the caller's model
# (prompt summarize_entity): the profile shows the newest, apart from the other facts.
SUMMARY_TAG = "summary"
_MIN_BUDGET = 100  # room for the frame and a fact or two
_RELATED = 10  # most related entities listed


class Profiles:
    """profile: one entity's facts and their connections, within a token budget."""

    def __init__(self, stores: Stores, reader: Reader) -> None:
        self.stores = stores
        self._reader = reader

    def profile(self, name: str, scope: str | None = None, budget_tokens: int = 800) -> EntityProfileOut:
        if budget_tokens < _MIN_BUDGET:
            raise InvalidInput(
                f"budget_tokens must be at least {_MIN_BUDGET} (room for the frame and a fact), "
                f"got {budget_tokens}"
            )
        scope = check.scope(scope)
        entity = self._reader.entity(name, visible_scopes(scope))
        limit = self.stores.settings.max_limit
        about = partial(self._reader.search, entity.name, entity=entity.id, scope=scope, limit=limit)
        hits = about(detail=True).results
        summaries = about(detail=True, tags=[SUMMARY_TAG]).results
        hits = [hit for hit in hits if SUMMARY_TAG not in hit.tags]
        frame: dict[str, Any] = {"name": entity.name, "type": entity.type, "scope": entity.scope}
        if summaries:
            newest = max(summaries, key=lambda hit: (hit.created_at or "", hit.id))
            frame["summary"] = ProfileSummary(
                id=newest.id,
                content=newest.content,
                time=newest.created_at or newest.time,
                newer_facts=sum((hit.created_at or "") > (newest.created_at or "") for hit in hits),
            )
        count = self.stores.embedder.count_tokens
        kept = len(hits)
        while True:
            out = measured(_laid_out(frame, hits[:kept]), count)
            if out.tokens <= budget_tokens or kept == 0:
                return out
            # Keep the share of facts the budget holds of what they cost, at least one fewer.
            kept = min(kept - 1, kept * budget_tokens // out.tokens)


def _laid_out(frame: dict[str, Any], hits: Sequence[SearchHit]) -> EntityProfileOut:
    own = frame["name"].casefold()
    related = Counter(other for hit in hits for other in set(hit.entities) if other.casefold() != own)
    dated = sorted((hit.event_time, hit.id) for hit in hits if hit.event_time)
    return EntityProfileOut(
        **frame,
        facts=[ProfileFact(id=hit.id, content=hit.content, status=hit.status, time=hit.time) for hit in hits],
        related=[RelatedEntity(name=n, facts=c) for n, c in related.most_common(_RELATED)],
        timeline=[ProfileEvent(id=fid, time=time) for time, fid in dated],
        changed=[ProfileChange(id=hit.id, replaces=hit.replaces) for hit in hits if hit.replaces],
        contested=[
            ProfileContest(id=hit.id, contested_by=hit.contested_by) for hit in hits if hit.contested_by
        ],
        tokens=0,
    )
