"""How well the secret scanner does on corpora it was not written with: recall by context, false alarms.

    python -m bench.secrets              # dev and test table, writes bench/results/secrets.md
    python -m bench.secrets --misses     # also print the dev lines it gets wrong (never the test ones)

The corpora are in bench/data/secrets/ (README.md there says where they come from and how
``bench.secrets_corpus`` builds them). Recall is the share of secret lines with at least one
finding; a false alarm is an ordinary line with any finding. detect-secrets' labelled lines are
scored against their own label (a line its plugin must flag / must not flag). The speed column
is the mean wall time of one ``scan`` over every line of the split.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from bench.secrets_corpus import DATA, read_tsv
from hippograph.service.screening import screen
from hippograph.text import secrets_scan

ROOT = Path(__file__).resolve().parents[1]
CONTEXTS = [
    "bare vendor token in prose",
    "key=value",
    "env",
    "CLI password",
    "URL credentials",
    "detect-secrets secret",
    "token in a plain sentence",
    "vendor and key in a sentence (with prefix)",
    "vendor and key in a sentence (no prefix)",
    "after 'API key is' (with prefix)",
    "after 'API key is' (no prefix)",
]


def figures(part: str) -> dict[str, tuple[int, int]]:
    """{row name: (hits, lines)}: caught secret lines per context; flagged ordinary lines."""
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for line in read_tsv(DATA / f"secrets_{part}.tsv"):
        name = line["context"]
        if name == "detect-secrets not":
            name = "detect-secrets must-not-flag (false alarms)"
        rows[name][0] += bool(secrets_scan.scan(line["text"]))
        rows[name][1] += 1
    for line in read_tsv(DATA / f"ordinary_{part}.tsv"):
        rows["ordinary developer text (false alarms)"][0] += bool(secrets_scan.scan(line["text"]))
        rows["ordinary developer text (false alarms)"][1] += 1
    return {name: (hit, total) for name, (hit, total) in rows.items()}


def secrets_figures(part: str = "test") -> tuple[int, int, int, int]:
    """(secret lines caught, secret lines, ordinary lines flagged, ordinary lines) of one split."""
    rows = figures(part)
    caught = sum(rows[name][0] for name in CONTEXTS)
    total = sum(rows[name][1] for name in CONTEXTS)
    flagged, ordinary = rows["ordinary developer text (false alarms)"]
    return caught, total, flagged, ordinary


def microseconds_per_scan(part: str, repeat: int = 3) -> float:
    texts = [r["text"] for r in read_tsv(DATA / f"secrets_{part}.tsv")]
    texts += [r["text"] for r in read_tsv(DATA / f"ordinary_{part}.tsv")]
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            secrets_scan.scan(text)
        best = min(best, (time.perf_counter() - start) / len(texts))
    return best * 1e6


# One remember as a client sends it: every string of it is screened, field names included.
REMEMBER = {
    "content": "Priya moved the nightly export to the new cluster on Tuesday; the old cron stays off "
    "until the audit (ticket OPS-1182) is closed.",
    "entities": ["Priya", "nightly export", "OPS-1182"],
    "tags": ["infra", "migration"],
    "kind": "decision",
    "scope": "team-platform",
    "session_id": "V1StGXR8Z5jdHi6BmyT9q",
}


def microseconds_per_remember(repeat: int = 200) -> float:
    """Best mean wall time of screening one remember's arguments (a fresh screen each time)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeat):
            screen(REMEMBER, "refuse")
        best = min(best, (time.perf_counter() - start) / repeat)
    return best * 1e6


def misses(part: str) -> list[str]:
    wrong = []
    for line in read_tsv(DATA / f"secrets_{part}.tsv"):
        found = bool(secrets_scan.scan(line["text"]))
        if found != (line["context"] != "detect-secrets not"):
            wrong.append(f"{'missed' if not found else 'false alarm'}\t{line['source']}\t{line['text']!r}")
    for line in read_tsv(DATA / f"ordinary_{part}.tsv"):
        findings = secrets_scan.scan(line["text"])
        if findings:
            spans = [line["text"][f.start : f.end] for f in findings]
            wrong.append(f"false alarm\t{line['category']}\t{line['text']!r} -> {spans}")
    return wrong


HELDOUT_FORMS = {
    "bare": "token in a sentence with no credential word",
    "vendor key": "vendor's name and 'key' in a sentence",
    "api key is": "after 'API key is'",
}


def heldout_figures(corpus: str = "heldout.tsv") -> dict[str, tuple[int, int]]:
    """{row: (hits, lines)} on a corpus of secrets in sentences (``bench.secrets_heldout``'s
    forms) and on the ordinary lines of the Nosey Parker corpus (false alarms)."""
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for line in read_tsv(DATA / corpus):
        prefix = "with prefix" if line["prefixed"] == "yes" else "no prefix"
        for name in (f"{HELDOUT_FORMS[line['form']]} ({prefix})", "all secrets"):
            rows[name][0] += bool(secrets_scan.scan(line["text"]))
            rows[name][1] += 1
    for line in read_tsv(DATA / "heldout_ordinary.tsv"):
        name = "ordinary developer text (false alarms)"
        rows[name][0] += bool(secrets_scan.scan(line["text"]))
        rows[name][1] += 1
    return {name: (hit, total) for name, (hit, total) in sorted(rows.items())}


def _corpus_table(title: str, about: list[str], corpus: str) -> str:
    out = [f"## {title}", "", *about, "", "| | caught |", "|---|---|"]
    for name, (hit, total) in heldout_figures(corpus).items():
        out.append(f"| {name} | {hit / total:.1%} ({hit}/{total}) |")
    return "\n".join(out)


def heldout_table() -> str:
    return _corpus_table(
        "TruffleHog's detectors (bench.secrets_trufflehog): held out until 2026-12-02, tuned on since",
        [
            "The screen does not load TruffleHog's expressions. 963 formats of 829 detectors, three",
            "fake secrets each per form; the false-alarm lines are the Nosey Parker corpus's. Its misses",
            "were read on 2026-12-02 (96.4% of all caught then, 86.3% of bare prefixed tokens): the",
            "held-out figure is secretlint's, below. Some of its lines are no secrets (a host name, an",
            "app id, a public key, a date drawn from a detector's expression for the value beside it).",
        ],
        "trufflehog.tsv",
    )


def secretlint_table() -> str:
    return _corpus_table(
        "Held out: secrets drawn from secretlint's rules (bench.secrets_secretlint; totals only)",
        [
            "The screen does not load secretlint's expressions, nor was it tuned on them. 29 formats",
            "of 24 vendors, three fake secrets each per form; the false-alarm lines are the Nosey",
            "Parker corpus's.",
        ],
        "secretlint.tsv",
    )


def google_microsoft_table() -> str:
    return _corpus_table(
        "Held out: secrets drawn from Google's and Microsoft's detectors (bench.secrets_google_microsoft; "
        "totals only)",
        [
            "The screen does not load OSV-SCALIBR's Veles detectors (google/osv-scalibr c2094f2d,",
            "Apache-2.0) nor Microsoft's security-utilities patterns (microsoft/security-utilities",
            "638ad20e, MIT), nor was it tuned on them. 102 formats of 69 vendors (72 Veles, 30",
            "Microsoft; a vendor's format in both counted once), three fake secrets each per form, in",
            "sentences of the corpus's own; the drawn tokens match the formats but carry no valid",
            "checksum. The false-alarm lines are the Nosey Parker corpus's. Read as totals only.",
        ],
        "google_microsoft.tsv",
    )


def noseyparker_table() -> str:
    return _corpus_table(
        "Nosey Parker's rules (bench.secrets_heldout): held out until the screen loaded Titus's rules",
        [
            "Titus, which the screen loads, is Nosey Parker's successor and holds its rules: this corpus",
            "now measures the rule set as shipped, no longer a scanner the screen was not given.",
        ],
        "heldout.tsv",
    )


def tuning_table() -> str:
    from bench.secrets_tuning import score  # Kingfisher's vendors the held-out rules do not name

    out = [
        "## Tuned on: Kingfisher's rules for vendors Nosey Parker does not name (bench.secrets_tuning)",
        "",
        "| | caught |",
        "|---|---|",
    ]
    out += [f"| {name} | {hit / total:.1%} ({hit}/{total}) |" for name, (hit, total) in score(False).items()]
    return "\n".join(out)


def table() -> str:
    dev, test = figures("dev"), figures("test")
    out = [
        "# Secret scanner on third-party corpora",
        "",
        "## Tuned on dev (gitleaks' and detect-secrets' formats; test: new values and sentences)",
        "",
        "| | dev | test |",
        "|---|---|---|",
    ]
    for name in [
        *CONTEXTS,
        "detect-secrets must-not-flag (false alarms)",
        "ordinary developer text (false alarms)",
    ]:
        cells = []
        for rows in (dev, test):
            hit, total = rows.get(name, (0, 0))
            cells.append(f"{hit / total:.1%} ({hit}/{total})" if total else "-")
        out.append(f"| {name} | {cells[0]} | {cells[1]} |")
    speed = [f"{microseconds_per_scan(part):.0f} µs" for part in ("dev", "test")]
    out.append(f"| mean time of one scan | {speed[0]} | {speed[1]} |")
    out.append(f"| screening one remember's arguments | {microseconds_per_remember():.0f} µs | |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="print the dev lines scored wrong")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = parser.parse_args()
    if args.misses:
        print("\n".join(misses("dev")))
    text = "\n\n".join(
        [
            table(),
            tuning_table(),
            noseyparker_table(),
            heldout_table(),
            secretlint_table(),
            google_microsoft_table(),
        ]
    )
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "secrets.md").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
