"""No write path stores a secret in any field: every string is screened before it is checked or normalised.

Each attempt sends its own token (a GitHub or a Stripe key, never sent anywhere else) through
one field of one write path. With ``refuse`` every attempt fails with an error naming the field
and nothing is written; with ``redact`` prose fields are stored masked and identifiers are still
refused. Then the store is closed and every file of the data dir is searched for the tokens, as
bytes and ignoring case (some fields are stored lowercased): none may be there.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from hippograph.config import Settings
from hippograph.domain.errors import SecretDetected
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from testkit.stored import stored_files

_ALNUM = string.ascii_letters + string.digits
_random = random.Random()  # unseeded: a token no earlier run or other test can have left on disk


def github_token() -> str:
    return "ghp_" + "".join(_random.choice(_ALNUM) for _ in range(36))


def stripe_key() -> str:
    return "sk_live_" + "".join(_random.choice(_ALNUM) for _ in range(24))


@dataclass(frozen=True)
class Attempt:
    field: str  # what the refusal must name
    prose: bool  # masked (not refused) with HIPPOGRAPH_SECRETS=redact
    send: Callable[[str], object]  # sends the token through one field of one write path


def _hippograph_lines(memory: Memory, record: dict[str, Any]) -> list[str]:
    """An export's header and one record, as ``hippograph import`` reads them."""
    header = memory.export()["jsonl"].splitlines()[0]
    return [header, json.dumps(record)]


def _attempts(memory: Memory) -> dict[str, Attempt]:
    base = memory.remember(
        "Alice works at Acme",
        subject="Alice",
        predicate="works_at",
        object="Acme",
        entities=["Alice", "Acme"],
    )
    alice, acme = (e.id for e in base.linked_entities)
    to_forget = memory.remember("Alice keeps a spare key under the mat").id
    to_correct = memory.remember("The office wifi is called acme-guest").id
    exported = {r["type"]: r for r in map(json.loads, memory.export()["jsonl"].splitlines()[1:])}
    entity, fact = exported["entity"], exported["fact"]

    def new_entity(n: int, **fields: Any) -> dict[str, Any]:
        return {**entity, "id": f"e_{n:016x}", "name": f"Zed {n}", "aliases": [], **fields}

    def new_fact(n: int, **fields: Any) -> dict[str, Any]:
        return {**fact, "id": f"f_{n:016x}", "content": f"Zed played chess game {n}", "tags": [], **fields}

    # Each remember says something new (a restatement would store nothing, proving nothing).
    topics = iter(
        "Bob likes green tea|Bob's bike is red|Bob flies to Oslo in May|Bob learns Portuguese|"
        "Bob's cat is called Miso|Bob plays the cello|Bob works from Lisbon|Bob reads sci-fi|"
        "Bob owns a blue kayak|Bob bakes rye bread|Never let Bob near the espresso machine".split("|")
    )

    def remember(**fields: Any) -> Callable[[str], object]:
        content = next(topics)

        def send(token: str) -> object:
            values = {k: (v.replace("TOKEN", token) if isinstance(v, str) else v) for k, v in fields.items()}
            values = {k: ([token] if v == ["TOKEN"] else v) for k, v in values.items()}
            return memory.remember(**{"content": content, **values})

        return send

    def mcp(*records: dict[str, Any]) -> Callable[[str], object]:
        def send(token: str) -> object:
            lines = [json.dumps(r).replace("TOKEN", token) for r in records]
            return memory.import_lines(lines, "mcp-memory")

        return send

    def hippograph(record: dict[str, Any]) -> Callable[[str], object]:
        def send(token: str) -> object:
            line = json.dumps(record).replace("TOKEN", token)
            return memory.import_lines(_hippograph_lines(memory, json.loads(line)), "hippograph")

        return send

    return {
        "remember content": Attempt("content", True, remember(content="the CI token is TOKEN")),
        "remember subject": Attempt("subject", False, remember(subject="TOKEN")),
        "remember predicate": Attempt("predicate", False, remember(subject="Bob", predicate="TOKEN")),
        "remember object": Attempt("object", True, remember(subject="Bob", predicate="key", object="TOKEN")),
        "remember tag": Attempt("tags[0]", False, remember(tags=["TOKEN"])),
        "remember trigger": Attempt("triggers[0]", False, remember(kind="negative", triggers=["TOKEN"])),
        "remember entity": Attempt("entities[0]", False, remember(entities=["TOKEN"])),
        "remember scope": Attempt("scope", False, remember(scope="project:TOKEN")),
        "remember session": Attempt("session_id", False, remember(session_id="TOKEN")),
        "remember evidence": Attempt("evidence", True, remember(evidence="she said TOKEN")),
        "remember_many tag": Attempt(
            "items[0].tags[0]",
            False,
            lambda token: memory.remember_many([{"content": "Bob drinks oat milk", "tags": [token]}]),
        ),
        "remember_many content": Attempt(
            "items[1].content",
            True,
            lambda token: memory.remember_many(
                [{"content": "Bob hates cake"}, {"content": f"Bob's API key is {token}"}]
            ),
        ),
        "correct content": Attempt(
            "content",
            True,
            lambda token: memory.correct(f"The office wifi password is {token}", fact_id=to_correct),
        ),
        "correct tag": Attempt(
            "tags[0]",
            False,
            lambda token: memory.correct("The office wifi is acme-staff", fact_id=to_correct, tags=[token]),
        ),
        "link relation": Attempt("relation", False, lambda token: memory.link(alice, acme, relation=token)),
        "forget reason": Attempt(
            "reason", True, lambda token: memory.forget(to_forget, reason=f"rotated key {token}")
        ),
        "mcp entity name": Attempt(
            "name", False, mcp({"type": "entity", "name": "TOKEN", "entityType": "key", "observations": []})
        ),
        "mcp entity type": Attempt(
            "entityType",
            False,
            mcp({"type": "entity", "name": "Carol", "entityType": "TOKEN", "observations": []}),
        ),
        "mcp observation": Attempt(
            "observations[0]",
            True,
            mcp({"type": "entity", "name": "Dana", "entityType": "person", "observations": ["key TOKEN"]}),
        ),
        "mcp relation type": Attempt(
            "relationType",
            False,
            mcp({"type": "relation", "from": "Alice", "to": "Acme", "relationType": "TOKEN"}),
        ),
        "mcp relation end": Attempt(
            "to", False, mcp({"type": "relation", "from": "Alice", "to": "TOKEN", "relationType": "uses"})
        ),
        "import entity name": Attempt("name", False, hippograph(new_entity(1, name="TOKEN"))),
        "import entity alias": Attempt("aliases[0]", False, hippograph(new_entity(2, aliases=["TOKEN"]))),
        "import fact tag": Attempt("tags[0]", False, hippograph(new_fact(1, tags=["TOKEN"]))),
        "import fact content": Attempt("content", True, hippograph(new_fact(2, content="Zed's key: TOKEN"))),
        "import relation predicate": Attempt(
            "props.predicate",
            False,
            hippograph(
                {
                    "type": "edge",
                    "edge": "RELATES",
                    "from": alice,
                    "to": acme,
                    "props": {"predicate": "TOKEN"},
                }
            ),
        ),
    }


def _files_holding(settings: Settings, tokens: dict[str, str]) -> dict[str, list[str]]:
    """For each attempt whose token some file of the memory keeps (any case), the files."""
    found: dict[str, list[str]] = {}
    for path in stored_files(settings):
        data = path.read_bytes().lower()
        for attempt, token in tokens.items():
            if token.lower().encode() in data:
                found.setdefault(attempt, []).append(str(path))
    return found


@pytest.mark.parametrize("mode", ["refuse", "redact"])
def test_no_write_path_keeps_a_secret_in_any_file(
    settings: Settings, embedder: FastEmbedder, mode: str
) -> None:
    settings = settings.model_copy(update={"secrets": mode})
    memory = Memory.open(settings, embedder=embedder)
    tokens: dict[str, str] = {}
    outcomes: dict[str, str] = {}
    expected: dict[str, str] = {}
    try:
        for i, (name, attempt) in enumerate(_attempts(memory).items()):
            token = tokens[name] = github_token() if i % 2 else stripe_key()
            expected[name] = "stored" if mode == "redact" and attempt.prose else "refused"
            before = memory.graph.census.counts()
            try:
                attempt.send(token)
            except SecretDetected as err:
                message = str(err)
                assert token.lower() not in message.lower(), name
                assert attempt.field in message, (name, message)
                assert memory.graph.census.counts() == before, name  # nothing half-written
                outcomes[name] = "refused"
            else:
                outcomes[name] = "stored"
        exported = memory.export()["jsonl"]
    finally:
        memory.close()
    assert outcomes == expected
    if mode == "redact":
        assert "[REDACTED:github-pat]" in exported and "[REDACTED:stripe-access-token]" in exported
    assert _files_holding(settings, tokens) == {}
