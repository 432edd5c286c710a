"""Secrets pasted into sentences over MCP are refused, and none of them reaches any file of the data dir.

A client remembers fresh fake secrets the way people paste them into a chat: bare vendor tokens
with no credential word, a vendor's name and "key" in a sentence, "the API key is ...", a value
before the credential word, with and without a vendor prefix. Every call must fail with a
refusal that never repeats the secret, ordinary lines beside them must be stored, and after the
server stops no file of the data dir (graph, vectors, logs) may hold any of the secrets.
"""

from __future__ import annotations

import random
import string
import uuid
from pathlib import Path

import pytest

from testkit.client import call, call_error, stdio_session

pytestmark = pytest.mark.anyio

_random = random.Random()  # unseeded: tokens no earlier run can have left on disk
_B62 = string.ascii_letters + string.digits


def _draw(alphabet: str, n: int) -> str:
    return "".join(_random.choice(alphabet) for _ in range(n))


def _sentences() -> dict[str, tuple[str, str]]:
    """{case: (sentence, secret)} with fresh secrets."""
    hex32 = _draw("0123456789abcdef", 32)
    cases = {
        "bare github token": "pasted {} into the runner settings",
        "bare slack bot token": "the bot now runs with {}, fingers crossed",
        "bare unknown vendor prefix": "Marta swapped in {} before the release.",
        "vendor and key, hex": "we rotated the Adobe key for staging to {} yesterday",
        "vendor and key, before the word": "use {} as the Algolia key for the search box",
        "api key is, base62": "FYI the API key is {} until we rotate it",
        "api key is, uuid": "the Heroku API key is {}",
        "token after a name": "new Plaid token {} expires in 30 days",
        "env line": "export PAYMENTS_SECRET={}",
    }
    secrets = {
        "bare github token": "ghp_" + _draw(_B62, 36),
        "bare slack bot token": "-".join(
            ["xoxb", _draw(string.digits, 12), _draw(string.digits, 12), _draw(_B62, 24)]
        ),
        "bare unknown vendor prefix": "zqv_" + _draw(_B62, 32),
        "vendor and key, hex": hex32,
        "vendor and key, before the word": _draw(string.ascii_lowercase + string.digits, 32),
        "api key is, base62": _draw(_B62, 40),
        "api key is, uuid": str(uuid.UUID(int=_random.getrandbits(128))),
        "token after a name": _draw(string.ascii_lowercase + string.digits, 30),
        "env line": _draw(_B62 + "+/", 40),
    }
    return {case: (text.format(secrets[case]), secrets[case]) for case, text in cases.items()}


ORDINARY = [
    "The key insight from commit 3f2a9c1b7d4e8f60 was to batch the writes",
    "Rotate the Stripe key every 90 days, per the security policy",
    "The token budget for the summariser is 8192",
    "request_id=8f14e45f-ceea-467f-a0e6-4a3c7b1d2e9f finished in 42 ms",
]


@pytest.mark.timeout(300)
async def test_pasted_secrets_are_refused_and_never_reach_a_file(tmp_path: Path, models_dir: Path) -> None:
    data_dir = tmp_path / "data"
    sentences = _sentences()
    refusals: dict[str, str] = {}
    async with stdio_session(data_dir, models_dir) as session:
        for case, (text, _) in sentences.items():
            refusals[case] = await call_error(session, "remember", content=text, scope="project:probe")
        stored = [await call(session, "remember", content=text, scope="project:probe") for text in ORDINARY]
    refused = {case: "refused" in message for case, message in refusals.items()}
    assert refused == dict.fromkeys(sentences, True)
    leaked = {case: secret for case, (_, secret) in sentences.items() if secret in refusals[case]}
    assert leaked == {}
    assert len({reply["id"] for reply in stored}) == len(ORDINARY)
    on_disk = {}
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()):
        data = path.read_bytes().lower()
        for case, (_, secret) in sentences.items():
            if secret.lower().encode() in data:
                on_disk.setdefault(case, []).append(str(path.relative_to(data_dir)))
    assert on_disk == {}
