"""Does search say "no confident match" for everyday questions memory never stored, and stay quiet
about questions it can answer? Sets of everyday memories written apart; the floor chosen
leave-one-memory-out.

    python -m bench.abstention [--tune bench/data/everyday_a.json] [--held-out FILE ...]

Each set holds several users' memories (``memories[].facts``), questions each answered by one
stored fact (``asked``) and everyday questions about things never stored (``never``). Every
memory is stored in its own scope of a fresh store; each question is searched with no gate,
recording the best result's relevance (cosine), the rank of the fact that answers it, and
whether the query names something nothing visible mentions.

Two rules say "no confident match" (``RetrievalPolicy``): a query that names something unknown
and whose best relevance is under ``min_relevance`` gets no results (chosen on LoCoMo:
bench/confidence.py); any other query whose best relevance is under ``confident_relevance``
keeps its results under that note, unless one of its top 3 holds every content word of the
query (``ranking.holds_query``). This bench chooses ``confident_relevance``: for each memory
of the tuning set, the highest floor that puts the note on at most 10% of the other memories'
answered questions (answer in the top 3), scored on the memory held out. The held-out sets are
scored with the floor chosen on the whole tuning set and with the product's default.
Results: bench/results/abstention.{md,json}.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench.locomo.cli import load_embedder
from bench.locomo.data import REPO
from bench.locomo.ours import open_store
from hippograph.config import DEFAULT_MODEL
from hippograph.retrieval.policy import RetrievalPolicy
from hippograph.retrieval.ranking import holds_query
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder

DATA = REPO / "bench" / "data"
FLOORS = [round(0.2 + 0.01 * i, 2) for i in range(41)]
TOP = 3
# A floor may put the note on at most this share of answered questions (answer in the top 3).
MAX_FALSE_NOTES = 0.10


@dataclass
class Asked:
    set: str
    scope: str
    question: str
    stored: bool  # asked about a stored fact (else about something never stored)
    best: float  # the best result's relevance, with no gate
    rank: int | None  # the answering fact's rank in the top 10 (stored questions), 1-based
    names_unknown: bool  # the query names something nothing visible mentions
    holds: bool = False  # one of the top 3 holds every content word of the query (never noted)


@dataclass(frozen=True)
class Figures:
    found: float  # answered questions with the answer in the top 3, after the gates
    false_notes: float  # answered questions (answer in the top 3) told "no confident match"
    abstained: float  # never-stored questions told "no confident match"


def _ask_all(memory: Memory, name: str, scope: str, spec: dict[str, Any]) -> list[Asked]:
    stored = memory.remember_many([{"content": text, "scope": scope} for text in spec["facts"]])
    ids = [out.id for out in stored]
    rows = [_ask(memory, name, scope, item["q"], ids[item["fact"]]) for item in spec["asked"]]
    return rows + [_ask(memory, name, scope, question, None) for question in spec["never"]]


def _ask(memory: Memory, name: str, scope: str, question: str, answer: str | None) -> Asked:
    retriever = memory.retriever
    base = retriever.policy
    retriever.policy = dataclasses.replace(base, min_relevance=0.0, confident_relevance=0.0)
    hits = memory.search(question, limit=10, scope=scope).results
    retriever.policy = dataclasses.replace(base, min_relevance=2.0)  # fires whenever a name is unknown
    names_unknown = not memory.search(question, limit=10, scope=scope).results
    retriever.policy = base
    ids = [h.id for h in hits]
    rank = ids.index(answer) + 1 if answer in ids else None
    best = max((h.relevance for h in hits), default=0.0)
    holds = holds_query(question, [SimpleNamespace(fact=h) for h in hits])  # type: ignore[arg-type]
    return Asked(name, scope, question, answer is not None, best, rank, names_unknown, holds)


def figures(rows: Sequence[Asked], floor: float, policy: RetrievalPolicy) -> Figures:
    """The two rules at ``floor`` (``confident_relevance``) and the policy's ``min_relevance``."""

    def dropped(r: Asked) -> bool:
        return r.names_unknown and r.best < policy.min_relevance

    def noted(r: Asked) -> bool:
        return dropped(r) or (r.best < floor and not r.holds)

    answered = [r for r in rows if r.stored and r.rank is not None and r.rank <= TOP]
    never = [r for r in rows if not r.stored]
    return Figures(
        found=sum(not dropped(r) for r in answered) / len([r for r in rows if r.stored]),
        false_notes=sum(noted(r) for r in answered) / len(answered),
        abstained=sum(noted(r) for r in never) / len(never),
    )


def choose_floor(rows: Sequence[Asked], policy: RetrievalPolicy) -> float:
    """The highest floor that tells at most ``MAX_FALSE_NOTES`` of answered questions "no confident match"."""
    fits = [f for f in FLOORS if figures(rows, f, policy).false_notes <= MAX_FALSE_NOTES]
    return max(fits, default=FLOORS[0])


def _memories(spec: dict[str, Any], name: str) -> dict[str, Any]:
    """A set as ``{"memories": [...]}``; a one-memory set (``facts``, ``stored``, ``never_stored``)
    becomes one memory in scope ``name``."""
    if "memories" in spec:
        return spec
    asked = [{"q": item["question"], "fact": item["fact"]} for item in spec["stored"]]
    one = {"scope": name, "facts": spec["facts"], "asked": asked, "never": spec["never_stored"]}
    return {"memories": [one]}


def _collect(path: Path, models_dir: Path, embedder: FastEmbedder, tmp: Path) -> list[Asked]:
    spec = _memories(json.loads(path.read_text(encoding="utf-8")), path.stem)
    memory = open_store(Path(tempfile.mkdtemp(dir=tmp)), models_dir, DEFAULT_MODEL, embedder)
    # No gate: the bench sees every question's best result and applies the floors itself.
    memory.retriever.policy = dataclasses.replace(memory.retriever.policy, min_relevance=0.0)
    rows: list[Asked] = []
    try:
        for item in spec["memories"]:
            rows += _ask_all(memory, path.stem, f"project:{item['scope']}", item)
            print(f"{path.name} {item['scope']}: asked", file=sys.stderr)
    finally:
        memory.close()
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tune", type=Path, default=DATA / "everyday_a.json")
    held_out = [DATA / "everyday_b.json", DATA / "everyday_questions.json"]
    parser.add_argument("--held-out", type=Path, nargs="+", default=held_out)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    embedder, models_dir = load_embedder(DEFAULT_MODEL, None)
    with tempfile.TemporaryDirectory(prefix="hippograph-abstention-") as tmp:
        tune = _collect(args.tune, models_dir, embedder, Path(tmp))
        held = [row for path in args.held_out for row in _collect(path, models_dir, embedder, Path(tmp))]
    policy = RetrievalPolicy()
    table = []
    for scope in dict.fromkeys(r.scope for r in tune):
        floor = choose_floor([r for r in tune if r.scope != scope] or tune, policy)  # one memory: itself
        table.append((scope, floor, figures([r for r in tune if r.scope == scope], floor, policy)))
    chosen = choose_floor(tune, policy)
    default = policy.confident_relevance
    scored = [("chosen on the tuning set", chosen), ("the default", default)]
    lines = [
        "# No confident match for everyday questions",
        "",
        f"- date: {datetime.now(UTC).isoformat(timespec='seconds')}; tuning set {args.tune.name}; held out "
        f"{', '.join(p.name for p in args.held_out)} (written apart, never tuned on)",
        f"- a query naming something unknown, best relevance under {policy.min_relevance:.2f}: no results; "
        "any other query with its best relevance (cosine) under the floor: results kept under the note",
        f"- floor: the highest that notes at most {MAX_FALSE_NOTES:.0%} of the answered questions "
        f"(answer in the top {TOP}) of the memories it is chosen on",
        "",
        f"| held out | floor (chosen on the others) | answer in top {TOP} | answered but noted "
        "| never stored: no confident match |",
        "|---|---|---|---|---|",
        *(
            f"| {s} | {f:.2f} | {x.found:.1%} | {x.false_notes:.1%} | {x.abstained:.1%} |"
            for s, f, x in table
        ),
        "",
        f"| held-out sets ({len(held)} questions) | floor | answer in top {TOP} | answered but noted "
        "| never stored: no confident match |",
        "|---|---|---|---|---|",
        *(
            f"| {len({r.scope for r in held})} memories | {f:.2f} ({how}) | {x.found:.1%} | "
            f"{x.false_notes:.1%} | {x.abstained:.1%} |"
            for how, f in scored
            for x in [figures(held, f, policy)]
        ),
        "",
        "With no floor (names rule only) on the held-out sets: "
        f"{figures(held, 0.0, policy).abstained:.1%} of never-stored questions get the note.",
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "abstention.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = [dataclasses.asdict(r) for r in tune + held]
    folds = [(s, f, dataclasses.asdict(x)) for s, f, x in table]
    (args.out / "abstention.json").write_text(
        json.dumps({"folds": folds, "chosen": chosen, "rows": rows}), encoding="utf-8"
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
