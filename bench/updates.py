"""Does the reply to a statement that reports a change list the earlier fact it changes?

    python -m bench.updates       # prints the table, writes bench/results/updates.md

"I moved to Berlin last month" after "I live in Paris": the two share few words (similarity
0.40), so the closeness rules of ``remember`` (``domain/sameness.py``) do not list the earlier
fact, and the caller never hears that a value it stored has changed. A statement that reports a
change (``sameness.says_changed``) is shown the stored fact nearest it from a similarity of
``nearest.CHANGE_SIMILARITY`` (0.3) up, with the note "says something changed: does it replace
this?".

Each pair is remembered through the service in a fresh scope that already holds 30 other facts
of the same user and team (``bench/data/update_fillers.json``), so the earlier fact must be the
nearest among them: first ``a``, then ``b``. ``update`` pairs: ``b`` reports that ``a`` changed;
listing ``a`` is right. ``unrelated`` pairs: ``b`` reports a change of something else; listing
``a`` is noise (one line the caller dismisses). Every pair is run twice in one run, with the rule
and with it switched off, side by side.

Two sets: ``bench/data/update_pairs_dev.jsonl`` (written with the rule) and
``bench/data/update_pairs_heldout.jsonl`` (written by someone else; read only as totals).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.service import add_models_dir, temporary_memory
from hippograph.domain import sameness
from hippograph.domain.models import RememberOut
from hippograph.service.memory import Memory
from hippograph.service.nearest import CHANGE_NOTE

HERE = Path(__file__).resolve().parent
SETS = {
    "dev": HERE / "data" / "update_pairs_dev.jsonl",
    "held out": HERE / "data" / "update_pairs_heldout.jsonl",
}
FILLERS = HERE / "data" / "update_fillers.json"
# What a reply said of ``a``, in the table's order.
SAID = ("conflict", "change note", "other note", "restates", "listed, no label", "merged", "not listed")


def outcome(memory: Memory, fillers: list[str], a: str, b: str, scope: str) -> tuple[str, bool]:
    """What the reply to ``b`` says of ``a``, in a scope holding ``fillers`` first; and whether it
    shows any fact with the change note."""
    memory.remember_many([{"content": text, "scope": scope} for text in fillers])
    first = memory.remember(a, scope=scope)
    reply = memory.remember(b, scope=scope)
    return _said(reply, first.id), any(s.note == CHANGE_NOTE for s in reply.similar)


def _said(reply: RememberOut, earlier: str) -> str:
    if reply.corroborated and reply.id == earlier:
        return "merged"
    listed = next((s for s in reply.similar if s.id == earlier), None)
    if listed is None:
        return "not listed"
    if listed.conflict:
        return "conflict"
    if listed.restates:
        return "restates"
    if listed.note:
        return "change note" if listed.note == CHANGE_NOTE else "other note"
    return "listed, no label"


@contextmanager
def rule(on: bool) -> Iterator[None]:
    """The change rule as shipped, or switched off (no statement reports a change)."""
    shipped = sameness.says_changed
    if not on:
        sameness.says_changed = lambda text: False  # type: ignore[assignment]
    try:
        yield
    finally:
        sameness.says_changed = shipped  # type: ignore[assignment]


def run(memory: Memory, path: Path, fillers: list[str], *, on: bool) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {"update": Counter(), "unrelated": Counter()}
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    with rule(on):
        for i, row in enumerate(rows):
            scope = f"project:{path.stem}-{'on' if on else 'off'}-{i}"
            said, noted = outcome(memory, fillers, row["a"], row["b"], scope)
            counts[row["label"]][said] += 1
            counts[row["label"]]["change note shown"] += noted
            counts[row["label"]]["pairs"] += 1
    return counts


def table(results: dict[tuple[str, bool], dict[str, Counter[str]]]) -> str:
    out = [
        "# Remember's reply to a statement that reports a change",
        "",
        "| set | rule | updates: earlier fact listed | updates: labelled conflict | "
        "updates: labelled restates or merged | unrelated: earlier fact listed | "
        "unrelated: some fact shown with the change note |",
        "|---|---|---|---|---|---|---|",
    ]
    for (name, on), counts in results.items():
        u, x = counts["update"], counts["unrelated"]
        listed = u["pairs"] - u["not listed"] - u["merged"]
        noise = x["pairs"] - x["not listed"] - x["merged"]
        out.append(
            f"| {name} | {'on' if on else 'off'} | {listed}/{u['pairs']} | {u['conflict']}/{u['pairs']} | "
            f"{u['restates'] + u['merged']}/{u['pairs']} | {noise}/{x['pairs']} | "
            f"{x['change note shown']}/{x['pairs']} |"
        )
    out += ["", "What each reply said of the earlier fact (pairs):", ""]
    out += ["| set | rule | pairs | " + " | ".join(SAID) + " |", "|---|---|---|" + "---|" * len(SAID)]
    for (name, on), counts in results.items():
        for label, x in counts.items():
            cells = " | ".join(str(x[k]) for k in SAID)
            out.append(f"| {name} | {'on' if on else 'off'} | {label} ({x['pairs']}) | {cells} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_models_dir(parser)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "updates.md")
    args = parser.parse_args()
    fillers = json.loads(FILLERS.read_text("utf-8"))["facts"]
    results = {}
    with temporary_memory(args.models_dir) as memory:
        for name, path in SETS.items():
            for on in (False, True):
                results[name, on] = run(memory, path, fillers, on=on)
    text = table(results)
    print(text)
    args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
