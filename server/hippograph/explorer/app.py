"""The explorer's web app: the page, its bundled files, and a JSON API over the memory's operations.

``build_app(memory)`` takes any ``MemoryAPI``: the ``SharedMemory`` of the CLI (which runs each
operation on the stores here or sends it to the process that owns them, so the explorer works
while MCP servers run), or an open ``Memory``. Reads (``subgraph``, ``search``, ``explain``,
``stats``, ``names``) change nothing memory believes; the writes are in ``actions``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hippograph.api import MemoryAPI
from hippograph.domain.errors import HippographError, InvalidInput, InvalidTransition, NotFound, StoreError
from hippograph.domain.models import SubgraphOut
from hippograph.explorer import actions

DEFAULT_GRAPH_LIMIT = 500
MAX_GRAPH_LIMIT = 5000
SEARCH_LIMIT = 20
MAX_SCOPES = 100
LABEL_CHARS = 60
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

# The page renders memory contents; it must only ever run our own scripts. (Inline styles
# are allowed: cytoscape injects a <style> element for its container.)
_PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"
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
    root = resources.files("hippograph.explorer").joinpath("static")
    if not isinstance(root, Path) or not root.joinpath("index.html").is_file():
        raise FileNotFoundError(
            "the explorer's static files are missing from this install: reinstall hippograph "
            "from a wheel or a source checkout (they live in hippograph/explorer/static)"
        )
    return root


def label(text: str) -> str:
    """A fact's text as a node shows it: one line of at most ``LABEL_CHARS``."""
    text = " ".join(text.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1].rstrip() + "…"


def page_graph(out: SubgraphOut, scope: str) -> dict[str, Any]:
    """A subgraph as the page draws it: cytoscape's nodes (facts, then entities) and edges."""
    nodes = [{"group": "fact", "label": label(f.content), **f.model_dump()} for f in out.facts]
    nodes += [{"group": "entity", "label": e.name, **e.model_dump()} for e in out.entities]
    edges = [{"id": f"x{i}", **e.model_dump()} for i, e in enumerate(out.edges)]
    return {
        "nodes": nodes,
        "edges": edges,
        "facts_total": out.facts_total,
        "facts_shown": len(out.facts),
        "limit": out.limit,
        "scope": scope,
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


def _list_param(request: Request, name: str) -> list[str] | None:
    """``?name=a,b`` or ``?name=a&name=b``: the values, or None if none were sent."""
    values = [v.strip() for raw in request.query_params.getlist(name) for v in raw.split(",")]
    return [v for v in values if v] or None


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


def build_app(
    memory: MemoryAPI,
    *,
    allowed_hosts: Sequence[str] = LOOPBACK_HOSTS,
    scope: str = "global",
    writable: bool = True,
) -> Starlette:
    """The explorer as an ASGI app over ``memory`` (which the caller closes).

    ``GET /`` the page, ``/static/...`` its files; JSON: ``/api/graph?limit=N&scope=S&kind=K,..
    &status=S,..`` (the N newest facts, default 500, at most 5000), ``/api/search?q=...&history=1``,
    ``/api/fact/{id}`` (explain), ``/api/stats``, ``/api/page`` (the first scope, the known ones,
    whether it may write); ``POST /api/confirm``, ``/api/correct``, ``/api/forget`` (see
    ``actions``; refused unless ``writable``). Graph and search show one scope and global, as a
    search from that scope would; ``scope`` is the page's first. Failures are
    ``{"error": message}``: 400 bad input, 403 a write from another page, 404 unknown id, 409 a
    change the fact's status does not allow. Requests whose Host header is not in
    ``allowed_hosts`` get a 400 (DNS-rebinding guard).
    """
    files = static_dir()
    # One request at a time reaches the memory: a local viewer needs no parallelism, and an
    # owner's embedder stays single-threaded.
    lock = threading.Lock()

    async def call(job: Callable[[], Any]) -> Any:
        def locked() -> Any:
            with lock:
                return job()

        return await anyio.to_thread.run_sync(locked)

    def reading(fn: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> JSONResponse:
            return JSONResponse(await call(lambda: fn(request)))

        return endpoint

    def shown(request: Request) -> str:
        """The scope the page shows: its own ``?scope=``, else the explorer's first."""
        return request.query_params.get("scope") or scope

    def page(request: Request) -> Response:
        return FileResponse(files / "index.html", headers=_PAGE_HEADERS)

    def graph(request: Request) -> dict[str, Any]:
        out = memory.subgraph(
            scope=shown(request),
            limit=_int_param(request, "limit", default=DEFAULT_GRAPH_LIMIT, maximum=MAX_GRAPH_LIMIT),
            kinds=_list_param(request, "kind"),
            statuses=_list_param(request, "status"),
        )
        return page_graph(out, shown(request))

    def search(request: Request) -> dict[str, Any]:
        query = request.query_params.get("q", "")
        if not query.strip():
            raise InvalidInput("send a search query, e.g. /api/search?q=Alice")
        found = memory.search(
            query,
            limit=SEARCH_LIMIT,
            include_history=_truthy(request, "history"),
            scope=shown(request),
        )
        return {"query": query, **found.model_dump()}

    def fact(request: Request) -> dict[str, Any]:
        # A fact of another scope is a 404.
        return memory.explain(request.path_params["fact_id"], scope=shown(request)).model_dump()

    def stats(request: Request) -> dict[str, Any]:
        return memory.stats()

    def start(request: Request) -> dict[str, Any]:
        known = memory.names("", "scope", limit=MAX_SCOPES)
        return {"scope": scope, "scopes": sorted({"global", scope, *known}), "writable": writable}

    return Starlette(
        routes=[
            Route("/", page),
            Route("/api/graph", reading(graph)),
            Route("/api/search", reading(search)),
            Route("/api/fact/{fact_id}", reading(fact)),
            Route("/api/stats", reading(stats)),
            Route("/api/page", reading(start)),
            *actions.routes(memory, call, writable=writable),
            Mount("/static", StaticFiles(directory=files), name="static"),
        ],
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))],
        exception_handlers={HippographError: _hippograph_error, HTTPException: _http_error},
    )
