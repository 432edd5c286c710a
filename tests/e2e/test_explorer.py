"""The graph explorer's page in a real headless Chromium, served over a real socket: it draws
labels, highlights hits and paths, filters, lists a timeline and acts.

(Its JSON API over a real store, in process: tests/test_explorer.py.)"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from hippograph.explorer import uvicorn_server
from hippograph.service.memory import Memory
from tests.test_explorer import PREBUILT as IN_PROCESS
from tests.test_explorer import ROOT, Seeded

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
PREBUILT = IN_PROCESS  # conftest: the memory of a test asking for seeded is the seeded one


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


# Read in the page: each label's size on screen, and whether cytoscape draws it at this zoom.
LABELS_JS = """() => {
    const cy = window.hippographExplorer.cy;
    const px = (n) => parseFloat(n.style('font-size')) * cy.zoom();
    const drawn = (n) => n.style('label') !== '' && px(n) >= parseFloat(n.style('min-zoomed-font-size'));
    const sizes = (nodes) => nodes.filter(drawn).map(px);
    const entities = cy.nodes('.entity'), facts = cy.nodes('.fact');
    return {zoom: cy.zoom(), entities: sizes(entities).length, entity_px: Math.min(...sizes(entities)),
            facts: sizes(facts).length, fact_px: Math.min(...sizes(facts))};
}"""
REPAINTED_JS = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
ZOOM_JS = """(level) => {
    const cy = window.hippographExplorer.cy;
    cy.zoom({level, renderedPosition: {x: cy.width() / 2, y: cy.height() / 2}});
    cy.center();
}"""


def _repainted(page: Any) -> None:
    """Two animation frames on: labels re-sized and cytoscape's canvas repainted."""
    page.evaluate(REPAINTED_JS)


def _drawn_facts(page: Any) -> set[str]:
    return set(page.evaluate("() => window.hippographExplorer.cy.nodes('.fact').map(n => n.id())"))


def _check_labels_at_overview(page: Any, artifacts: Path) -> None:
    page.get_by_test_id("fit").click()
    _repainted(page)
    fitted = page.evaluate(LABELS_JS)
    assert (fitted["entities"], fitted["facts"]) == (7, 9), fitted
    assert fitted["entity_px"] >= 12 and fitted["fact_px"] >= 9, fitted
    page.evaluate(ZOOM_JS, 0.35)  # a store of hundreds of facts fits at about this zoom
    _repainted(page)
    far = page.evaluate(LABELS_JS)
    assert (far["zoom"], far["entities"], far["facts"]) == (0.35, 7, 9), far
    assert far["entity_px"] >= 12 and far["fact_px"] >= 10.5, far  # readable without zooming in
    page.screenshot(path=str(artifacts / "explorer-overview.png"))
    page.get_by_test_id("fit").click()


def _check_search_highlights_hits_and_paths(page: Any, expect: Any, seeded: Seeded, artifacts: Path) -> None:
    page.get_by_test_id("search-history").check()
    page.get_by_test_id("search-input").fill("where does Alice live")
    page.get_by_test_id("search-input").press("Enter")
    hit = page.locator(f'[data-testid="search-result"][data-fact-id="{seeded.berlin}"]')
    expect(hit).to_contain_text("Alice lives in Berlin")
    expect(page.get_by_test_id("results-note")).to_contain_text("highlighted on the graph")
    lit = page.evaluate(
        """() => {
            const cy = window.hippographExplorer.cy;
            const ids = (sel) => cy.$(sel).map(e => e.isNode() ? e.id() : e.data('type')).sort();
            const names = cy.$('node.entity.path').map(n => n.data('label')).sort();
            const dim = cy.$('.dim').length;
            return {hits: ids('node.hit'), entities: names, path_edges: ids('edge.path'), dim};
        }"""
    )
    assert {seeded.lisbon, seeded.berlin} <= set(lit["hits"]), lit
    assert "Alice" in lit["entities"], lit  # both are about her: the path between them
    assert "SUPERSEDES" in lit["path_edges"] and "ABOUT" in lit["path_edges"], lit
    assert lit["dim"] > 0, lit  # the rest recedes
    page.get_by_test_id("fit").click()
    _repainted(page)
    page.screenshot(path=str(artifacts / "explorer-search.png"))


def _check_panel_walks_the_chain(page: Any, expect: Any, seeded: Seeded, artifacts: Path) -> None:
    hit = page.locator(f'[data-testid="search-result"][data-fact-id="{seeded.berlin}"]')
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
    _repainted(page)
    page.screenshot(path=str(artifacts / "explorer-panel.png"))  # the README's picture


def _check_status_filter(page: Any, expect: Any, seeded: Seeded) -> None:
    summary = page.get_by_test_id("summary")
    expect(page.get_by_test_id("filter-scope")).to_have_value("global")
    page.get_by_test_id("filter-status-superseded").uncheck()
    page.get_by_test_id("filter-status-retracted").uncheck()
    expect(summary).to_have_text("Showing 7 facts and 6 entities.")  # Berlin has no fact left
    assert not {seeded.berlin, seeded.birthday} & _drawn_facts(page)
    page.get_by_test_id("filter-kind-fact").uncheck()
    expect(summary).to_have_text("Showing 5 facts and 5 entities.")
    page.get_by_test_id("filter-kind-fact").check()
    page.get_by_test_id("filter-status-superseded").check()
    page.get_by_test_id("filter-status-retracted").check()
    expect(summary).to_have_text("Showing 9 facts and 7 entities.")


def _check_timeline(page: Any, expect: Any, seeded: Seeded, artifacts: Path) -> None:
    page.get_by_test_id("view-timeline").click()
    items = page.get_by_test_id("timeline-item")
    expect(items).to_have_count(9)
    order = items.evaluate_all("(els) => els.map(e => [e.dataset.factId, e.querySelector('time').dateTime])")
    assert order[0][0] == seeded.meetup  # it happened in 2023: before everything memory was told since
    times = [datetime.fromisoformat(at) for _, at in order]
    assert times == sorted(times)
    expect(items.first).to_contain_text("happened")
    page.locator(f'[data-testid="timeline-item"][data-fact-id="{seeded.bob}"]').click()
    expect(page.get_by_test_id("panel-content")).to_have_text("Bob works on the Hippograph project")
    page.screenshot(path=str(artifacts / "explorer-timeline.png"))


def _check_confirm(page: Any, expect: Any, seeded: Seeded, memory: Memory) -> None:
    before = page.evaluate(f"() => window.hippographExplorer.cy.getElementById('{seeded.bob}').position()")
    page.get_by_test_id("action-confirm").click()
    expect(page.get_by_test_id("panel-status")).to_have_text("confirmed")
    expect(page.get_by_test_id("notice")).to_contain_text("Confirmed")
    expect(page.get_by_test_id("action-confirm")).to_have_count(0)
    assert memory.explain(seeded.bob).fact.status == "confirmed"
    node = page.evaluate(
        f"""() => {{ const n = window.hippographExplorer.cy.getElementById('{seeded.bob}');
                    return {{confirmed: n.hasClass('confirmed'), position: n.position()}}; }}"""
    )
    assert node == {"confirmed": True, "position": before}  # the picture did not jump
    page.get_by_test_id("view-graph").click()


def _check_correct(page: Any, expect: Any, seeded: Seeded, memory: Memory) -> None:
    page.evaluate(f"() => window.hippographExplorer.select('{seeded.lisbon}')")
    page.get_by_test_id("action-correct").click()
    dialog = page.get_by_test_id("correct-dialog")
    expect(dialog).to_be_visible()
    page.get_by_test_id("correct-content").fill("Alice lives in Porto")
    page.get_by_test_id("correct-submit").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id("panel-content")).to_have_text("Alice lives in Porto")
    expect(page.get_by_test_id("panel-supersedes")).to_contain_text("Alice lives in Lisbon")
    assert memory.explain(seeded.lisbon).fact.status == "superseded"


def _check_forget_then_erase(page: Any, expect: Any, seeded: Seeded, memory: Memory) -> None:
    page.evaluate(f"() => window.hippographExplorer.select('{seeded.carol}')")
    expect(page.get_by_test_id("panel-content")).to_have_text("Carol does not drink coffee")
    page.get_by_test_id("action-forget").click()
    expect(page.get_by_test_id("forget-dialog")).to_be_visible()
    page.get_by_test_id("forget-reason").fill("she drinks it now")
    expect(page.get_by_test_id("forget-submit")).to_have_text("Forget")
    page.get_by_test_id("forget-submit").click()
    expect(page.get_by_test_id("panel-status")).to_have_text("retracted")
    expect(page.get_by_test_id("panel-status-text")).to_have_text("retracted — she drinks it now")
    assert seeded.carol in _drawn_facts(page)
    page.get_by_test_id("action-forget").click()  # forgotten already: what is left is erasing it
    expect(page.get_by_test_id("forget-purge")).to_be_checked()
    expect(page.get_by_test_id("forget-submit")).to_have_text("Erase for good")
    page.get_by_test_id("forget-submit").click()
    expect(page.get_by_test_id("panel-erased")).to_be_visible()
    expect(page.get_by_test_id("notice")).to_contain_text("Erased")
    assert seeded.carol not in _drawn_facts(page)
    assert (memory.explain(seeded.carol).fact.status, memory.explain(seeded.carol).fact.content) == (
        "purged",
        "",
    )


def test_page_draws_labels_highlights_filters_lists_a_timeline_and_acts(
    browser_api: ModuleType,
    explorer_url: str,
    seeded: Seeded,
    memory: Memory,
    capfd: pytest.CaptureFixture[str],
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
            page.on("pageerror", lambda err: problems.append(f"page error: {err} {err.stack}"))
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
            _check_labels_at_overview(page, artifacts)
            _check_search_highlights_hits_and_paths(page, expect, seeded, artifacts)
            _check_panel_walks_the_chain(page, expect, seeded, artifacts)
            _check_status_filter(page, expect, seeded)
            _check_timeline(page, expect, seeded, artifacts)
            _check_confirm(page, expect, seeded, memory)
            _check_correct(page, expect, seeded, memory)
            _check_forget_then_erase(page, expect, seeded, memory)
            page.get_by_test_id("fit").click()
            _repainted(page)
            page.screenshot(path=str(artifacts / "explorer.png"))
        finally:
            browser.close()
    assert problems == []
    assert capfd.readouterr().out == ""  # the server logs to stderr only
