"""review: what memory proposes its caller looks at; it changes nothing itself.

Five kinds, from what the stores hold: conflicts (two active facts linked CONTRADICTS, or that
consolidation found near each other and the sameness rule says differ in a number, name,
negation or order: evidence of a changed value); duplicates (near pairs the rule says restate each
other, or the same words dated on two days, which the write rule did not merge); pairs to compare
(about the same thing in other words: the rule cannot tell a rewording from a changed value, the
caller can); weak facts (staged ones stated with little confidence, or that turn dormant within
``_SOON`` unless used); and gaps (questions that got "no confident match", ``gap_log``). The
caller decides with ``correct``, ``forget``, ``confirm`` and ``remember``; the prompt
``tidy_memory`` walks a model through the queue.

A pair to compare that is one sentence with one slot filled differently quotes the slot: that
shape held 38 of the 39 changed values the rule left unsure on the project's labelled pairs
(bench/data/duplicate_pairs.jsonl), but also 9 of its 30 unsure restatements ("is called" /
"is named"), so it is no evidence of a conflict. The same sentence of another holder (the slot
opens it: "Ken lives in Osaka" / "Yuki lives in Osaka") is no pair to look at.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from hippograph.domain import lifecycle as lc
from hippograph.domain import sameness
from hippograph.domain import validation as check
from hippograph.domain.errors import InvalidInput
from hippograph.domain.models import ACTIVE_STATUSES, EdgeType, Fact, FactStatus, Source
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


# Near pairs of active facts the rule has evidence restate each other: the same statement in
# other words; the same words on two days.
_DUPLICATE_WHY = {
    sameness.Verdict.SAME: "the same in other words",
    sameness.Verdict.REPEATED: "the same words dated on two days: one fact, or two events?",
}
_COMPARE_SUGGESTED = (
    "ask the user: reworded, forget {copy} (reason: restates {kept}); changed, forget {old}; "
    "both hold, leave both"
)


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
        if {ReviewKind.CONFLICT, ReviewKind.COMPARE, ReviewKind.DUPLICATE} & set(wanted):
            items += [item for item in self._pairs(scopes, limit) if item.kind in wanted]
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

    def _pairs(self, scopes: Sequence[str], limit: int) -> list[ReviewItem]:
        """Conflicts, then pairs to compare, then duplicates."""
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
        compare, duplicates = [], []
        for a, b, similarity in near:
            old, new = sorted((facts.get(a), facts.get(b)), key=_created)
            if old is None or new is None or not (old.status.is_active and new.status.is_active):
                continue
            if frozenset((a, b)) in listed:
                continue
            judged = sameness.judge(new, old, similarity)
            if judged.verdict is sameness.Verdict.CONFLICT and judged.difference is not None:
                conflicts.append(_conflict(old, new, f"differ in {judged.difference.value}"))
            elif judged.verdict is sameness.Verdict.UNSURE:
                if not sameness.same_subject(old.content, new.content) or sameness.another_holder(
                    old.content, new.content
                ):
                    continue  # another holder ("Carmen is on call" / "Dmitri ..."): both may hold
                compare.append(_compare(old, new, similarity))
            elif judged.verdict in _DUPLICATE_WHY:
                duplicates.append(
                    ReviewItem(
                        kind=ReviewKind.DUPLICATE,
                        fact_ids=[old.id, new.id],
                        why=f"{_DUPLICATE_WHY[judged.verdict]} (similarity {similarity:.2f})",
                        suggested="if so, forget {copy} (reason: restates {kept}); else leave both".format(
                            **_kept(old, new)
                        ),
                    )
                )
        return conflicts + compare + duplicates

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


def _kept(old: Fact, new: Fact) -> dict[str, str]:
    """Of two facts that say the same, the one to keep (``kept``) and the copy: the older, unless
    only the newer is the user's own correction."""
    if new.source is Source.USER_EDIT and old.source is not Source.USER_EDIT:
        return {"kept": new.id, "copy": old.id}
    return {"kept": old.id, "copy": new.id}


def _compare(old: Fact, new: Fact, similarity: float) -> ReviewItem:
    slot = sameness.slot_change(old.content, new.content)
    if slot is None:
        why = f"other words about the same: reworded, or a changed value? (similarity {similarity:.2f})"
    else:
        was, now = (" ".join(words) for words in slot)
        why = f'one slot differs, "{was}" then "{now}": reworded, or a changed value?'
    suggested = _COMPARE_SUGGESTED.format(old=old.id, **_kept(old, new))
    return ReviewItem(kind=ReviewKind.COMPARE, fact_ids=[old.id, new.id], why=why, suggested=suggested)


def _conflict(old: Fact, new: Fact, why: str) -> ReviewItem:
    return ReviewItem(
        kind=ReviewKind.CONFLICT,
        fact_ids=[old.id, new.id],
        why=why,
        suggested=f"ask the user which holds; correct or forget the other (older: {old.id})",
    )
