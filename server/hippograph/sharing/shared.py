"""One memory, many processes: every client's server process and the CLI share a data dir.

Kùzu allows one process per database, and every stdio MCP client starts its own server.
So exactly one process, the *owner*, opens the stores: whoever holds the exclusive lock
on ``<data_dir>/hippograph.lock`` (the OS drops it when the process dies, even on kill -9).
The owner serves a private JSON API on a random loopback port, protected by a random
token, and records both in ``<data_dir>/owner.json`` (mode 0600). Every other process is
a thin proxy: each call goes to the owner. When the owner goes away, the next call finds
the lock free, takes it, opens the stores itself (reconciling LanceDB with Kùzu) and
carries on, so callers see a slower call, never an error.

    MCP tools / CLI -> SharedMemory -> Memory (owner)  or  RemoteMemory -> owner's API
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import anyio
import filelock
import httpx2
import uvicorn
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_exponential

from hippograph.config import Settings
from hippograph.domain import errors
from hippograph.domain.errors import HippographError, InvalidInput, StoreError
from hippograph.domain.models import (
    CorrectOut,
    ExplainOut,
    FactOut,
    LinkOut,
    MaintenanceOut,
    RecallOut,
    RememberOut,
    SearchOut,
)
from hippograph.service import transfer
from hippograph.service.memory import Memory, _check_writable
from hippograph.store.embed import Embedder

log = logging.getLogger(__name__)

T = TypeVar("T")


def _export(memory: Memory) -> dict[str, Any]:
    buffer = io.StringIO()
    report = transfer.export(memory, buffer)
    return {"jsonl": buffer.getvalue(), "report": dataclasses.asdict(report)}


def _import(memory: Memory, lines: list[str], format: str, scope: str | None = None) -> dict[str, Any]:
    if format == "mcp-memory":
        report = transfer.import_mcp_memory(memory, lines, scope=scope or "global")
    elif format == "hippograph":
        report = transfer.import_hippograph(memory, lines)
    else:
        raise InvalidInput(f"format {format!r} is not known: use hippograph or mcp-memory")
    return dataclasses.asdict(report)


# Calls that are not Memory methods: the owner runs them with its Memory.
_HANDLERS: dict[str, Callable[..., Any]] = {"export": _export, "import": _import}

# Methods a proxy may call on the owner, and the model each one returns (None: plain JSON).
_API: dict[str, type[BaseModel] | None] = {
    "export": None,
    "import": None,
    "remember": RememberOut,
    "search": SearchOut,
    "recall": RecallOut,
    "correct": CorrectOut,
    "confirm": FactOut,
    "forget": FactOut,
    "explain": ExplainOut,
    "link": LinkOut,
    "maintain": MaintenanceOut,
    "stats": None,
    "doctor": None,
}


class OwnerGone(Exception):
    """The owner did not answer (dead, restarting or not yet listening): find the new one."""


@dataclass(frozen=True)
class OwnerInfo:
    pid: int
    port: int
    token: str


def _owner_file(data_dir: Path) -> Path:
    return data_dir / "owner.json"


def _read_owner(data_dir: Path) -> OwnerInfo | None:
    try:
        raw = json.loads(_owner_file(data_dir).read_text("utf-8"))
        return OwnerInfo(int(raw["pid"]), int(raw["port"]), str(raw["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_owner(data_dir: Path, info: OwnerInfo) -> None:
    path = _owner_file(data_dir)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # the token is a secret
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"pid": info.pid, "port": info.port, "token": info.token}, fh)
    os.replace(tmp, path)


# ---------------------------------------------------------------- the owner's side


def _run(memory: Memory, method: str, kwargs: dict[str, Any]) -> Any:
    handler = _HANDLERS.get(method)
    return handler(memory, **kwargs) if handler else getattr(memory, method)(**kwargs)


def _api_app(memory: Memory, token: str) -> Starlette:
    async def call(request: Request) -> JSONResponse:
        if request.headers.get("authorization") != f"Bearer {token}":
            return JSONResponse({"error": "Unauthorized", "message": "bad token"}, status_code=401)
        method = request.path_params["method"]
        if method not in _API:
            return JSONResponse({"error": "NotFound", "message": f"no method {method}"}, status_code=404)
        kwargs = await request.json()
        if method == "maintain" and kwargs.get("now"):
            kwargs["now"] = datetime.fromisoformat(kwargs["now"])
        try:
            result = await anyio.to_thread.run_sync(lambda: _run(memory, method, kwargs))
        except HippographError as err:
            return JSONResponse({"error": type(err).__name__, "message": str(err)}, status_code=422)
        except Exception:
            log.exception("owner API call %s failed", method)
            return JSONResponse({"error": "Internal", "message": f"{method} failed"}, status_code=500)
        body = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
        return JSONResponse({"result": body})

    return Starlette(routes=[Route("/call/{method}", call, methods=["POST"])])


class OwnerServer:
    """The owner's private API on a random loopback port, in a background thread."""

    def __init__(self, memory: Memory) -> None:
        self.token = secrets.token_urlsafe(32)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = int(sock.getsockname()[1])
        config = uvicorn.Config(_api_app(memory, self.token), log_level="warning", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="hippograph-owner-api", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


# ---------------------------------------------------------------- the proxy's side


class RemoteMemory:
    """Calls the owner's API; raises the owner's HippographError subclasses as they were."""

    def __init__(self, info: OwnerInfo) -> None:
        self.info = info
        self._client = httpx2.Client(
            base_url=f"http://127.0.0.1:{info.port}",
            headers={"authorization": f"Bearer {info.token}"},
            timeout=httpx2.Timeout(300.0, connect=2.0),
        )

    def call(self, method: str, kwargs: dict[str, Any]) -> Any:
        try:
            response = self._client.post(f"/call/{method}", json=kwargs)
        except httpx2.TransportError as err:
            raise OwnerGone(str(err)) from err
        body = response.json()
        if response.status_code == 422:
            error_type = getattr(errors, body["error"], HippographError)
            raise error_type(body["message"])
        if response.status_code != 200:
            # 401: owner.json belongs to a newer owner than the one we know.
            raise OwnerGone(f"owner answered {response.status_code}: {body.get('message')}")
        model = _API[method]
        return model.model_validate(body["result"]) if model is not None else body["result"]

    def close(self) -> None:
        self._client.close()


# ---------------------------------------------------------------- what callers use


class SharedMemory:
    """The memory of one data dir, whichever process owns it. Thread-safe."""

    def __init__(self, settings: Settings, *, embedder: Embedder | None = None, wait_s: float = 60.0) -> None:
        self.settings = settings
        self._embedder = embedder
        self._wait_s = wait_s
        self._lock = threading.RLock()
        self._file_lock = filelock.FileLock(settings.data_dir / "hippograph.lock", timeout=0)
        self._local: Memory | None = None
        self._server: OwnerServer | None = None
        self._remote: RemoteMemory | None = None
        self._background = False

    @classmethod
    def open(cls, settings: Settings, *, embedder: Embedder | None = None) -> SharedMemory:
        """Join the data dir: own it if nobody does (opening the stores now), else proxy."""
        _check_writable(settings.data_dir)
        shared = cls(settings, embedder=embedder)
        shared._try_to_own()
        return shared

    @classmethod
    def serve(cls, settings: Settings, *, embedder: Embedder | None = None) -> SharedMemory:
        """Join the data dir for a long-lived server, without waiting for the stores.

        The stores open in a background thread (at 100k facts that takes seconds), so the
        server can answer MCP ``initialize`` and list its tools at once; a call waits until the
        open is done. If it fails, every call retries it and reports why (e.g. a schema too new).
        Once this process owns the data dir, the background jobs run.
        """
        _check_writable(settings.data_dir)
        shared = cls(settings, embedder=embedder)
        shared._background = True
        threading.Thread(target=shared._open_now, name="hippograph-open", daemon=True).start()
        return shared

    def _open_now(self) -> None:
        try:
            self._backend()
        except OwnerGone:
            pass  # the owner has not published its address yet: the first call waits for it
        except Exception as err:
            log.error("could not open the memory in %s: %s", self.settings.data_dir, err)

    @property
    def is_owner(self) -> bool:
        return self._local is not None

    @property
    def local(self) -> Memory | None:
        return self._local

    def _try_to_own(self) -> bool:
        lock_path = Path(self._file_lock.lock_file)
        existed = lock_path.exists()
        try:
            self._file_lock.acquire()
        except filelock.Timeout:
            return False
        try:
            memory = Memory.open(self.settings, embedder=self._embedder)
        except BaseException:
            # A data dir we refuse to open is left as we found it, lock file included.
            if not existed:
                lock_path.unlink(missing_ok=True)
            self._file_lock.release()
            raise
        server = OwnerServer(memory)
        _write_owner(self.settings.data_dir, OwnerInfo(os.getpid(), server.port, server.token))
        self._local, self._server = memory, server
        if self._background:
            memory.start_background()
        log.info("owning %s (owner API on 127.0.0.1:%d)", self.settings.data_dir, server.port)
        return True

    def _backend(self) -> Memory | RemoteMemory:
        with self._lock:
            if self._local is not None:
                return self._local
            if self._try_to_own():
                if self._remote is not None:
                    self._remote.close()
                    self._remote = None
                return self._local  # type: ignore[return-value]
            info = _read_owner(self.settings.data_dir)
            if info is None or info.pid == os.getpid():
                raise OwnerGone("the owner has not published its address yet")
            if self._remote is None or self._remote.info != info:
                if self._remote is not None:
                    self._remote.close()
                self._remote = RemoteMemory(info)
            return self._remote

    def _call(self, method: str, **kwargs: Any) -> Any:
        def attempt() -> Any:
            backend = self._backend()
            if isinstance(backend, Memory):
                return _run(backend, method, kwargs)
            wire = {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in kwargs.items()}
            return backend.call(method, wire)

        try:
            for retry in Retrying(
                retry=retry_if_exception_type(OwnerGone),
                wait=wait_exponential(multiplier=0.02, max=0.5),
                stop=stop_after_delay(self._wait_s),
                reraise=True,
            ):
                with retry:
                    return attempt()
        except OwnerGone as err:
            raise StoreError(
                f"the process that owns {self.settings.data_dir} did not answer for {self._wait_s:.0f} s "
                f"({err}); stop stray hippograph processes and try again"
            ) from err
        raise AssertionError("unreachable")

    # The service API, as Memory has it.
    def remember(self, content: str, **kwargs: Any) -> RememberOut:
        return self._call("remember", content=content, **kwargs)

    def search(self, query: str, **kwargs: Any) -> SearchOut:
        return self._call("search", query=query, **kwargs)

    def recall(self, context: str, **kwargs: Any) -> RecallOut:
        return self._call("recall", context=context, **kwargs)

    def correct(self, content: str, **kwargs: Any) -> CorrectOut:
        return self._call("correct", content=content, **kwargs)

    def confirm(self, fact_id: str) -> FactOut:
        return self._call("confirm", fact_id=fact_id)

    def forget(self, fact_id: str, reason: str | None = None) -> FactOut:
        return self._call("forget", fact_id=fact_id, reason=reason)

    def explain(self, fact_id: str) -> ExplainOut:
        return self._call("explain", fact_id=fact_id)

    def link(self, from_id: str, to_id: str, relation: str, weight: float | None = None) -> LinkOut:
        return self._call("link", from_id=from_id, to_id=to_id, relation=relation, weight=weight)

    def maintain(self, now: datetime | None = None) -> MaintenanceOut:
        return self._call("maintain", now=now)

    def stats(self) -> dict[str, Any]:
        return self._call("stats")

    def doctor(self) -> dict[str, Any]:
        return self._call("doctor")

    def export(self) -> dict[str, Any]:
        """{"jsonl": the whole memory as JSON Lines, "report": counts}."""
        return self._call("export")

    def import_lines(self, lines: list[str], format: str, scope: str | None = None) -> dict[str, Any]:
        return self._call("import", lines=lines, format=format, scope=scope)

    def on_owner(self, job: Callable[[Memory], T]) -> T:
        """Run ``job`` with the stores open here, waiting to become the owner if needed."""
        deadline = time.monotonic() + self._wait_s
        while True:
            with self._lock:
                if self._local is not None or self._try_to_own():
                    return job(self._local)  # type: ignore[arg-type]
            if time.monotonic() > deadline:
                raise StoreError(
                    f"another hippograph process owns {self.settings.data_dir}: stop it for this command"
                )
            time.sleep(0.2)

    def close(self) -> None:
        with self._lock:
            if self._remote is not None:
                self._remote.close()
                self._remote = None
            if self._local is not None:
                # Unpublish first, so proxies stop calling and take over once the lock is free.
                if _read_owner(self.settings.data_dir) == OwnerInfo(
                    os.getpid(),
                    self._server.port if self._server else -1,
                    self._server.token if self._server else "",
                ):
                    _owner_file(self.settings.data_dir).unlink(missing_ok=True)
                if self._server is not None:
                    self._server.stop()
                self._local.close()
                self._local = None
                self._file_lock.release()
