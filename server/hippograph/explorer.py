"""The graph explorer: a local web page to look at what memory holds.

``build_app(memory)`` is a small Starlette app: the page and its bundled static files
(cytoscape is vendored into ``explorer_static/``, nothing comes from a CDN), and a
read-only JSON API over ``Memory`` — the graph around the most recent facts, search and
explain. Like every read, browsing changes nothing memory believes. ``serve`` runs it with
uvicorn on loopback.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hippograph.config import is_loopback
from hippograph.domain import lifecycle as lc
from hippograph.domain import validation as check
from hippograph.domain.errors import HippographError, InvalidInput, InvalidTransition, NotFound, StoreError
from hippograph.domain.models import Fact
from hippograph.domain.visibility import visible_scopes
from hippograph.listening import uvicorn_config
from hippograph.service.memory import Memory

DEFAULT_PORT = 8766
DEFAULT_GRAPH_LIMIT = 500
MAX_GRAPH_LIMIT = 5000
SEARCH_LIMIT = 20
LABEL_CHARS = 60
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
_WILDCARD_BINDS = ("0.0.0.0", "::", "")

# The page renders memory contents; it must only ever run our own scripts. (Inline styles
# are allowed: cytoscape injects a <style> element for its container.)
_PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
_STATUS_FOR: tuple[tuple[type[HippographError], int], ...] = (
    (NotFound, 404),
    (InvalidInput, 400),
    (InvalidTransition, 409),
    (StoreError, 503),
)


def static_dir() -> Path:
    """Where the page's files are: package data, found through importlib.resources."""
    root = resources.files("hippograph").joinpath("explorer_static")
    if not isinstance(root, Path) or not root.joinpath("index.html").is_file():
        raise FileNotFoundError(
            "the explorer's static files are missing from this install: reinstall hippograph "
            "from a wheel or a source checkout (they live in hippograph/explorer_static)"
        )
    return root


def _label(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1].rstrip() + "…"


def _fact_node(fact: Fact, relevance: float) -> dict[str, Any]:
    return {
        "id": fact.id,
        "group": "fact",
        "label": _label(fact.content),
        "content": fact.content,
        "kind": fact.kind.value,
        "status": fact.status.value,
        "relevance": round(relevance, 4),
        "created_at": fact.created_at.isoformat(),
    }


def graph_view(memory: Memory, limit: int, scope: str | None = None) -> dict[str, Any]:
    """The ``limit`` most recent facts a caller in ``scope`` sees (default global: it and global),
    the entities they are about, and the edges among them."""
    scopes = visible_scopes(check.scope(scope))
    view = memory.graph.view(scopes)
    facts = [f for f in memory.graph.all_facts() if f.scope in scopes]  # oldest first
    recent = facts[-limit:]
    fact_ids = {f.id for f in recent}
    now = memory.clock()
    about = view.about_edges(sorted(fact_ids))
    entities = memory.graph.entities(sorted({e.dst for e in about}))
    nodes = [_fact_node(f, lc.relevance(f, now, memory.policy).value) for f in reversed(recent)]
    nodes += [
        {
            "id": e.id,
            "group": "entity",
            "label": e.name,
            "type": e.type,
            "aliases": list(e.aliases),
            "summary": e.summary,
            "mention_count": e.mention_count,
        }
        for e in sorted(entities.values(), key=lambda e: e.name.casefold())
    ]
    edges: list[dict[str, Any]] = []

    def add(edge_type: str, source: str, target: str, label: str) -> None:
        edges.append(
            {"id": f"x{len(edges)}", "type": edge_type, "source": source, "target": target, "label": label}
        )

    for edge in view.fact_edges(sorted(fact_ids)):
        if edge.src in fact_ids and edge.dst in fact_ids:
            add(edge.type, edge.src, edge.dst, edge.type.lower().replace("_", " "))
    for edge in about:
        if edge.dst in entities:
            add("ABOUT", edge.src, edge.dst, str(edge.props.get("role", "")))
    for edge in view.entity_relations(sorted(entities)):
        if edge.src in entities and edge.dst in entities:
            add("RELATES", edge.src, edge.dst, str(edge.props.get("predicate") or "related to"))
    return {
        "nodes": nodes,
        "edges": edges,
        "facts_total": len(facts),
        "facts_shown": len(recent),
        "limit": limit,
    }


def _int_param(request: Request, name: str, *, default: int, maximum: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= maximum:
        raise InvalidInput(f"{name} must be a whole number from 1 to {maximum}, e.g. ?{name}={default}")
    return value


def _truthy(request: Request, name: str) -> bool:
    return request.query_params.get(name, "").lower() in ("1", "true", "yes", "on")


def _error_response(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _hippograph_error(request: Request, exc: Exception) -> Response:
    status = next((code for cls, code in _STATUS_FOR if isinstance(exc, cls)), 400)
    return _error_response(status, str(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, HTTPException):  # registered for HTTPException only
        return _error_response(500, "internal error")
    return _error_response(exc.status_code, exc.detail)


def build_app(memory: Memory, *, allowed_hosts: Sequence[str] = LOOPBACK_HOSTS) -> Starlette:
    """The explorer as an ASGI app over an open ``Memory`` (which the caller closes).

    ``GET /`` the page, ``/static/...`` its files; JSON: ``/api/graph?limit=N`` (default 500
    most recent facts, at most 5000), ``/api/search?q=...&history=1``, ``/api/fact/{id}``
    (explain), ``/api/stats``. Graph, search and explain show one scope and global
    (``&scope=project:x``; default global), as a search from that scope would: a fact of another
    scope is a 404, as an unknown id is. Failures are ``{"error": message}``: 400
    bad input, 404 unknown id.
    Requests whose Host header is not in ``allowed_hosts`` get a 400 (DNS-rebinding guard).
    """
    files = static_dir()
    # One request at a time touches the stores: a local viewer needs no parallelism, and the
    # embedder stays single-threaded.
    lock = threading.Lock()

    def locked(fn: Callable[[Request], Any]) -> Callable[[Request], JSONResponse]:
        def endpoint(request: Request) -> JSONResponse:
            with lock:
                return JSONResponse(fn(request))

        return endpoint

    def page(request: Request) -> Response:
        return FileResponse(files / "index.html", headers=_PAGE_HEADERS)

    def graph(request: Request) -> dict[str, Any]:
        limit = _int_param(request, "limit", default=DEFAULT_GRAPH_LIMIT, maximum=MAX_GRAPH_LIMIT)
        return graph_view(memory, limit, request.query_params.get("scope"))

    def search(request: Request) -> dict[str, Any]:
        query = request.query_params.get("q", "")
        if not query.strip():
            raise InvalidInput("send a search query, e.g. /api/search?q=Alice")
        history = _truthy(request, "history")
        scope = request.query_params.get("scope")
        found = memory.search(query, limit=SEARCH_LIMIT, include_history=history, scope=scope)
        return {"query": query, **found.model_dump()}

    def fact(request: Request) -> dict[str, Any]:
        scope = request.query_params.get("scope")
        return memory.explain(request.path_params["fact_id"], scope=scope).model_dump()

    def stats(request: Request) -> dict[str, Any]:
        return memory.stats()

    return Starlette(
        routes=[
            Route("/", page),
            Route("/api/graph", locked(graph)),
            Route("/api/search", locked(search)),
            Route("/api/fact/{fact_id}", locked(fact)),
            Route("/api/stats", locked(stats)),
            Mount("/static", StaticFiles(directory=files), name="static"),
        ],
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))],
        exception_handlers={HippographError: _hippograph_error, HTTPException: _http_error},
    )


def hosts_for(bind: str) -> tuple[str, ...]:
    """Host headers to accept when bound to ``bind``: loopback names, plus ``bind`` if it is a name
    or address of its own (a wildcard bind still only answers to loopback names: send the name the
    page is reached by as ``bind``, or pass ``allowed_hosts``, to open it up)."""
    if bind in _WILDCARD_BINDS or is_loopback(bind):
        return LOOPBACK_HOSTS
    name = f"[{bind}]" if ":" in bind and not bind.startswith("[") else bind
    return (*LOOPBACK_HOSTS, name)


def uvicorn_server(
    memory: Memory,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    *,
    allowed_hosts: Sequence[str] | None = None,
) -> uvicorn.Server:
    """A uvicorn server for the explorer, not yet running (``serve`` runs one until Ctrl-C)."""
    app = build_app(memory, allowed_hosts=allowed_hosts or hosts_for(host))
    config = uvicorn_config(
        app,
        host=host.strip("[]"),
        port=port,
        log_config=None,  # uvicorn's own config prints access lines to stdout; ours goes to stderr
        access_log=False,
        lifespan="off",  # the app has no startup work (nor websockets: uvicorn_config turns them off)
    )
    return uvicorn.Server(config)


def serve(
    memory: Memory,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    *,
    allowed_hosts: Sequence[str] | None = None,
) -> None:
    """Serve the explorer until interrupted. Logs go through ``logging`` (stderr), never stdout."""
    server = uvicorn_server(memory, host, port, allowed_hosts=allowed_hosts)
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    # The address is the command's output, whatever the log level; stdout stays clean.
    print(f"hippograph explorer: http://{shown}:{port}/ (Ctrl-C to stop)", file=sys.stderr, flush=True)
    server.run()
