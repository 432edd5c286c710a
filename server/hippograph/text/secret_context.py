"""Secrets told in a sentence: a random-looking value after a credential word.

People paste keys into chat the way they talk: "we rotated the Adobe key yesterday, the new one
is X", "FYI the API key is X until Friday", "new Plaid token X expires soon". No format says
where such a value starts, so this looks at the few words after a credential word (key, token,
secret, password, credentials, ...) in the same sentence, and takes the first one shaped like a
generated secret: long, random-looking, not a word, name, path, link, date, version or id.

What ids look like is the other half: a commit, a digest, a fingerprint or a request id after
"key" is named as such ("the key change is in commit 3f2a9c1..."), so a value after such a word
is not taken. Public keys (site keys, publishable keys, public keys) are public by design.

Pure: no I/O, no logging; every repetition is bounded.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterator

from hippograph.text.secret_rules import entropy

__all__ = [
    "ANY_HEX",
    "CHARACTER_RUN",
    "CURSOR_BEFORE_TOKEN",
    "ID_WORD",
    "NOT_A_VALUE",
    "UUID_SHAPE",
    "context_findings",
    "file_path",
    "id_named",
    "named",
    "path_like",
    "secret_shaped",
    "spelled",
    "wordlike",
]

# Before "token": a cursor's name (`next_page_token`, `nextPageToken`, "the continuation token"),
# not a credential's (`FB_PAGE_TOKEN` is Meta's page access token).
CURSOR_BEFORE_TOKEN = r"(?<!next[ _.-]page[ _.-])(?<!nextpage)(?<!continuation[ _.-])(?<!continuation)"
# A credential word: `key`, `API key`, `tokens`, `client secret`, `passphrase`; not a site key,
# nor a cursor's token.
_CREDENTIAL_WORD = re.compile(
    r"(?i)(?<![a-z])(?<!site )(?<!site-)(?<!public )(?<!publishable )(?<!primary )(?<!foreign )(?<!sort )"
    rf"(?<![/:@])(?:key|{CURSOR_BEFORE_TOKEN}token|secret|password|passwd|passphrase|"
    r"passcode|credential|pat)s?(?![a-z])(?![_-]\w|@)"
)
# An id named right before a value says what the value is: "commit 3f2a...", "request id ...".
ID_WORD = re.compile(
    r"(?i)commit|sha\d{0,3}|hash|checksum|digest|fingerprint|uuid|ids?|build|version|revision|rev|"
    r"image|trace|request|order|ticket|issue|account|user|customer|project|org"
)
# A credential word that describes an attribute: "token budget 8192", "key length", "secret name".
_ATTRIBUTE_WORD = re.compile(
    r"(?i)length|size|count|limit|budget|ttl|expiry|name|field|column|variable|env|header|file|path|"
    r"url|endpoint|type|format|rotation|scope|scopes|usage"
)
_ASSIGNED = re.compile(r"[\"'`(\[{]*([A-Za-z_][\w.-]{0,60})=([^=].*)")
_TOLD = re.compile(
    r"(?:[ \t]*[:=]|[ \t]+(?:is|was|is now|now is|->|=>|=|:|-)[ \t]*:?)"
    r"[ \t]*[\"'`]?(?P<value>[^\s\"'`]{8,400})"
)
# A service named right before the credential word: "Plaid token", "the Zorbly API key".
_NAMED_SERVICE = re.compile(
    r"(?<![\w.-])(?!(?:The|A|An|My|Our|Your|Their|This|That|New|Old|Same|Each|Every|No|Any)\b)"
    r"(?:[A-Z][A-Za-z0-9]*[a-z0-9][A-Za-z0-9]*|[A-Z]{2,})"
    r"(?:[ \t]+(?:API|api|access|secret|private|auth))?[ \t]+$"
)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_WORD = re.compile(r"[^\s\"'`]+")
_EDGE = "\"'`()[]{}<>.,;:!?*"  # quoting and punctuation around a value
_WINDOW = 90  # characters after the credential word: "... key for the staging job we set up is X"
_MAX_WORDS = 10

NOT_A_VALUE = re.compile(
    r".*://.*|[\w.+-]+@[\w-]+\.[\w.-]+|~/.*|\.\.?/.*|\\\\.*"  # links, addresses, home and relative paths
    r"|\$[A-Za-z_{(].*|@[A-Za-z][\w.-]*|%\w+%|\{.*|<.*"  # variables, handles, templates
    r"|0x[0-9a-fA-F]+|arn:.*"  # number literals, AWS resource names
    r"|(?:i|ami|sg|subnet|vpc|vol|snap|eni|igw|rtb|nat|lt|eipalloc)-[0-9a-f]{8,17}"  # AWS resource ids
    r"|[a-z0-9-]+-[0-9a-f]{8,10}-[a-z0-9]{5}"  # Kubernetes pod names
    r"|v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?"  # versions
    r"|\d{4}-\d\d-\d\d(?:[T ].*)?|\d{1,2}:\d\d(?::\d\d)?"  # dates and times
    r"|[a-z]+(?:[_.-][a-z]+)+\d{0,4}|[A-Z]+(?:_[A-Z]+)+"  # snake_case, dotted.names, ENV_NAMES
    r"|(?i:.*(?:redacted|example|placeholder|x{6}|\*{3}).*)"
    r"|(?i:sha\d{0,3}|md5)[:-].*"  # labelled digests: SHA256:..., sha512-...
    r"|(?:ssh|ecdsa|sk-ssh)-[\w@.-]+|AAAA[A-Za-z0-9+/]{60,}={0,3}"  # SSH key types, public key bodies
    r"|.*\d\.\d{1,3}(?![A-Za-z0-9]).*"  # a version inside: ubuntu-22.04-lts, python3.11-venv
    r"|[a-z]+\([a-z0-9_-]*\)?!?:?",  # a commit's scope, a call: fix(nodejs)!:, print(x)
)
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")
ANY_HEX = re.compile(r"[0-9a-fA-F]+")
UUID_SHAPE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# A UUID's groups of any letters and digits in one case (`8behgz86-dtzi-...`): no name is written so.
_UUID_GROUPS = re.compile(
    r"(?=.*\d)[0-9a-z]{8}(?:-[0-9a-z]{4}){3}-[0-9a-z]{12}|(?=.*\d)[0-9A-Z]{8}(?:-[0-9A-Z]{4}){3}-[0-9A-Z]{12}"
)
CHARACTER_RUN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_SPELLED_WORD = re.compile(r"(?=.*[aeiouyAEIOUY])(?:[A-Z]?[a-z]{2,}|[A-Z]{3,})")  # `cache`, `Linux`, `PROD`


# The letter pairs that make up 90% of those in English words: the 193 most frequent pairs in
# the 21,358 words of 3+ letters of the embedding model's vocabulary (bert-base-uncased). A
# random pair of letters is one of them about one time in four.
_COMMON_BIGRAMS = frozenset(
    """
    ab ac ad ag ai al am an ap ar as at au av ay ba be bi bl bo br bu ca ce ch ci ck cl co
    cr ct cu da de di do dr ds du ea ec ed ee ef eg ei el em en ep er es et ev ex ey fa fe
    fi fl fo fr ga ge gh gi go gr gu ha he hi ho ia ic id ie if ig il im in io ip ir is it
    iv ke ki la ld le li ll lo ls lt lu ly ma mb me mi mm mo mp na nc nd ne ng ni nn no ns
    nt oc od og ol om on oo op or os ot ou ov ow pa pe ph pi pl po pp pr pt qu ra rc rd re
    rg ri rm rn ro rr rs rt ru ry sa sc se sh si sl so sp ss st su ta te th ti tl to tr ts
    tt tu ty ua uc ue ui ul um un ur us ut va ve vi wa we wi
    """.split()
)


def wordlike(run: str) -> bool:
    """A run of letters spelled like an English word (`cache`, `Linux`, `replica`): at most one
    pair in three outside the common ones. Random letters (`kxqfo`) rarely manage three in a row."""
    if len(run) < 3:
        return False
    lowered = run.lower()
    rare = sum(lowered[i : i + 2] not in _COMMON_BIGRAMS for i in range(len(run) - 1))
    return rare * 3 <= len(run) - 1


def spelled(value: str) -> int:
    """How many characters of ``value`` are in runs spelled like English words."""
    return sum(len(r) for r in CHARACTER_RUN.findall(value) if wordlike(r))


def path_like(value: str) -> bool:
    """`uploads/2026/03/18/IMG_4821.HEIC`, `prod/api/keys`: a file name, or folders of words and
    numbers. Base64 has slashes too, between random runs."""
    if "/" not in value:
        return False
    if re.search(r"\.[A-Za-z][A-Za-z0-9]{1,4}$", value):
        return True
    segments = [p for p in re.split(r"[/_.-]+", value) if p]
    return all(p.isdigit() or wordlike(p) or len(p) < 3 for p in segments)


def file_path(value: str) -> bool:
    """Folders and a file name (`uploads/2024/08/Kl9a...jpg`): two slashes or more and a short
    lowercase extension. Base64 holds slashes too, but rarely ends so."""
    return value.count("/") >= 2 and re.search(r"\.[a-z]{2,4}$", value) is not None


def _plain_word(part: str) -> bool:
    """`region`, `ORDER`: four letters or more, every pair of them common in English."""
    lowered = part.lower()
    return (
        len(part) >= 4
        and part.isalpha()
        and all(lowered[i : i + 2] in _COMMON_BIGRAMS for i in range(len(part) - 1))
    )


def _structured(value: str) -> bool:
    """Signs joining words, numbers and one- or two-letter names, one of them a plain word or a
    number of four digits (`region#2024-05`, `ORDER#2024-05-01`, `cache:user:1234`): a key of a
    table or a cache, not a secret. Random signs split random pieces."""
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", value) if p]
    if len(parts) < 2 or len(parts) == 1 + value.count("-") + value.count("_") + value.count("."):
        return False  # joined by dashes, underscores and dots only: `named` judges those
    plain = all(p.isdigit() or len(p) <= 2 or wordlike(p) or _SPELLED_WORD.fullmatch(p) for p in parts)
    return plain and any(_plain_word(p) or (p.isdigit() and len(p) >= 4) for p in parts)


def named(value: str) -> bool:
    """A name made of words (`build-cache-linux-x64`, `kms-key-prod-2024`: a token starts with at
    most one, `live_...`, `sk-proj-...`) or of short codes (`AES-256-GCM`, `backup_2024_05_01`)."""
    segments = [p for p in re.split(r"[-_.:/]+", value) if p]
    words = sum(_SPELLED_WORD.fullmatch(p) is not None for p in segments)
    # Codes: every part short, plain or a word (`AES-256-GCM`, `cp311-manylinux_2_17_x86_64`).
    codes = all(len(p) <= 5 or (p.isalpha() and len(p) <= 6) or p.isdigit() or wordlike(p) for p in segments)
    return words >= 2 or (len(segments) >= 3 and codes)


# Pure, and asked again of the same value when a text repeats itself (`password=password=...`).
@functools.lru_cache(maxsize=4096)
def secret_shaped(value: str) -> bool:
    """A value shaped like a generated secret, not like something a person or a program names."""
    if len(value) < 10 or len(value) > 400 or NOT_A_VALUE.fullmatch(value) or path_like(value):
        return False
    if _structured(value):
        return False
    if UUID_SHAPE.fullmatch(value) or _UUID_GROUPS.fullmatch(value):
        # Many vendors issue keys as UUIDs, or in a UUID's groups of any letters and digits; an
        # id's UUID is named as one (`request_id=`).
        return True
    digits = sum(c.isdigit() for c in value)
    letters = sum(c.isalpha() for c in value)
    if digits == len(value):
        return len(value) >= 16  # an account number or a phone number is shorter
    if re.fullmatch(r"[0-9a-fA-F]+", value):
        return len(value) >= 16 and digits > 0 and letters > 0
    if named(value):
        return False
    # Words spelled out (`deploy2production`, `Release2024Notes`) cover most of a name.
    if spelled(value) * 2 >= len(value):
        return False
    if letters == 0 or (digits == 0 and letters == len(value) and len(value) < 16):
        return False  # `123-456-7890`; a short run of letters is a word or a name
    if digits and len(value) < 16 and len(re.findall(r"[A-Za-z]+|\d+", value)) <= 2:
        return False  # a word and a number: `jsmith2024`, `INC-20240513`, `build_4821`
    # Random text of n characters has nearly n distinct ones until the alphabet runs out.
    return entropy(value) >= min(3.0, math.log2(len(value)) - 0.9)


@functools.lru_cache(maxsize=4096)
def _told_shaped(value: str) -> bool:
    """Right after "key is", or after a service's name ("the Plaid token"), a value needs less to
    be taken for the key: ten characters that are not a word, a name, a link, a version or a date,
    nor a word and a number (`jsmith2024`, `INC-20240513`): twelve digits, ten hex digits,
    twelve letters that spell nothing, letters and digits mixed or cases jumbled (eight will do:
    `96LfX94Y`, `kDfeRtGh`), or a key in groups (`X7KQ-9PLM-W2RT-H4NB`)."""
    if secret_shaped(value):
        return True
    if len(value) < 8 or NOT_A_VALUE.fullmatch(value) or path_like(value) or _structured(value):
        return False
    if _grouped(value):
        return True
    if named(value):
        return False
    if len(value) < 12 and not (value.isalnum() and _pieces(value) > 3):
        return False
    if value.isdigit():
        return len(value) >= 12
    if ANY_HEX.fullmatch(value) and not value.isalpha():
        return True  # hex letters spell words by chance (`277CcecD8Bab75`)
    if spelled(value) * 2 >= len(value):
        return False
    if not any(c.isdigit() for c in value):
        return True  # twelve letters (and signs) that spell nothing, or a jumble of cases
    return len(re.findall(r"[A-Za-z]+|\d+", value)) > 2  # not a word and a number


def _service_shaped(value: str) -> bool:
    """Near a service's key ("the PsExec key for staging is X", "use X as the netrc key"): as
    after "key is", or a password a generator drew with signs and both cases (`U!srDvaI`; not
    `C++17/C11`)."""
    both_cases = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return _told_shaped(value) or (both_cases and password_shaped(value))


def _stated(value: str) -> bool:
    """A value stated as the key ("the API key is X", "passcode: X") needs less still: eight
    digits, or eight letters and digits that spell little (`kxqfoazm`, `ieqh524y`; `rotating`
    and `build2024` are words)."""
    if _told_shaped(value) or password_shaped(value):
        return True
    if len(value) < 8 or not value.isalnum() or NOT_A_VALUE.fullmatch(value):
        return False
    if value.isdigit():
        return True
    letters = spelled(value)
    return letters == 0 if value.isalpha() else letters * 2 < len(value)


_DATED = re.compile(r"(?<!\d)(?:19|20)\d\d-[01]\d(?!\d)")


@functools.lru_cache(maxsize=4096)
def password_shaped(value: str) -> bool:
    """A password a person chose or a generator drew with signs in it (`ta2TKFN%M`, `R2l.8G&_?8`,
    `W(+*z+zo-`): 8-64 characters of three classes or more, a sign among them, not a link, an
    address, a path, a variable, a version, a date or a name of words. Only where a value is
    stated as the key ("the API key is X", "token: X"): elsewhere expressions look the same
    (`p95<200ms`, `O(n^2)`)."""
    if not 8 <= len(value) <= 64 or NOT_A_VALUE.fullmatch(value) or path_like(value) or "@" in value[1:]:
        return False
    if _DATED.search(value) or _structured(value):
        return False  # `region#2024-05`: a name and a date
    classes = (str.isupper, str.islower, str.isdigit, lambda c: not c.isalnum())
    present = [any(map(test, value)) for test in classes]
    # Dashes, underscores and dots alone join the parts of ids and names (`SEP-2207`, `eu_west_1`).
    if not any(not c.isalnum() and c not in "-_." for c in value) or sum(present) < 3 or named(value):
        return False
    return spelled(value) * 2 < len(value)


def _pieces(value: str) -> int:
    """Runs of digits and of letters, a capital starting a run: `kDfeRtGh` is 4, `iPhone15` 3."""
    return len(CHARACTER_RUN.findall(value))


_GROUPS = re.compile(r"[A-Za-z0-9]{4,8}(?:-[A-Za-z0-9]{4,8}){2,7}")


def _grouped(value: str) -> bool:
    """A key in groups, as licence keys are written (`X7KQ-9PLM-W2RT-H4NB`): three or more
    groups of 4-8 letters and digits, all alike in length but the last, digits in two of them
    at least, the letters spelling nothing. `AES-256-GCM` and `INC-2024-0513` are codes: groups too short
    or of words and numbers."""
    if not _GROUPS.fullmatch(value):
        return False
    groups = value.split("-")
    body = "".join(groups)
    alike = len({len(g) for g in groups[:-1]}) == 1 and len(groups[-1]) <= len(groups[0])
    mixed = sum(any(c.isdigit() for c in g) for g in groups) >= 2 and any(c.isalpha() for c in body)
    return alike and mixed and spelled(body) * 3 < len(body)


# The name a value is assigned to, right before it: `device_id=`, `"correlationId": "`, `msg_id=<`.
_ASSIGNED_TO = re.compile(r"([A-Za-z][\w.-]{0,60})[\"']?[ \t]{0,8}(?::=|=>|=|:)[ \t]{0,8}[\"'`<]?$")
# A name's last part that says its value is an id or other data random by design, no credential:
# `device_id`, `correlationId`, a digest, a cursor, an entity tag, a nonce, an OAuth state, a
# CDN's ray id. (Not `account` or `user`: "account: X" holds a key as often as an id.)
_DATA_NAME = re.compile(
    r"(?i:ids?|uuid|guid|sha\d{0,3}|hash|checksum|digest|fingerprint|commit|revision|rev|cursor|etag|nonce|state|ray)"
)


_NAMES_A_CREDENTIAL = re.compile(r"(?i:api|apikey|auth|pwd|pass|session|bearer|private|access)")


def id_named(text: str, start: int) -> bool:
    """Whether the value at ``start`` is assigned to a name whose last part says it is an id or
    other data (`device_id=`, `correlationId:`, `x-amz-request-id=`, `cursor=`) and no part of it
    is a credential word (`api_key_id=` is a key's)."""
    assigned = _ASSIGNED_TO.search(text, max(0, start - 80), start)
    if assigned is None:
        return False
    parts = [p.casefold() for p in re.split(r"[_.-]+|(?<=[a-z0-9])(?=[A-Z])", assigned.group(1)) if p]
    parts = [p for p in parts if not p.isdigit()] or parts  # `x-amz-id-2` is an id
    words = re.findall(r"\w+", text[max(0, assigned.start() - 20) : assigned.start()].casefold()) + parts
    if words[-3:] == ["next", "page", "token"] or words[-2:] == ["continuation", "token"]:
        return True  # `next_page_token=`, "the continuation token:": a cursor
    credential = any(_CREDENTIAL_WORD.fullmatch(p) or _NAMES_A_CREDENTIAL.fullmatch(p) for p in parts)
    return bool(parts) and _DATA_NAME.fullmatch(parts[-1]) is not None and not credential


def context_findings(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each value shaped like a secret that a credential word introduces, in the
    same sentence and within a few words, with no other kind of id named in between: after the
    word ("the API key is X") or before it ("use X as the Stripe key")."""
    for word in _CREDENTIAL_WORD.finditer(text):
        told = _TOLD.match(text, word.end())  # "the API key is X", "token: X": X is the key
        if told and _stated(told.group("value").rstrip(_EDGE)):
            yield told.start("value"), told.start("value") + len(told.group("value").rstrip(_EDGE))
            continue
        stop = _SENTENCE_END.search(text, word.end(), word.end() + _WINDOW)
        after = list(_WORD.finditer(text, word.end(), stop.start() if stop else word.end() + _WINDOW))
        begin = max(0, word.start() - _WINDOW)
        begin = max([begin, *(m.end() for m in _SENTENCE_END.finditer(text, begin, word.start()))])
        before = list(_WORD.finditer(text, begin, word.start()))[-_MAX_WORDS:]
        # "the Plaid token ...", "our API key ...": a named service's key takes less to be one.
        shaped = (
            _service_shaped if _NAMED_SERVICE.search(text, max(0, word.start() - 40), word.start()) else None
        )
        for words, backwards in ((after[:_MAX_WORDS], False), (before, True)):
            found = _first_secret(words, backwards, shaped or secret_shaped)
            if found:
                yield found
                break


def _first_secret(
    words: list[re.Match[str]], backwards: bool, shaped: Callable[[str], bool]
) -> tuple[int, int] | None:
    """The first secret-shaped value among `words` (in text order), read away from the credential
    word: forwards after it, backwards before it."""
    pairs = [_ASSIGNED.fullmatch(w.group()) for w in words]  # `expires_in=3600`: a name, a value
    values = [
        (p.group(2) if p else w.group()).strip(_EDGE).lstrip("=") for w, p in zip(words, pairs, strict=True)
    ]
    for i in range(len(words) - 1, -1, -1) if backwards else range(len(words)):
        raw, value, pair = words[i].group(), values[i], pairs[i]
        parts = [*re.split(r"[^A-Za-z0-9]+", pair.group(1) if pair else ""), value]
        if any(_ATTRIBUTE_WORD.fullmatch(p) or _CREDENTIAL_WORD.fullmatch(p) for p in parts):
            return None  # "token budget 8192", "key length", another credential word: not this value
        # "commit 3f2a...", "request_id=8f14...": a value right after an id's name is that id.
        named = any(ID_WORD.fullmatch(p) or _DATA_NAME.fullmatch(p) for p in parts[:-1])
        named = named or (i > 0 and ID_WORD.fullmatch(values[i - 1]) is not None)
        if value and not named and shaped(value):
            offset = words[i].start() + raw.rindex(value)
            return offset, offset + len(value)
    return None
