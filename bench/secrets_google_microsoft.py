"""A second held-out secrets corpus, from Google's and Microsoft's secret detectors.

    python -m bench.secrets_google_microsoft extract --scalibr DIR --security-utilities DIR
    python -m bench.secrets_google_microsoft generate     # -> google_microsoft.tsv
    python -m bench.secrets_google_microsoft score        # totals per form, false alarms

Neither scanner is loaded by hippograph nor was the screen tuned on them. OSV-SCALIBR
(google/osv-scalibr, Apache-2.0) detects secrets with its "Veles" detectors, one Go package per
vendor under ``veles/secrets/``, each with the ``regexp.MustCompile`` expressions of the vendor's
formats. Microsoft's security-utilities (microsoft/security-utilities, MIT) ships its high-confidence
patterns, mostly Azure keys with a fixed signature inside the token, generated into
``GeneratedRegexPatterns/PreciselyClassifiedSecurityKeys.json``.

``extract`` reads both from git directories (``git show``). From Veles it takes every
``regexp.MustCompile`` of string literals, in Python's syntax (Go's RE2 syntax is a subset, the
``\\b`` at the token's edges dropped, repeat bounds above 256 cut to 256); the secret is the whole
match, or the last unnamed group of a pattern that looks for a key name first. It skips ids and
user names beside the secret, URLs and credentials in URLs, context and keyword patterns, public
keys, PEM blocks and JSON key files, base64 encodings of another format, and the generic patterns
(JWT, HTTP headers, cookies, CSRF tokens). From Microsoft's file it takes each pattern's ``refine``
group, without its non-functional sample token; the 41 Cognitive Services keys (one layout, a
4-character service signature each) are one format. A vendor's format found in both sets (the
drawn tokens of each match the other's expression) is kept once, as Veles'. The drawn tokens match
the formats but carry no valid checksum (Microsoft's and GitHub's tokens have one).

``generate`` writes the three sentence forms of the other held-out corpora (``bare``: the token in
a sentence with no credential word, only for tokens with a literal prefix of 3+ characters;
``vendor key``: the vendor's name and "key" or "token"; ``api key is``), with sentence templates
and a seed of its own, three fake secrets per format and form. The ordinary lines
of the Nosey Parker corpus serve as the false-alarm set. ``score`` prints totals only: this corpus
is held out, its misses are listed nowhere. Nothing here is product code.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import string
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from re._constants import IN, LITERAL, MAX_REPEAT, MAXREPEAT, MIN_REPEAT, RANGE  # type: ignore[import-not-found]
from typing import cast

from bench.secrets_corpus import DATA, _Draw, read_tsv, write_secret_lines, write_tsv
from bench.secrets_heldout import _git, draw_secrets, fixed_prefix

SEED = 31337
FORMATS = DATA / "google_microsoft_formats.tsv"
CORPUS = "google_microsoft.tsv"
VELES = "veles/secrets"
MICROSOFT = "GeneratedRegexPatterns/PreciselyClassifiedSecurityKeys.json"
DRAWS = 3  # fake secrets per format and form

# --- extract: Veles --------------------------------------------------------------------------------

_VELES_VENDOR = {
    "anthropicapikey": "Anthropic",
    "awsaccesskey": "AWS",
    "azurestorageaccountaccesskey": "Azure Storage",
    "bitwardenoauth2access": "Bitwarden",
    "circleci": "CircleCI",
    "cloudflareapitoken": "Cloudflare",
    "cratesioapitoken": "crates.io",
    "cursorapikey": "Cursor",
    "denopat": "Deno",
    "digitaloceanapikey": "DigitalOcean",
    "discordbottoken": "Discord",
    "dockerhubpat": "Docker Hub",
    "elasticcloudapikey": "Elastic Cloud",
    "gcpapikey": "Google Cloud",
    "gcpexpressmode": "Google Cloud",
    "gcpoauth2access": "Google",
    "gcpoauth2client": "Google",
    "gcshmackey": "Google Cloud Storage",
    "github": "GitHub",
    "gitlabpat": "GitLab",
    "grokxaiapikey": "xAI",
    "hashicorpvault": "HashiCorp Vault",
    "hcp": "HashiCorp Cloud Platform",
    "herokuplatformkey": "Heroku",
    "huggingfaceapikey": "Hugging Face",
    "mistralapikey": "Mistral",
    "npmjsaccesstoken": "npm",
    "onepasswordkeys": "1Password",
    "openai": "OpenAI",
    "openrouter": "OpenRouter",
    "packagist": "Packagist",
    "paystacksecretkey": "Paystack",
    "perplexityapikey": "Perplexity",
    "postmanapikey": "Postman",
    "pypiapitoken": "PyPI",
    "pyxkeyv1": "pyx",
    "pyxkeyv2": "pyx",
    "recaptchakey": "reCAPTCHA",
    "rubygemsapikey": "RubyGems",
    "salesforceoauth2access": "Salesforce",
    "salesforceoauth2client": "Salesforce",
    "salesforceoauth2jwt": "Salesforce",
    "salesforceoauth2refresh": "Salesforce",
    "sendgrid": "SendGrid",
    "slacktoken": "Slack",
    "squareapikey": "Square",
    "stripeapikeys": "Stripe",
    "supabase": "Supabase",
    "telegrambotapitoken": "Telegram",
    "vapid": "Web Push (VAPID)",
}
# Packages that hold no vendor's secret format.
_SKIP_PACKAGES = {
    "common": "generic (JWT, a JSON parser)",
    "http": "generic (HTTP Authorization headers, cookies, CSRF tokens)",
    "urlcreds": "credentials in a URL",
    "gitbasicauth": "credentials in a URL",
    "privatekey": "a PEM block or JSON key file",
    "tinkkeyset": "a base64 encoding of another format, or a JSON key file",
}
# What a pattern finds, from its variable's name; the first that fits.
_SKIP_NAMES = [
    (re.compile(r"(?i)base64"), "a base64 encoding of another format"),
    (re.compile(r"(?i)^(?:context|keyword|prefilter)"), "a context or keyword pattern"),
    (re.compile(r"(?i)url|projectref|login|sts"), "a URL or host"),
    (re.compile(r"(?i)user(?:name)?(?:re|pattern)$"), "an id or user name"),
    (re.compile(r"^(?!.*Secret).*(?:ID|Id)(?:Re|Pattern|ContextRe)?$"), "an id or user name"),
    (re.compile(r"^jwtRe$"), "a JWT (no vendor's format)"),
    (re.compile(r"(?i)publickey"), "a public key"),
    (re.compile(r"(?i)privatekeyre|blockre|rejson|jsonpattern"), "a PEM block or JSON key file"),
]
_CALL = re.compile(r"(\w+)\s*=\s*regexp\.MustCompile\(")
_PIECE = re.compile(r"\s*(?://[^\n]*\n\s*)*(?:`([^`]*)`|\"((?:[^\"\\\n]|\\.)*)\")\s*(\+)?")


def go_patterns(source: str) -> list[tuple[str, str]]:
    """(variable, pattern) of every ``X = regexp.MustCompile(...)`` made of string literals."""
    found = []
    for call in _CALL.finditer(source):
        at, pieces = call.end(), []
        while piece := _PIECE.match(source, at):
            raw, cooked = piece.group(1), piece.group(2)
            pieces.append(raw if raw is not None else re.sub(r"\\(.)", r"\1", cooked))
            at = piece.end()
            if not piece.group(3):
                break
        if pieces and re.match(r"\s*,?\s*\)", source[at:]):
            found.append((call.group(1), "".join(pieces)))
    return found


def _cap(bounds: re.Match[str]) -> str:
    low, high = int(bounds.group(1)), int(bounds.group(2))
    return f"{{{low},{max(low, min(high, 256))}}}"


def _outside_classes(pattern: str, start: int = 0) -> Iterator[int]:
    """Indexes of ``pattern``'s characters from ``start`` on that are neither escaped nor in a
    character class."""
    i, in_class = start, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":
                i += 1
        else:
            yield i
        i += 1


def _closing(pattern: str, start: int) -> int:
    """Index just past the group opened at ``start``."""
    depth = 0
    for i in _outside_classes(pattern, start):
        depth += {"(": 1, ")": -1}.get(pattern[i], 0)
        if pattern[i] == ")" and depth == 0:
            return i + 1
    raise ValueError("unbalanced group")


def _groups(pattern: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each group, kind ``capture``, ``named`` or ``other``."""
    spans = []
    for i in _outside_classes(pattern):
        if pattern[i] == "(":
            kind = "other" if pattern[i + 1] == "?" else "capture"
            kind = "named" if pattern.startswith("(?P<", i) else kind
            spans.append((i, _closing(pattern, i), kind))
    return spans


def _top_flags(pattern: str) -> tuple[str, str]:
    flags = re.match(r"\(\?([a-z]+)\)", pattern)
    return (flags.group(1), pattern[flags.end() :]) if flags else ("", pattern)


def veles_secret(pattern: str) -> str:
    """The secret's expression of a Veles pattern, in Python's syntax: the whole match, or the
    last unnamed group of a pattern that looks for a key name (or a quote) first."""
    flags, body = _top_flags(pattern)
    body = re.sub(r"^(?:\\b|\(\?:\[[^\]]*\]\|\\b\))+|(?:\\b)+$", "", body)
    captures = [(s, e) for s, e, kind in _groups(body) if kind == "capture"]
    if captures and captures[-1] == (0, len(body)):
        body = "(?:" + body[1:]
    elif captures:
        start, end = captures[-1]
        body = re.sub(r"^(?:\\b)+|(?:\\b)+$", "", body[start + 1 : end - 1])
    body = re.sub(r"\{(\d+),(\d+)\}", _cap, body)
    flags = "".join(f for f in flags if f in "i")
    regex = f"(?{flags})" * bool(flags) + body
    re.compile(regex)
    return regex


def veles_formats(repo: Path, dropped: Counter[str]) -> list[tuple[str, str, str, str]]:
    """(rule, name, vendor, regex) of each Veles pattern of a vendor's secret."""
    kept = []
    names = _git(repo, "ls-tree", "-r", "--name-only", "HEAD", VELES).split()
    for path in sorted(p for p in names if p.endswith(".go") and not p.endswith("_test.go")):
        package = path.split("/")[2]
        found = go_patterns(_git(repo, "show", f"HEAD:{path}"))
        if package in _SKIP_PACKAGES:
            dropped[_SKIP_PACKAGES[package]] += len(found)
            continue
        for variable, pattern in found:
            reason = next((why for name, why in _SKIP_NAMES if name.search(variable)), None)
            if package == "azuretoken":
                reason = "a URL or host"
            elif (package, variable) == ("packagist", "apiKeyRe"):
                reason = "an id or user name"  # the key beside Packagist's API secret
            if reason:
                dropped[reason] += 1
                continue
            try:
                regex = veles_secret(pattern)
            except (re.error, ValueError) as error:
                dropped[f"cannot translate ({error})"] += 1
                continue
            kept.append((f"veles.{package}.{variable}", variable, _VELES_VENDOR[package], regex))
    return kept


# --- extract: Microsoft's security-utilities -------------------------------------------------------

_MS_SUFFIX = re.compile(
    r"(?:Identifiable|Legacy|CommonAnnotated|Security|Key|Keys|Pat|Credentials|Admin|Query|"
    r"Subscription|Gateway|Repository|DirectManagement|Device|Provisioning)+$"
)
_MS_VENDOR = {
    "AadClientApp": "Microsoft Entra ID",
    "Ado": "Azure DevOps",
    "AzureDevOps": "Azure DevOps",
    "AzureApim": "Azure API Management",
    "AzureCosmosDB": "Azure Cosmos DB",
    "AzureEventHub": "Azure Event Hubs",
    "AzureIot": "Azure IoT Hub",
    "AzureIotHub": "Azure IoT Hub",
    "AzureFunction": "Azure Functions",
    "AzureCacheForRedis": "Azure Cache for Redis",
    "AzureMLWebServiceClassic": "Azure Machine Learning",
    "AzureMessaging": "Azure Service Bus",
    "AzureStorageAccount": "Azure Storage",
    "NuGetApi": "NuGet",
    "NpmAuthor": "npm",
    "SqlPrivateDefaultCloudSA": "Azure SQL",
    "Unclassified": "Azure",
}
# The Cognitive Services keys: one layout, a letter of the service before ``ACOG``.
_COGNITIVE = re.compile(r"(?<=AAA)[A-Za-z](?=ACOG)")


def _ms_vendor(name: str) -> str:
    stem = _MS_SUFFIX.sub("", name)
    if stem in _MS_VENDOR:
        return _MS_VENDOR[stem]
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", stem).replace("Ai ", "AI ")


def microsoft_formats(repo: Path, dropped: Counter[str]) -> list[tuple[str, str, str, str]]:
    """(rule, name, vendor, regex) of each of Microsoft's precisely classified patterns."""
    kept: list[tuple[str, str, str, str]] = []
    cognitive: list[tuple[str, str]] = []
    for rule in json.loads(_git(repo, "show", f"HEAD:{MICROSOFT}")):
        name, pattern = rule["Name"], rule["Pattern"]
        if name == "SecretScanningSampleToken":
            dropped["a non-functional sample token"] += 1
            continue
        flags, body = _top_flags(pattern)
        start = body.index("(?P<refine>")
        regex = f"(?{flags})" * bool(flags) + "(?:" + body[start + len("(?P<refine>") : _closing(body, start)]
        regex = regex.replace(string.ascii_letters + "1234567890", "a-zA-Z0-9")  # the same class
        re.compile(regex)
        if _COGNITIVE.search(regex):
            cognitive.append((rule["Id"], regex))
            continue
        kept.append((f"msu.{rule['Id']}.{name}", name, _ms_vendor(name), regex))
    if cognitive:
        letters = "".join(sorted({_COGNITIVE.search(r).group(0) for _, r in cognitive}))  # type: ignore[union-attr]
        regex = _COGNITIVE.sub(f"[{letters}]", cognitive[0][1])
        dropped["one of the Cognitive Services keys (kept as one format)"] += len(cognitive) - 1
        name = "CognitiveServicesLegacyCommonAnnotatedSecurityKey"
        rule_id = f"msu.{cognitive[0][0]}-{cognitive[-1][0].split('/')[1]}.{name}"
        kept.append((rule_id, name, "Azure AI services", regex))
    return kept


# --- extract: both ---------------------------------------------------------------------------------


def _same_format(a: str, b: str, draw: _Draw) -> bool:
    """Whether tokens drawn from each expression match the other (20 each way)."""
    ca, cb = re.compile(a), re.compile(b)
    return all(cb.fullmatch(s) for s in draw_secrets(draw, a, 20)) and all(
        ca.fullmatch(s) for s in draw_secrets(draw, b, 20)
    )


def extract(scalibr: Path, microsoft: Path) -> tuple[list[tuple[str, ...]], Counter[str]]:
    dropped: Counter[str] = Counter()
    draw = _LongDraw(random.Random(0))
    candidates = veles_formats(scalibr, dropped) + microsoft_formats(microsoft, dropped)
    kept: list[tuple[str, ...]] = []
    for rule, name, vendor, regex in candidates:
        if len(draw_secrets(draw, regex)) < 3:
            dropped["cannot draw 3 clean secrets"] += 1
            continue
        if any(v == vendor and (r == regex or _same_format(r, regex, draw)) for _, _, v, _, r, _ in kept):
            dropped["a vendor's format already kept"] += 1
            continue
        kept.append((rule, name, vendor, "secret", regex, str(fixed_prefix(regex))))
    return kept, dropped


# --- generate --------------------------------------------------------------------------------------


class _LongDraw(_Draw):
    """As ``_Draw``, but an unbounded repeat of a wide class (36+ characters) draws 20 to 60 of
    them: ``sk-ant-[a-zA-Z0-9]+-...`` should not give a five-character key."""

    def _item(self, op: object, av: object, fold: bool) -> str:
        if op in (MAX_REPEAT, MIN_REPEAT):
            low, high, sub = cast(tuple[int, object, object], av)
            if high is MAXREPEAT and _width(sub) >= 36:
                low = max(low, 20)
                return "".join(self._seq(sub, fold) for _ in range(self.rng.randint(low, low + 40)))
        return super()._item(op, av, fold)


def _width(sub: object) -> int:
    items = list(sub)  # type: ignore[call-overload]
    if len(items) != 1 or items[0][0] is not IN:
        return 0
    width = 0
    for op, av in items[0][1]:
        width += 1 if op is LITERAL else av[1] - av[0] + 1 if op is RANGE else 36
    return width


BARE = [
    "Pasting {s} here so it doesn't get lost in the migration.",
    "Where did {s} come from? It was in the shared drive readme.",
    "{s} — from the laptop Omar handed back on Tuesday.",
    "Please remove {s} from the wiki page before the audit.",
    "The load test ran with {s} and nobody noticed until today.",
    "I found {s} in a screenshot attached to the bug report.",
    "Kiran's notes from the offsite list {s} under item four.",
    "Is {s} still live, or was it replaced during the cutover?",
    "Left a sticky note: {s}",
    "The old cron box still reads {s} from its startup script.",
    "Archiving this for later: {s}.",
    "Jun pinged me {s} over chat, can we move it somewhere safer?",
]
VENDOR_KEY = [
    "Our {vendor} key changed yesterday, the current one is {s}.",
    "{vendor} token for the billing worker = {s}",
    "I generated a fresh {vendor} key: {s} (delete the older one).",
    "Reminder that {s} is the {vendor} token used by the release bot.",
    "The {vendor} key in the shared notebook reads {s}",
    "can you paste {s} into the {vendor} token field on the dashboard",
    "Backup {vendor} key, in case the primary is revoked: {s}",
    "{vendor} token ({s}) belongs to the analytics team.",
    "Omar found the {vendor} key {s} in last year's handover doc.",
    "For local testing set the {vendor} token to {s} and restart.",
    "The {vendor} key we gave the contractor was {s}, please revoke it.",
    "{s} is the {vendor} token on the build agents since April.",
]
API_KEY_IS = [
    "Write it down: the API key is {s}",
    "Kiran confirmed the {vendor} API key is {s} for the pilot.",
    "In the staging tenant the API key is {s}.",
    "Heads-up, our API key is {s} until rotation on Friday.",
    "The {vendor} API key is {s} (same one the mobile app uses).",
    "the API key is {s}, region us-central1",
    "According to Jun, the API key is {s}.",
    "Current status: the API key is {s} and the quota is fine.",
    "Our internal {vendor} API key is {s}; keep it off the public tracker.",
    "Remember the API key is {s} when you redeploy.",
    "Okay, the API key is {s} — try the export again.",
    "For the nightly batch the API key is {s}",
]
FORMS = {"bare": BARE, "vendor key": VENDOR_KEY, "api key is": API_KEY_IS}
_CREDENTIAL_WORD = re.compile(r"key|token|secret|passw|credential|auth|api", re.I)
assert not any(_CREDENTIAL_WORD.search(t) for t in BARE)
assert not any("API key is" in t for t in VENDOR_KEY)
assert all(re.search(r"\{vendor\} (?:key|token)", t) for t in VENDOR_KEY)
assert all("API key is {s}" in t for t in API_KEY_IS)


def generate(seed: int) -> list[tuple[str, str, str, str]]:
    """(form, prefixed, rule, text): fake secrets per format and form, each in a sentence of that
    form (``bare`` only for formats with a literal prefix of 3+ characters)."""
    rng = random.Random(seed)
    draw, rows = _LongDraw(rng), []
    for fmt in read_tsv(FORMATS):
        prefixed = int(fmt["prefix"]) >= 3
        for form, templates in FORMS.items():
            if form == "bare" and not prefixed:
                continue
            secrets = draw_secrets(draw, fmt["regex"], DRAWS)
            assert len(secrets) == DRAWS and all(re.fullmatch(fmt["regex"], s) for s in secrets)
            for secret, template in zip(secrets, rng.sample(templates, DRAWS), strict=True):
                text = template.format(s=secret, vendor=fmt["vendor"])
                rows.append((form, "yes" if prefixed else "no", fmt["rule"], text))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("extract")
    ex.add_argument("--scalibr", type=Path, required=True, help="git dir of google/osv-scalibr")
    ex.add_argument(
        "--security-utilities", type=Path, required=True, help="git dir of microsoft/security-utilities"
    )
    gen = sub.add_parser("generate")
    gen.add_argument("--seed", type=int, default=SEED)
    sub.add_parser("score")
    args = parser.parse_args()
    if args.command == "extract":
        kept, dropped = extract(args.scalibr, args.security_utilities)
        write_tsv(FORMATS, ["rule", "name", "vendor", "categories", "regex", "prefix"], kept)
        commits = {
            "scalibr": _git(args.scalibr, "rev-parse", "HEAD").strip(),
            "security-utilities": _git(args.security_utilities, "rev-parse", "HEAD").strip(),
        }
        sources = Counter(row[0].split(".")[0] for row in kept)
        summary = {"commits": commits, "kept": len(kept), "by source": sources}
        summary["vendors"] = len({row[2] for row in kept})
        summary["prefixed"] = sum(int(row[5]) >= 3 for row in kept)
        print(json.dumps({**summary, "dropped": dropped}, indent=1))
    elif args.command == "generate":
        rows = generate(args.seed)
        counts = write_secret_lines(DATA / CORPUS, list(rows))
        print(json.dumps({"seed": args.seed, "secret lines": counts}))
    else:
        from bench.secrets import google_microsoft_table  # scored as the other held-out corpora

        print(google_microsoft_table())


if __name__ == "__main__":
    main()
