"""Finding credentials in text before it is stored: hippograph never keeps a secret.

`scan` returns where the secrets are (`SecretFinding`: a kind and character offsets),
`redact` masks them, `describe` writes the refusal a caller reads: kinds and locations,
never the secret itself.

Two families of detectors:

* formats: a table of (kind, regex, groups) for credentials with a recognisable shape
  (vendor prefixes, private key armour, JWTs, ``user:password@`` in URLs, ``password=...``);
* entropy: any other long token that looks random (both cases and digits, short character
  runs, few pronounceable words, high Shannon entropy), except hex digests, UUIDs, labelled
  digests, URLs, public keys and certificates: after a credential word, or on its own when
  nothing names it an id (secret_tokens.bare_token_findings).

Pure: no I/O, no logging. Token patterns start at a look-behind over their own characters and
every repetition is bounded, so adversarial text scans in linear time.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from hippograph.text.secret_context import CURSOR_BEFORE_TOKEN, context_findings, file_path, id_named, named
from hippograph.text.secret_formats import CLI_PASSWORD, VENDOR_TOKENS
from hippograph.text.secret_rules import RULES
from hippograph.text.secret_rules import findings as rule_findings
from hippograph.text.secret_rules_yaml import findings as yaml_rule_findings
from hippograph.text.secret_tokens import entropy_findings, prefixed_token_findings, public_or_digest

__all__ = ["SecretFinding", "describe", "redact", "scan"]


@dataclass(frozen=True)
class SecretFinding:
    kind: str  # human name: "GitHub token", "password in URL", "high-entropy token", ...
    start: int  # offset of the first character of the secret in the scanned text
    end: int  # offset just past its last character
    line: int = 0  # 1-based line of `start`; 0 when unknown (a finding built by hand)
    column: int = 0  # 1-based column of `start` on that line
    end_line: int = 0  # 1-based line of the last character

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.kind.lower()).strip("-")

    @property
    def location(self) -> str:
        """Where the secret is, e.g. "line 2, characters 5-44" (1-based, inclusive); never what."""
        if not self.line:
            return f"characters {self.start + 1}-{self.end}"
        if self.end_line > self.line:
            return f"lines {self.line}-{self.end_line}"
        return f"line {self.line}, characters {self.column}-{self.column + self.end - self.start - 1}"


# --- what a value looks like --------------------------------------------------------------------

Accept = Callable[[str, bool], bool]  # (flagged text, whether it was quoted) -> is it a secret?

# Values that stand for a secret without being one: docs, templates, already-masked text.
_PLACEHOLDER = re.compile(
    r"""
    [*xX.•#_\-]*                            # '', ***, xxx, ..., ---
    | [<\[({].* | (?-i:.*%s.*|.*%\(\w+\)s.*)  # <your-password>, [REDACTED:...], {{ vault }}, '%s:%s'
    | \$[{(].* | (?-i:\$[A-Z_][A-Z0-9_]*)   # ${DB_PASSWORD}, $(pass show db), $PGPASS
    | .*redacted.* | .*example.*            # REDACTED, an_example_value
    | (?:~|\.{1,2})?/.* | [a-z]:\\.*        # $PWD is a directory: /home/me, C:\Users
    """,
    re.IGNORECASE | re.VERBOSE,
)
# Words that follow "password:" in code and docs without being a password.
_NOT_A_VALUE = frozenset(
    """
    password passwd pwd pass passphrase secret secrets token tokens key apikey api_key credential
    credentials str string int bool bytes any none null nil undefined true false yes no on off
    optional required hidden masked empty unset self this placeholder your_password yourpassword
    your-password 1password bitwarden keychain lastpass vault secretstr user username default
    from same below above blank unknown stored
    """.split()
)
# `settings.api_token`, `Token.Name`, `user_password`, `PRIVATE_KEY_TYPES`: names, not values.
_REFERENCE = re.compile(r"[A-Za-z_]+(?:\.[A-Za-z_][A-Za-z_]*\d{0,3})+|[a-z]+_[a-z_]+|[A-Z]+_[A-Z_]+")
# Prose around "password ... is X" that is not a password: an address, a link, code.
_NOT_PROSE_PASSWORD = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+|.*://.*|.*\w[(\[].*")


def _has(value: str, *classes: str) -> bool:
    return all(re.search(c, value) for c in classes)


def _not_placeholder(value: str, quoted: bool = False) -> bool:
    return not (_PLACEHOLDER.fullmatch(value) or value.lower() in _NOT_A_VALUE)


def _url_password(value: str, quoted: bool = False) -> bool:
    # `https://a:b@host` is documentation; `http://host:8080?next=a@b` is a port and a query.
    port = re.match(r"\d{1,5}(?:[?#]|$)", value)
    return len(value) >= 4 and _not_placeholder(value) and not port


def _password_value(value: str, quoted: bool) -> bool:
    """A right-hand side that is a value, not a type, variable, expression or prose."""
    if not quoted:
        # Judged without closing punctuation (`password=None):`), masked with it (`=s3cr3t!`).
        value = value.rstrip(".:!?)]}")
    if not _not_placeholder(value) or len(value) < 3:
        return False
    if quoted:
        return True
    # `password: The password for the account.`, `password=get_pw()`, `=settings.api_token`
    too_short_a_word = value.isalpha() and len(value) < 4
    return not (too_short_a_word or re.search(r"[(\[]", value) or _REFERENCE.fullmatch(value))


def _credential_value(value: str, quoted: bool) -> bool:
    """Credential keys (token, secret, api key) hold long random values, not words or numbers."""
    classes = sum(bool(re.search(c, value)) for c in ("[a-z]", "[A-Z]", "[0-9]", r"[^A-Za-z0-9]"))
    # Not `Whitespace`, `my-app`, `12345678`; a long number is (Discord, Asana client credentials).
    shaped = classes >= 3 or _has(value, "[0-9]", "[A-Za-z]") or re.fullmatch(r"\d{12,}", value)
    return len(value) >= 8 and bool(shaped) and _password_value(value, quoted)


def _key_value(value: str, quoted: bool) -> bool:
    """A bare ``key`` names many things (`sort_key`, `cache_key`): its value must look random."""
    mixed = len(value) >= 12 and _has(value, "[a-z]", "[A-Z]", "[0-9]")
    random_shape = mixed or _HEX_KEY.fullmatch(value) or re.fullmatch(r"\d{12,}", value)
    # `object_key=uploads/2024/08/Kl9a...jpg`: an object's path; `GPG key: https://keys.openpgp.org/...`:
    # a link to a host (not `vault://Zx9Q...`)
    plain = not (_REFERENCE.fullmatch(value) or file_path(value) or _LINK_TO_HOST.match(value))
    return bool(random_shape) and _password_value(value, quoted) and plain


_LINK_TO_HOST = re.compile(r"[A-Za-z][\w+.-]*://[\w-]+(?:\.[\w-]+)+")


def _password_like(value: str, quoted: bool = False) -> bool:
    """Prose ("the wifi password is ...") needs a value that reads like a password."""
    shaped = _has(value, "[A-Za-z]", r"[0-9]|[^\w\s]")
    prose = not (_NOT_PROSE_PASSWORD.fullmatch(value) or _REFERENCE.fullmatch(value))
    return shaped and prose and _not_placeholder(value)


def _digit_and_letter(value: str, quoted: bool = False) -> bool:
    return _has(value, "[0-9]", "[A-Za-z]")


def _random_base64(value: str, quoted: bool = False) -> bool:
    return _has(value, "[a-z]", "[A-Z]", "[0-9]")


def _key_material(value: str, quoted: bool = False) -> bool:
    return re.search(r"[A-Za-z0-9+/]{40}", value) is not None  # not just the header, quoted in prose


# --- format detectors ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Detector:
    kind: str
    pattern: re.Pattern[str]
    groups: tuple[str, ...] = ()  # named groups holding the secret; () flags the whole match
    accept: Accept | None = None  # False drops the match


def _d(kind: str, pattern: str, *groups: str, accept: Accept | None = None) -> _Detector:
    return _Detector(kind, re.compile(pattern), groups, accept)


# A token starts where no token character precedes it: a long run is tried from its first
# character only, so scanning stays linear however the text repeats a prefix.
_B = r"(?<![\w-])"
_E = r"(?![\w-])"
# A bare `pass` is prose ("first pass: ..."); `db_pass`, `PGPASS`, `userPass` are keys.
_PASSWORD_KEY = r"(?:password|passwd|passphrase|passcode|pwd|(?<=[\w.-])pass)"
_HEX_KEY = re.compile(r"[0-9a-fA-F]{16,}|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
# `herokuKey`, `ACCESS_KEY`; not `site_key` or `publicKey` (public by design).
_KEY = r"(?<!site[_.-])(?<!site)(?<!public[_.-])(?<!public)(?<!publishable[_.-])key"
_CREDENTIAL_KEY = (
    rf"(?:secret|{CURSOR_BEFORE_TOKEN}token|api[_-]?key|access[_-]?key|"
    r"private[_-]?key|auth[_-]?key|credentials?)"
)
_ASSIGN = r"""["']?[ \t]{0,8}(?::=|=>|=(?!=)|:(?=[ \t]))[ \t]{0,8}"""  # not `==`, not `passwd:dir`
_QUOTED = r""""(?P<dq>[^"\n]{1,200})"|'(?P<sq>[^'\n]{1,200})'|`(?P<bq>[^`\n]{1,200})`"""
_BARE = r"""(?P<bare>[^\s'"`,;&<>]{1,200})"""


def _assignment(kind: str, keyword: str, accept: Accept) -> _Detector:
    # The key ends with the keyword (`DB_PASSWORD=`, `clientSecret:`), so `password_min_length=12`
    # is not an assignment; the keyword starts a word, follows `_`, `-`, `.` or a camelCase hump.
    prefix = r"(?:[\w.-]{0,40}[_.-]|[\w.-]{0,40}(?<=[a-z0-9])(?=[A-Z])|[A-Z0-9]{1,40}(?=[A-Z]))"
    pattern = rf"(?<![\w.-]){prefix}?(?i:{keyword}){_ASSIGN}(?:{_QUOTED}|{_BARE}{_THEN})"
    return _d(kind, pattern, "dq", "sq", "bq", "bare", accept=accept)


# The word after a bare value, if one follows on the line: `password: generate a new one in the
# vault` is an instruction (a lowercase word after a colon, then more words), not a password.
# Looked at, not consumed: the next assignment on the line (`secret: X token: Y`) is found too.
_THEN = r"(?:(?=(?P<then>[ \t]+[a-z]+\b))|)"
_COLON_BEFORE = re.compile(r":[ \t]*\Z")


def _instruction(text: str, match: re.Match[str], start: int) -> bool:
    """Whether an assignment's bare value opens a sentence after a colon (``_THEN``)."""
    value = match.group("bare")
    after_colon = _COLON_BEFORE.search(text, match.start(), start) is not None
    return bool(match.group("then")) and value.isalpha() and value.islower() and after_colon


def _prose(kind: str, keywords: str, accept: Accept) -> _Detector:
    # "the wifi password is X", "the root password for the VM: X", "password changed to X",
    # "Password - X": the value follows a connector, after an optional "for/of/on/at/to <what>".
    about = r"[ \t]+(?:for|of|on|at|to)[ \t][^\n]{0,40}?"
    connector = r"(?:[ \t]+(?:is|was|is now|(?:changed|set)?[ \t]*to)|[ \t]*:|[ \t]+[-–])"
    value = r"""[ \t]+["'`]?(?P<s>[^\s"'`]{6,200}?)["'`]?[.,;!?)]?(?!\S)"""
    return _d(kind, rf"(?i:\b(?:{keywords}))(?:{about})?{connector}{value}", "s", accept=accept)


_DETECTORS: tuple[_Detector, ...] = (
    # Most specific first: when findings overlap, the earliest kind in this table names the span.
    _d(
        "private key block",
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[^-]|-(?!----)){0,20000}"
        r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)?",
        accept=_key_material,
    ),
    _d(
        "password on a command line",
        rf"(?:{CLI_PASSWORD})(?:{_QUOTED}|{_BARE})",
        "dq",
        "sq",
        "bq",
        "bare",
        accept=_password_value,
    ),
    _d("Slack webhook URL", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[\w/-]{20,200})", "s"),
    _d("Teams webhook URL", r"\.webhook\.office\.com/webhookb2/(?P<s>[\w@/-]{40,400})", "s"),
    _d("Discord webhook URL", r"discord(?:app)?\.com/api/webhooks/\d{17,20}/(?P<s>[\w-]{60,80})", "s"),
    # In a link too: `api.telegram.org/bot123456789:AA.../sendMessage`.
    _d("Telegram bot token", r"(?:(?<=/bot)|(?<![\w:]))\d{8,10}:AA[A-Za-z0-9_-]{33}" + _E),
    _d("Azure storage account key", r"(?i:AccountKey)=(?P<s>[A-Za-z0-9+/]{40,100}={0,2})", "s"),
    _d("Azure SAS signature", r"[?&]sig=(?P<s>[A-Za-z0-9%+/]{30,200}(?:=|%3D){0,2})", "s"),
    _d("JWT", _B + r"eyJ[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{8,8000}\.[A-Za-z0-9_-]{8,4000}" + _E),
    # A signed token whatever its signature's length: a JSON header, then a JSON payload.
    _d("JWT", _B + r"eyJ[A-Za-z0-9_-]{8,4000}\.eyJ[A-Za-z0-9_-]{8,8000}(?:\.[A-Za-z0-9_-]{0,4000})?" + _E),
    _d(
        "AWS secret access key",
        r"(?i:aws|secret)[\w \t\"':=,.-]{0,40}?(?<![A-Za-z0-9/+])(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        "s",
        accept=_random_base64,
    ),
    _d(
        "password in URL",
        r"(?<![\w+.-])[A-Za-z][\w+.-]{1,20}://[^\s:/@?#]{0,128}:(?P<s>[^\s/]{1,256})@[\w\[]",
        "s",
        accept=_url_password,
    ),
    _d(
        "bearer token",
        r"(?i:\bbearer|\bauthorization:[ \t]*token)[ \t]{1,8}(?P<s>[A-Za-z0-9._~+/-]{16,4000}=*)" + _E,
        "s",
        accept=_digit_and_letter,
    ),
    _d(
        "HTTP basic credentials",
        r"(?i:\bauthorization:[ \t]*basic)[ \t]{1,8}(?P<s>[A-Za-z0-9+/]{8,1000}=*)",
        "s",
    ),
    _assignment("password assignment", _PASSWORD_KEY, _password_value),
    _prose("password", r"password|passphrase|passcode", _password_like),
    _assignment("credential assignment", _CREDENTIAL_KEY, _credential_value),
    _assignment("credential assignment", _KEY, _key_value),
)


_ENTROPY_KIND = "high-entropy token"  # what secret_tokens.entropy_findings finds


# --- scan, redact, describe ---------------------------------------------------------------------


# Shapes no detector can flag, answered without running them (an import scans every string of
# every record, most of them ids and times): under 7 characters (the shortest finding is
# `pwd=abc`), hippograph's own ids, ISO times, plain numbers (no lowercase letter, so not random)
# and names of a few short words (field names, kinds, tags, most entity names: no format is all
# letters in words of under 8, and a value after a credential word is longer or mixed).
_NOTHING_TO_FIND = re.compile(
    r".{0,6}|[a-z_]{1,40}|(?:[A-Za-z]{1,7} ){0,5}[A-Za-z]{1,7}|[fe]_[0-9a-f]{16}"
    r"|\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d{1,9})?)?)?(?:Z|[+-]\d\d:?\d\d)?"
    r"|[+-]?\d{1,40}(?:\.\d{1,40})?",
    re.DOTALL,
)


# Priorities: lower is more specific, and names a span where findings overlap. The rule set's
# vendor formats come right after private key blocks; its catch-all rule (generic-api-key) and the
# entropy detector, which name no vendor, last.
_VENDOR_RULES = tuple(rule for rule in RULES if not rule.id.startswith("generic"))
_RULE_PRIORITY = {rule.id: 1 + i for i, rule in enumerate(_VENDOR_RULES)}
_WIDER_BASE = 1 + len(_VENDOR_RULES)
_DETECTOR_BASE = _WIDER_BASE + len(VENDOR_TOKENS)
# The wider vendor shapes, in one pass; the first kind whose pattern matches names a token.
_WIDER = re.compile(_B + "(?:" + "|".join(f"(?:{p})" for _, p in VENDOR_TOKENS) + ")" + _E)
_WIDER_KINDS = tuple((kind, re.compile(pattern)) for kind, pattern in VENDOR_TOKENS)
# Formats wide enough to spell ordinary words need a sign of randomness.
_WIDER_ACCEPT: dict[str, Accept] = {
    "OpenAI API key": _digit_and_letter,
    "Mailgun API key": _digit_and_letter,
    "Hugging Face token": lambda value, quoted: _has(value, "[0-9]|[A-Z].*[a-z]|[a-z].*[A-Z]"),
}


_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")  # what `redact` writes
_URL_PASSWORD = re.compile(r"://[^\s:@/]*:([^\s@/]+)@")


def _yaml_rule_secret(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Where the secret a Titus or Kingfisher rule found is: the password alone when it found a
    link with one (`postgres://app:X@db`: the rule's group is the whole link), nothing when that
    password or the value is a placeholder (`mysql://root:<password>@`)."""
    password = _URL_PASSWORD.search(text, start, end)
    if password:
        return password.span(1) if _url_password(password.group(1)) else None
    return (start, end) if _not_placeholder(text[start:end]) else None


def _wider_findings(text: str) -> Iterable[tuple[int, int, int, str]]:
    for match in _WIDER.finditer(text):
        token = match.group()
        index = next((i for i, (_, p) in enumerate(_WIDER_KINDS) if p.fullmatch(token)), 0)
        kind = _WIDER_KINDS[index][0]
        accept = _WIDER_ACCEPT.get(kind)
        if accept is None or accept(token, False):
            yield match.start(), match.end(), _WIDER_BASE + index, kind


_GENERIC_PRIORITY = _DETECTOR_BASE + len(_DETECTORS)
_YAML_PRIORITY = _GENERIC_PRIORITY  # Titus's and Kingfisher's names, after gitleaks'
_CONTEXT_PRIORITY = _GENERIC_PRIORITY + 1
_ENTROPY_PRIORITY = _CONTEXT_PRIORITY + 1


def _raw_findings(text: str, entropy: bool = True) -> Iterable[tuple[int, int, int, str]]:
    """(start, end, priority, kind) for every detector hit; lower priority numbers are more specific."""
    for start, end, rule in rule_findings(text):
        if rule.id.startswith("generic") and (
            public_or_digest(text, start) or named(text[start:end]) or id_named(text, start)
        ):
            continue  # the catch-all rule takes any value with a digit: not a name, not an id's
        yield start, end, _RULE_PRIORITY.get(rule.id, _GENERIC_PRIORITY), rule.kind
    masked = [m.span() for m in _MARKER.finditer(text)]
    for start, end, found in yaml_rule_findings(text):
        # A reCAPTCHA site key has its secret key's shape (`site_key: 6Lc...` is public);
        # `amqp://user:[REDACTED:password-in-url]@host` was masked already.
        secret = None if public_or_digest(text, start) else _yaml_rule_secret(text, start, end)
        if secret and not any(a < secret[1] and secret[0] < b for a, b in masked):
            yield *secret, _YAML_PRIORITY, found.kind
    yield from _wider_findings(text)
    for index, detector in enumerate(_DETECTORS):
        priority = index + _DETECTOR_BASE if index else 0
        for match in detector.pattern.finditer(text):
            group = next((g for g in detector.groups if match.group(g) is not None), 0)
            start, end = match.span(group)
            quoted = group in ("dq", "sq", "bq")
            if start == end or (detector.accept and not detector.accept(match.group(group), quoted)):
                continue
            if group == "bare" and "then" in detector.pattern.groupindex and _instruction(text, match, start):
                continue
            yield start, end, priority, detector.kind
    if entropy:  # the detectors of random-looking values, after a credential word or a prefix
        for start, end in context_findings(text):
            yield start, end, _CONTEXT_PRIORITY, "credential"
        for start, end in prefixed_token_findings(text):
            yield start, end, _CONTEXT_PRIORITY, "token"
        for start, end in entropy_findings(text):
            yield start, end, _ENTROPY_PRIORITY, _ENTROPY_KIND


def scan(text: str, *, entropy: bool = True) -> list[SecretFinding]:
    """The secrets in `text`, sorted by start and non-overlapping: overlapping hits merge into
    one span named by the most specific kind. ``entropy=False`` looks for credential formats
    only, for values random by design (session ids), which the entropy detector would flag."""
    if _NOTHING_TO_FIND.fullmatch(text):
        return []
    merged: list[tuple[int, int, int, str]] = []  # (start, end, priority, kind)
    for start, end, priority, kind in sorted(_raw_findings(text, entropy)):
        if merged and start < merged[-1][1]:
            last = merged[-1]
            named = min(last[2:], (priority, kind))
            merged[-1] = (last[0], max(last[1], end), *named)
        else:
            merged.append((start, end, priority, kind))
    line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
    findings = []
    for start, end, _, kind in merged:
        line = bisect_right(line_starts, start)
        column = start - line_starts[line - 1] + 1
        findings.append(SecretFinding(kind, start, end, line, column, bisect_right(line_starts, end - 1)))
    return findings


def redact(text: str, findings: Iterable[SecretFinding]) -> str:
    """`text` with each finding's span replaced by ``[REDACTED:<kind-slug>]``."""
    parts, cursor = [], 0
    for finding in sorted(findings, key=lambda f: (f.start, -f.end)):
        if finding.end <= cursor:
            continue  # inside a span already masked
        parts += [text[cursor : max(cursor, finding.start)], f"[REDACTED:{finding.slug}]"]
        cursor = finding.end
    parts.append(text[cursor:])
    return "".join(parts)


_SHOWN = 5  # locations named in a refusal; the rest are counted
# What a caller would call the secret in the fact that replaces it ("the password is in 1Password").
_PLAIN_NAME = {
    "password in URL": "password",
    "password assignment": "password",
    "credential assignment": "credential",
    "high-entropy token": "token",
    "private key block": "private key",
}


def _plain_name(kind: str) -> str:
    """What the caller would call it: a password, a token, a key ("github pat": a token)."""
    if kind in _PLAIN_NAME:
        return _PLAIN_NAME[kind]
    last = kind.split()[-1].lower()
    return last if last in ("password", "token", "key", "secret") else "token"


def _article(kind: str) -> str:
    first = kind.split()[0]
    spelled_out = (first.isupper() or first == "npm") and first[0].upper() in "AEFHILMNORSX"
    return "an" if spelled_out or first[0].lower() in "aeiou" else "a"


def describe(findings: Sequence[SecretFinding], *, field: str = "the content", maskable: bool = True) -> str:
    """The refusal for a tool error: which field, which kinds, where, and what to do; never the secret.

    ``maskable=False`` for a field whose masked value would be wrong (a name, tag, scope, session
    id, relation): it is refused in either setting of HIPPOGRAPH_SECRETS.
    """
    if not findings:
        return "no secret found"
    named = [f"{_article(f.kind)} {f.kind} ({f.location})" for f in findings[:_SHOWN]]
    if len(findings) > _SHOWN:
        named.append(f"{len(findings) - _SHOWN} more")
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    plain = _plain_name(findings[0].kind)
    them = "it" if len(findings) == 1 else "them"
    if not maskable:
        return (
            f"refused: {field} contains {listed}. hippograph never stores credentials: send {field} "
            f"without {them}. Names, tags, scopes, session ids and relations are never stored masked "
            "(masked ones would merge with each other), whatever HIPPOGRAPH_SECRETS says."
        )
    return (
        f"refused: {field} contains {listed}. hippograph never stores credentials: remove {them} "
        f"and send the fact without {them} (e.g. 'the {plain} is in 1Password'), "
        f"or set HIPPOGRAPH_SECRETS=redact to store {them} masked."
    )
