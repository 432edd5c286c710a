"""The graph explorer: its JSON API over a real store, in process.

(The page in a real headless Chromium: tests/e2e/test_explorer.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from hippograph.explorer import LOOPBACK_HOSTS, build_app, hosts_for, static_dir, uvicorn_server
from hippograph.service.memory import Memory
from testkit.prebuilt import Prebuilt

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Seeded:
    berlin: str  # superseded by lisbon
    lisbon: str
    tea: str  # confirmed
    birthday: str  # retracted
    bob: str
    decision: str
    meetup: str  # happened in 2023: first on the timeline
    carol: str
    ids: tuple[str, ...]
    entities: frozenset[str]


def _seeded(memory: Memory) -> Seeded:
    def remember(content: str, entities: list[str], **extra: str) -> str:
        return memory.remember(content, entities=entities, **extra).id

    berlin = remember(
        "Alice lives in Berlin", ["Alice", "Berlin"], subject="Alice", predicate="lives_in", object="Berlin"
    )
    tea = remember("Alice prefers green tea over coffee", ["Alice"], kind="preference")
    bob = remember("Bob works on the Hippograph project", ["Bob", "Hippograph"])
    decision = remember("We decided to store memories in Kuzu", ["Hippograph", "Kuzu"], kind="decision")
    release = remember("To release, tag the commit and push the tag", ["Hippograph"], kind="procedure")
    meetup = remember(
        "Alice met Bob at a meetup in 2023", ["Alice", "Bob"], kind="episode", event_time="2023-05-10"
    )
    carol = remember("Carol does not drink coffee", ["Carol"], kind="negative")
    birthday = remember("Bob's birthday is on the third of March", ["Bob"])
    lisbon = memory.correct(
        "Alice lives in Lisbon", fact_id=berlin, object="Lisbon", entities=["Alice", "Lisbon"]
    ).id
    memory.confirm(tea)
    memory.forget(birthday, reason="wrong date")
    return Seeded(
        berlin=berlin,
        lisbon=lisbon,
        tea=tea,
        birthday=birthday,
        bob=bob,
        decision=decision,
        meetup=meetup,
        carol=carol,
        ids=(berlin, tea, bob, decision, release, meetup, carol, birthday, lisbon),
        entities=frozenset({"Alice", "Berlin", "Bob", "Hippograph", "Kuzu", "Carol", "Lisbon"}),
    )


PREBUILT = {"seeded": _seeded}  # conftest: the memory of a test asking for seeded


@pytest.fixture
def seeded(memory: Memory, prebuilt: Prebuilt) -> Seeded:
    """The ids of what ``memory`` (a copy of the seeded memory) holds."""
    seeded: Seeded = prebuilt(_seeded)[1]
    return seeded


@pytest.fixture
def client(memory: Memory) -> Iterator[TestClient]:
    with TestClient(build_app(memory), base_url="http://127.0.0.1:8766") as test_client:
        yield test_client


# ---------------------------------------------------------------- API


def test_graph_lists_every_fact_its_entities_and_the_edges_between_them(
    client: TestClient, seeded: Seeded
) -> None:
    body = client.get("/api/graph").json()
    facts = {n["id"]: n for n in body["nodes"] if n["group"] == "fact"}
    entities = {n["label"] for n in body["nodes"] if n["group"] == "entity"}
    assert set(facts) == set(seeded.ids)
    assert entities == seeded.entities
    assert (body["facts_total"], body["facts_shown"], body["limit"]) == (9, 9, 500)
    assert facts[seeded.berlin]["status"] == "superseded"
    assert facts[seeded.birthday]["status"] == "retracted"
    assert facts[seeded.tea]["status"] == "confirmed"
    assert facts[seeded.tea]["kind"] == "preference"
    assert facts[seeded.tea]["label"] == "Alice prefers green tea over coffee"
    # confidence x source weight x decay: a user's correction weighs double, a confirm pins.
    assert (facts[seeded.lisbon]["relevance"], facts[seeded.tea]["relevance"]) == (2.0, 1.0)
    assert facts[seeded.berlin]["relevance"] == 0.8
    edges = {(e["type"], e["source"], e["target"]) for e in body["edges"]}
    assert ("SUPERSEDES", seeded.lisbon, seeded.berlin) in edges
    node_ids = {n["id"] for n in body["nodes"]}
    assert all(e["source"] in node_ids and e["target"] in node_ids for e in body["edges"])
    about = [e for e in body["edges"] if e["type"] == "ABOUT" and e["source"] == seeded.lisbon]
    assert {e["label"] for e in about} == {"subject", "object"}


def test_graph_limit_keeps_the_most_recent_facts_and_only_their_entities(
    client: TestClient, seeded: Seeded
) -> None:
    body = client.get("/api/graph", params={"limit": 2}).json()
    facts = [n["id"] for n in body["nodes"] if n["group"] == "fact"]
    entities = {n["label"] for n in body["nodes"] if n["group"] == "entity"}
    assert facts == [seeded.lisbon, seeded.birthday]  # newest first
    assert entities == {"Alice", "Lisbon", "Bob"}
    assert (body["facts_total"], body["facts_shown"]) == (9, 2)
    node_ids = {n["id"] for n in body["nodes"]}
    assert all(e["source"] in node_ids and e["target"] in node_ids for e in body["edges"])


def test_graph_and_search_show_one_scope_and_global(client: TestClient, memory: Memory) -> None:
    shared = memory.remember("Alice leads the falcon launch", entities=["Alice"], session_id="s1").id
    falcon = memory.remember(
        "Falcon launch is in May", scope="project:falcon", entities=["Alice"], session_id="s1"
    ).id
    hack = memory.remember("Hack launch party in June", scope="project:hack", session_id="s1").id

    def shown(path: str, **params: str) -> set[str]:
        body = client.get(path, params=params).json()
        found = {n["id"] for n in body.get("nodes", [])} | {h["id"] for h in body.get("results", [])}
        return found | {end for e in body.get("edges", []) for end in (e["source"], e["target"])}

    assert {shared, falcon} <= shown("/api/graph", scope="project:falcon")
    assert hack not in shown("/api/graph", scope="project:falcon")
    assert {falcon, hack} & shown("/api/graph") == set()
    assert hack not in shown("/api/search", q="launch", scope="project:falcon")
    assert client.get("/api/graph", params={"scope": "no such scope"}).status_code == 400
    # A fact page shows a fact of the page's scope or global; another scope's is a 404.
    assert (
        client.get(f"/api/fact/{falcon}", params={"scope": "project:falcon"}).json()["fact"]["id"] == falcon
    )
    assert client.get(f"/api/fact/{shared}", params={"scope": "project:falcon"}).status_code == 200
    for fid in (falcon, hack):
        assert client.get(f"/api/fact/{fid}").status_code == 404
    assert client.get(f"/api/fact/{hack}", params={"scope": "project:falcon"}).status_code == 404


@pytest.mark.parametrize("limit", ["0", "-3", "abc", "5001"])
def test_graph_limit_out_of_range_is_a_400(client: TestClient, limit: str) -> None:
    response = client.get("/api/graph", params={"limit": limit})
    assert response.status_code == 400
    assert response.json() == {"error": "limit must be a whole number from 1 to 5000, e.g. ?limit=500"}


def test_empty_store_draws_an_empty_graph(client: TestClient) -> None:
    body = client.get("/api/graph").json()
    assert body == {
        "nodes": [],
        "edges": [],
        "facts_total": 0,
        "facts_shown": 0,
        "limit": 500,
        "scope": "global",
    }


def test_search_finds_the_fact_and_changes_nothing(
    client: TestClient, memory: Memory, seeded: Seeded
) -> None:
    before = memory.explain(seeded.tea)
    body = client.get("/api/search", params={"q": "green tea"}).json()
    assert body["query"] == "green tea"
    assert body["results"][0]["id"] == seeded.tea
    assert body["results"][0]["content"] == "Alice prefers green tea over coffee"
    assert memory.explain(seeded.tea) == before


def test_search_shows_history_only_when_asked(client: TestClient, seeded: Seeded) -> None:
    current = client.get("/api/search", params={"q": "where does Alice live"}).json()["results"]
    history = client.get("/api/search", params={"q": "where does Alice live", "history": "1"}).json()
    assert seeded.berlin not in {hit["id"] for hit in current}
    statuses = {hit["id"]: hit["status"] for hit in history["results"]}
    assert statuses[seeded.berlin] == "superseded"
    assert statuses[seeded.lisbon] in ("staged", "confirmed")


@pytest.mark.parametrize("params", [{}, {"q": "   "}])
def test_search_without_a_query_is_a_400(client: TestClient, params: dict[str, str]) -> None:
    response = client.get("/api/search", params=params)
    assert response.status_code == 400
    assert response.json() == {"error": "send a search query, e.g. /api/search?q=Alice"}


def test_fact_explains_the_supersedes_chain_both_ways(client: TestClient, seeded: Seeded) -> None:
    newer = client.get(f"/api/fact/{seeded.lisbon}").json()
    older = client.get(f"/api/fact/{seeded.berlin}").json()
    assert newer["fact"]["content"] == "Alice lives in Lisbon"
    assert [f["id"] for f in newer["supersedes"]] == [seeded.berlin]
    assert [f["id"] for f in older["superseded_by"]] == [seeded.lisbon]
    assert older["fact"]["status"] == "superseded"
    assert {e["name"] for e in newer["entities"]} == {"Alice", "Lisbon"}
    assert set(newer["relevance"]) >= {"value", "confidence", "source_weight", "decay", "status_weight"}
    retracted = client.get(f"/api/fact/{seeded.birthday}").json()
    assert (retracted["fact"]["status"], retracted["status_reason"]) == ("retracted", "wrong date")


def test_unknown_fact_is_a_404_and_a_malformed_id_a_400(client: TestClient, memory: Memory) -> None:
    missing = client.get("/api/fact/f_0123456789abcdef")
    malformed = client.get("/api/fact/not-an-id")
    assert missing.status_code == 404
    assert missing.json()["error"].startswith("no fact has id f_0123456789abcdef")
    assert malformed.status_code == 400
    assert "is not a fact id" in malformed.json()["error"]


def test_page_and_bundled_files_are_served_without_a_cdn(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert 'src="/static/vendor/cytoscape.min.js"' in page.text
    assert 'type="module" src="/static/js/main.js"' in page.text
    assert "<script>" not in page.text  # no inline script: the CSP would refuse it
    assert "http://" not in page.text and "https://" not in page.text
    modules = sorted(p.name for p in (static_dir() / "js").glob("*.js"))
    for path in (
        "/static/explorer.css",
        "/static/vendor/cytoscape.min.js",
        *(f"/static/js/{m}" for m in modules),
    ):
        assert client.get(path).status_code == 200, path
        assert "http://" not in client.get(path).text or path.startswith("/static/vendor"), path
    assert "Cytoscape Consortium" in client.get("/static/vendor/cytoscape.LICENSE").text
    missing = client.get("/static/nope.js")
    assert (missing.status_code, missing.json()) == (404, {"error": "Not Found"})


def test_vendored_cytoscape_is_the_version_the_npm_build_pins() -> None:
    pinned = json.loads((ROOT / "explorer-ui" / "package.json").read_text())["dependencies"]["cytoscape"]
    vendored = (static_dir() / "vendor" / "cytoscape.min.js").read_text()
    assert f'"{pinned}"' in vendored, "rebuild it: cd explorer-ui && npm ci && npm run build"


@pytest.mark.parametrize("host", ["127.0.0.1:8766", "localhost:8766", "[::1]:8766", "localhost"])
def test_loopback_host_headers_are_accepted(client: TestClient, host: str) -> None:
    assert client.get("/api/stats", headers={"host": host}).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8766", "192.168.1.10:8766"])
def test_other_host_headers_are_refused_against_dns_rebinding(client: TestClient, host: str) -> None:
    assert client.get("/api/graph", headers={"host": host}).status_code == 400


def test_a_named_bind_address_is_also_accepted_as_host() -> None:
    assert hosts_for("127.0.0.1") == LOOPBACK_HOSTS
    assert hosts_for("0.0.0.0") == LOOPBACK_HOSTS
    assert hosts_for("::1") == LOOPBACK_HOSTS
    assert hosts_for("192.168.1.10") == (*LOOPBACK_HOSTS, "192.168.1.10")
    assert hosts_for("fd00::5") == (*LOOPBACK_HOSTS, "[fd00::5]")
    assert hosts_for("memory.lan") == (*LOOPBACK_HOSTS, "memory.lan")


def test_graph_filters_by_kind_and_status(client: TestClient, seeded: Seeded) -> None:
    def facts(**params: str) -> set[str]:
        body = client.get("/api/graph", params=params).json()
        return {n["id"] for n in body["nodes"] if n["group"] == "fact"}

    assert facts(kind="preference,decision") == {seeded.tea, seeded.decision}
    assert facts(status="superseded") == {seeded.berlin}
    assert facts(status="retracted", kind="fact") == {seeded.birthday}
    counted = client.get("/api/graph", params={"status": "confirmed,superseded"}).json()
    assert (counted["facts_total"], counted["facts_shown"]) == (2, 2)
    wrong = client.get("/api/graph", params={"kind": "gossip"})
    assert wrong.status_code == 400
    assert wrong.json()["error"].startswith("kinds 'gossip' is not known: use one of fact, preference")


def test_page_setup_lists_the_known_scopes_and_the_pages_first(memory: Memory) -> None:
    memory.remember("Falcon launch is in May", scope="project:falcon")
    app = build_app(memory, scope="project:hack")
    with TestClient(app, base_url="http://127.0.0.1:8766") as client:
        body = client.get("/api/page").json()
        shown = client.get("/api/graph").json()["scope"]
    assert body == {
        "scope": "project:hack",
        "scopes": ["global", "project:falcon", "project:hack"],
        "writable": True,
    }
    assert shown == "project:hack"


def test_browsing_changes_nothing_memory_believes(client: TestClient, memory: Memory, seeded: Seeded) -> None:
    before = {fid: memory.explain(fid) for fid in seeded.ids}
    for path in ("/api/graph", "/api/search?q=Alice", f"/api/fact/{seeded.tea}", "/api/stats", "/api/page"):
        assert client.get(path).status_code == 200, path
    assert {fid: memory.explain(fid) for fid in seeded.ids} == before


# ---------------------------------------------------------------- acting from the page

PAGE = {"X-Hippograph-Explorer": "1", "Origin": "http://127.0.0.1:8766"}


def test_confirm_from_the_page_pins_the_fact(client: TestClient, memory: Memory, seeded: Seeded) -> None:
    response = client.post("/api/confirm", json={"fact_id": seeded.decision}, headers=PAGE)
    assert response.status_code == 200
    assert (response.json()["id"], response.json()["status"]) == (seeded.decision, "confirmed")
    explained = memory.explain(seeded.decision)
    assert (explained.fact.status, explained.pinned, explained.fact.confidence) == ("confirmed", True, 1.0)


def test_a_project_fact_is_acted_on_from_its_own_scope_only(client: TestClient, memory: Memory) -> None:
    fact = memory.remember("The falcon service deploys from the main branch", scope="project:falcon").id
    for scope in (None, "global", "project:hack"):
        refused = client.post("/api/confirm", json={"fact_id": fact, "scope": scope}, headers=PAGE)
        assert refused.status_code == 404, scope
    assert client.get(f"/api/fact/{fact}", params={"scope": "project:hack"}).status_code == 404
    shown = client.get(f"/api/fact/{fact}", params={"scope": "project:falcon"})
    assert shown.status_code == 200 and shown.json()["fact"]["status"] == "staged"
    done = client.post("/api/confirm", json={"fact_id": fact, "scope": "project:falcon"}, headers=PAGE)
    assert done.status_code == 200 and done.json()["status"] == "confirmed"


def test_correct_from_the_page_supersedes_the_old_fact(
    client: TestClient, memory: Memory, seeded: Seeded
) -> None:
    sent = {"fact_id": seeded.lisbon, "content": "Alice lives in Porto", "event_time": "2025-02-01"}
    response = client.post("/api/correct", json=sent, headers=PAGE)
    assert response.status_code == 200
    new = response.json()
    assert (new["corrected"], new["content"], new["source"]) == (
        seeded.lisbon,
        "Alice lives in Porto",
        "user_edit",
    )
    assert [f.id for f in memory.explain(seeded.lisbon).superseded_by] == [new["id"]]
    assert memory.explain(seeded.lisbon).fact.status == "superseded"


def test_forget_from_the_page_retracts_and_purge_erases(
    client: TestClient, memory: Memory, seeded: Seeded
) -> None:
    kept = {"fact_id": seeded.carol, "reason": "she drinks it now"}
    forgotten = client.post("/api/forget", json=kept, headers=PAGE)
    erased = client.post("/api/forget", json={"fact_id": seeded.tea, "purge": True}, headers=PAGE)
    assert (forgotten.status_code, erased.status_code) == (200, 200)
    assert memory.explain(seeded.carol).status_reason == "she drinks it now"
    assert memory.explain(seeded.carol).fact.status == "retracted"
    assert (memory.explain(seeded.tea).fact.status, memory.explain(seeded.tea).fact.content) == ("purged", "")
    drawn = {n["id"] for n in client.get("/api/graph").json()["nodes"]}
    assert seeded.carol in drawn and seeded.tea not in drawn  # a tombstone has nothing to draw


def test_a_correction_holding_a_secret_is_refused_and_nothing_changes(
    client: TestClient, memory: Memory, seeded: Seeded
) -> None:
    secret = "Alice's key is sk-proj-4fTq9XbV2mL8nR3kP7wZ1yH6jD5cA0eS"
    response = client.post("/api/correct", json={"fact_id": seeded.lisbon, "content": secret}, headers=PAGE)
    assert response.status_code == 400
    assert "sk-proj" not in response.json()["error"]
    assert memory.explain(seeded.lisbon).fact.status != "superseded"
    assert memory.stats()["facts"] == len(seeded.ids)


@pytest.mark.parametrize(
    ("headers", "status", "says"),
    [
        ({}, 403, "a write needs the header X-Hippograph-Explorer: 1"),
        (
            {"X-Hippograph-Explorer": "1", "Origin": "http://evil.example"},
            403,
            "'http://evil.example' is refused",
        ),
        ({"X-Hippograph-Explorer": "1", "Origin": "null"}, 403, "only the explorer's own page may write"),
    ],
)
def test_writes_another_page_could_send_are_refused(
    client: TestClient, memory: Memory, seeded: Seeded, headers: dict[str, str], status: int, says: str
) -> None:
    response = client.post("/api/forget", json={"fact_id": seeded.lisbon, "purge": True}, headers=headers)
    assert response.status_code == status
    assert says in response.json()["error"]
    assert memory.explain(seeded.lisbon).fact.content == "Alice lives in Lisbon"


def test_a_write_sent_as_a_form_is_refused(client: TestClient, seeded: Seeded) -> None:
    headers = {"X-Hippograph-Explorer": "1"}
    response = client.post("/api/confirm", data={"fact_id": seeded.lisbon}, headers=headers)
    assert response.status_code == 415
    assert response.json() == {"error": "send the write as JSON, with Content-Type: application/json"}


@pytest.mark.parametrize(
    ("path", "body", "says"),
    [
        ("/api/confirm", {}, "fact_id: Field required; send e.g. "),
        (
            "/api/confirm",
            ["f_0123456789abcdef"],
            'send a JSON object, e.g. {"fact_id": "f_0123456789abcdef"}',
        ),
        (
            "/api/forget",
            {"fact_id": "f_0123456789abcdef", "purge": "yes"},
            "purge: Input should be a valid boolean",
        ),
        ("/api/correct", {"fact_id": "f_0123456789abcdef", "text": "x"}, "unknown field 'text': send only"),
        ("/api/confirm", {"fact_id": "not-an-id"}, "is not a fact id"),
    ],
)
def test_a_bad_write_says_what_to_send(client: TestClient, path: str, body: object, says: str) -> None:
    response = client.post(path, json=body, headers=PAGE)
    assert response.status_code == 400
    assert says in response.json()["error"]


def test_an_explorer_listening_beyond_loopback_takes_no_writes(memory: Memory, seeded: Seeded) -> None:
    server = uvicorn_server(memory, "192.168.1.10", 8766)
    with TestClient(server.config.app, base_url="http://192.168.1.10:8766") as client:
        assert client.get("/api/page").json()["writable"] is False
        refused = client.post("/api/forget", json={"fact_id": seeded.lisbon, "purge": True}, headers=PAGE)
        assert client.get("/api/graph").status_code == 200
    assert refused.status_code == 403
    assert refused.json()["error"].startswith("this explorer is read-only: it listens beyond loopback")
    assert memory.explain(seeded.lisbon).fact.content == "Alice lives in Lisbon"


def test_an_unknown_fact_is_a_404_and_a_write_by_get_a_405(client: TestClient) -> None:
    missing = client.post("/api/confirm", json={"fact_id": "f_0123456789abcdef"}, headers=PAGE)
    assert missing.status_code == 404
    assert client.get("/api/forget").status_code == 405
