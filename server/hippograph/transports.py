"""Serving the MCP server over stdio, SSE or streamable HTTP: who may connect, and stopping cleanly.

Every HTTP request passes ``HttpGuard`` first, one place for the checks:

- **Host** (DNS rebinding: a web page whose name resolves to this machine). On loopback only
  loopback names (and a bound name) are accepted, token or not. Off loopback a token is
  required (the CLI refuses to start without one), and a rebinding page cannot send it, so any
  Host is accepted: a LAN client writes this machine's address or name, which the server
  cannot list.
- **Origin** (a browser page of another site): absent, a loopback or bound name, or the very
  Host the request was sent to (same origin).
- **Token**: ``Authorization: Bearer <HIPPOGRAPH_TOKEN>`` when one is set.

A refused request is one log line and a 421, 403 or 401. The SDK's own Host/Origin check is
turned off: it raised out of the SSE endpoint after answering, logging a traceback per request.

SIGTERM stops a server as Ctrl-C does: ``run`` raises ``KeyboardInterrupt`` for both, after the
HTTP server has shut down, and the CLI closes the memory (owner.json unpublished, stores closed).
"""

from __future__ import annotations

import hmac
import logging
from urllib.parse import urlsplit

import uvicorn
from mcp.server.sse import SseServerTransport
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from hippograph.config import Settings, is_loopback
from hippograph.listening import stop_signals, uvicorn_config
from hippograph.mcp_app import MemoryServer

log = logging.getLogger(__name__)

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
# HttpGuard does these checks; the SDK's would only repeat them (and log a traceback on SSE).
_SDK_CHECKS_OFF = TransportSecuritySettings(enable_dns_rebinding_protection=False)


def _hostname(netloc: str) -> str:
    """``name`` of ``name:port``, ``[::1]`` of ``[::1]:port``, lowercased."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        return netloc.partition("]")[0] + "]"
    return netloc.rpartition(":")[0] if ":" in netloc else netloc


class HttpGuard:
    """Host, Origin and bearer-token checks in front of an HTTP transport (see the module docstring)."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        token = settings.token.get_secret_value() if settings.token else None
        self._expected = f"Bearer {token}".encode() if token else None
        bound = settings.host.lower()
        self._names = LOOPBACK_NAMES | {f"[{bound}]" if ":" in bound else bound} - {"0.0.0.0", "[::]"}
        self._any_host = token is not None and not is_loopback(settings.host)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(dict(scope["headers"]))
            if refusal is not None:
                status, reason = refusal
                client = scope.get("client")
                log.warning("refused a request from %s: %s", client[0] if client else "?", reason)
                await JSONResponse({"error": reason}, status_code=status)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, headers: dict[bytes, bytes]) -> tuple[int, str] | None:
        """The status and reason to refuse a request with, or None to serve it."""
        host = headers.get(b"host", b"").decode("latin-1")
        if not self._any_host and _hostname(host) not in self._names:
            return 421, f"Host {host!r} is not allowed: connect to 127.0.0.1"
        origin = headers.get(b"origin", b"").decode("latin-1")
        if origin and not self._origin_allowed(origin, host):
            return 403, f"Origin {origin!r} is not allowed"
        if self._expected is not None and not hmac.compare_digest(
            headers.get(b"authorization", b""), self._expected
        ):
            return 401, "unauthorized: send the header 'Authorization: Bearer <HIPPOGRAPH_TOKEN>'"
        return None

    def _origin_allowed(self, origin: str, host: str) -> bool:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https"):
            return False
        return _hostname(parts.netloc) in self._names or parts.netloc.lower() == host.strip().lower()


class _SseConnection:
    """The SSE endpoint: one client's stream, served by ``MemoryServer.serve_streams``."""

    def __init__(self, server: MemoryServer, transport: SseServerTransport) -> None:
        self._server, self._transport = server, transport

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with self._transport.connect_sse(scope, receive, send) as (read, write):
            await self._server.serve_streams(read, write)


def http_app(server: MemoryServer, settings: Settings) -> ASGIApp:
    """The SSE (``/sse``) or streamable-HTTP (``/mcp``) app behind ``HttpGuard``."""
    app: ASGIApp
    if settings.transport == "sse":
        sse = SseServerTransport("/messages/", security_settings=_SDK_CHECKS_OFF)
        app = Starlette(
            routes=[
                Route("/sse", endpoint=_SseConnection(server, sse), methods=["GET"]),
                Mount("/messages/", app=sse.handle_post_message),
            ]
        )
    else:
        app = server.streamable_http_app(transport_security=_SDK_CHECKS_OFF, host=settings.host)
    return HttpGuard(app, settings)


def served_url(settings: Settings) -> str:
    """Where an HTTP transport serves MCP (a port of 0 is the one the system picks)."""
    port = settings.port or "<a free port>"
    path = "/sse" if settings.transport == "sse" else "/mcp"
    return f"http://{settings.host}:{port}{path}"


def run(server: MemoryServer, settings: Settings) -> None:
    """Serve until the client leaves (stdio) or a SIGINT or SIGTERM (then ``KeyboardInterrupt``)."""
    with stop_signals():
        if settings.transport == "stdio":
            server.run("stdio")
            return
        config = uvicorn_config(
            http_app(server, settings),
            header_timeout_s=settings.header_timeout_s,
            host=settings.host,
            port=settings.port,
            log_level="warning",
        )
        log.info(
            "serving MCP over %s at %s",
            "SSE" if settings.transport == "sse" else "streamable HTTP",
            served_url(settings),
        )
        # uvicorn shuts down gracefully on either signal, then raises it again: KeyboardInterrupt.
        uvicorn.Server(config).run()
