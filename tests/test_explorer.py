"""The graph explorer: its JSON API over a real store, and the page in a real headless Chromium."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from starlette.testclient import TestClient

from hippograph.explorer import LOOPBACK_HOSTS, build_app, hosts_for, static_dir, uvicorn_server
from hippograph.service.memory import Memory

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 20_000


@dataclass(frozen=True)
class Seeded:
    berlin: str  # superseded by lisbon
    lisbon: str
    tea: str  # confirmed
    birthday: str  # retracted
    ids: tuple[str, ...]
    entities: frozenset[str]


@pytest.fixture
def seeded(memory: Memory) -> Seeded:
    def remember(content: str, entities: list[str], **extra: str) -> str:
        return memory.remember(content, entities=entities, **extra).id

    berlin = remember(
        "Alice lives in Berlin", ["Alice", "Berlin"], subject="Alice", predicate="lives_in", object="Berlin"
    )
    tea = remember("Alice prefers green tea over coffee", ["Alice"], kind="preference")
    others = [
        remember("Bob works on the Hippograph project", ["Bob", "Hippograph"]),
        remember("We decided to store memories in Kuzu", ["Hippograph", "Kuzu"], kind="decision"),
        remember("To release, tag the commit and push the tag", ["Hippograph"], kind="procedure"),
        remember("Alice met Bob at a meetup in 2023", ["Alice", "Bob"], kind="episode"),
        remember("Carol does not drink coffee", ["Carol"], kind="negative"),
    ]
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
        ids=(berlin, tea, *others, birthday, lisbon),
        entities=frozenset({"Alice", "Berlin", "Bob", "Hippograph", "Kuzu", "Carol", "Lisbon"}),
    )


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
    assert body == {"nodes": [], "edges": [], "facts_total": 0, "facts_shown": 0, "limit": 500}


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
    assert "http://" not in page.text and "https://" not in page.text
    for path in ("/static/explorer.js", "/static/explorer.css", "/static/vendor/cytoscape.min.js"):
        assert client.get(path).status_code == 200, path
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


# ---------------------------------------------------------------- the page, in a browser


@pytest.fixture
def browser_api() -> ModuleType:
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install -y chromium")
    return pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture
def explorer_url(memory: Memory, seeded: Seeded) -> Iterator[str]:
    # Bound and listening before the thread starts: the browser's first request just queues.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    server = uvicorn_server(memory, "127.0.0.1", port)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
    assert not thread.is_alive(), "the explorer server did not stop"


def test_page_draws_the_store_and_explains_a_search_hit(
    browser_api: ModuleType, explorer_url: str, seeded: Seeded, capfd: pytest.CaptureFixture[str]
) -> None:
    sync_api = browser_api
    expect = sync_api.expect
    expect.set_options(timeout=WAIT_MS)
    problems: list[str] = []
    artifacts = ROOT / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=WAIT_MS
        )
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 900})
            page.set_default_timeout(WAIT_MS)
            page.on("pageerror", lambda err: problems.append(f"page error: {err}"))
            page.on(
                "console",
                lambda msg: msg.type == "error" and problems.append(f"console: {msg.text} {msg.location}"),
            )
            page.on("requestfailed", lambda req: problems.append(f"request failed: {req.url}"))
            page.goto(explorer_url)
            page.wait_for_function("() => window.hippographExplorer && window.hippographExplorer.loaded")
            assert page.evaluate("() => window.hippographExplorer.error") is None

            drawn = page.evaluate(
                """() => {
                    const cy = window.hippographExplorer.cy;
                    return {nodes: cy.nodes().length, facts: cy.nodes('.fact').length,
                            entities: cy.nodes('.entity').map(n => n.data('label')).sort()};
                }"""
            )
            assert drawn == {"nodes": 16, "facts": 9, "entities": sorted(seeded.entities)}
            expect(page.get_by_test_id("summary")).to_have_text("Showing 9 facts and 7 entities.")
            looks = page.evaluate(
                """([old, gone, kept]) => {
                    const cy = window.hippographExplorer.cy;
                    const style = (id, p) => cy.getElementById(id).style(p);
                    return {superseded: [style(old, 'border-style'), style(old, 'background-color')],
                            retracted: [style(gone, 'border-style'), Number(style(gone, 'opacity'))],
                            confirmed: [style(kept, 'border-style'), Number(style(kept, 'opacity'))],
                            struck: cy.getElementById(gone).data('display').includes('\\u0336')};
                }""",
                [seeded.berlin, seeded.birthday, seeded.tea],
            )
            assert looks == {
                "superseded": ["dashed", "rgb(236,236,236)"],
                "retracted": ["dotted", 0.5],
                "confirmed": ["solid", 1],
                "struck": True,
            }

            page.get_by_test_id("search-history").check()
            page.get_by_test_id("search-input").fill("where does Alice live")
            page.get_by_test_id("search-input").press("Enter")
            hit = page.locator(f'[data-testid="search-result"][data-fact-id="{seeded.berlin}"]')
            expect(hit).to_contain_text("Alice lives in Berlin")
            page.get_by_test_id("search-input").press("ArrowDown")
            expect(page.get_by_test_id("search-result").first).to_be_focused()
            hit.click()
            expect(page.get_by_test_id("panel-status")).to_have_text("superseded")
            expect(page.get_by_test_id("panel-content")).to_have_text("Alice lives in Berlin")
            expect(page.get_by_test_id("panel-superseded-by")).to_contain_text("Alice lives in Lisbon")
            expect(page.get_by_test_id("panel-relevance")).to_have_text("0.800")
            selected = page.evaluate("() => window.hippographExplorer.cy.$(':selected').map(n => n.id())")
            assert selected == [seeded.berlin]

            page.get_by_test_id("panel-superseded-by").get_by_role("button").click()
            expect(page.get_by_test_id("panel-content")).to_have_text("Alice lives in Lisbon")
            expect(page.get_by_test_id("panel-supersedes")).to_contain_text("Alice lives in Berlin")

            page.get_by_test_id("panel-entities").get_by_role("button", name="Alice").click()
            expect(page.get_by_test_id("panel-heading")).to_have_text("Entity")
            expect(page.get_by_test_id("panel-content")).to_have_text("Alice")
            about_alice = page.get_by_test_id("panel-entity-facts")
            expect(about_alice).to_contain_text("Alice prefers green tea over coffee")
            about_alice.get_by_role("button", name="Alice lives in Lisbon").click()
            expect(page.get_by_test_id("panel-heading")).to_have_text("Fact")
            expect(page.get_by_test_id("panel-content")).to_have_text("Alice lives in Lisbon")
            page.get_by_test_id("fit").click()
            # Cytoscape repaints in its animation-frame loop: two frames on, the canvas shows the fit.
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            page.screenshot(path=str(artifacts / "explorer.png"))
        finally:
            browser.close()
    assert problems == []
    assert capfd.readouterr().out == ""  # the server logs to stderr only
