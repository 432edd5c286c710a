"""Build the secrets benchmark corpora: fake credentials from third-party formats, and ordinary text.

    python -m bench.secrets_corpus extract --gitleaks DIR --detect-secrets DIR   # formats -> data
    python -m bench.secrets_corpus generate                                      # data -> corpora

``extract`` reads two public rule sets (git directories of gitleaks/gitleaks and Yelp/detect-secrets,
read with ``git show HEAD:...``) and writes what the corpora need from them as data:
``formats.tsv`` (gitleaks rule id, style, identifiers, the token's regular expression) and
``detect_secrets_lines.tsv`` (detect-secrets' labelled plugin test lines). ``generate`` is seeded
and needs only those files: it draws fake secrets from the formats and puts each in several
contexts, writes ordinary developer text from its own generators, and splits every corpus into
a dev half and a held-out test half (by template and by example: test lines use sentence
templates the dev half never shows). Nothing here is product code.
"""

from __future__ import annotations

import argparse
import ast
import base64
import hashlib
import json
import random
import re
import string
import subprocess
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from re import _parser as sre_parse  # type: ignore[attr-defined]
from re._constants import (  # type: ignore[import-not-found]
    ANY,
    ASSERT,
    ASSERT_NOT,
    AT,
    BRANCH,
    CATEGORY,
    CATEGORY_DIGIT,
    CATEGORY_NOT_DIGIT,
    CATEGORY_NOT_SPACE,
    CATEGORY_NOT_WORD,
    CATEGORY_SPACE,
    CATEGORY_WORD,
    IN,
    LITERAL,
    MAX_REPEAT,
    MAXREPEAT,
    MIN_REPEAT,
    NEGATE,
    NOT_LITERAL,
    RANGE,
    SUBPATTERN,
)

DATA = Path(__file__).resolve().parent / "data" / "secrets"
PRINTABLE = string.ascii_letters + string.digits + "!#$%&*+-./:;=?@^_~"
_CATEGORIES = {
    CATEGORY_DIGIT: string.digits,
    CATEGORY_NOT_DIGIT: string.ascii_letters,
    CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    CATEGORY_NOT_WORD: "-.",
    CATEGORY_SPACE: " ",
    CATEGORY_NOT_SPACE: string.ascii_letters + string.digits + "-_.+/=",
}


# --- extract: formats from gitleaks, labelled lines from detect-secrets ---------------------------


def _git_show(repo: Path, path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), "show", f"HEAD:{path}"], capture_output=True, text=True, check=True
    ).stdout


def _git_ls(repo: Path, folder: str) -> list[str]:
    out = subprocess.run(
        ["git", "--git-dir", str(repo), "ls-tree", "--name-only", f"HEAD:{folder}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [f"{folder}/{name}" for name in out.split()]


_HELPERS = {
    "Numeric": "[0-9]{%s}",
    "Hex": "[a-f0-9]{%s}",
    "AlphaNumeric": "[a-z0-9]{%s}",
    "AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
    "AlphaNumericExtended": r"[a-z0-9=_\-]{%s}",
    "AlphaNumericExtendedLong": r"[a-z0-9\/=_\+\-]{%s}",
}
_EXPR_PART = re.compile(
    r'\s*(?:`(?P<raw>[^`]*)`|"(?P<dq>(?:[^"\\]|\\.)*)"|utils\.(?P<fn>\w+)\("(?P<arg>[^"]*)"\)|utils\.Hex8_4_4_4_12\(\))\s*(?P<plus>\+)?'
)


def _go_string(text: str, at: int) -> tuple[str, int] | None:
    """The Go string expression (literals, utils helpers, +) starting at ``at``, and its end."""
    parts = []
    while True:
        m = _EXPR_PART.match(text, at)
        if not m:
            return None
        if m.group("raw") is not None:
            parts.append(m.group("raw"))
        elif m.group("dq") is not None:
            parts.append(m.group("dq").encode().decode("unicode_escape"))
        elif m.group("fn"):
            if m.group("fn") not in _HELPERS:
                return None
            parts.append(_HELPERS[m.group("fn")] % m.group("arg"))
        else:
            parts.append(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        at = m.end()
        if not m.group("plus"):
            return "".join(parts), at


def _python_regex(go: str) -> str:
    go = go.replace("[:alnum:]", "A-Za-z0-9").replace("[:alpha:]", "A-Za-z").replace("[:digit:]", "0-9")
    go = go.replace(r"\z", r"\Z")
    inner = go.find("(?i)", 1)
    if inner > 0:  # Go allows a flag mid-pattern; Python wants it scoped
        go = go[:inner] + "(?i:" + go[inner + 4 :] + ")"
    return go


def extract_gitleaks(repo: Path) -> list[dict[str, str]]:
    rows = []
    for path in _git_ls(repo, "cmd/generate/config/rules"):
        if not path.endswith(".go") or path.endswith("_test.go"):
            continue
        source = _git_show(repo, path)
        for block in source.split("\nfunc ")[1:]:
            rule = re.search(r'RuleID:\s*"([^"]+)"', block)
            regex = re.search(
                r"Regex:\s*(utils\.GenerateUniqueTokenRegex\(|utils\.GenerateSemiGenericRegex\(|regexp\.MustCompile\()",
                block,
            )
            if not rule or not regex:
                continue
            at = regex.end()
            identifiers = ""
            if "SemiGeneric" in regex.group(1):
                ids = re.match(r"\s*\[\]string\{([^}]*)\},", block[at:])
                if not ids:
                    continue
                identifiers = ",".join(re.findall(r'"([^"]+)"', ids.group(1)))
                at += ids.end()
            parsed = _go_string(block, at)
            if parsed is None:
                continue
            token, end = parsed
            case_insensitive = re.match(r"\s*,\s*true", block[end:]) is not None
            style = "unique" if "Unique" in regex.group(1) else "keyword" if identifiers else "raw"
            pattern = _python_regex(("(?i)" if case_insensitive else "") + token)
            try:
                re.compile(pattern)
            except re.error:
                continue
            rows.append(
                {
                    "rule": rule.group(1),
                    "style": style,
                    "identifiers": identifiers,
                    "regex": pattern,
                    "source": path,
                }
            )
    return rows


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def extract_detect_secrets(repo: Path) -> list[tuple[str, str, str]]:
    """(plugin test file, label, line) for each ``(line, True/False)`` parametrize case."""
    rows = []
    for path in _git_ls(repo, "tests/plugins"):
        if not path.endswith("_test.py") or "ip_public" in path:  # a public IP is no credential
            continue
        for node in ast.walk(ast.parse(_git_show(repo, path))):
            if isinstance(node, ast.Tuple) and len(node.elts) == 2:
                line, label = _literal(node.elts[0]), _literal(node.elts[1])
                if not isinstance(line, str) or "\t" in line or not line.strip():
                    continue
                if isinstance(label, str) and label in line:  # (line, the secret in it)
                    label = True
                if isinstance(label, bool) or (label is None and isinstance(node.elts[1], ast.Constant)):
                    rows.append((path.rsplit("/", 1)[1], "secret" if label else "not", line))
    return rows


# --- generating strings from a regular expression -------------------------------------------------


class _Draw:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pattern(self, regex: str) -> str:
        parsed = sre_parse.parse(regex)
        return self._seq(parsed, bool(parsed.state.flags & re.IGNORECASE))

    def _seq(self, items: object, fold: bool) -> str:
        return "".join(self._item(op, av, fold) for op, av in items)  # type: ignore[attr-defined]

    def _case(self, text: str, fold: bool) -> str:
        return "".join(c.upper() if fold and self.rng.random() < 0.5 else c for c in text)

    def _item(self, op: object, av: object, fold: bool) -> str:
        rng = self.rng
        if op is LITERAL:
            return chr(av)  # type: ignore[arg-type]
        if op is NOT_LITERAL:
            return rng.choice([c for c in string.ascii_letters if ord(c) != av])
        if op is ANY:
            return rng.choice(string.ascii_letters + string.digits)
        if op is IN:
            return self._case(self._in(av), fold)  # type: ignore[arg-type]
        if op in (MAX_REPEAT, MIN_REPEAT):
            low, high, sub = av  # type: ignore[misc]
            high = low + 8 if high is MAXREPEAT else high
            return "".join(self._seq(sub, fold) for _ in range(rng.randint(low, high)))
        if op is SUBPATTERN:
            _, add, _, sub = av  # type: ignore[misc]
            return self._seq(sub, fold or bool(add & re.IGNORECASE))
        if op is BRANCH:
            return self._seq(rng.choice(av[1]), fold)  # type: ignore[index]
        if op is CATEGORY:
            return rng.choice(_CATEGORIES[av])
        if op in (AT, ASSERT, ASSERT_NOT):
            return ""
        raise ValueError(f"cannot draw {op}")

    def _in(self, items: list[tuple[object, object]]) -> str:
        allowed: set[str] = set()
        negate = False
        for op, av in items:
            if op is NEGATE:
                negate = True
            elif op is LITERAL:
                allowed.add(chr(av))  # type: ignore[arg-type]
            elif op is RANGE:
                allowed.update(chr(c) for c in range(av[0], av[1] + 1))  # type: ignore[index]
            elif op is CATEGORY:
                allowed.update(_CATEGORIES[av])
        pool = sorted(set(PRINTABLE) - allowed) if negate else sorted(allowed)
        return self.rng.choice([c for c in pool if not c.isspace()] or pool)


def literal_prefix(regex: str) -> int:
    """Length of the shortest literal text every match of ``regex`` starts with."""

    def prefix(items: object) -> int:
        n = 0
        for op, av in items:  # type: ignore[attr-defined]
            if op in (AT, ASSERT, ASSERT_NOT):
                continue
            if op is LITERAL:
                n += 1
                continue
            if op is SUBPATTERN:
                inner = prefix(av[3])
                return n + inner
            if op is BRANCH:
                return n + min(prefix(b) for b in av[1])
            return n
        return n

    return prefix(sre_parse.parse(regex))


# --- contexts -------------------------------------------------------------------------------------

# Each context has templates; a seeded shuffle gives half of them to dev and half to test.
PROSE = [
    "my token is {s}, use it",
    "here is the key for the staging account: {s}",
    "{s} is what the deploy bot uses",
    "use {s} when the CI job asks for credentials",
    "note to self: {s} (rotate in March)",
    "The integration broke again. I regenerated it and now it's {s} - please update the runner.",
    "can you check why {s} gets a 401 from the API?",
    "saved {s} for the {vendor} integration",
    "{vendor} credential for prod -> {s}",
    "remember that the {vendor} account uses {s}",
    "she pasted {s} into the chat by mistake",
    "the old one was revoked; new one: {s}.",
]
KEY_VALUE = [
    '{i}_token = "{s}"',
    "{i}Token: '{s}'",
    '"{i}_api_key": "{s}",',
    "{i}_secret={s}",
    "const {i}Key = `{s}`;",
    "<{i}Token>{s}</{i}Token>",
    "{i}.api_key: {s}",
    '{i}_credentials := "{s}"',
]
ENV = [
    "export {I}_TOKEN={s}",
    "{I}_API_KEY={s}",
    'set -x {I}_SECRET "{s}"',
    "$env:{I}_TOKEN = '{s}'",
    "- {I}_ACCESS_KEY={s}",
    "{I}_TOKEN: {s}",
]
CLI = [
    "mysql -u root -p{p} shop",
    "mysql -h db.internal -uadmin -p{p}",
    "curl -u alice:{p} https://ci.example.org/api/json",
    "curl --user deploy:{p} -X POST https://registry.internal/v2/",
    "sshpass -p {p} ssh pi@192.168.1.20",
    "sshpass -p '{p}' scp backup.tar admin@nas:/backups",
    "psql --host db --username app --password {p}",
    "./manage.py createsuperuser --username admin --password {p}",
    "docker login -u bot -p {p} registry.gitlab.com",
    "mongosh --username admin --password {p} --authenticationDatabase admin",
    "redis-cli -h cache -a {p} ping",
    "htpasswd -b -c .htpasswd admin {p}",
    "smbclient //fileserver/share -U bob%{p}",
    "wget --user=ftp --password={p} ftp://files.internal/dump.sql",
    "mysqldump -uroot --password={p} --all-databases > all.sql",
    "ldapsearch -x -D cn=admin,dc=corp -w {p} -b dc=corp",
    "rabbitmqctl add_user ops {p}",
    "net use Z: \\\\server\\share /user:corp\\bob {p}",
]
URL = [
    "postgres://app:{p}@db.internal:5432/app",
    "the broker is amqp://ops:{p}@rabbit.local:5672/",
    "git clone https://bob:{p}@git.internal/team/repo.git",
    "REDIS_URL=redis://:{p}@cache:6379/0",
    "mongodb+srv://admin:{p}@cluster0.abcd.mongodb.net/test",
    "proxy is http://user:{p}@proxy.corp:3128",
]
# Sentences as people write them in a chat, where no credential word introduces the token...
PLAIN = [
    "pasted {s} into the runner settings this morning",
    "Marta said {s} stopped working after the migration",
    "{s} - that's the one for the nightly build",
    "could you swap the old value for {s} before Friday?",
    "the bot now runs with {s}, fingers crossed",
    "found {s} in an old shell history on the build box",
    "why does {s} get rejected by the staging cluster?",
    "I'll put {s} in the team vault after lunch.",
]
# ... and where the vendor's name and the word key do, in many turns of phrase.
VENDOR_KEY = [
    "we rotated the {vendor} key yesterday, the new one is {s}",
    "{vendor} key for the reporting job: {s}",
    "Use {s} as the {vendor} key when the importer asks.",
    "the {vendor} API key we share with the data team: {s}",
    "Ops gave me a fresh {vendor} key ({s}) for the demo",
    "{vendor} access key -> {s}",
    "I think the {vendor} key in prod is still {s}, can you check?",
    "the {vendor} secret key changed to {s} last night",
    "new {vendor} token {s} expires in 30 days",
    "{vendor} keys: staging uses {s} now",
]
API_KEY_IS = [
    "our API key is {s}",
    "For the {vendor} sandbox the API key is {s}.",
    "FYI the API key is {s} until we rotate it",
    "the {vendor} API key is {s}",
]
WORDS = "river falcon maple copper winter orbit cactus lemon tiger harbor velvet rocket puzzle".split()


def fake_password(rng: random.Random) -> str:
    """A password as people and generators make them: words and digits, or random."""
    style = rng.randrange(4)
    if style == 0:
        return rng.choice(WORDS).capitalize() + str(rng.randint(10, 9999)) + rng.choice("!@#$%&*?")
    if style == 1:
        return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(rng.randint(10, 20)))
    if style == 2:
        return rng.choice(["S3cr3t", "P@ssw0rd", "Pa55w0rd", "W1nter", "Adm1n"]) + str(rng.randint(1, 999))
    chars = string.ascii_letters + string.digits + "!#%^*_-+="
    return "".join(rng.choice(chars) for _ in range(rng.randint(12, 24)))


def _split(items: list[str], seed: int) -> tuple[list[str], list[str]]:
    shuffled = items[:]
    random.Random(seed).shuffle(shuffled)
    half = (len(shuffled) + 1) // 2
    return shuffled[:half], shuffled[half:]


def _vendor(rule: str) -> str:
    return rule.split("-")[0]


def secret_lines(formats: list[dict[str, str]], part: str, seed: int) -> Iterator[tuple[str, str, str]]:
    """(context, source, line) for one split."""
    which = 0 if part == "dev" else 1
    rng = random.Random(f"{seed}-{part}")
    draw = _Draw(rng)
    templates = {
        name: _split(t, seed)[which] for name, t in (("prose", PROSE), ("key=value", KEY_VALUE), ("env", ENV))
    }
    for row in formats:
        regex = re.compile(row["regex"])
        samples = []
        for _ in range(30):
            drawn = draw.pattern(row["regex"])
            match = regex.fullmatch(drawn)
            if not match:
                continue
            # As gitleaks reads a rule: the secret is the first group when there is one; rules
            # that match their context (a JSON key, an XML element) are not a token to place.
            sample = match.group(1) if regex.groups and match.group(1) else drawn
            if len(sample) >= 8 and not re.search(r"[\s'\"<>`]", sample):
                samples.append(sample)
            if len(samples) == 3:
                break
        if len(set(samples)) < 3:  # a fixed string (a prefix gitleaks keys on), not a secret
            continue
        ident = (row["identifiers"].split(",")[0] if row["identifiers"] else _vendor(row["rule"])).lower()
        ident = re.sub(r"[^a-z0-9]+", "_", ident).strip("_")
        fill = {"i": ident, "I": ident.upper(), "vendor": _vendor(row["rule"]).capitalize()}
        # Bare in prose only when the token names itself: a literal prefix, and the secret is the
        # whole match (not a password inside an XML element or a URL).
        whole = not regex.groups or all(regex.fullmatch(s) for s in samples)
        prefixed = row["style"] != "keyword" and literal_prefix(row["regex"]) >= 3 and whole
        contexts = (["prose"] if prefixed else []) + ["key=value", "env"]
        for sample, context in ((s, c) for s in samples for c in contexts):
            template = rng.choice(templates[context])
            label = "bare vendor token in prose" if context == "prose" else context
            yield label, f"gitleaks:{row['rule']}", template.format(s=sample, **fill)
    yield from _sentence_lines(formats, part, seed)
    cli, url = _split(CLI, seed)[which], _split(URL, seed)[which]
    for _ in range(120):
        yield "CLI password", "generated", rng.choice(cli).format(p=fake_password(rng))
    for _ in range(60):
        yield "URL credentials", "generated", rng.choice(url).format(p=fake_password(rng))


def _sentence_lines(formats: list[dict[str, str]], part: str, seed: int) -> Iterator[tuple[str, str, str]]:
    """Each format's secrets in ordinary sentences: with no credential word (tokens that name
    themselves), after the vendor's name and "key", after "API key is"; split by prefix."""
    which = 0 if part == "dev" else 1
    rng = random.Random(f"{seed}-{part}-sentences")
    draw = _Draw(rng)
    forms = {
        name: _split(t, seed)[which]
        for name, t in (("plain", PLAIN), ("vendor", VENDOR_KEY), ("api", API_KEY_IS))
    }
    for row in formats:
        regex = re.compile(row["regex"])
        samples = []
        for _ in range(30):
            match = regex.fullmatch(draw.pattern(row["regex"]))
            sample = match and (match.group(1) if regex.groups and match.group(1) else match.group())
            if sample and len(sample) >= 8 and not re.search(r"[\s'\"<>`]", sample):
                samples.append(sample)
            if len(samples) == 3:
                break
        if len(set(samples)) < 3:
            continue
        vendor = _vendor(row["rule"]).capitalize()
        prefixed = literal_prefix(row["regex"]) >= 3 and row["style"] != "keyword"
        with_prefix = "with prefix" if prefixed else "no prefix"
        for sample in samples:
            if prefixed:
                yield (
                    "token in a plain sentence",
                    f"gitleaks:{row['rule']}",
                    rng.choice(forms["plain"]).format(s=sample),
                )
            for form, label in (("vendor", "vendor and key in a sentence"), ("api", "after 'API key is'")):
                line = rng.choice(forms[form]).format(s=sample, vendor=vendor)
                yield f"{label} ({with_prefix})", f"gitleaks:{row['rule']}", line


# --- ordinary developer text ----------------------------------------------------------------------

B62 = string.ascii_letters + string.digits


def _ordinary_generators(rng: random.Random) -> dict[str, list[Callable[[], str]]]:
    def hexs(n: int) -> str:
        return "".join(rng.choice("0123456789abcdef") for _ in range(n))

    def b64(n: int) -> str:
        return base64.b64encode(rng.randbytes(n)).decode()

    def b62(n: int) -> str:
        return "".join(rng.choice(B62) for _ in range(n))

    def nanoid() -> str:
        return "".join(rng.choice(B62 + "_-") for _ in range(21))

    def uid() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    def stripe_id() -> str:
        return (
            rng.choice(["in", "price", "cus", "prod", "sub", "pi", "ch", "evt", "txn", "seti", "cs_test"])
            + "_1"
            + b62(rng.choice([13, 23]))
        )

    def config() -> str:
        doc = rng.choice(
            ['{"log_level": "debug", "workers": %d}', "retries: %d\ntimeout: 30s\n", "[server]\nport = %d\n"]
        ) % rng.randint(2, 9000)
        return base64.b64encode(doc.encode()).decode()

    return {
        "commit SHA": [
            lambda: f"the regression started at commit {hexs(40)}",
            lambda: f"cherry-picked {hexs(7)} onto release/2.{rng.randint(0, 9)}",
            lambda: f"git revert {hexs(40)} fixed the flaky test",
        ],
        "UUID": [
            lambda: f"request {uid()} failed with a 502",
            lambda: f"the tenant id is {uid()}",
        ],
        "sha256 sum": [
            lambda: (
                f"{hashlib.sha256(rng.randbytes(8)).hexdigest()}  "
                f"dist/hippograph-0.{rng.randint(1, 9)}.tar.gz"
            ),
            lambda: f"expected sha256 {hashlib.sha256(rng.randbytes(8)).hexdigest()} for the release asset",
        ],
        "Docker digest": [
            lambda: f"pin the image: python:3.12-slim@sha256:{hexs(64)}",
            lambda: f"FROM ghcr.io/acme/api@sha256:{hexs(64)}",
        ],
        "npm integrity": [
            lambda: (
                f'"integrity": "sha512-'
                f'{base64.b64encode(hashlib.sha512(rng.randbytes(8)).digest()).decode()}"'
            ),
            lambda: (
                f"lockfile says integrity sha1-"
                f"{base64.b64encode(hashlib.sha1(rng.randbytes(8)).digest()).decode()}"
            ),
        ],
        "go.sum line": [
            lambda: (
                f"github.com/{rng.choice(WORDS)}/{rng.choice(WORDS)} "
                f"v1.{rng.randint(0, 20)}.{rng.randint(0, 9)} "
                f"h1:{base64.b64encode(rng.randbytes(32)).decode()}"
            ),
            lambda: (
                f"golang.org/x/{rng.choice(['net', 'sys', 'text'])} v0.{rng.randint(1, 30)}.0/go.mod "
                f"h1:{base64.b64encode(rng.randbytes(32)).decode()}"
            ),
        ],
        "base64 config": [
            lambda: f"the configmap value decodes fine: {config()}",
            lambda: f"data:\n  settings.json: {config()}",
        ],
        "kubeconfig CA data": [
            lambda: (
                f"    certificate-authority-data: "
                f"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t{b64(rng.randint(60, 120))}"
            ),
            lambda: (
                f"clusters:\n- cluster:\n    certificate-authority-data: {b64(90)}\n"
                f"    server: https://10.0.0.{rng.randint(1, 254)}:6443"
            ),
        ],
        "URL with query": [
            lambda: f"https://www.youtube.com/watch?v={nanoid()[:11]}&t={rng.randint(1, 900)}s",
            lambda: (
                f"https://app.datadoghq.com/logs?query=service%3Aapi&cols={b62(12)}"
                f"&from_ts={rng.randint(10**12, 10**13)}"
            ),
            lambda: f"see https://docs.google.com/spreadsheets/d/{b62(44)}/edit#gid={rng.randint(0, 10**9)}",
            lambda: (
                f"https://github.com/acme/api/actions/runs/{rng.randint(10**9, 10**10)}"
                "?check_suite_focus=true"
            ),
            lambda: f"the share link https://drive.google.com/file/d/{b62(33)}/view?usp=sharing",
        ],
        "CSS colour": [
            lambda: f"primary button colour #{hexs(6)}, hover #{hexs(6)}",
            lambda: f"background: linear-gradient(#{hexs(6)}, #{hexs(3)});",
        ],
        "Stripe object id": [
            lambda: f"invoice {stripe_id()} was paid twice",
            lambda: f"refund the charge on {stripe_id()} and close {stripe_id()}",
        ],
        "reCAPTCHA site key": [
            lambda: f"the public reCAPTCHA site key is 6L{b62(5)}AAAAA{b62(31)}",
            lambda: f'data-sitekey="6L{b62(5)}AAAAA{b62(31)}"',
        ],
        "KSUID": [
            lambda: f"event {b62(27)} was delivered twice",
            lambda: f"ksuid {b62(27)} sorts after the migration",
        ],
        "nanoid": [
            lambda: f"the short link id is {nanoid()}",
            lambda: f"order {nanoid()} is stuck in pending",
        ],
        "JWT documentation": [
            lambda: "a JWT has three base64url parts: header.payload.signature; never log the signature",
            lambda: "use Authorization: Bearer <token> with the access token from /oauth/token",
            lambda: (
                f"the JWT exp claim was {rng.randint(1_600_000_000, 1_800_000_000)}, so the token had expired"
            ),
        ],
        "password talk": [
            lambda: (
                f"password rotation for the {rng.choice(WORDS)} service is every {rng.randint(30, 90)} days"
            ),
            lambda: "mysql -u root -p prompts for the password, do not pass it on the command line",
            lambda: "use curl -u alice: so curl asks for the password interactively",
            lambda: f"set PGPASSFILE=~/.pgpass instead of PGPASSWORD on {rng.choice(WORDS)}",
            lambda: "the token is in 1Password under 'CI deploy'",
        ],
        "identifiers": [
            lambda: f"AWS account {rng.randint(10**11, 10**12 - 1)}, region eu-west-{rng.randint(1, 3)}",
            lambda: f"arn:aws:iam::{rng.randint(10**11, 10**12 - 1)}:role/{rng.choice(WORDS)}-deployer",
            lambda: f"instance i-{hexs(17)} in subnet-{hexs(17)}",
            lambda: f"Google Analytics id G-{b62(10).upper()}",
            lambda: (
                f"Sentry DSN public key https://{hexs(32)}@o{rng.randint(10**5, 10**6)}"
                f".ingest.sentry.io/{rng.randint(10**5, 10**7)}"
            ),
        ],
        "code": [
            lambda: (
                f"def {rng.choice(WORDS)}_handler(request, "
                f"token_bucket=TokenBucket(rate={rng.randint(1, 99)})):"
            ),
            lambda: "const apiKey = process.env.OPENAI_API_KEY;",
            lambda: "password = getpass.getpass('DB password: ')",
            lambda: f'cache key is f"user:{{user_id}}:{rng.choice(WORDS)}"',
            lambda: "SECRET_KEY = os.environ['DJANGO_SECRET_KEY']",
        ],
    }


def ordinary_lines(part: str, seed: int, per_category: int) -> Iterator[tuple[str, str]]:
    rng = random.Random(f"{seed}-ordinary-{part}")
    which = 0 if part == "dev" else 1
    for category, makers in _ordinary_generators(rng).items():
        if len(makers) > 1:
            mine = _split(list(range(len(makers))), seed)[which]
            makers = [makers[i] for i in mine] if mine else makers
        for _ in range(per_category):
            yield category, rng.choice(makers)()


# --- files ----------------------------------------------------------------------------------------


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def write_tsv(path: Path, header: list[str], rows: list[tuple[str, ...]]) -> None:
    lines = ["\t".join(header)] + ["\t".join(_escape(c) for c in row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_secret_lines(path: Path, rows: list[tuple[str, str, str, str]]) -> Counter[str]:
    """Write a corpus of (form, prefixed, rule, text) lines; how many lines of each form, with
    and without a prefix."""
    write_tsv(path, ["form", "prefixed", "rule", "text"], list(rows))
    return Counter(f"{form} prefixed={prefixed}" for form, prefixed, _, _ in rows)


def read_tsv(path: Path) -> list[dict[str, str]]:
    def unescape(text: str) -> str:
        return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), text)

    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, map(unescape, line.split("\t")), strict=True)) for line in lines[1:] if line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("extract")
    ex.add_argument("--gitleaks", type=Path, required=True, help="git dir of gitleaks/gitleaks")
    ex.add_argument("--detect-secrets", type=Path, required=True, help="git dir of Yelp/detect-secrets")
    gen = sub.add_parser("generate")
    gen.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    if args.command == "extract":
        formats = extract_gitleaks(args.gitleaks)
        write_tsv(DATA / "formats.tsv", list(formats[0]), [tuple(r.values()) for r in formats])
        labelled = extract_detect_secrets(args.detect_secrets)
        write_tsv(DATA / "detect_secrets_lines.tsv", ["file", "label", "line"], labelled)
        print(f"{len(formats)} gitleaks formats, {len(labelled)} detect-secrets lines")
        return
    formats = read_tsv(DATA / "formats.tsv")
    labelled = read_tsv(DATA / "detect_secrets_lines.tsv")
    for part in ("dev", "test"):
        secrets = list(secret_lines(formats, part, args.seed))
        # detect-secrets' lines, alternately to dev and test (they are few and varied).
        which = 0 if part == "dev" else 1
        secrets += [
            (f"detect-secrets {r['label']}", f"detect-secrets:{r['file']}", r["line"])
            for i, r in enumerate(labelled)
            if i % 2 == which
        ]
        write_tsv(DATA / f"secrets_{part}.tsv", ["context", "source", "text"], secrets)
        ordinary = list(ordinary_lines(part, args.seed, per_category=24))
        write_tsv(DATA / f"ordinary_{part}.tsv", ["category", "text"], ordinary)
        print(f"{part}: {len(secrets)} secret lines, {len(ordinary)} ordinary lines")
    print(json.dumps({"seed": args.seed}))


if __name__ == "__main__":
    main()
