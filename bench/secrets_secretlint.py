"""A held-out secrets corpus from secretlint's rules: a scanner hippograph does not load.

    python -m bench.secrets_secretlint extract --secretlint DIR   # rules -> secretlint_formats.tsv
    python -m bench.secrets_secretlint generate                   # -> secretlint.tsv
    python -m bench.secrets_secretlint score                      # totals per form, false alarms

The screen loads gitleaks', Titus's and Kingfisher's rules and is tuned on the TruffleHog corpus
(``bench.secrets_trufflehog``). secretlint (secretlint/secretlint, MIT) writes one TypeScript rule
package per vendor, each with its own regular expressions taken from the vendor's documentation;
none of them is read by hippograph. secrets-patterns-db, the larger list, was not used: most of
its high-confidence patterns are TruffleHog's and gitleaks' own.

``extract`` reads ``packages/@secretlint/secretlint-rule-*/src/*.ts`` from a git directory
(``git show``): the regular expression literals (``/.../flags``) and ``new RegExp(...)`` calls
(string constants of the file put in for ``${NAME}``), turned into Python's syntax (named groups,
the lookarounds at the token's edges dropped). It skips the packages that find no vendor's secret
(private keys, credentials in URLs and connection strings, dotenv files, user patterns, examples),
the patterns of ids (AWS access key and account ids, Azure tenant and client ids), URLs and
keyword-only patterns (a key name, then any characters). The secret is the whole match, or, for a
pattern that looks for a key name and ``=``/``:`` before the value, its capture group. Upper
bounds above 256 are cut to 256, so that no drawn token runs to thousands of characters.
``generate`` writes the same three sentence forms as the Nosey Parker and TruffleHog corpora
(``bench.secrets_heldout.secret_lines``), with a seed of its own; the ordinary lines of the Nosey
Parker corpus serve as the false-alarm set. ``score`` prints totals only: this corpus is held
out, its misses are not listed anywhere. Nothing here is product code.
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

PACKAGES = "packages/@secretlint"
SEED = 6174
FORMATS = DATA / "secretlint_formats.tsv"
CORPUS = "secretlint.tsv"

# Rule packages that hold no vendor's secret format, or none this corpus can put in a sentence.
_SKIP_PACKAGES = {
    "basicauth": "credentials in a URL",
    "database-connection-string": "credentials in a URL",
    "example": "not a vendor secret",
    "filter-comments": "not a vendor secret",
    "internal-test-cjs": "not a vendor secret",
    "internal-test-esm": "not a vendor secret",
    "no-dotenv": "not a vendor secret",
    "no-homedir": "not a vendor secret",
    "no-k8s-kind-secret": "not a vendor secret",
    "pattern": "not a vendor secret",
    "preset-canary": "not a vendor secret",
    "preset-recommend": "not a vendor secret",
    "privatekey": "a private key (PEM)",
    "gcp": "a private key (PEM, PKCS#12)",
    "secp256k1-privatekey": "not a vendor's format (64 hex digits)",
}
_VENDOR = {
    "1password": "1Password",
    "aws": "AWS",
    "docker": "Docker Hub",
    "github": "GitHub",
    "gitlab": "GitLab",
    "hashicorp-vault": "HashiCorp Vault",
    "huggingface": "Hugging Face",
    "npm": "npm",
    "openai": "OpenAI",
    "sendgrid": "SendGrid",
}
# A pattern (or the report function around it) named for an id, not a secret.
_ID_NAME = re.compile(r"(?i)(?:id|ids|account|tenant)(?:s)?(?:pattern|patten|regex)?$")
_CONST = re.compile(r"\bconst\s+(\w+)\s*=\s*(\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`[^`$]*`)\s*;")
_ASSIGNED = re.compile(r"(?:const|let|var)\s+(\w+)\s*=\s*$")
_FUNCTION = re.compile(r"(?:const|function)\s+(report\w*)")
_REGEX_BEFORE = set("(,=:[!&|?{};")


def _js_string(literal: str) -> str:
    """The value of a JavaScript string literal ("..." or '...' cooked, `...` as written)."""
    body = literal[1:-1]
    if literal[0] == "`":
        return body
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def _skip_string(source: str, i: int) -> int:
    quote, i = source[i], i + 1
    while i < len(source) and source[i] != quote:
        i += 2 if source[i] == "\\" else 1
    return i + 1


def _regex_literal(source: str, i: int) -> tuple[str, str, int] | None:
    """(body, flags, end) of the regular expression literal starting at the slash at ``i``."""
    j, in_class = i + 1, False
    while j < len(source) and source[j] != "\n":
        char = source[j]
        if char == "\\":
            j += 2
            continue
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "/" and not in_class:
            flags = re.match(r"[dgimsuyv]*", source[j + 1 :])
            assert flags is not None
            return source[i + 1 : j], flags.group(0), j + 1 + flags.end()
        j += 1
    return None


def _constant(source: str, name: str, at: int) -> str | None:
    """The last string constant ``name`` defined before ``at``."""
    values = [m.group(2) for m in _CONST.finditer(source, 0, at) if m.group(1) == name]
    return _js_string(values[-1]) if values else None


def _new_regexp(source: str, at: int) -> tuple[str, str] | None:
    """(pattern, flags) of a ``new RegExp(String.raw`...`, "flags")`` or ``new RegExp("...")``."""
    call = re.compile(
        r"\s*(?:String\.raw\s*)?(`[^`]*`|\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')\s*"
        r"(?:,\s*(\"[a-z]*\"|'[a-z]*'))?\s*,?\s*\)"
    ).match(source, at)
    if not call:
        return None
    raw = source[at : call.start(1)].strip().startswith("String.raw")
    text = call.group(1)[1:-1] if raw else _js_string(call.group(1))
    missing = []

    def put(m: re.Match[str]) -> str:
        value = _constant(source, m.group(1), at)
        if value is None:
            missing.append(m.group(1))
            return ""
        return value

    text = re.sub(r"\$\{(\w+)\}", put, text)
    if missing:
        return None
    return text, _js_string(call.group(2)) if call.group(2) else ""


def patterns(source: str) -> list[tuple[str, str, str]]:
    """(name, pattern, flags) of every regular expression a TypeScript file writes: the variable
    it is assigned to, else the report function around it."""
    found: list[tuple[str, str, str]] = []
    i, last = 0, ""
    while i < len(source):
        char = source[i]
        if source.startswith("//", i):
            i = source.find("\n", i)
            i = len(source) if i < 0 else i
            continue
        if source.startswith("/*", i):
            end = source.find("*/", i + 2)
            i = len(source) if end < 0 else end + 2
            continue
        if char in "\"'`":
            i = _skip_string(source, i)
            last = char
            continue
        if source.startswith("new RegExp(", i):
            parsed = _new_regexp(source, i + len("new RegExp("))
            if parsed:
                found.append((_name(source, i), *parsed))
            i += len("new RegExp(")
            last = "("
            continue
        if char == "/" and (last in _REGEX_BEFORE or source[:i].rstrip().endswith("return")):
            literal = _regex_literal(source, i)
            if literal:
                found.append((_name(source, i), literal[0], literal[1]))
                i, last = literal[2], "/"
                continue
        if not char.isspace():
            last = char
        i += 1
    return found


def _name(source: str, at: int) -> str:
    assigned = _ASSIGNED.search(source[max(0, at - 200) : at])
    functions = _FUNCTION.findall(source[:at])
    return ".".join(filter(None, [functions[-1] if functions else "", assigned.group(1) if assigned else ""]))


def _top_groups(pattern: str) -> list[tuple[int, int]]:
    """(start, end) of the top-level and nested capturing groups of a Python pattern, in order."""
    spans, stack, i = [], [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            j = i + 1
            if j < len(pattern) and pattern[j] == "^":
                j += 1
            if j < len(pattern) and pattern[j] == "]":
                j += 1
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
            continue
        if char == "(":
            capturing = not pattern.startswith("(?", i) or pattern.startswith("(?P<", i)
            stack.append((i, capturing))
        elif char == ")" and stack:
            start, capturing = stack.pop()
            if capturing:
                spans.append((start, i + 1))
        i += 1
    return sorted(spans)


_EDGE_START = re.compile(r"^(?:\\b|\(\?<[!=](?:[^()\\]|\\.|\([^()]*\))*\))+")
_EDGE_END = re.compile(r"(?:\\b|\(\?[!=](?:[^()\\]|\\.|\([^()]*\))*\))+$")


def _cap(bounds: re.Match[str]) -> int:
    """A repeat's upper bound, cut to 256 (never below its lower bound)."""
    return max(int(bounds.group(1)), min(int(bounds.group(2)), 256))


def to_python(pattern: str, flags: str) -> str:
    """A JavaScript pattern in Python's syntax, without the assertions at its edges."""
    body = pattern.replace("(?<", "(?P<").replace("(?P<!", "(?<!").replace("(?P<=", "(?<=")
    body = re.sub(r"\\k<(\w+)>", r"(?P=\1)", body)
    body = _EDGE_END.sub("", _EDGE_START.sub("", body))
    body = re.sub(r"\{(\d+),(\d+)\}", lambda m: f"{{{m.group(1)},{_cap(m)}}}", body)
    if "\\p{" in body:
        raise ValueError("unicode property")
    inline = "".join(f for f in "is" if f in flags)
    regex = f"(?{inline})" * bool(inline) + body
    re.compile(regex)
    return regex


def secret_regex(regex: str) -> str:
    """The secret of a pattern: the whole match, or the capture group after a key name and
    ``=``/``:`` (the last group that holds a value, with the pattern's flags)."""
    flags = re.match(r"\(\?[a-z]+\)", regex)
    head, body = (flags.group(0), regex[flags.end() :]) if flags else ("", regex)
    if not re.search(r"\\s\*|\[:=\]|\(\?::|:\|=", body):
        return regex
    groups = [body[s + 1 : e - 1] for s, e in _top_groups(body)]
    groups = [re.sub(r"^\?P<\w+>", "", g) for g in groups]
    valued = [g for g in groups if re.search(r"\{\d+", g) and not re.search(r"\\s|:\||=>", g)]
    if not valued:
        raise ValueError("no value group")
    return head + valued[-1]


def _vendor(package: str) -> str:
    return _VENDOR.get(package, package.replace("-", " ").title())


def extract(repo: Path) -> tuple[list[tuple[str, ...]], Counter[str]]:
    kept: list[tuple[str, ...]] = []
    dropped: Counter[str] = Counter()
    seen: set[str] = set()
    draw = _Draw(random.Random(0))
    names = _git(repo, "ls-tree", "-r", "--name-only", "HEAD", PACKAGES).split()
    sources = sorted(
        p
        for p in names
        if re.fullmatch(rf"{PACKAGES}/secretlint-rule-[^/]+/src/[^/]+\.ts", p) and ".test." not in p
    )
    for path in sources:
        package = path.split("/")[2].removeprefix("secretlint-rule-")
        found = patterns(_git(repo, "show", f"HEAD:{path}"))
        if package in _SKIP_PACKAGES:
            dropped[_SKIP_PACKAGES[package]] += len(found)
            continue
        for index, (name, pattern, flags) in enumerate(found):
            if any(_ID_NAME.search(part) for part in name.split(".")):
                dropped["an id"] += 1
                continue
            if re.search(r"https?|://", pattern):
                dropped["a URL"] += 1
                continue
            try:
                regex = secret_regex(to_python(pattern, flags))
            except (re.error, ValueError) as error:
                dropped[f"cannot translate ({error})"] += 1
                continue
            if re.search(r"(?<!\\)\.(?:[*+]|\{\d+,\d*\})", regex):
                dropped["keyword-only (any characters after a key name)"] += 1
                continue
            if len(draw_secrets(draw, regex)) < 3:
                dropped["cannot draw 3 clean secrets (a helper pattern)"] += 1
                continue
            if regex in seen:
                dropped["a pattern already kept"] += 1
                continue
            seen.add(regex)
            rule = f"secretlint.{package}.{index + 1}"
            kept.append((rule, name, _vendor(package), "secret", regex, str(fixed_prefix(regex))))
    return kept, dropped


def generate(seed: int) -> list[tuple[str, str, str, str]]:
    return secret_lines(read_tsv(FORMATS), seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("extract")
    ex.add_argument("--secretlint", type=Path, required=True, help="git dir of secretlint/secretlint")
    gen = sub.add_parser("generate")
    gen.add_argument("--seed", type=int, default=SEED)
    sub.add_parser("score")
    args = parser.parse_args()
    if args.command == "extract":
        kept, dropped = extract(args.secretlint)
        write_tsv(FORMATS, ["rule", "name", "vendor", "categories", "regex", "prefix"], kept)
        commit = _git(args.secretlint, "rev-parse", "HEAD").strip()
        summary = {"commit": commit, "kept": len(kept), "vendors": len({row[2] for row in kept})}
        print(json.dumps({**summary, "dropped": dropped}, indent=1))
    elif args.command == "generate":
        rows = generate(args.seed)
        counts = write_secret_lines(DATA / CORPUS, list(rows))
        print(json.dumps({"seed": args.seed, "secret lines": counts}))
    else:
        from bench.secrets import secretlint_table  # the table the TruffleHog corpus is scored with

        print(secretlint_table())


if __name__ == "__main__":
    main()
