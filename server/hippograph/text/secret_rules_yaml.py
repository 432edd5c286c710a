"""Two more maintained rule sets in Nosey Parker's YAML format: Titus's and Kingfisher's, read on first use.

Both are shipped byte for byte under ``rules/``, each checked against one SHA-256 over its files
when read (`digest`); to move to newer rules, replace a directory and its digest, nothing else:

- ``rules/titus/``: Titus v1.1.23's ``pkg/rule/rules/`` and ``pkg/rule/rulesets/default.yml``
  (praetorian-inc/titus, tag commit 369d8dc4, Apache-2.0: ``LICENSE`` and ``NOTICE``). Titus is
  Praetorian's successor to Nosey Parker: its rules are Nosey Parker's and some of Kingfisher's.
  The rules its default ruleset lists are used.
- ``rules/kingfisher/``: Kingfisher v1.10.0's ``data/rules/`` (mongodb/kingfisher, ee7c0db3,
  Apache-2.0: ``LICENSE``). Its rules of medium or high confidence (Kingfisher's default) are
  used, but for those Titus carries under the same id (Titus's copy is the newer).

Rules are written for Rust's engine (`rust_regex.translate` reads them) and applied the way both
tools do: a rule's secret is its group named ``token`` (any case), else a named group that says
it holds a secret, else its first group, else the match; a secret at or under the rule's
``min_entropy`` or short of its ``pattern_requirements`` is dropped. Rules that only find an id
another rule's check needs (``visible: false``) or only identifiers are left out. Both tools run
every rule at once (Vectorscan); here a rule runs only on a text holding a string every match of
it holds (`required_strings`), so a remember pays for the few rules its words name.

Read on first use, not at import, so a process starts without them: from ``rules/derived.json``
(what reading and parsing the YAML gives, written by `write_derived`, checked by a test), which
names the digests it was derived from and is used only while they are the pinned ones. Pure
after that: no logging.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import astuple, dataclass
from dataclasses import fields as dataclass_fields
from pathlib import Path
from re import _parser as sre_parse  # type: ignore[attr-defined]
from re._constants import (
    AT,
    BRANCH,
    IN,
    LITERAL,
    MAX_REPEAT,
    MIN_REPEAT,
    POSSESSIVE_REPEAT,
    SUBPATTERN,
)
from typing import Any

import yaml

from hippograph.text.rust_regex import translate
from hippograph.text.secret_rules import entropy

__all__ = [
    "KINGFISHER",
    "TITUS",
    "RuleSet",
    "YamlRule",
    "derive",
    "digest",
    "findings",
    "from_yaml",
    "load",
    "required_strings",
    "rules",
    "write_derived",
]

_RULES = Path(__file__).with_name("rules")


@dataclass(frozen=True)
class RuleSet:
    name: str
    directory: Path
    sha256: str
    ruleset: str | None  # a ruleset file listing the rule ids to use; None: by confidence


TITUS = RuleSet(
    "titus",
    _RULES / "titus",
    "b3b3f5d61a7b262fe55e514cfa5bf3988555fd5b66b02110de96c75191775a70",
    "rulesets/default.yml",
)
KINGFISHER = RuleSet(
    "kingfisher",
    _RULES / "kingfisher",
    "29689369664e4cecd3774ae6beeb3007b06a9b0f2461cc8fb437eb2c8f3c6110",
    None,
)
_CONFIDENT = frozenset({"medium", "high"})
_SPECIAL = "!@#$%^&*()_+-=[]{}|;:'\",.<>?/\\`~"  # Titus's default special characters
_SHORTEST = 3  # a required string shorter than this gates nothing: the rule runs on every text
_FEW = 4  # a class of up to this many characters is spelled out: `[us]` -> `u`, `s`


# A group's name that says it holds the secret, not an id beside it (`key_id`, `client_id`, `host`).
_SECRET_NAME = re.compile(
    r"(?i)^(?!.*(?:_id|name|host|domain|url|user)$).*(?:token|secret|pass|private|key|cred|body|auth|b64)"
)


@dataclass(frozen=True)
class YamlRule:
    id: str
    kind: str  # the rule's name: "GitHub Personal Access Token"
    source: str  # the pattern in Python's syntax, compiled on first use (`pattern`)
    keywords: frozenset[str]  # lowercase; every match holds one; empty: the rule always runs
    shortest: int  # characters in the shortest match
    min_entropy: float  # bits a character the secret must exceed; 0: no minimum
    min_digits: int = 0
    min_uppercase: int = 0
    min_lowercase: int = 0
    min_special: int = 0
    special: str = _SPECIAL
    ignore_if_contains: tuple[str, ...] = ()  # lowercase

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.source)

    @staticmethod
    def secret_span(match: re.Match[str]) -> tuple[int, int]:
        """The group holding the secret: the one named ``token``, else the first whose name says
        a secret (``password`` beside ``username`` and ``host``, ``client_secret`` after
        ``client_id``: Titus takes any named group there), else the first group, else the match."""
        names = sorted(match.re.groupindex.items(), key=lambda item: item[1])
        token = next((index for name, index in names if name.lower() == "token"), None)
        secret = next((index for name, index in names if _SECRET_NAME.search(name)), None)
        index = token or secret or (1 if match.re.groups else 0)
        return match.span(index)

    def keeps(self, secret: str) -> bool:
        if not secret or (self.min_entropy and entropy(secret) <= self.min_entropy):
            return False
        lowered = secret.lower()
        if any(word in lowered for word in self.ignore_if_contains):
            return False
        digits = sum(unicodedata.category(c) == "Nd" for c in secret)
        upper = sum(c.isupper() for c in secret)
        lower = sum(c.islower() for c in secret)
        special = sum(c in self.special for c in secret if not (c.isdigit() or c.isalpha()))
        return (
            digits >= self.min_digits
            and upper >= self.min_uppercase
            and lower >= self.min_lowercase
            and special >= self.min_special
        )


# --- the strings every match holds ---------------------------------------------------------------


def _chars(op: Any, av: Any) -> set[str] | None:
    """The characters (lowercase) an item matches, if they are a few: `k`, `[Kk]`, `[us]`."""
    if op is LITERAL:
        return {chr(av).lower()}
    if op is IN and av and all(o is LITERAL for o, _ in av):
        chars = {chr(v).lower() for _, v in av}
        return chars if len(chars) <= _FEW else None
    return None


def _choices(items: Sequence[Any]) -> list[frozenset[str]]:
    """Sets of strings such that every match of `items` holds one string of each set. A run of
    literals is spelled out in each of its few forms: ``(?:ghu|ghs)_`` parses as ``gh[us]_``."""
    found: list[frozenset[str]] = []
    runs = {""}
    for op, av in items:
        chars = _chars(op, av)
        if chars is not None and len(runs) * len(chars) <= _FEW**2:
            runs = {run + char for run in runs for char in chars}
            continue
        if op is AT:
            continue  # `\b`, `^`: zero-width, the run goes on
        if runs != {""}:
            found.append(frozenset(runs))
        runs = {""} if chars is None else chars
        if op is SUBPATTERN:
            found += _choices(av[3])
        elif op is BRANCH:
            each = [_best(_choices(branch)) for branch in av[1]]
            if all(each):
                found.append(frozenset().union(*each))  # type: ignore[arg-type]
        elif op in (MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT) and av[0] >= 1:
            found += _choices(av[2])
    if runs != {""}:
        found.append(frozenset(runs))
    return found


def _best(choices: list[frozenset[str]]) -> frozenset[str] | None:
    """The set whose shortest string is longest (fewest strings on a tie), if that is 3+ long."""
    ranked = sorted(choices, key=lambda c: (-min(map(len, c)), len(c)))
    return ranked[0] if ranked and min(map(len, ranked[0])) >= _SHORTEST else None


def required_strings(pattern: str) -> frozenset[str]:
    """Lowercase strings one of which every match of the Python `pattern` holds (any case);
    empty when no string of 3+ characters is needed."""
    return _required(sre_parse.parse(pattern))


def _required(parsed: Any) -> frozenset[str]:
    return _best(_choices(list(parsed))) or frozenset()


# A rule is compiled when a text first holds one of its strings: most never are in a process,
# and compiling all ~1,000 took 0.3 s of the first scan.
@functools.cache
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile(source)


# --- loading ------------------------------------------------------------------------------------


def digest(directory: Path) -> str:
    """SHA-256 over every file under `directory`: its path, a NUL, its bytes, a NUL, in path order."""
    hashed = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        hashed.update(path.relative_to(directory).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return hashed.hexdigest()


def _rule(entry: dict[str, Any]) -> YamlRule:
    body, flags, _ = translate(entry["pattern"])
    source = f"(?{flags})" * bool(flags) + body
    parsed = sre_parse.parse(source)  # once, for the strings it needs and its shortest match
    needs = entry.get("pattern_requirements") or {}
    return YamlRule(
        id=entry["id"],
        kind=entry["name"],
        source=source,
        keywords=_required(parsed),
        shortest=parsed.getwidth()[0],
        min_entropy=float(entry.get("min_entropy") or 0.0),
        min_digits=needs.get("min_digits", 0),
        min_uppercase=needs.get("min_uppercase", 0),
        min_lowercase=needs.get("min_lowercase", 0),
        min_special=needs.get("min_special_chars", 0),
        special=needs.get("special_chars") or _SPECIAL,
        ignore_if_contains=tuple(w.lower() for w in needs.get("ignore_if_contains") or ()),
    )


def load(rule_set: RuleSet) -> tuple[YamlRule, ...]:
    """The rules of `rule_set` that are used and report secrets, in file order (a ruleset's
    order, when it has one); a directory whose files are not the pinned ones is refused."""
    found = digest(rule_set.directory)
    if found != rule_set.sha256:
        raise RuntimeError(
            f"{rule_set.directory} has SHA-256 {found}, not {rule_set.sha256}: reinstall hippograph"
        )
    read = functools.partial(yaml.load, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    entries = {
        entry["id"]: entry
        for path in sorted((rule_set.directory / "rules").glob("*.yml"))
        for entry in read(path.read_text()).get("rules") or ()
    }
    if rule_set.ruleset:
        ids = read((rule_set.directory / rule_set.ruleset).read_text())["rulesets"][0]["include_rule_ids"]
        chosen = [entries[rule_id] for rule_id in ids]
    else:
        chosen = [e for e in entries.values() if e.get("confidence", "medium") in _CONFIDENT]
    return tuple(_rule(entry) for entry in chosen if _about_secrets(entry))


def rules() -> tuple[YamlRule, ...]:
    """The shipped rules, read once (a second caller waits for the first): Titus's, then
    Kingfisher's that Titus does not carry."""
    with _READING:
        return _read()


_READING = threading.Lock()


@functools.cache
def _read() -> tuple[YamlRule, ...]:
    """From ``rules/derived.json`` when it was derived from the pinned files (~30 ms), else from
    the files themselves (~0.5 s: the YAML, and each pattern translated and parsed)."""
    try:
        derived = json.loads(DERIVED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        derived = None
    if isinstance(derived, dict) and derived.get("from") == _derived_from():
        return tuple(_from_row(row) for row in derived["rules"])
    return from_yaml()


def from_yaml() -> tuple[YamlRule, ...]:
    titus = load(TITUS)
    carried = {rule.id for rule in titus}
    return titus + tuple(rule for rule in load(KINGFISHER) if rule.id not in carried)


# --- what a first scan needs, derived once ------------------------------------------------------

DERIVED = _RULES / "derived.json"
_DERIVED_FORMAT = 1


def _derived_from() -> dict[str, Any]:
    return {"format": _DERIVED_FORMAT, TITUS.name: TITUS.sha256, KINGFISHER.name: KINGFISHER.sha256}


def derive() -> dict[str, Any]:
    """The rules `from_yaml` reads, as ``rules/derived.json`` holds them: a capture hook or a CLI
    write (a process each) reads that instead of the YAML. A test checks the file is this."""
    return {"from": _derived_from(), "rules": [_to_row(rule) for rule in from_yaml()]}


def write_derived() -> None:
    """Write ``rules/derived.json`` again (after a rule directory and its digest changed)."""
    derived = derive()
    rows = ",\n".join(json.dumps(row, ensure_ascii=False) for row in derived["rules"])
    text = f'{{"from": {json.dumps(derived["from"], sort_keys=True)},\n"rules": [\n{rows}\n]}}\n'
    DERIVED.write_text(text, encoding="utf-8")  # a rule a line: a new rule set's diff reads


def _to_row(rule: YamlRule) -> list[Any]:
    return [
        sorted(v) if isinstance(v, frozenset) else list(v) if isinstance(v, tuple) else v
        for v in astuple(rule)
    ]


def _from_row(row: list[Any]) -> YamlRule:
    fields = {f.name: value for f, value in zip(dataclass_fields(YamlRule), row, strict=True)}
    fields["keywords"] = frozenset(fields["keywords"])
    fields["ignore_if_contains"] = tuple(fields["ignore_if_contains"])
    return YamlRule(**fields)


def _about_secrets(entry: dict[str, Any]) -> bool:
    """The tool reports the rule (``visible: false`` rules find an id another rule's check
    needs), and what it finds is a secret: not only an identifier, not a password's hash (Titus
    keeps those out of its default ruleset; a digest is no secret here)."""
    categories = entry.get("categories") or ()
    return (
        entry.get("visible", True)
        and ("identifier" not in categories or "secret" in categories)
        and not entry["name"].startswith("Password Hash")
    )


@functools.cache
def _index() -> tuple[dict[str, list[tuple[str, list[int]]]], tuple[int, ...]]:
    """{first three characters: [(keyword, indexes of the rules it gates)]}, and the indexes of
    the rules no keyword gates. A text's three-character pieces say which keywords to look for:
    a few lookups, not one search per keyword."""
    gates: dict[str, list[int]] = {}
    for index, rule in enumerate(rules()):
        for keyword in rule.keywords:
            gates.setdefault(keyword, []).append(index)
    by_head: dict[str, list[tuple[str, list[int]]]] = {}
    for keyword, indexes in gates.items():
        by_head.setdefault(keyword[:_SHORTEST], []).append((keyword, indexes))
    return by_head, tuple(i for i, rule in enumerate(rules()) if not rule.keywords)


def findings(text: str) -> Iterator[tuple[int, int, YamlRule]]:
    """(start, end, rule) of every secret a rule of the default ruleset finds in `text`."""
    by_head, ungated = _index()
    every = rules()
    lowered = text.lower()
    heads = {lowered[i : i + _SHORTEST] for i in range(len(lowered) - _SHORTEST + 1)}
    chosen = {i for i in ungated if len(text) >= every[i].shortest}
    for head in heads.intersection(by_head):
        for keyword, indexes in by_head[head]:
            if keyword in lowered:
                chosen.update(indexes)
    for index in sorted(chosen):
        rule = every[index]
        for match in rule.pattern.finditer(text):
            start, end = rule.secret_span(match)
            if start < end and rule.keeps(text[start:end]):
                yield start, end, rule
