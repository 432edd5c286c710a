"""A held-out secrets corpus from TruffleHog's detectors: a scanner hippograph does not load.

    python -m bench.secrets_trufflehog extract --trufflehog DIR   # detectors -> trufflehog_formats.tsv
    python -m bench.secrets_trufflehog generate                   # -> trufflehog.tsv

The screen loads gitleaks' rules and Titus's (Nosey Parker's successor, which took in many of
Kingfisher's), so the corpora built from Nosey Parker's and Kingfisher's rules no longer measure
vendors it was not given. TruffleHog (trufflesecurity/trufflehog, AGPL-3.0) writes its ~900
detectors in Go, each with its own regular expressions; none of them is read by hippograph.

``extract`` reads each detector's ``regexp.MustCompile`` calls from a git directory (``git show``),
keeps those made of string literals and ``detectors.PrefixRegex([...])`` (the vendor's words,
then up to 40 characters), skips the patterns that find an id beside the secret (``idPat``,
``emailPat``, ``urlPat``...), and takes the secret: the first group, else the match after the
vendor's words. The formats file holds fragments of TruffleHog's expressions, so it stays out of
the repository (.gitignore); ``generate`` needs only it and writes the same three sentence forms
as the Nosey Parker corpus (``bench.secrets_heldout.secret_lines``), with a seed of its own. The
ordinary lines of that corpus serve as the false-alarm set. Nothing here is product code.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from pathlib import Path

from bench.secrets_corpus import DATA, _Draw, read_tsv, write_secret_lines, write_tsv
from bench.secrets_heldout import _git, draw_secrets, fixed_prefix, secret_lines
from hippograph.text.secret_rules import go_to_python

DETECTORS = "pkg/detectors"
SEED = 8128
FORMATS = DATA / "trufflehog_formats.tsv"

_CALL = re.compile(r"(?:(\w+)\s*=\s*|\"([^\"]+)\"\s*:\s*)regexp\.MustCompile\(")
_PREFIX = re.compile(r"detectors\.PrefixRegex\(\[\]string\{([^}]*)\}\)")
_LITERAL = re.compile(r"`([^`]*)`|\"((?:[^\"\\]|\\.)*)\"")
# A pattern named for what stands beside the secret, not the secret.
_ID_NAME = re.compile(
    r"(?i)(?:id|ids|email|url|domain|host|user|username|account|org|region|endpoint|name|tenant|uri|zone)$"
)


def _argument(source: str, start: int) -> str | None:
    """The text of the call's argument from `start` (just past the open paren) to its close."""
    depth, i = 1, start
    while i < len(source):
        char = source[i]
        if char in '`"':
            literal = _LITERAL.match(source, i)
            if not literal:
                return None
            i = literal.end()
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return source[start:i]
        i += 1
    return None


def _pattern(argument: str) -> tuple[list[str], str] | None:
    """(the vendor's words, the pattern after them) of an argument made of literals and
    PrefixRegex, else None."""
    words: list[str] = []
    prefix = _PREFIX.search(argument)
    rest = argument
    if prefix:
        words = [w.strip().strip('"') for w in prefix.group(1).split(",") if w.strip()]
        rest = argument[: prefix.start()] + argument[prefix.end() :]
    pieces, cursor = [], 0
    for literal in _LITERAL.finditer(rest):
        if rest[cursor : literal.start()].strip() not in ("", "+"):
            return None  # a variable or a call: not a plain pattern
        raw = literal.group(1)
        pieces.append(raw if raw is not None else bytes(literal.group(2), "utf-8").decode("unicode_escape"))
        cursor = literal.end()
    if rest[cursor:].strip().rstrip(",") or not pieces:
        return None
    return words, "".join(pieces)


def _secret_regex(pattern: str) -> str:
    """The secret's expression: the first capturing group, else the whole pattern, in Python's
    syntax, without the word boundaries around it."""
    python = go_to_python(pattern)
    compiled = re.compile(python)
    if compiled.groups:
        depth, start = 0, None
        i = 0
        while i < len(python):
            char = python[i]
            if char == "\\":
                i += 2
                continue
            if char == "[":
                i = python.index("]", i + 2 if python[i + 1] == "]" else i + 1) + 1
                continue
            if char == "(":
                if start is None and not python.startswith("(?", i):
                    start = i
                    depth = 0
                depth += 1
            elif char == ")":
                depth -= 1
                if start is not None and depth == 0:
                    python = python[start + 1 : i]
                    break
            i += 1
    flags = re.match(r"\(\?([a-z]+)\)", python)
    body = python[flags.end() :] if flags else python
    body = re.sub(r"^(?:\\b)+|(?:\\b)+$", "", body)
    return (f"(?{flags.group(1)})" if flags else "") + body


def extract(repo: Path) -> tuple[list[tuple[str, ...]], Counter[str]]:
    kept: list[tuple[str, ...]] = []
    dropped: Counter[str] = Counter()
    draw = _Draw(random.Random(0))
    names = _git(repo, "ls-tree", "-r", "--name-only", "HEAD", DETECTORS).split()
    for path in sorted(p for p in names if p.endswith(".go") and not p.endswith("_test.go")):
        vendor = path.split("/")[-2]
        source = _git(repo, "show", f"HEAD:{path}")
        for index, call in enumerate(_CALL.finditer(source)):
            name = call.group(1) or call.group(2)
            if _ID_NAME.search(re.sub(r"(?i)pat$|regex$|re$", "", name)):
                dropped["an id beside the secret"] += 1
                continue
            argument = _argument(source, call.end())
            parsed = _pattern(argument) if argument is not None else None
            if parsed is None:
                dropped["not made of literals"] += 1
                continue
            words, pattern = parsed
            try:
                regex = _secret_regex(pattern)
                secrets = draw_secrets(draw, regex)
            except (re.error, ValueError, IndexError):
                dropped["cannot translate"] += 1
                continue
            if len(secrets) < 3:
                dropped["cannot draw 3 clean secrets"] += 1
                continue
            rule = f"trufflehog.{vendor}.{index + 1}"
            shown = words[0] if words else vendor
            kept.append((rule, name, shown, "secret", regex, str(fixed_prefix(regex))))
    return kept, dropped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("extract")
    ex.add_argument("--trufflehog", type=Path, required=True, help="git dir of trufflesecurity/trufflehog")
    gen = sub.add_parser("generate")
    gen.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    if args.command == "extract":
        kept, dropped = extract(args.trufflehog)
        write_tsv(FORMATS, ["rule", "name", "vendor", "categories", "regex", "prefix"], kept)
        commit = _git(args.trufflehog, "rev-parse", "HEAD").strip()
        print(json.dumps({"commit": commit, "kept": len(kept), "dropped": dropped}, indent=1))
        return
    secrets = secret_lines(read_tsv(FORMATS), args.seed)
    counts = write_secret_lines(DATA / "trufflehog.tsv", secrets)
    print(json.dumps({"seed": args.seed, "secret lines": counts}))


if __name__ == "__main__":
    main()
