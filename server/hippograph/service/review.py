"""review: what memory proposes its caller looks at; it changes nothing itself.

Four kinds, from what the stores hold: conflicts (two active facts linked CONTRADICTS, or that
consolidation found near each other and the sameness rule says differ in a value, or that are
one sentence with one slot filled differently); duplicates (near pairs the rule says restate
each other in other words, which the write rule did not merge); weak facts (staged ones stated with
little confidence, or that turn dormant within ``_SOON`` unless used); and gaps (questions that
got "no confident match", ``gap_log``). The caller decides with ``correct``, ``forget``,
``confirm`` and ``remember``; the prompt ``tidy_memory`` walks a model through the queue.

Where only other words differ (the rule is unsure), the shape of the difference decides: one
slot of one sentence filled differently ("the bike is green" / "... orange") is listed as a
conflict, anything else as a duplicate. On the project's labelled pairs
(bench/data/duplicate_pairs.jsonl) that shape held 38 of the 39 changed values the rule left
unsure, and 9 of its 30 unsure restatements.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from hippograph.domain import lifecycle as lc
from hippograph.domain import sameness
from hippograph.domain import validation as check
from hippograph.domain.errors import InvalidInput
from hippograph.domain.models import ACTIVE_STATUSES, EdgeType, Fact, FactStatus
from hippograph.domain.review_replies import ReviewItem, ReviewKind, ReviewOut
from hippograph.domain.visibility import visible_scopes
from hippograph.service.shaping import iso
from hippograph.service.stores import Stores

# A fact that turns dormant within this long unless used is weak; so is one stated this unsure.
_SOON = timedelta(days=7)
_UNSURE = 0.5
_PAIRS = 500  # nearest pairs judged, the nearest first
_WEAK_SCANNED = 2000  # oldest staged facts looked at for weakness
_MAX_LIMIT = 100


# What a near pair of active facts may be, by the sameness rule's verdict: the same statement in
# other words; other words it cannot read (a synonym or a new value); the same words on two days.
_DUPLICATE_WHY = {
    sameness.Verdict.SAME: "the same in other words",
    sameness.Verdict.UNSURE: "maybe the same in other words, maybe a changed value",
    sameness.Verdict.REPEATED: "the same words dated on two days: one fact, or two events?",
}


class Reviewer:
    """review over the shared stores."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    def review(
        self, scope: str | None = None, kinds: Sequence[str] | None = None, limit: int = 20
    ) -> ReviewOut:
        scopes = visible_scopes(check.scope(scope))
        wanted = check.choices(kinds, ReviewKind, "kinds", ReviewKind.CONFLICT) or [
            k.value for k in ReviewKind
        ]
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= _MAX_LIMIT:
            raise InvalidInput(f"limit must be a whole number from 1 to {_MAX_LIMIT}")
        items: list[ReviewItem] = []
        if ReviewKind.CONFLICT in wanted or ReviewKind.DUPLICATE in wanted:
            conflicts, duplicates = self._pairs(scopes, limit)
            items += conflicts if ReviewKind.CONFLICT in wanted else []
            items += duplicates if ReviewKind.DUPLICATE in wanted else []
        if ReviewKind.WEAK in wanted:
            items += self._weak(scopes, limit)
        if ReviewKind.GAP in wanted:
            items += [
                ReviewItem(
                    kind=ReviewKind.GAP,
                    fact_ids=[],
                    why=f'asked {gap.asked}x, last {gap.last[:10]}, no confident match: "{gap.question}"',
                    suggested="ask the user, and remember the answer",
                )
                for gap in self.stores.gaps.gaps(scopes, limit=limit)
            ]
        return ReviewOut(items=items[:limit])

    def _pairs(self, scopes: Sequence[str], limit: int) -> tuple[list[ReviewItem], list[ReviewItem]]:
        view = self.stores.graph.view(scopes)
        linked = view.linked(EdgeType.CONTRADICTS, ACTIVE_STATUSES, limit=limit)
        near = self.stores.topics.near_pairs(scopes, limit=_PAIRS)
        ends = {fid for pair in linked for fid in pair} | {fid for a, b, _ in near for fid in (a, b)}
        facts = self.stores.graph.get_facts(sorted(ends))
        conflicts = [
            _conflict(old, new, "one denies the other")
            for old, new in (
                sorted((facts[a], facts[b]), key=_created) for a, b in linked if a in facts and b in facts
            )
        ]
        listed = {frozenset(pair) for pair in linked}
        duplicates = []
        for a, b, similarity in near:
            old, new = sorted((facts.get(a), facts.get(b)), key=_created)
            if old is None or new is None or not (old.status.is_active and new.status.is_active):
                continue
            if frozenset((a, b)) in listed:
                continue
            judged = sameness.judge(new, old, similarity)
            slot = sameness.slot_change(old.content, new.content)
            if judged.verdict is sameness.Verdict.CONFLICT and judged.difference is not None:
                conflicts.append(_conflict(old, new, f"differ in {judged.difference.value}"))
            elif judged.verdict is sameness.Verdict.UNSURE and slot is not None:
                if not sameness.same_subject(old.content, new.content):
                    continue  # another holder of the slot ("Carmen is on call" / "Dmitri ..."): both may hold
                was, now = (" ".join(words) for words in slot)
                conflicts.append(_conflict(old, new, f'one value differs: "{was}", then "{now}"'))
            elif judged.verdict in _DUPLICATE_WHY:
                duplicates.append(
                    ReviewItem(
                        kind=ReviewKind.DUPLICATE,
                        fact_ids=[old.id, new.id],
                        why=f"{_DUPLICATE_WHY[judged.verdict]} (similarity {similarity:.2f})",
                        suggested=f"if so, forget {new.id} (reason: restates {old.id}); else leave both",
                    )
                )
        return conflicts, duplicates

    def _weak(self, scopes: Sequence[str], limit: int) -> list[ReviewItem]:
        now = self.stores.clock()
        staged = self.stores.graph.view(scopes).oldest([FactStatus.STAGED.value], limit=_WEAK_SCANNED)
        items = []
        for fact in self.stores.graph.get_facts(staged).values():
            if fact.confidence < _UNSURE:
                why = f"stated with confidence {fact.confidence:.2f}"
            elif lc.is_faded(fact, now + _SOON, self.stores.policy):
                why = f"turns dormant by {(iso(now + _SOON) or '')[:10]} unless used"
            else:
                continue
            items.append(
                ReviewItem(
                    kind=ReviewKind.WEAK,
                    fact_ids=[fact.id],
                    why=why,
                    suggested=f"confirm {fact.id} if it still holds, forget it if not",
                )
            )
            if len(items) >= limit:
                break
        return items


def _created(fact: Fact | None) -> tuple[str, str]:
    return (iso(fact.created_at) or "", fact.id) if fact is not None else ("", "")


def _conflict(old: Fact, new: Fact, why: str) -> ReviewItem:
    return ReviewItem(
        kind=ReviewKind.CONFLICT,
        fact_ids=[old.id, new.id],
        why=why,
        suggested=f"ask the user which holds; correct or forget the other (older: {old.id})",
    )
