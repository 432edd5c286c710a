"""Secrets pasted with no credential word: a vendor's token that names itself by a prefix
(`ghp_...`, `NRAK-...`), or a random token standing alone in a sentence ("saw AK1x... in a
screenshot"), told apart from the ids built the same way by their shape and by the words before
them ("event 2QZ...", "the file id is ..."). The shapes of values themselves (what is random,
spelled, a path, a name) are ``secret_context``'s.

Pure: no I/O, no logging; every repetition is bounded.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence

from hippograph.text.secret_context import (
    ANY_HEX,
    CHARACTER_RUN,
    CURSOR_BEFORE_TOKEN,
    ID_WORD,
    NOT_A_VALUE,
    UUID_SHAPE,
    file_path,
    id_named,
    named,
    path_like,
    secret_shaped,
    spelled,
    wordlike,
)
from hippograph.text.secret_rules import entropy

__all__ = [
    "bare_token_findings",
    "entropy_findings",
    "link_secret_findings",
    "looks_random",
    "prefixed_token_findings",
    "public_or_digest",
]


# A vendor's token names itself: a short prefix, a separator, then a long random body (`ghp_...`,
# `glpat-...`, `sk-proj-...`, `NRAK-...`). The rule set knows many prefixes, not every vendor's; this finds
# the shape. Ids are built the same way, but shorter (Stripe's `ch_` + 24, OpenAI's `file-` + 24)
# or under a prefix that says what they identify (`req_`, `evt_`, `chatcmpl-`, `sha256-`).
_PREFIXED = re.compile(
    r"(?<![\w.+/=-])(?P<prefix>[a-z][a-z0-9]{1,9}|[A-Z][a-z0-9]{1,9}|[A-Z][A-Z0-9]{1,9})[_.-]{1,2}"
    r"(?:[A-Za-z0-9]{1,10}[_.-]){0,2}"
    # Base64 bodies hold `+` and `/` and may end in `=` padding; some end in a `-` or `_`.
    # Google's `ya29.` access tokens run past 1,000 characters.
    r"(?P<body>[A-Za-z0-9](?:[\w.+/-]{0,2398}[A-Za-z0-9])?)(?:={1,2}|[_-])?(?![\w+/=-])"
)
# The same with "=" inside the body (Atlassian's tokens end "=<checksum>"), where what comes before
# the "=" is no name ("api_key=", "page_token=": ``_without_a_name_before_equals``).
_PREFIXED_EQUALS = re.compile(_PREFIXED.pattern.replace(r"[\w.+/-]{0,2398}", r"[\w.+/=-]{0,2398}"))
_ID_PREFIX = re.compile(
    rf"(?i:{ID_WORD.pattern[4:]}|req|txn|evt|event|msg|span|sess|session|obj|doc|img|pkg|md5|blob|"
    r"node|pod|ch|cus|pi|sub|prod|price|in|acct|file|asst|thread|run|batch|job|cmpl|chatcmpl|resp)"
)


# A part inside a token that names what follows (`pi_..._secret_...`, `acct-key-...`).
_NAMED_SECRET = re.compile(r"(?i)[_.-](?:secret|key|token)[_.-]")
_LONG_BODY = 26  # a body this long after a prefix is a secret if random; ids are mostly shorter
_CODED_BODY = 20  # after a prefix in capitals or with a digit (`GOCSPX-`, `sq0atp-`): ids' are words
_SECRET_BODY = 16  # after a prefix that says key or token (``_CREDENTIAL_PART``): a key's length
# A ULID (`01` and 24 more of Crockford's base32, one case: a millisecond time, then random) is an
# id whatever its prefix (`pri_01h...`, `user_01E4...`); a random body is one about 1 time in 10^5.
_ULID = re.compile(r"01[0-9A-HJKMNP-TV-Z]{24}|01[0-9a-hjkmnp-tv-z]{24}")
# A prefix that says "key" or "token" itself (`tskey-`, `zq_tok_`, `apikey-`, `glpat-`: a personal
# access token) names a secret, not an id: its body may be as short as a key's. Not `compat_`,
# `tiktok_` or `bypass-`: only "key", "token" and "secret" end longer words here.
_CREDENTIAL_PART = re.compile(
    r"(?i)[a-z0-9]*(?:key|token|secret)|[a-z0-9]{0,2}(?:pat|tok)|pwd|pass|auth|cred|creds|sec|api|sk|rk"
)


def prefixed_token_findings(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each token shaped like a vendor's self-identifying secret."""
    for found in _PREFIXED_EQUALS.finditer(text):
        if (match := _without_a_name_before_equals(text, found)) is None:
            continue
        body = match.group("body")
        head = [p for p in re.split(r"[_.-]+", text[match.start() : match.start("body")]) if p]
        prefix = match.group("prefix")
        coded = any(c.isdigit() for c in prefix) or (prefix.isupper() and len(prefix) >= 3)
        says_secret = any(map(_CREDENTIAL_PART.fullmatch, head))  # `tskey-`, `glpat-`: no id's prefix
        # An id's prefix may carry its secret, which names itself: Stripe's `pi_..._secret_...`.
        if _NAMED_SECRET.search(body):
            says_secret, body = True, _NAMED_SECRET.split(body)[-1]
        least = _SECRET_BODY if says_secret else _CODED_BODY if coded else _LONG_BODY
        # Non-word parts after the prefix are random too (`xoxb-3555064285-...`; not `sk_live_`).
        drawn = body if len(head) < 2 else "-".join([*(p for p in head[1:] if not wordlike(p)), body])
        if len(prefix) >= 6 and _HEXISH.fullmatch(match.group()):
            continue  # UUIDs and digests in one case (`cdf29402-e828-...`): their "prefix" is hex
        if not says_secret and len(body) < _LONG_BODY and _introduced_as_data(text, match.start()):
            continue  # `photo-1506744038136-4627...`: a time and a short body, named as an id
        if len(drawn) < least or _ULID.fullmatch(body) or (_ID_PREFIX.fullmatch(prefix) and not says_secret):
            continue
        classes = sum(any(f(c) for c in body) for f in (str.isupper, str.islower, str.isdigit))
        # Digests are hex in one case; hex digits in both cases (maybe in dashed groups, but not a
        # UUID in one case: `device-<uuid>` is an id) are drawn at random.
        digits, uuid = body.replace("-", ""), UUID_SHAPE.fullmatch(body) and _HEXISH.fullmatch(body)
        random_hex = len(digits) >= 32 and ANY_HEX.fullmatch(digits) and classes >= 2 and not uuid
        # Hex in one case after a prefix that says key or is coded (`thog-key-`, `NRBR-`): a key;
        # after another, shorter than a digest's 32 digits, an id's or a version's.
        hex_key = not _HEXISH.fullmatch(body) or says_secret or coded
        if random_hex or (
            classes >= 2 and hex_key and entropy(body) >= _random_entropy(body) and secret_shaped(body[:400])
        ):
            yield match.span()


def _without_a_name_before_equals(text: str, match: re.Match[str]) -> re.Match[str] | None:
    """``match``, unless an "=" inside it follows a name ("api_key=...", "next_page_token=..."):
    then the token as ``_PREFIXED`` reads it there, if any (a name's value is no part of it)."""
    inner = match.group().rstrip("=").find("=")
    if inner < 0 or not _a_name(match.group()[:inner]):
        return match
    return _PREFIXED.match(text, match.start())


def _a_name(text: str) -> bool:
    """Whether ``text`` is a name of words, numbers and short parts (`device_id`, `cursor_v2`,
    `cfg.k8s`), as a key before "=" is; a token's random part is none of these."""
    return all(wordlike(p) or p.isdigit() or len(p) <= 3 for p in re.split(r"[_.-]+", text) if p)


def _random_entropy(body: str) -> float:
    """The least entropy (bits a character) a random ``body`` has, given its length and the
    classes it draws from: n characters from an alphabet of k show about d = k(1 - (1 - 1/k)^n)
    distinct ones, and their counts, never all equal, put the entropy some 0.2-0.3 bits under
    log2(d) (±0.1): half a bit under lets nearly all through. Capped at 4 bits (26 characters of
    mixed case and digits: `NRAK-` and 27 capitals and digits is ~4.1 bits, `sk-` and 48 of all
    three ~5.2); text with a prefix is rarely that even."""
    # Hex digits are drawn from 16 characters, or 22 in both cases (`Bad73dd2EC42...`), not 62.
    letters = 6 if ANY_HEX.fullmatch(re.sub(r"[_.+/-]", "", body)) else 26
    classes = ((str.isupper, letters), (str.islower, letters), (str.isdigit, 10))
    k = sum(size for test, size in classes if any(map(test, body)))
    distinct = k * (1 - (1 - 1 / k) ** len(body))
    return min(4.0, math.log2(distinct) - 0.5)


_HEXISH = re.compile(r"[0-9a-f-]+|[0-9A-F-]+")  # SHAs, UUIDs: not secrets in prose
_WORDLIKE = re.compile(r"[A-Z]?[a-z]{2,}|[A-Z]{2,}(?![a-z])")
_UNPRONOUNCEABLE = re.compile(r"^[^aeiouy]*$|[^aeiouy]{3}", re.IGNORECASE)
_MIN_ENTROPY = 3.7  # bits/char; random base64 of 20+ characters is above 4 nearly always


def looks_random(token: str) -> bool:
    """A token of 20+ characters drawn at random: both cases and digits, short runs of each."""
    if token.startswith("_Z"):
        return False  # a mangled C++ symbol, from a linker error
    token = token.strip("=-_")
    if len(token) < 20 or _HEXISH.fullmatch(token):
        return False
    if _one_case_random(token):
        return True
    # Random tokens of this length mix cases and digits; identifiers, tags and versions
    # (`snake_case_name`, `camelCaseName`, `cp311-manylinux_2_17_x86_64`) mostly do not.
    if not all(any(f(c) for c in token) for f in (str.isupper, str.islower, str.isdigit)):
        return False
    # Separated ids (`GHSA-f74f-cvh7-c6q6`, `id-tc26-gost-3410-12-512-paramSetA`) are structured.
    if sum(token.count(c) for c in "-_/") * 6 >= len(token):
        return False
    # Random text changes character class every one or two characters; names change it at
    # word boundaries, and when half of a token spells pronounceable words (`CPyList_GetItemInt64`)
    # its runs must be shorter still. Of random base64 tokens (20-64 characters) ~3% are missed.
    runs = CHARACTER_RUN.findall(token)
    mean_run = sum(map(len, runs)) / len(runs)
    wordy = sum(len(w) for w in _WORDLIKE.findall(token) if not _UNPRONOUNCEABLE.search(w)) / len(token)
    return mean_run < (2.2 if wordy >= 0.5 else 3.0) and entropy(token) >= _MIN_ENTROPY


# A word (not hex) glued to 32+ hex digits of one case (`dapi8f19...-2`): digests are not glued to words.
_GLUED_HEX = re.compile(r"[a-z]{0,7}[g-z][a-z]{0,7}(?:[0-9a-f]{32,128}|[0-9A-F]{32,128})(?:-\d{1,8})?")


def _one_case_random(token: str) -> bool:
    """32+ letters of one case and digits drawn at random (`oy2c9qomrec7xkl3ujgx...`), hex aside:
    runs as short as random text's (~2.4 characters; 99% under 5), little of it spelled, the
    entropy of 36 characters drawn at random. Random draws pass 95.7% at 32 characters, 98.6% at 40."""
    one_case = token.isalnum() and (token.islower() or token.isupper()) and not token.isalpha()
    if len(token) < 32 or not one_case or ANY_HEX.fullmatch(token):
        return False
    runs = CHARACTER_RUN.findall(token)
    short = sum(map(len, runs)) / len(runs) < 5.0
    return short and spelled(token) * 3 < len(token) and entropy(token) >= _random_entropy(token)


# A pasted key needs no credential word: "Rolling back to LTAI5t... fixed it", "saw AK1x... in a
# screenshot". Ids are as random, and are named as what they identify ("event 2QZ...", "the
# Firestore document 8fJ2...", "the short link id is ..."), or are a config key's value
# (`certificate-authority-data: ...`, judged by the key's name), or encode data.
_BARE_TOKEN = re.compile(r"(?<![\w+/=.:@-])[A-Za-z0-9][A-Za-z0-9+/_.-]{19,400}={0,2}(?![\w+/=@-])")
_OBJECT_WORD = (
    "event|link|object|record|row|entry|item|file|document|doc|page|post|comment|message|thread|"
    "channel|video|deployment|instance|node|cluster|bucket|blob|asset|attachment|folder|workspace|"
    "board|base|table|sheet|invoice|payment|transaction|charge|refund|subscription|job|task|run|"
    "workflow|pipeline|release|tag|branch|container|volume|snapshot|device|key id|cursor|"
    "next[_ ]?page[_ ]?token|continuation[_ ]?token"
)
# `uuid`, `ksuid`, `uid`, `ulid`, `kid`, `pid`, `sid`: not `said`, `paid`, `valid`, `void`, `did`.
_SHORT_ID = r"(?:uu|gu|ksu|cu|pu|ul|[cefgknopstuvx])id"
# An id's or object's name right before the value ("event X", "the file id is X", "ksuid X").
_NAMED_BEFORE = re.compile(
    rf"(?i)(?<![\w-])(?:{ID_WORD.pattern[4:]}|{_OBJECT_WORD}|{_SHORT_ID})s?(?![\w-])\W{{0,3}}"
    r"(?:(?:is|was|now|are)\W{1,3})?$"
)
# A value of a config key (a YAML key starting its line, or `name=`): the key says what it is.
_CONFIG_VALUE = re.compile(r"(?m)(?:^[ \t-]*[\w.-]{1,60}[ \t]*:|[\w.-]=)[ \t]*[\"'<]?$")


def _encoded_text(token: str) -> bool:
    """Base64 of text (`eyJsb2dfbGV2ZWwi...`, `LS0tLS1CRUdJTi...`): encoded config, not a key. The
    first bytes of a random token read as base64 are printable about one time in 10^5."""
    body = token.rstrip("=")
    body = body[: len(body) // 4 * 4]
    try:
        raw = base64.b64decode(body.replace("-", "+").replace("_", "/"), validate=True)[:24]
    except (binascii.Error, ValueError):
        return False
    return len(raw) >= 12 and sum(32 <= b < 127 or b in (9, 10, 13) for b in raw) >= 0.9 * len(raw)


def _introduced_as_data(text: str, start: int) -> bool:
    """Whether the words before ``start`` name what follows as an id, an object or a config value."""
    window = text[max(0, start - 80) : start]
    return bool(_NAMED_BEFORE.search(window) or _CONFIG_VALUE.search(window) or id_named(text, start))


def bare_token_findings(text: str, skip: Callable[[int], bool]) -> Iterator[tuple[int, int]]:
    """(start, end) of each random token in ``text`` no credential word introduces, not named as
    an id or an object, not a config key's value, not encoded data; ``skip(start)`` says a
    position is in public material (a link, a digest, a site key)."""
    for match in _BARE_TOKEN.finditer(text):
        token, start = match.group().rstrip("."), match.start()
        if skip(start) or _introduced_as_data(text, start):
            continue
        if _GLUED_HEX.fullmatch(token):
            yield start, start + len(token)
            continue
        if _PREFIXED.fullmatch(token) or _encoded_text(token):
            continue  # a prefix and a separator: prefixed_token_findings judges it
        if len(token) >= 64 and re.search(r"[+/]", token[6:]):
            # Standard base64 this long is encoded data (certificates, images, config); a "/"
            # only after a short head is a version's or a kind's (`v2/<random>`): a token.
            continue
        if NOT_A_VALUE.fullmatch(token) or path_like(token) or named(token):
            continue
        pieces: Sequence[str] = [p for p in re.split(r"[_.-]+", token) if p]
        if looks_random(token) or looks_random(max(pieces, key=len)):
            yield start, start + len(token)


# --- the entropy detector: random tokens after a credential word, or alone -------------------------

# Random-looking text is everywhere in a developer's notes (ids, digests, base64 config, KSUIDs):
# only a random token that follows a credential word on its line is taken for a secret (not a
# cursor's token: ``CURSOR_BEFORE_TOKEN``).
_CREDENTIAL_WORD = re.compile(
    r"(?:(?<![A-Za-z0-9])|(?<=[a-z])(?=[A-Z]))(?<!site )(?<!site-)(?<!public )(?<!publishable )"
    rf"(?i:key|{CURSOR_BEFORE_TOKEN}token|secret|password|passwd|"
    r"pwd|passphrase|credential|auth)(?i:s|es)?(?![a-z])[^\n.;]{0,40}$"
)
_CANDIDATE = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/=_-]{20,}")
_WORD_END = re.compile(r"[\s\"'`,;]")
# Labelled digests: sha512-<base64> (subresource integrity), SHA256:<base64> (SSH fingerprints).
_DIGEST = re.compile(r"(?i:sha\d{0,3}|md5)(?:-|: ?)(?=[A-Za-z0-9+/]{20}|$)")
# Public material that is random by construction: links, data, SSH public keys, certificates,
# Stripe publishable keys (made to ship in web pages).
_PUBLIC = re.compile(
    r"(?<![\w-])pk_(?:live|test)_[A-Za-z0-9]{1,250}"
    r"|(?<![\w+.-])[A-Za-z][\w+.-]{1,20}://[^\s?#]{1,2000}"  # up to the query string: paths are ids
    r"|data:[\w/+.-]{1,100};base64,[A-Za-z0-9+/=]{1,1000000}"
    r"|(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d{3}) AAAA[A-Za-z0-9+/]{1,4000}=*"
    r"|-----BEGIN (?P<pem>CERTIFICATE|PUBLIC KEY)-----[A-Za-z0-9+/=\s]{0,20000}-----END (?P=pem)-----"
)


def entropy_findings(text: str) -> Iterable[tuple[int, int]]:
    """(start, end) of each random token after a credential word on its line, and of each standing
    alone that nothing names an id (``bare_token_findings``); public material and digests aside."""
    public = [m.span() for m in _PUBLIC.finditer(text)]
    public_starts = [start for start, _ in public]

    def public_here(start: int) -> bool:
        inside = bisect_right(public_starts, start) - 1
        return (inside >= 0 and start < public[inside][1]) or public_or_digest(text, start)

    for match in _CANDIDATE.finditer(text):
        start = match.start()
        if public_here(start) or _DIGEST.match(match.group()):
            continue
        if not _CREDENTIAL_WORD.search(text, max(0, start - 60), start):
            continue
        # `CC=x86_64-linux-gnu-gcc`, `key=<token>`: judge what follows each name=.
        for piece in re.finditer(r"[^=]+=*", match.group()):
            at = start + piece.start()
            whole = _WORD_END.split(text[at : at + 400], maxsplit=1)[0]  # `uploads/.../Kl9a.jpg`: a path
            if looks_random(piece.group()) and not (id_named(text, at) or file_path(whole)):
                yield at, start + piece.end()
    yield from bare_token_findings(text, public_here)
    yield from link_secret_findings(text)


# A link that is itself a credential: whoever holds a webhook's link can post with it, a key in a
# path reads with it (`https://chat.example.com/hooks/xj8k...`, `.../with/key/dK3m...`). The
# segment after a hook's or a key's name, or any under a hooks host, is the secret if random; a
# number there is the hook's id (`/hooks/42/<token>`: the token follows the hook's name still).
_LINK = re.compile(
    r"(?<![\w+.-])[A-Za-z][\w+.-]{1,20}://(?P<host>[^\s/?#\"'`<>]{1,255})(?P<path>/[^\s?#\"'`<>]{1,2000})"
)
_HOOK_HOST = re.compile(r"(?i)(?:[\w-]+\.)*(?:hooks?|webhooks?)\.[\w.-]+")
# A collection's name (`/keys/<id>`, `/tokens/<id>`) is followed by an id; a hook's by its key.
_SECRET_PARENT = re.compile(r"(?i)hooks?|webhooks?|incomingwebhook|key|token|secret|api[_-]?key")


def link_secret_findings(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each random path segment of a link that says it holds a secret."""
    for link in _LINK.finditer(text):
        hooks_host = _HOOK_HOST.fullmatch(link.group("host")) is not None
        at, parent = link.start("path"), ""
        for segment in link.group("path").split("/"):
            if (hooks_host or _SECRET_PARENT.fullmatch(parent)) and _link_secret(segment):
                yield at, at + len(segment)
            at += len(segment) + 1
            parent = parent if segment.isdigit() else segment


def _link_secret(segment: str) -> bool:
    """A path segment drawn at random, not a file (`app.4f5e.js`), a digest or a UUID (hex: an
    object's id) or an object's id with its prefix (`we_1NqLz...`, `evt_...`)."""
    if "." in segment or segment.isdigit() or ANY_HEX.fullmatch(segment.replace("-", "")):
        return False
    if _PREFIXED.fullmatch(segment):
        return False
    return looks_random(segment) or secret_shaped(segment)


# A word of its own (`site_key`, `recaptchaSiteKey`), not the end of a vendor's name (`formsite key`).
_PUBLIC_KEY_NAME = re.compile(
    r"(?:\b|(?<=_)|(?<=[a-z])(?=[SP]))(?i:site|public|publishable)[ _.-]?(?i:key)[^\n]{0,20}$"
)


def public_or_digest(text: str, start: int) -> bool:
    """`site_key: 6Lc...`, `public key: ...`: public by design; `SHA256:...`: a digest."""
    return bool(
        _PUBLIC_KEY_NAME.search(text, max(0, start - 40), start)
        or _DIGEST.search(text, max(0, start - 8), start)
    )
