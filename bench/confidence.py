"""Does search know when it knows nothing? Each LoCoMo dev conversation asked its own questions and
the next conversation's (about people and events it never stored); the floors chosen leave-one-out.
Then a held-out everyday set: 50 facts in one scope, 25 questions they answer, 25 they do not.

    python -m bench.confidence [--conversations N] [--limit-questions N]

For every question it records the best result's relevance (cosine), whether the query names
something no visible fact or entity mentions, and R@10 on the conversation's own questions.
The gate "no confident match" fires when a name is unknown and the best relevance is below the
floor (``RetrievalPolicy.min_relevance``). A second gate fires for a query that names nothing
when its best relevance is below ``abstain_relevance``; its floor is chosen as if it applied to
every question (names or not: a conservative calibration, since the relevance means the same for
every query), the highest that costs the other conversations at most MAX_LOSS R@10 beyond the
name gate. For each conversation both floors are chosen on the others and scored on it; the
product's default floors are scored on all. Results: bench/results/confidence.{md,json}.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.locomo.cli import load_embedder
from bench.locomo.data import DEFAULT_DATA, REPO, Question, load_dataset
from bench.locomo.ours import ingest, open_store
from bench.locomo.scoring import TOP_K
from hippograph.config import DEFAULT_MODEL
from hippograph.retrieval.policy import RetrievalPolicy
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from hippograph.text.query_intent import plan

EVERYDAY = REPO / "bench" / "data" / "everyday_questions.json"

FLOORS = [round(0.2 + 0.01 * i, 2) for i in range(61)]
# The floor is the highest that costs the conversations it is chosen on at most this much R@10.
# Half the 0.01 the issue allows: on held-out conversations the cost ran up to 1.5x the cost on
# the ones the floor was chosen on (first run, at 0.01: held-out costs 0.006-0.015).
MAX_LOSS = 0.005


@dataclass
class Asked:
    conv: str
    own: bool
    best: float  # the best result's relevance, with no gate
    unknown: bool  # the query names something nothing visible mentions
    recall: float  # R@10 with no gate (own questions)
    named: bool = False  # the query writes a name (the second gate is for queries that name nothing)


def _ask(memory: Memory, question: Question, fact_to_turn: dict[str, str], conv: str, own: bool) -> Asked:
    retriever = memory.retriever
    base = retriever.policy
    retriever.policy = dataclasses.replace(base, min_relevance=0.0, abstain_relevance=0.0)
    hits = memory.search(question.text, limit=TOP_K).results
    # Fires whenever a name is unknown.
    retriever.policy = dataclasses.replace(base, min_relevance=2.0, abstain_relevance=0.0)
    gated = not memory.search(question.text, limit=TOP_K).results
    retriever.policy = base
    gold = set(question.evidence)
    found = sum(fact_to_turn.get(h.id) in gold for h in hits)
    named = bool(plan(question.text, datetime.now(UTC)).capitalized)
    best = max((h.relevance for h in hits), default=0.0)
    return Asked(conv, own, best, gated, found / len(gold) if own else 0, named)


def _figures(
    rows: Sequence[Asked], floor: float, score_floor: float = 0.0, *, everyone: bool = False
) -> tuple[float, float, float]:
    """(R@10 without the gates, R@10 with them, share of foreign questions with no confident
    match). ``everyone``: the second gate as if every query named nothing (to choose its floor)."""
    own = [r for r in rows if r.own]
    foreign = [r for r in rows if not r.own]

    def fires(r: Asked) -> bool:
        return (r.unknown and r.best < floor) or ((everyone or not r.named) and r.best < score_floor)

    plain = sum(r.recall for r in own) / len(own)
    gated = sum(0 if fires(r) else r.recall for r in own) / len(own)
    return plain, gated, sum(map(fires, foreign)) / len(foreign)


def _choose(rows: Sequence[Asked]) -> tuple[float, float]:
    """The name floor (the highest costing ``rows`` at most MAX_LOSS R@10), then the score floor
    (the highest costing at most MAX_LOSS more, applied to every query)."""
    plain = _figures(rows, 0.0)[0]
    floor = max((f for f in FLOORS if plain - _figures(rows, f)[1] <= MAX_LOSS), default=FLOORS[0])
    named = _figures(rows, floor)[1]
    score_floors = [f for f in FLOORS if named - _figures(rows, floor, f, everyone=True)[1] <= MAX_LOSS]
    return floor, max(score_floors, default=FLOORS[0])


def _everyday(models_dir: Path, embedder: FastEmbedder) -> tuple[int, int, int, int]:
    """(stored questions answered in the top 3, stored questions, never-stored questions with no
    confident match, never-stored questions) on the held-out everyday set, with default floors."""
    data = json.loads(EVERYDAY.read_text("utf-8"))
    scope = "project:everyday"
    with (
        tempfile.TemporaryDirectory(prefix="hippograph-everyday-") as tmp,
        closing(open_store(Path(tmp), models_dir, DEFAULT_MODEL, embedder)) as memory,
    ):
        ids = [memory.remember(fact, scope=scope).id for fact in data["facts"]]
        found = 0
        for q in data["stored"]:
            found += ids[q["fact"]] in [h.id for h in memory.search(q["question"], scope=scope).results[:3]]
        abstained = sum(not memory.search(q, scope=scope).results for q in data["never_stored"])
    return found, len(data["stored"]), abstained, len(data["never_stored"])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--limit-questions", type=int, default=None)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    convs = load_dataset(args.data, args.conversations, args.limit_questions)
    embedder, models_dir = load_embedder(DEFAULT_MODEL, None)
    rows: list[Asked] = []
    with tempfile.TemporaryDirectory(prefix="hippograph-confidence-") as tmp:
        for i, conv in enumerate(convs):
            foreign = convs[(i + 1) % len(convs)]
            with closing(open_store(Path(tmp) / conv.conv_id, models_dir, DEFAULT_MODEL, embedder)) as memory:
                fact_to_turn = ingest(memory, conv)
                rows += [_ask(memory, q, fact_to_turn, conv.conv_id, True) for q in conv.questions]
                rows += [_ask(memory, q, fact_to_turn, conv.conv_id, False) for q in foreign.questions]
            asked = f"its {len(conv.questions)} questions and {len(foreign.questions)} of {foreign.conv_id}"
            print(f"{conv.conv_id}: asked {asked}", file=sys.stderr)
    table = []
    for conv in convs:
        held = [r for r in rows if r.conv == conv.conv_id]
        rest = [r for r in rows if r.conv != conv.conv_id] or held
        floor, score_floor = _choose(rest)
        table.append((conv.conv_id, floor, score_floor, *_figures(held, floor, score_floor)))
    policy = RetrievalPolicy()
    default, default_score = policy.min_relevance, policy.abstain_relevance
    overall = _figures(rows, default, default_score)
    on_all = _choose(rows)
    everyday = _everyday(models_dir, embedder)
    lines = [
        "# No confident match",
        "",
        f"- date: {datetime.now(UTC).isoformat(timespec='seconds')}; data: {args.data.name}; "
        f"{len(convs)} conversations, each asked its own questions and the next one's",
        "- gate: the query names something no visible fact or entity mentions, and the best result's "
        "relevance (cosine) is below the floor",
        "",
        "- second gate: the query names nothing, and the best result's relevance is below the score floor",
        "",
        "| held out | name floor, score floor (chosen on the others) | R@10 | R@10, gated | "
        "foreign: no confident match |",
        "|---|---|---|---|---|",
        *(f"| {c} | {f:.2f}, {sf:.2f} | {p:.3f} | {g:.3f} | {r:.1%} |" for c, f, sf, p, g, r in table),
        "",
        f"Default floors {default:.2f}, {default_score:.2f} on all: "
        f"R@10 {overall[0]:.3f} -> {overall[1]:.3f} "
        f"(cost {overall[0] - overall[1]:.3f}); foreign questions with no confident match {overall[2]:.1%}. "
        f"The rule, applied to all {len(convs)} conversations, chooses {on_all[0]:.2f}, {on_all[1]:.2f}.",
        "",
        "Held-out everyday set (bench/data/everyday_questions.json, default floors): 50 facts in one scope; "
        f"questions they answer found in the top 3: {everyday[0]}/{everyday[1]}; questions they do not "
        f"answer with no confident match: {everyday[2]}/{everyday[3]}.",
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "confidence.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (args.out / "confidence.json").write_text(
        json.dumps(
            {
                "folds": table,
                "default": [default, *overall],
                "chosen_on_all": on_all,
                "everyday": everyday,
                "rows": [dataclasses.asdict(r) for r in rows],
            }
        ),
        encoding="utf-8",
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
