"""What a remember reply says of the earlier fact a new statement restates or changes.

    python -m bench.labels        # prints the table, writes bench/results/labels.md

Each pair is remembered through the service as a client would (a fresh scope per pair, real
stores in a temporary data dir): first ``a``, then ``b``. The reply to ``b`` either merges it into
``a`` (corroborated), or lists ``a`` among ``similar`` with a label (``conflict``: evidence of a
changed value; ``restates``; the note "reworded or changed?") or with none, or does not list it.
Then, in another scope, ``a`` is remembered again and ``b`` sent with ``restates=<a's id>``: the
caller's say, which must corroborate.

Two sets: the development pairs of ``bench/data/duplicate_pairs.jsonl`` (``same``, ``conflict`` or
``different``; the rule's numbers were chosen on them) and ``bench/data/label_pairs_heldout.jsonl``
(``restates`` or ``changed``, written by someone other than the rule's author, read only as totals).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from bench.service import add_models_dir, temporary_memory
from hippograph.service.memory import Memory

HERE = Path(__file__).resolve().parent
SETS = {
    "dev": (HERE / "data" / "duplicate_pairs.jsonl", {"same": "restates", "conflict": "changed"}),
    "held out": (HERE / "data" / "label_pairs_heldout.jsonl", {"restates": "restates", "changed": "changed"}),
}


def outcome(memory: Memory, a: str, b: str, scope: str) -> tuple[str, bool]:
    """(what the reply to ``b`` says of ``a``, whether ``restates=a`` corroborates ``a``)."""
    first = memory.remember(a, scope=scope)
    reply = memory.remember(b, scope=scope)
    if reply.corroborated and reply.id == first.id:
        said = "merged"
    else:
        listed = next((s for s in reply.similar if s.id == first.id), None)
        if listed is None:
            said = "not listed"
        elif listed.conflict:
            said = "conflict"
        elif listed.restates:
            said = "restates"
        elif listed.note:
            said = "note"
        else:
            said = "listed, no label"
    again = memory.remember(a, scope=f"{scope}-caller")
    told = memory.remember(b, scope=f"{scope}-caller", restates=again.id)
    return said, told.corroborated and told.id == again.id


def run(memory: Memory, path: Path, labels: dict[str, str]) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {"restates": Counter(), "changed": Counter()}
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    for i, row in enumerate(rows):
        label = labels.get(row["label"])
        if label is None:
            continue
        said, corroborated = outcome(memory, row["a"], row["b"], f"project:{path.stem}-{i}")
        counts[label][said] += 1
        counts[label]["restates= corroborated"] += corroborated
        counts[label]["pairs"] += 1
    return counts


def table(results: dict[str, dict[str, Counter[str]]]) -> str:
    out = [
        "# Remember's labels for an earlier fact a statement restates or changes",
        "",
        "| set | pairs | earlier fact listed or merged | restatements labelled conflict | "
        "changes labelled conflict | changes merged or labelled restates | restates= corroborated |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, counts in results.items():
        r, c = counts["restates"], counts["changed"]
        listed = sum(n - x["not listed"] for x, n in ((r, r["pairs"]), (c, c["pairs"])))
        total = r["pairs"] + c["pairs"]
        wrong = c["merged"] + c["restates"]
        told = r["restates= corroborated"]
        out.append(
            f"| {name} | {total} | {listed}/{total} | {r['conflict']}/{r['pairs']} | "
            f"{c['conflict']}/{c['pairs']} | {wrong}/{c['pairs']} | {told}/{r['pairs']} |"
        )
    out += [
        "",
        "What each reply said (pairs):",
        "",
        "| set | label | merged | conflict | restates | note | listed, no label | not listed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, counts in results.items():
        for label, x in counts.items():
            cells = " | ".join(
                str(x[k])
                for k in ("merged", "conflict", "restates", "note", "listed, no label", "not listed")
            )
            out.append(f"| {name} | {label} | {cells} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_models_dir(parser)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "labels.md")
    args = parser.parse_args()
    results = {}
    with temporary_memory(args.models_dir) as memory:
        for name, (path, labels) in SETS.items():
            results[name] = run(memory, path, labels)
    text = table(results)
    print(text)
    args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
