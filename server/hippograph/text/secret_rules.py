"""The credential formats of a maintained rule set: gitleaks' default rules, loaded at start.

``rules/gitleaks.toml`` is gitleaks v8.30.1's ``config/gitleaks.toml`` (tag commit 83d9cd68,
MIT licence, ``rules/LICENSE.gitleaks``), shipped byte for byte and checked against its SHA-256
when loaded: to move to newer rules, replace the file and `RULES_SHA256`, nothing else.

`rule_findings` applies the rules the way gitleaks does: a rule runs only when one of its
keywords is in the text; its secret is the rule's secret group (else the first non-empty group,
else the match); a secret at or under the rule's entropy, or one the global or the rule's own
allowlists allow, is dropped.

Half of the rules are "semi-generic": a vendor's name, an assignment (``adobe_key = X``) and the
secret's shape. People write those secrets in prose too ("the Adobe key for staging is X"), so
`vendor_prose_findings` looks for the same shape after the vendor's name, anywhere in the
sentence, beside a credential word.

Pure: the file is read once, at import; no I/O after that, no logging.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

__all__ = [
    "RULES",
    "RULES_SHA256",
    "Rule",
    "entropy",
    "findings",
    "go_to_python",
    "rule_findings",
    "vendor_prose_findings",
]

RULES_FILE = Path(__file__).with_name("rules") / "gitleaks.toml"
RULES_SHA256 = "e163e53b9e7e8a8511e77271e2b323ed057759542a6d988258afe3a1fa329caf"

# The template gitleaks writes every semi-generic rule with (cmd/generate/config/utils).
_SEMI_GENERIC = re.compile(
    re.escape(r"(?i)[\w.-]{0,50}?(?:")
    + r"(?P<vendor>.+?)"
    + re.escape(r")(?:[ \t\w.-]{0,20})[\s'" + '"' + r"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'")
    + '"'
    + re.escape(r"\s=]{0,5}(")
    + r"(?P<shape>.+)"
    + re.escape(r")(?:[\x60'" + '"' + r"\s;]|\\[nr]|$)")
)


@dataclass(frozen=True)
class Allowlist:
    target: str  # what the regexes are matched against: "secret", "match" or "line"
    sources: tuple[str, ...]  # the regexes, in Python's syntax (compiled on first use)
    stopword_source: str | None  # a secret containing one of these (any case) is allowed
    every: bool  # condition AND: all the criteria given must hold, not any

    @property
    def regexes(self) -> tuple[re.Pattern[str], ...]:
        return tuple(map(_compiled, self.sources))

    @property
    def stopwords(self) -> re.Pattern[str] | None:
        return None if self.stopword_source is None else _compiled_words(self.stopword_source)

    def allows(self, secret: str, match: str, line: str) -> bool:
        subject = {"match": match, "line": line}.get(self.target, secret)
        checks = []
        if self.regexes:
            checks.append(any(r.search(subject) for r in self.regexes))
        if self.stopwords:
            checks.append(self.stopwords.search(secret.lower()) is not None)
        return bool(checks) and (all(checks) if self.every else any(checks))


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str  # what a refusal calls it: the id in words ("github pat", "slack webhook url")
    source: str  # the rule's regex in Python's syntax (compiled on first use: `pattern`)
    group: int  # the secret's group; 0: the first non-empty group, else the whole match
    entropy: float  # a secret must have more bits per character than this; 0: no minimum
    keywords: tuple[str, ...]  # lowercase; the rule runs only on a text containing one
    allowlists: tuple[Allowlist, ...]
    name_lead: bool = False  # the rule's `[\w.-]{0,50}?` before its key name is matched apart
    vendor_source: str | None = None  # semi-generic rules: the vendor's names
    shape_source: str | None = None  # ... and the secret's shape, anchored at both ends

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.source)

    @property
    def vendor(self) -> re.Pattern[str] | None:
        return None if self.vendor_source is None else _compiled(self.vendor_source)

    @property
    def shape(self) -> re.Pattern[str] | None:
        return None if self.shape_source is None else _compiled(self.shape_source)


# Patterns are compiled when a text first needs them: compiling all ~470 at import took ~0.15 s
# of every process's start.
@functools.cache
def _compiled(source: str) -> re.Pattern[str]:
    # RE2's \w, \s, \b and (?i) are ASCII.
    return re.compile(source, re.ASCII)


@functools.cache
def _compiled_words(source: str) -> re.Pattern[str]:
    return re.compile(source)


# --- Go (RE2) to Python ---------------------------------------------------------------------------

_POSIX_CLASSES = {"alnum": "A-Za-z0-9", "alpha": "A-Za-z", "digit": "0-9", "upper": "A-Z", "lower": "a-z"}


def _group_end(pattern: str, at: int) -> tuple[int, list[int]]:
    """Index of the `)` closing the group that `at` is inside (len(pattern) at top level), and
    the indexes of the `|` that split that group from `at` on."""
    depth, i, in_class = 0, at, False
    bars: list[int] = []
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]" or pattern[i + 1 : i + 3] == "^]":
                i += 2 if pattern[i + 1] == "]" else 3
                continue
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return i, bars
            depth -= 1
        elif char == "|" and depth == 0:
            bars.append(i)
        i += 1
    return len(pattern), bars


_INLINE_FLAGS = re.compile(r"(?<!\\)\(\?([a-z]+)\)")


def go_to_python(pattern: str) -> str:
    """A gitleaks (RE2) pattern in Python's syntax: flags set mid-pattern (``\\b(p8e-(?i)[a-z]``)
    become scoped groups to the end of their group (each later alternative its own), POSIX
    classes are spelled out, ``\\z`` is ``\\Z``. Everything else means the same in both."""
    pattern = re.sub(r"\[:(\w+):\]", lambda m: _POSIX_CLASSES[m.group(1)], pattern)
    pattern = pattern.replace(r"\z", r"\Z")
    while flag := _INLINE_FLAGS.search(pattern, 1):  # one at the very start is global already
        close, bars = _group_end(pattern, flag.end())
        # The flag holds to the group's end, across its later alternatives: `x(?i)b|c` is
        # `x(?i:b)|(?i:c)`, not `x(?i:b|c)`.
        cuts = [flag.end(), *(b + 1 for b in bars)]
        ends = [*bars, close]
        scoped = "|".join(f"(?{flag.group(1)}:{pattern[a:b]})" for a, b in zip(cuts, ends, strict=True))
        pattern = pattern[: flag.start()] + scoped + pattern[close:]
    return pattern


# --- loading ------------------------------------------------------------------------------------


# How gitleaks starts a rule about a key's name (`MY_APP_ADOBE_KEY = ...`). Python would try that
# lazy run from every character; the rule is matched without it, and the run found after.
_NAME_LEAD = r"(?i)[\w.-]{0,50}?"
_NAME_RUN = re.compile(r"[\w.-]{1,50}$", re.ASCII)


def _allowlist(entry: dict[str, Any]) -> Allowlist | None:
    if entry.get("paths") and (entry.get("condition") == "AND" or not entry.get("regexes")):
        return None  # about file paths: a remembered text has none
    return Allowlist(
        target=entry.get("regexTarget", "secret"),
        sources=tuple(go_to_python(r) for r in entry.get("regexes", ())),
        stopword_source=_any_of(entry.get("stopwords", ())),
        every=entry.get("condition") == "AND",
    )


def _any_of(words: list[str]) -> str | None:
    # One alternation, longest first: ~1,500 stopwords in one pass over a secret.
    ordered = sorted({w.lower() for w in words}, key=len, reverse=True)
    return "|".join(map(re.escape, ordered)) if ordered else None


def _rule(entry: dict[str, Any]) -> Rule:
    # The catch-all rule fits the template too, with credential words for a vendor: not one.
    semi = not entry["id"].startswith("generic") and _SEMI_GENERIC.fullmatch(entry["regex"])
    vendor = shape = None
    if semi:
        vendor = go_to_python(rf"(?i)(?<![a-z])(?:{semi.group('vendor')})")
        shape = go_to_python(rf"(?i)(?:{semi.group('shape')})")
    lists = (_allowlist(a) for a in entry.get("allowlists", ()))
    return Rule(
        id=entry["id"],
        kind=entry["id"].replace("-", " "),
        source=go_to_python(entry["regex"].replace(_NAME_LEAD, "(?i)", 1)),
        name_lead=entry["regex"].startswith(_NAME_LEAD),
        group=entry.get("secretGroup", 0),
        entropy=float(entry.get("entropy", 0.0)),
        keywords=tuple(k.lower() for k in entry.get("keywords", ())),
        allowlists=tuple(a for a in lists if a is not None),
        vendor_source=vendor,
        shape_source=shape,
    )


def _load() -> tuple[tuple[Rule, ...], Allowlist]:
    raw = RULES_FILE.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != RULES_SHA256:
        raise RuntimeError(f"{RULES_FILE} has SHA-256 {digest}, not {RULES_SHA256}: reinstall hippograph")
    config = tomllib.loads(raw.decode())
    rules = tuple(_rule(r) for r in config["rules"] if "regex" in r)
    return rules, _allowlist(config["allowlist"]) or Allowlist("secret", (), None, False)


RULES, _GLOBAL = _load()
_KEYWORDS = sorted({k for rule in RULES for k in rule.keywords})
_RULES_BY_KEYWORD = {k: [i for i, rule in enumerate(RULES) if k in rule.keywords] for k in _KEYWORDS}
_UNGATED = frozenset(i for i, rule in enumerate(RULES) if not rule.keywords)
_SEMI_GENERIC_RULES = tuple(rule for rule in RULES if rule.vendor_source is not None)


def entropy(text: str) -> float:
    """Shannon entropy in bits per character, as gitleaks computes it."""
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0


def _keywords_in(text: str) -> set[str]:
    lowered = text.lower()
    return {k for k in _KEYWORDS if k in lowered}


def _line(text: str, start: int, end: int) -> str:
    return text[text.rfind("\n", 0, start) + 1 : (text.find("\n", end) + 1 or len(text) + 1) - 1]


def _kept(rule: Rule, secret: str, match: str, line: str) -> bool:
    if not secret or (rule.entropy and entropy(secret) <= rule.entropy):
        return False
    if rule.id.startswith("generic") and not any(c.isdigit() for c in secret):
        return False  # gitleaks' own filter for its generic rule: a word is no key
    return not any(a.allows(secret, match, line) for a in (_GLOBAL, *rule.allowlists))


# Punctuation that ends a clause: the rules end a secret at a space, quote or line end, so in
# prose (", use it", "X.") it is read as a space. A secret holds no space, so it ends before one.
_CLAUSE_PUNCTUATION = re.compile(r"[.,!?)\]]+(?=\s|$)")


def findings(text: str) -> Iterator[tuple[int, int, Rule]]:
    """(start, end, rule) of every secret the rules find: as gitleaks reads them
    (`rule_findings`), then in prose after a vendor's name (`vendor_prose_findings`)."""
    present = _keywords_in(text)
    yield from rule_findings(text, present)
    yield from vendor_prose_findings(text, present)


def rule_findings(text: str, present: set[str] | None = None) -> Iterator[tuple[int, int, Rule]]:
    """(start, end, rule) of every secret a rule finds, in rule order. `present`: the rules'
    keywords in `text`, when the caller has them."""
    present = _keywords_in(text) if present is None else present
    triggered = {i for k in present for i in _RULES_BY_KEYWORD[k]}
    prose = _CLAUSE_PUNCTUATION.sub(lambda m: " " * len(m.group()), text)
    for rule in (RULES[i] for i in sorted(triggered.union(_UNGATED))):
        for match in rule.pattern.finditer(prose):
            index = rule.group or next((i for i, g in enumerate(match.groups(), 1) if g), 0)
            start, end = match.span(index)
            whole = match.group()
            if rule.name_lead:
                lead = _NAME_RUN.search(prose, max(0, match.start() - 50), match.start())
                whole = (lead.group() if lead else "") + whole
            if _kept(rule, text[start:end], whole, _line(text, start, end)):
                yield start, end, rule


# A word that says a value is a credential; "key" alone only in prose ("the Adobe key for ...").
_CREDENTIAL_WORD = re.compile(r"(?i)(?<![a-z])(?:key|token|secret|password|passwd|credential|pat)s?(?![a-z])")
# A token: what stands between spaces, quotes and closing punctuation.
_TOKEN = re.compile(r"(?<![^\s\"'`(\[{<:=,])[^\s\"'`)\]}>,;]{8,300}?(?=[.,;:!?]?(?:[\s\"'`)\]}>]|$))")
# A sentence ends at a full stop, question or exclamation mark followed by a space, or a line end.
_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")


def vendor_prose_findings(text: str, present: set[str] | None = None) -> Iterator[tuple[int, int, Rule]]:
    """Secrets of a semi-generic rule's shape after its vendor's name, in the same sentence as a
    credential word: "we rotated the Adobe key to X", "Algolia: key X for the search box"."""
    present = _keywords_in(text) if present is None else present
    candidates = [r for r in _SEMI_GENERIC_RULES if not present.isdisjoint(r.keywords)]
    if not candidates:
        return
    bounds = [0, *(m.end() for m in _SENTENCE_END.finditer(text)), len(text)]
    for begin, finish in pairwise(bounds):
        sentence = text[begin:finish]
        if not _CREDENTIAL_WORD.search(sentence):
            continue
        for rule in candidates:
            assert rule.vendor is not None and rule.shape is not None
            named = rule.vendor.search(sentence)
            if named is None:
                continue
            for token in _TOKEN.finditer(sentence, named.end()):
                value = token.group()
                if not rule.shape.fullmatch(value) or not _random_enough(value):
                    continue
                start, end = begin + token.start(), begin + token.end()
                if _kept(rule, value, sentence, sentence):
                    yield start, end, rule


def _random_enough(value: str) -> bool:
    # A shape like [a-z0-9]{32} also fits a long word; random draws of it nearly always mix
    # letters and digits. An all-digit shape ([0-9]{16}) is taken as it is.
    return value.isdigit() or (any(c.isdigit() for c in value) and any(c.isalpha() for c in value))
