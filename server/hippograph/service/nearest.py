"""The stored facts a new statement is nearest by meaning, and what the sameness rule says of each.

``remember`` asks before it plans a write: a restatement corroborates the fact it restates, a
likely conflict is shown to the caller, an exact denial is linked (``domain/sameness.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from hippograph.domain import sameness
from hippograph.domain.models import ACTIVE_STATUSES, Fact, FactKind, SimilarFact
from hippograph.service.stores import Stores
from hippograph.store.seam import Filter, unit

# Stored facts weighed against each new statement, how many of them its reply shows, and how
# much of each (a reply is read by a model: enough to judge a conflict, not a whole document).
NEAREST = 5
SHOWN = 3
SHOWN_CHARS = 200
UNSURE_NOTE = "reworded or changed?"
CHANGE_NOTE = "says something changed: does it replace this?"
REPEATED_NOTE = "same words, another day: stored as its own event"
DATED_CHANGE_NOTE = "dated another day, a value differs: changed since, or another event?"

Judged = tuple[Fact, sameness.Judgement, float]
# Verdicts that say nothing of a change: the nearest fact to a statement reporting one gets
# CHANGE_REPORTED in their place.
_UNFLAGGED = frozenset({sameness.Verdict.UNRELATED, sameness.Verdict.SIMILAR})
# ... if at least this close: on bench/data/update_pairs_dev.jsonl every earlier fact the rule
# showed was 0.346-0.732 from its change, the nearest fact to a change of something else
# 0.189-0.363; the highest multiple of 0.05 under every one of the first (bench/updates.py
# scores it on the held-out pairs).
CHANGE_SIMILARITY = 0.3


def nearest_stored(stores: Stores, facts: Sequence[Fact], vectors: np.ndarray) -> list[dict[str, float]]:
    """For each fact, the stored active facts of its scope nearest it (id -> similarity), found
    for all the facts of a scope in one query. Conversation turns are events: not compared."""
    near: list[dict[str, float]] = [{} for _ in facts]
    for scope in sorted({f.scope for f in facts if f.kind is not FactKind.EPISODE}):
        which = [i for i, f in enumerate(facts) if f.scope == scope and f.kind is not FactKind.EPISODE]
        where = Filter(statuses=ACTIVE_STATUSES, scopes=[scope])
        for i, hits in zip(
            which, stores.vectors.nearest("facts", vectors[which], NEAREST, where), strict=True
        ):
            near[i] = {h.id: h.score for h in hits}
    return near


def judge_nearest(
    stores: Stores,
    fact: Fact,
    vector: np.ndarray,
    near: Mapping[str, float],
    states: Mapping[str, Fact],
    written: Sequence[tuple[Fact, np.ndarray]],
) -> list[Judged]:
    """The active facts of the fact's scope nearest it, each with the sameness rule's judgement,
    nearest first, unrelated ones left out: of ``near`` (stored ones, ``nearest_stored``) and of
    ``written`` (earlier facts of its write batch, with their vectors as the index holds them),
    in their state after the batch so far (``states``)."""
    if fact.kind is FactKind.EPISODE:
        return []
    hits = dict(near)
    query = unit(vector)
    for other, stored in written:
        if other.scope == fact.scope and other.kind is not FactKind.EPISODE:
            hits[other.id] = float(stored @ query)
    ranked = sorted(hits.items(), key=lambda kv: (-kv[1], kv[0]))[:NEAREST]
    in_batch = {w.id: w for w, _ in written}
    found = stores.graph.get_facts([fid for fid, _ in ranked if fid not in in_batch])
    # A statement that reports a change is shown the stored fact nearest it, even far: what it
    # replaces ("I live in Paris" for "I moved to Berlin", 0.40) is nearest more often than close.
    reported = sameness.says_changed(fact.content)
    judged = []
    for fid, similarity in ranked:
        old = states.get(fid) or in_batch.get(fid) or found.get(fid)
        if old is None or not old.status.is_active or old.scope != fact.scope:
            continue
        judgement = sameness.judge(fact, old, similarity)
        if reported and judgement.verdict in _UNFLAGGED and similarity >= CHANGE_SIMILARITY:
            judgement = sameness.Judgement(sameness.Verdict.CHANGE_REPORTED)
        reported = False  # the nearest only
        if judgement.verdict is not sameness.Verdict.UNRELATED:
            judged.append((old, judgement, similarity))
    return judged


_NOTES = {
    sameness.Verdict.UNSURE: UNSURE_NOTE,
    sameness.Verdict.CHANGE_REPORTED: CHANGE_NOTE,
    sameness.Verdict.REPEATED: REPEATED_NOTE,
    sameness.Verdict.DATED_CHANGE: DATED_CHANGE_NOTE,
}


def shown(old: Fact, judgement: sameness.Judgement, similarity: float) -> SimilarFact:
    """A near fact as the remember reply shows it, labelled only as far as the rule has evidence."""
    verdict = judgement.verdict
    flagged = verdict in (sameness.Verdict.CONFLICT, sameness.Verdict.CONTRADICTS)
    return SimilarFact(
        id=old.id,
        content=old.content if len(old.content) <= SHOWN_CHARS else old.content[: SHOWN_CHARS - 1] + "…",
        similarity=round(similarity, 3),
        conflict=judgement.difference.value if flagged and judgement.difference else None,
        restates=verdict is sameness.Verdict.SAME,
        note=_NOTES.get(verdict),
    )
