"""Build a held-out secrets corpus from Nosey Parker's rules: fake secrets in sentences, and ordinary lines.

    python -m bench.secrets_heldout extract --noseyparker DIR   # rules -> heldout_formats.tsv
    python -m bench.secrets_heldout generate                    # -> heldout.tsv, heldout_ordinary.tsv

``extract`` reads the rules of praetorian-inc/noseyparker (a git directory, read with
``git show HEAD:...``), keeps those categorized ``secret`` (password hashes left out), takes the
capture group that holds the secret, turns it from Rust regex syntax into Python's (verbose mode
and mid-pattern flags resolved, ``(?i)`` kept) and writes ``heldout_formats.tsv``; a rule whose
secret cannot be drawn as a clean token is dropped. ``generate`` is seeded and needs only that
file: it draws three fake secrets per rule and puts each in an English sentence of each form
(``bare``: the token alone with no credential word, only for tokens with a literal prefix of 3+
characters; ``vendor key``: the vendor's name and "key" or "token"; ``api key is``), then writes
ordinary developer lines that hold no secret. The scanner was not written from these rules: the
files are held out and only their totals are read. Nothing here is product code.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import string
import subprocess
import uuid
from collections import Counter
from pathlib import Path
from re import _parser as sre_parse  # type: ignore[attr-defined]
from re._constants import BRANCH, IN, LITERAL, SUBPATTERN  # type: ignore[import-not-found]

from bench.secrets_corpus import DATA, _Draw, read_tsv, write_secret_lines, write_tsv
from hippograph.text.rust_regex import translate

RULES = "crates/noseyparker/data/default/builtin/rules"
SEED = 2026

# --- extract: the secret's regular expression from each rule --------------------------------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def secret_group(groups: list[dict[str, str]]) -> dict[str, str]:
    """The group that holds the secret: the only one, the first commented password/secret, else the last."""
    named = [g for g in groups if re.search(r"password|secret", g["comment"], re.I)]
    return groups[0] if len(groups) == 1 else named[0] if named else groups[-1]


def fixed_prefix(regex: str) -> int:
    """How many fixed characters every match starts with (a choice of literals such as sk|rk counts)."""

    def walk(items: list) -> tuple[int, bool]:  # (length, whole sequence fixed)
        total = 0
        for op, av in items:
            if op is LITERAL or (op is IN and len(av) <= 3 and all(o is LITERAL for o, _ in av)):
                total += 1
            elif op is SUBPATTERN or op is BRANCH:
                parts = [walk(av[3])] if op is SUBPATTERN else [walk(b) for b in av[1]]
                total += min(p[0] for p in parts)
                if not all(whole and length == parts[0][0] for length, whole in parts):
                    return total, False
            else:
                return total, False
        return total, True

    return walk(list(sre_parse.parse(regex)))[0]


_VENDOR = dict(  # the first word of a rule's name -> the vendor, where they differ
    pair.split("=")
    for pair in "Adafruit=Adafruit IO;Age=age;Base64-PEM-Encoded=PEM;CodeClimate=Code Climate;"
    "Connect-VIServer=VMware;Docker=Docker Hub;Generic=generic;Hashicorp=HashiCorp Vault;"
    "HuggingFace=Hugging Face;JSON=JWT;MailChimp=Mailchimp;Microsoft=Microsoft Teams;New=New Relic;"
    "NPM=npm;particle.io=Particle;PEM-Encoded=PEM;Sauce=Sauce Labs".split(";")
)


def vendor(name: str) -> str:
    """The vendor in a rule's name: its first word after "Credentials in" and the like."""
    word = re.sub(
        r"^(?:Credentials in|Hardcoded|Sensitive Value in|Connection String in) ", "", name
    ).split()[0]
    return _VENDOR.get(word, word)


CLEAN = re.compile(r"[^\s'\"`<>\\]{8,}")


def draw_secrets(draw: _Draw, regex: str, count: int = 3) -> list[str]:
    """``count`` different fake secrets matching ``regex``: 8+ characters, no space, quote or backslash."""
    compiled, found = re.compile(regex), []
    for _ in range(300):
        sample = draw.pattern(regex)
        if compiled.fullmatch(sample) and CLEAN.fullmatch(sample) and sample not in found:
            found.append(sample)
            if len(found) == count:
                break
    return found


def extract(repo: Path) -> tuple[list[tuple[str, ...]], dict[str, list[str]], list[str]]:
    import yaml  # only here: reading Nosey Parker's rule files

    kept, dropped, unmatched = [], {}, []
    draw = _Draw(random.Random(0))
    for name in _git(repo, "ls-tree", "--name-only", f"HEAD:{RULES}").split():
        for rule in yaml.safe_load(_git(repo, "show", f"HEAD:{RULES}/{name}"))["rules"]:
            rid, categories = rule["id"], rule.get("categories") or []
            reason = None
            if "secret" not in categories:
                reason = "not categorized secret (" + (",".join(categories) or "none") + ")"
            elif "hashed" in categories:
                reason = "password hash"
            else:
                try:
                    body, top, groups = translate(rule["pattern"])
                    full = re.compile(f"(?{top})" * bool(top) + body)
                    group = secret_group(groups)
                    regex = f"(?{group['flags']})" * bool(group["flags"]) + group["text"]
                    if re.fullmatch(regex, "A" * 40 + "\n" + "A" * 400):
                        reason = "secret spans lines (a PEM body)"
                    elif len(draw_secrets(draw, regex)) < 3:
                        reason = "cannot draw 3 clean secrets"
                except (ValueError, re.error, IndexError) as error:
                    reason = f"cannot translate ({error})"
            if reason:
                dropped.setdefault(reason, []).append(rid)
                continue
            if not any(full.search(e) for e in rule.get("examples") or []):
                unmatched.append(rid)
            row = (rid, rule["name"], vendor(rule["name"]), ",".join(categories), regex)
            kept.append((*row, str(fixed_prefix(regex))))
    return kept, dropped, unmatched


# --- generate: fake secrets in sentences ----------------------------------------------------------

BARE = [
    "Found {s} in the old deploy notes, does anyone still use it?",
    "{s} showed up in the staging logs again this morning.",
    "Can you check whether {s} still works before the release",
    "I copied {s} into the runbook under the March section.",
    "Note for Priya: the value from the vault export is {s}",
    "Heads up, {s} was pasted into the #ops channel by mistake!",
    "The CI job started failing right after we swapped in {s}",
    "Moving the nightly job over to {s} instead of the old one.",
    "Per the ticket, Marco set {s} on the build server; revert if the smoke tests fail.",
    "scratch: {s} (expires end of quarter)",
    "Just so it's written down somewhere — {s}",
    "Try {s} with the sandbox project and tell me what comes back.",
]
VENDOR_KEY = [
    "The {vendor} key for staging is {s}, prod uses a different one.",
    "use {s} as the {vendor} key until Friday",
    "{vendor} key — {s}",
    "We rotated the {vendor} key to {s} last week.",
    "{vendor} key ({s}) goes in the vault, not in the repo!",
    "Here's the new {vendor} key: {s}",
    "{s} is the {vendor} key the nightly export runs with.",
    "Swap the old {vendor} key for {s} in the CI settings, please.",
    "For the demo laptop the {vendor} key should be {s}",
    "Dana sent over the {vendor} token, it's {s}.",
    "{vendor} token for the integration tests: {s}",
    "I think the {vendor} key we ended up with was {s}, double-check with Sam.",
]
API_KEY_IS = [
    "The API key is {s}.",
    "For the staging box, the API key is {s}",
    "Our {vendor} API key is {s}; don't share it outside the team.",
    "FYI the new API key is {s} — the old one was revoked.",
    "Reminder: the API key is {s}",
    "If the script asks, the API key is {s}, and the region is eu-west-1.",
    "Quick one: the API key is {s}!",
    "Sam says the {vendor} API key is {s} now.",
    "From the onboarding doc, the API key is {s}.",
    "ok so the API key is {s} and the account id is 4471",
    "The production {vendor} API key is {s}, rotate it after the launch.",
    "As of Monday the sandbox API key is {s}",
]
FORMS = {"bare": BARE, "vendor key": VENDOR_KEY, "api key is": API_KEY_IS}
_CREDENTIAL_WORD = re.compile(r"key|token|secret|passw|credential|auth|api", re.I)
assert not any(_CREDENTIAL_WORD.search(t) for t in BARE)
assert not any("API key is" in t for t in VENDOR_KEY)


def secret_lines(
    formats: list[dict[str, str]], seed: int, forms: dict[str, list[str]] = FORMS
) -> list[tuple[str, str, str, str]]:
    """(form, prefixed, rule, text): three fake secrets per format and form, each in a sentence
    of that form's ``forms`` templates (``bare`` only for formats with a literal prefix)."""
    rng = random.Random(seed)
    draw, rows = _Draw(rng), []
    for fmt in formats:
        prefixed = int(fmt["prefix"]) >= 3
        for form, templates in forms.items():
            if form == "bare" and not prefixed:
                continue
            secrets = draw_secrets(draw, fmt["regex"])
            for secret, template in zip(secrets, rng.sample(templates, len(secrets)), strict=True):
                text = template.format(s=secret, vendor=fmt["vendor"])
                rows.append((form, "yes" if prefixed else "no", fmt["rule"], text))
    return rows


# --- generate: ordinary developer lines with no secret --------------------------------------------

B62 = string.ascii_letters + string.digits
WORDS = "billing ingest search export invoices avatars reports scheduler mailer audit".split()
NAMES = "dana sam priya marco lena tomas".split()


class _Fill(dict):
    """For ``str.format_map``: every placeholder gets a fresh random value (``hex40``: 40 hex digits)."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__()
        self.rng = rng

    def pick(self, chars: str, k: int) -> str:
        return "".join(self.rng.choice(chars) for _ in range(k))

    def __missing__(self, name: str) -> str:
        rng, sized = self.rng, re.fullmatch(r"(hex|HEX|b62_)(\d+)", name)
        if sized:
            chars = {"hex": "0123456789abcdef", "HEX": "0123456789ABCDEF", "b62_": B62}[sized.group(1)]
            return self.pick(chars, int(sized.group(2)))
        makers = {
            "ghreq": lambda: ":".join(self.pick("0123456789ABCDEF", k) for k in (4, 4, 6, 6, 8)),
            "uuid": lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "date": lambda: f"2026-0{rng.randint(1, 9)}-{rng.randint(10, 28)}",
            "ts": lambda: (
                f"{self['date']}T{rng.randint(10, 23)}:{rng.randint(10, 59)}:"
                f"{rng.randint(10, 59)}.{rng.randint(100, 999)}Z"
            ),
            "clf": lambda: (
                f"{rng.randint(10, 28)}/Mar/2026:{rng.randint(10, 23)}:{rng.randint(10, 59)}:07 +0000"
            ),
            "n": lambda: str(rng.randint(2, 60)),
            "ms": lambda: str(rng.randint(3, 4000)),
            "n6": lambda: str(rng.randint(100000, 999999)),
            "epoch": lambda: str(rng.randint(1_760_000_000, 1_790_000_000)),
            "acct": lambda: str(rng.randint(10**11, 10**12 - 1)),
            "ip": lambda: f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            "b64_43": lambda: base64.b64encode(rng.randbytes(32)).decode().rstrip("="),
            "jira": lambda: f"{rng.choice(['OPS', 'PLAT', 'WEB', 'DATA'])}-{rng.randint(10, 4999)}",
            "slack": lambda: "C0" + self.pick(string.ascii_uppercase + string.digits, 9),
            "team": lambda: "T0" + self.pick(string.ascii_uppercase + string.digits, 8),
            "word": lambda: rng.choice(WORDS),
            "name": lambda: rng.choice(NAMES),
        }
        return makers[name]()


ORDINARY = {
    "commit message": [
        "Fix off-by-one in the pagination cursor (closes {jira})",
        'Revert "Bump requests to 2.{n}.0", it broke the proxy tests; reverts {hex7}',
        "Refactor the cache_key builder so the sort_key order is stable",
        "Raise token_limit for the {word} summarizer from 4096 to 8192",
        "Merge branch 'feature/{word}-export' into main",
        "docs: explain how to rotate the Stripe key without downtime",
        "Drop the unused primary_key index on the {word} table ({hex7})",
        "tests: pin the fixture UUID to {uuid} so snapshots stop churning",
        "ci: read API_KEY from the environment instead of the settings file",
        "Bump the max_tokens default to {n}00 and log when the budget is exceeded",
        "Fix flaky {word} test introduced in {hex40}",
        "chore(deps): update actions/checkout to v4 ({hex7})",
        "{jira}: retry the {word} webhook with exponential backoff",
    ],
    "log line": [
        "{ts} INFO  request_id={uuid} method=GET path=/v1/{word} status=200 duration_ms={ms}",
        "{ts} WARN  trace_id={hex32} span_id={hex16} slow query took {ms}ms",
        "[{ts}] ERROR worker-{n}: job {uuid} failed after 3 retries, moving to the dead letter queue",
        "{ts} DEBUG cache miss for cache_key=user:{n6}:profile",
        'level=info ts={ts} msg="token bucket refilled" tokens={n} capacity=100',
        "{ts} INFO  Slack notification sent to {slack} (message ts {epoch}.{n6})",
        '{ip} - - [{clf}] "GET /healthz HTTP/1.1" 200 {ms} "-" "kube-probe/1.29"',
        "{ts} INFO  x-request-id: {hex32} upstream={word}-{n} latency={ms}ms",
        "{ts} WARN  GitHub rate limit hit, retry in {n}s (x-github-request-id {ghreq})",
        "{ts} INFO  stripe webhook evt_{b62_24} processed in {ms}ms",
        "{ts} INFO  deployed {hex7} to production ({n} pods healthy)",
        "{ts} ERROR {word}: connection reset by peer {ip}:5432 (attempt {n})",
    ],
    "config line": [
        'cache_key = "report:{word}:v{n}"',
        "primary_key: id",
        "sort_key: created_at",
        "token_limit = {n}000",
        "max_tokens: {n}00",
        "password_min_length=12",
        'api_key = os.environ["API_KEY"]',
        'kms_key_id = "arn:aws:kms:eu-west-1:{acct}:key/{uuid}"',
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64_43} {name}@laptop",
        "host key fingerprint is SHA256:{b64_43}",
        "signing_key_id: {HEX16}",
        "github_token: ${{{{ secrets.GITHUB_TOKEN }}}}",
        'password: "${{DB_PASSWORD}}"',
        'token = os.getenv("HF_TOKEN")',
        "session_timeout_minutes = {n}",
        "jwt_expiry_seconds = 3600",
    ],
    "hash": [
        "{hex64}  hippograph-0.{n}.0-py3-none-any.whl",
        "git show {hex40} --stat",
        "image: ghcr.io/acme/{word}@sha256:{hex64}",
        "sha256sum matches: {hex64}",
        "HEAD is now at {hex7} Merge pull request #{n6} from acme/{word}",
        "docker pull redis@sha256:{hex64}",
        "md5 {hex32}  backup-{date}.tar.gz",
        "The key insight from commit {hex7} was that the index must be rebuilt after the migration.",
        "Blob {hex40} is 1.2 MB, probably the fixture we forgot to put in LFS.",
        "the tree at {hex7} still has the old lockfile",
    ],
    "id": [
        "charge ch_{b62_24} was refunded to cus_{b62_14}",
        "{jira} is blocked on {jira}",
        "please post the summary in {slack}",
        "arn:aws:lambda:us-east-1:{acct}:function:{word}-handler",
        "request id {uuid} came back with a 504",
        "subscription sub_{b62_24} renews on {date}",
        "tenant {uuid} maps to Slack workspace {team}",
        "payment_intent pi_{b62_24} is stuck in requires_action",
        "arn:aws:s3:::acme-{word}-logs/{date}/",
        "AWS account {acct} in eu-central-1 owns the {word} bucket",
        "Sentry issue {hex32} first seen {ts}",
    ],
    "URL": [
        "https://github.com/acme/{word}/pull/{n}?diff=split&w=1",
        "https://acme.atlassian.net/browse/{jira}?focusedCommentId={n6}",
        "https://api.example.com/v2/search?q={word}&page={n}&per_page=50",
        "https://app.slack.com/client/{team}/{slack}",
        "https://dashboard.stripe.com/test/payments/pi_{b62_24}",
        "https://grafana.internal/d/{b62_14}/api-latency?orgId=1&from=now-6h&to=now",
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/tree/main?show_file_info={n}",
        "https://www.notion.so/acme/Release-checklist-{hex32}?pvs=4",
        "https://console.aws.amazon.com/cloudwatch/home?region=eu-west-1#logsV2:log-groups",
        "curl 'https://api.example.com/{word}?cursor={b62_14}&limit=100'",
        "https://docs.mapbox.com/help/getting-started/access-tokens/?utm_source={word}",
    ],
    "vendor sentence": [
        "The token budget is {n}k for the summarizer.",
        "rotate the Stripe key every 90 days and write down who did it",
        "the Hugging Face model id is sentence-transformers/all-MiniLM-L6-v2",
        "Ask in {slack} before rotating the GitHub deploy key.",
        "The Mapbox public token only works for the styles URL, so we proxy the tiles.",
        "Jira keeps the issue key ({jira}) even after the project is renamed.",
        "The Notion integration needs read access to the release checklist page.",
        "Store the OpenAI key in the secrets manager, never in the .env file.",
        "GitHub secret scanning flagged nothing on the last {n} pushes.",
        "Set max_tokens to {n}00 when calling the Anthropic model.",
        "The primary key on the {word} table is a UUID, not a serial.",
        "Our Slack bot token expired, so {name} regenerated it from the app settings page.",
        "Twilio charges per message; the key question is whether we batch.",
        "We moved the Mapbox key into Vault on {date}.",
        "Password reset emails go out through SendGrid.",
        "The Hugging Face token lives in the team vault, ask {name} for access.",
    ],
}


def ordinary_lines(seed: int, per_category: int = 40) -> list[tuple[str, str]]:
    rng = random.Random(f"{seed}-ordinary")
    fill, rows = _Fill(rng), []
    for category, templates in ORDINARY.items():
        seen: set[str] = set()
        for _ in range(per_category * 20):
            text = rng.choice(templates).format_map(fill)
            if text not in seen:
                seen.add(text)
                rows.append((category, text))
            if len(seen) == per_category:
                break
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("extract")
    ex.add_argument("--noseyparker", type=Path, required=True, help="git dir of praetorian-inc/noseyparker")
    gen = sub.add_parser("generate")
    gen.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    if args.command == "extract":
        kept, dropped, unmatched = extract(args.noseyparker)
        header = ["rule", "name", "vendor", "categories", "regex", "prefix"]
        write_tsv(DATA / "heldout_formats.tsv", header, kept)
        commit = _git(args.noseyparker, "rev-parse", "HEAD").strip()
        summary = {"commit": commit, "kept": len(kept), "dropped": dropped, "examples_unmatched": unmatched}
        print(json.dumps(summary, indent=1))
        return
    formats = read_tsv(DATA / "heldout_formats.tsv")
    secrets = secret_lines(formats, args.seed)
    counts = write_secret_lines(DATA / "heldout.tsv", secrets)
    ordinary = ordinary_lines(args.seed)
    write_tsv(DATA / "heldout_ordinary.tsv", ["category", "text"], ordinary)
    per_category = Counter(c for c, _ in ordinary)
    print(json.dumps({"seed": args.seed, "secret lines": counts, "ordinary": per_category}))


if __name__ == "__main__":
    main()
