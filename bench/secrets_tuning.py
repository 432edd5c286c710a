"""A second tuning corpus from Kingfisher's rules, disjoint by vendor from the held-out one.

    python -m bench.secrets_tuning extract --kingfisher DIR   # rules -> tuning_formats.tsv
    python -m bench.secrets_tuning generate                   # -> tuning.tsv
    python -m bench.secrets_tuning score [--misses]           # recall by form; --misses prints them

Kingfisher (mongodb/kingfisher, Apache-2.0) grew out of Nosey Parker, whose rules are the
held-out corpus (``bench.secrets_heldout``). So ``extract`` keeps only the rules of vendors the
held-out formats do not name, and none whose secret regex is one of theirs: these lines may be
read and tuned on, and the held-out figure still measures vendors the scanner was not tuned on.
``generate`` writes the same three forms as the held-out corpus (a bare token, the vendor's name
and "key" or "token", "API key is") in sentences of its own, so the held-out sentences stay
unseen too. Nothing here is product code.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

from bench.secrets_corpus import DATA, _Draw, read_tsv, write_tsv
from bench.secrets_heldout import _git, draw_secrets, fixed_prefix, secret_group, secret_lines, translate
from hippograph.text import secrets_scan

RULES = "data/rules"
SEED = 4242

BARE = [
    "Pulled {s} out of an old shell history while cleaning up the laptop.",
    "Who added {s} to the wiki page about the migration?",
    "{s} is what the cron box has been using since spring",
    "left over from the hackathon: {s}",
    "The support ticket quotes {s} verbatim, so close it out carefully.",
    "Please double check {s} against what finance has on file.",
    "Saw {s} in a screenshot someone posted to the design channel",
    "Rolling back to {s} fixed the nightly sync for now.",
]
VENDOR_KEY = [
    "Our {vendor} key on the shared account is {s} for now.",
    "{vendor} token, staging only: {s}",
    "Priya pasted the {vendor} key into the doc, it reads {s}",
    "the {vendor} token we got from the vendor call is {s} (temporary)",
    "Set the {vendor} key to {s} on the worker nodes before the demo.",
    "{s} — that's the {vendor} token the importer needs",
    "Remember the {vendor} key changed to {s} after the incident.",
    "New {vendor} token is {s}, the old one stops working tonight.",
]
API_KEY_IS = [
    "Heads up: the API key is {s} until we rotate.",
    "their {vendor} API key is {s}, keep it off Slack",
    "the API key is {s} and it only works from the office VPN",
    "For the load test the API key is {s}.",
    "Marco confirmed the {vendor} API key is {s}",
    "So the API key is {s}, right? It failed twice for me.",
    "Until Thursday the API key is {s}; then we switch to OAuth.",
    "in the sandbox the API key is {s}",
]
FORMS = {"bare": BARE, "vendor key": VENDOR_KEY, "api key is": API_KEY_IS}
assert not any(re.search(r"key|token|secret|passw|credential|auth|api", t, re.I) for t in BARE)


def _norm(vendor: str) -> str:
    return re.sub(r"[^a-z0-9]", "", vendor.casefold())


def _vendor(name: str) -> str:
    """The vendor in a Kingfisher rule's name: the words before the credential's own words."""
    words = re.split(r"\s+", name.strip())
    stop = re.compile(
        r"(?i)api|key|keys|token|tokens|secret|access|personal|client|app|oauth|credentials?|id"
    )
    kept = [w for w in words[: next((i for i, w in enumerate(words) if stop.fullmatch(w)), len(words))]]
    return " ".join(kept or words[:1])


def extract(repo: Path) -> tuple[list[tuple[str, ...]], Counter[str]]:
    import yaml  # only here: reading Kingfisher's rule files

    held = read_tsv(DATA / "heldout_formats.tsv")
    held_vendors = {_norm(row["vendor"]) for row in held} | {_norm(row["name"].split()[0]) for row in held}
    held_regexes = {row["regex"] for row in held}
    kept: list[tuple[str, ...]] = []
    dropped: Counter[str] = Counter()
    draw = _Draw(random.Random(0))
    for name in _git(repo, "ls-tree", "--name-only", f"HEAD:{RULES}").split():
        if not name.endswith(".yml"):
            continue
        stem = _norm(name.removesuffix(".yml"))
        for rule in yaml.safe_load(_git(repo, "show", f"HEAD:{RULES}/{name}"))["rules"]:
            categories = rule.get("categories") or []
            vendor = _vendor(rule["name"])
            hashed = re.search(r"pwhash|krb5|hash", rule["id"])  # password hashes are not keys
            if {"hashed", "identifier", "fuzzy"} & set(categories) or "generic" in stem or hashed:
                dropped["not a vendor secret"] += 1
                continue
            if (
                stem in held_vendors
                or _norm(vendor) in held_vendors
                or _norm(vendor.split()[0]) in held_vendors
            ):
                dropped["vendor in the held-out rules"] += 1
                continue
            try:
                _, _, groups = translate(rule["pattern"])
                group = secret_group(groups)
                regex = f"(?{group['flags']})" * bool(group["flags"]) + group["text"]
                if regex in held_regexes:
                    dropped["regex in the held-out rules"] += 1
                    continue
                if re.fullmatch(regex, "A" * 40 + "\n" + "A" * 400) or len(draw_secrets(draw, regex)) < 3:
                    dropped["cannot draw 3 clean one-line secrets"] += 1
                    continue
            except (ValueError, re.error, IndexError, KeyError):
                dropped["cannot translate"] += 1
                continue
            kept.append((rule["id"], rule["name"], vendor, regex, str(fixed_prefix(regex))))
    return kept, dropped


def generate(seed: int) -> list[tuple[str, str, str, str]]:
    return secret_lines(read_tsv(DATA / "tuning_formats.tsv"), seed, FORMS)


def score(show_misses: bool) -> dict[str, tuple[int, int]]:
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for line in read_tsv(DATA / "tuning.tsv"):
        caught = bool(secrets_scan.scan(line["text"]))
        prefix = "with prefix" if line["prefixed"] == "yes" else "no prefix"
        for name in (f"{line['form']} ({prefix})", "all"):
            rows[name][0] += caught
            rows[name][1] += 1
        if show_misses and not caught:
            print(f"missed\t{line['form']}\t{line['rule']}\t{line['text']!r}")
    return {name: (hit, total) for name, (hit, total) in sorted(rows.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("extract")
    ex.add_argument("--kingfisher", type=Path, required=True, help="git dir of mongodb/kingfisher")
    gen = sub.add_parser("generate")
    gen.add_argument("--seed", type=int, default=SEED)
    sc = sub.add_parser("score")
    sc.add_argument("--misses", action="store_true")
    args = parser.parse_args()
    if args.command == "extract":
        kept, dropped = extract(args.kingfisher)
        write_tsv(DATA / "tuning_formats.tsv", ["rule", "name", "vendor", "regex", "prefix"], kept)
        commit = _git(args.kingfisher, "rev-parse", "HEAD").strip()
        print(json.dumps({"commit": commit, "kept": len(kept), "dropped": dropped}, indent=1))
    elif args.command == "generate":
        rows = generate(args.seed)
        write_tsv(DATA / "tuning.tsv", ["form", "prefixed", "rule", "text"], rows)
        print(json.dumps(Counter(f"{form} prefixed={p}" for form, p, _, _ in rows)))
    else:
        for name, (hit, total) in score(args.misses).items():
            print(f"{name}\t{hit}/{total}\t{100 * hit / total:.1f}%")


if __name__ == "__main__":
    main()
