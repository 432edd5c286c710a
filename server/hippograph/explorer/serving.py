"""Running the explorer: its socket (bound first: a taken port is said at once), its URL, uvicorn."""

from __future__ import annotations

import errno
import socket
from collections.abc import Sequence

import uvicorn

from hippograph.api import MemoryAPI
from hippograph.config import is_loopback
from hippograph.explorer.app import LOOPBACK_HOSTS, build_app
from hippograph.listening import stop_signals, uvicorn_config

DEFAULT_PORT = 8766
_WILDCARD_BINDS = ("0.0.0.0", "::", "")


class PortTaken(OSError):
    """The explorer cannot listen where it was asked to (the port is in use, most often)."""


def hosts_for(bind: str) -> tuple[str, ...]:
    """Host headers to accept when bound to ``bind``: loopback names, plus ``bind`` if it is a name
    or address of its own (a wildcard bind still only answers to loopback names: send the name the
    page is reached by as ``bind``, or pass ``allowed_hosts``, to open it up)."""
    if bind in _WILDCARD_BINDS or is_loopback(bind):
        return LOOPBACK_HOSTS
    name = f"[{bind}]" if ":" in bind and not bind.startswith("[") else bind
    return (*LOOPBACK_HOSTS, name)


def url(host: str, port: int) -> str:
    """The page's address for a listener on ``host`` and ``port``."""
    bare = host.strip("[]")
    shown = "127.0.0.1" if bare in _WILDCARD_BINDS else bare
    return f"http://{f'[{shown}]' if ':' in shown else shown}:{port}/"


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port`` (connections queue until the server runs).

    Raises ``PortTaken`` saying what to pass instead when another program holds the port.
    """
    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    try:
        return socket.create_server((bare, port), family=family, backlog=128)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise PortTaken(
                f"port {port} on {bare} is already in use (another explorer, or another program): "
                f"pass --port with a free one, e.g. hippograph explore --port {port + 1}"
            ) from None
        raise PortTaken(f"cannot listen on {bare}:{port}: {err.strerror}; pass --host or --port") from None


def uvicorn_server(
    memory: MemoryAPI,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    *,
    allowed_hosts: Sequence[str] | None = None,
    scope: str = "global",
) -> uvicorn.Server:
    """A uvicorn server for the explorer, not yet running (run it on a socket from ``listen``).
    Bound beyond loopback, the page is read-only (see ``actions.routes``)."""
    app = build_app(
        memory, allowed_hosts=allowed_hosts or hosts_for(host), scope=scope, writable=is_loopback(host)
    )
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
    memory: MemoryAPI,
    sock: socket.socket,
    *,
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] | None = None,
    scope: str = "global",
) -> None:
    """Serve the explorer on ``sock`` until Ctrl-C or SIGTERM (then ``KeyboardInterrupt``).
    Logs go through ``logging`` (stderr), never stdout."""
    port = sock.getsockname()[1]
    server = uvicorn_server(memory, host, port, allowed_hosts=allowed_hosts, scope=scope)
    with stop_signals():
        server.run(sockets=[sock])
