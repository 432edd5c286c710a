"""recall at the overview granularity: storylines and topics, one line each, to drill into.

Where ``recall`` shows facts, the overview shows what they belong to: the storylines of the
entities the best facts are about (an entity's facts on three days or more, in event order, cut
where a month or more passes between two of them) and the topics holding the best facts (found
by ``consolidate``). Each line has its span, its count and the address to read more
(``memory://entity/...``, ``memory://topic/...``); only facts the question matches with
confidence count, the lines it matches best come first, and those that do not fit
``budget_tokens`` are left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import quote

from hippograph.domain import validation as check
from hippograph.domain.bitemporal import fact_time
from hippograph.domain.models import ACTIVE_STATUSES, RecallOut, SearchHit
from hippograph.domain.visibility import visible_scopes
from hippograph.retrieval.retriever import NEAREST, NO_CONFIDENT_MATCH
from hippograph.service.reads import Reader
from hippograph.service.shaping import measured
from hippograph.service.stores import Stores

# A storyline: an entity's facts on at least this many days, a stretch of it split off where this
# much time passes between two facts (Cosmo's storylines: 5+ sources on 3+ days).
STORY_DAYS = 3
STORY_FACTS = 5
STORY_GAP = timedelta(days=30)
_HITS = 50  # best facts the overview is drawn from
_STORY_ENTITIES = 5  # entities whose storylines are looked for, the most relevant first
_ENTITY_FACTS = 500  # an entity's newest facts a storyline is drawn from
NO_LINES = (
    "no storyline or topic holds facts that match this with confidence: recall with "
    "granularity='facts' shows the nearest facts"
)


@dataclass(frozen=True)
class _Line:
    score: float
    text: str


class Overviews:
    """recall(granularity="overview")."""

    def __init__(self, stores: Stores, reader: Reader) -> None:
        self.stores = stores
        self._reader = reader

    def overview(
        self, context: str, *, budget_tokens: int | None = None, scope: str | None = None
    ) -> RecallOut:
        budget = self._reader.budget(budget_tokens)
        found = self._reader.search(context, limit=_HITS, scope=scope, detail=True)
        # What a storyline or topic is drawn from: facts the question matches with confidence.
        floor = self.stores.retriever.policy.confident_relevance
        hits = [hit for hit in found.results if hit.relevance >= floor]
        lines = sorted(
            [*self._storylines(hits, check.scope(scope)), *self._topics(hits, check.scope(scope))],
            key=lambda line: -line.score,
        )
        notes = found.notes
        if not lines:  # the search's "these are the nearest facts" would name facts not shown
            notes = [n for n in notes if not n.startswith(NO_CONFIDENT_MATCH) or NEAREST not in n]
            notes += [NO_LINES] if found.results else []
        count = self.stores.embedder.count_tokens
        kept = len(lines)
        while True:
            text = "\n".join(line.text for line in lines[:kept])
            out = measured(RecallOut(narrative=text, tokens=0, warnings=found.warnings, notes=notes), count)
            if out.tokens <= budget or kept == 0:
                return out
            kept -= 1

    def _topics(self, hits: Sequence[SearchHit], scope: str) -> list[_Line]:
        """The topics holding the best facts, scored by the ranks of the facts they hold."""
        topic_of = self.stores.topics.topic_of([h.id for h in hits])
        score: dict[str, float] = defaultdict(float)
        for rank, hit in enumerate(hits, 1):
            if hit.id in topic_of:
                score[topic_of[hit.id]] += 1 / rank
        lines = []
        for tid, value in score.items():
            row = self.stores.topics.get(tid)
            if row is None or row.scope not in visible_scopes(scope):
                continue
            span = _span(row.first, row.last)
            lines.append(
                _Line(value, f"- topic {row.label}: {row.size} facts, {span} (memory://topic/{tid})")
            )
        return lines

    def _storylines(self, hits: Sequence[SearchHit], scope: str) -> list[_Line]:
        """The storylines of the entities the best facts name, scored by those facts' ranks."""
        score: dict[str, float] = defaultdict(float)
        for rank, hit in enumerate(hits, 1):
            for name in hit.entities:
                score[name] += 1 / rank
        view = self.stores.graph.view(visible_scopes(scope))
        lines = []
        for name, value in sorted(score.items(), key=lambda kv: -kv[1])[:_STORY_ENTITIES]:
            entity = self.stores.entities.resolve(name, scope)
            if entity is None:
                continue
            ids = view.facts_about(entity.id, limit=_ENTITY_FACTS, statuses=ACTIVE_STATUSES)
            times = sorted(fact_time(f) for f in self.stores.graph.get_facts(ids).values())
            for stretch in _stretches(times):
                if len({t.date() for t in stretch}) >= STORY_DAYS and len(stretch) >= STORY_FACTS:
                    span = _span(stretch[0].isoformat(), stretch[-1].isoformat())
                    address = f"memory://entity/{quote(entity.name)}"
                    lines.append(
                        _Line(value, f"- storyline {entity.name}: {len(stretch)} facts, {span} ({address})")
                    )
        return lines


def _stretches(times: Sequence[datetime]) -> list[list[datetime]]:
    """``times`` (sorted) cut wherever ``STORY_GAP`` or more passes between two."""
    stretches: list[list[datetime]] = []
    for moment in times:
        if stretches and moment - stretches[-1][-1] < STORY_GAP:
            stretches[-1].append(moment)
        else:
            stretches.append([moment])
    return stretches


def _span(first: str, last: str) -> str:
    return first[:10] if first[:10] == last[:10] else f"{first[:10]} to {last[:10]}"
