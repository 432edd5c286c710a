"""The proxy every caller uses: one memory per data dir, whichever process owns it.

Kùzu allows one process per database, and every stdio MCP client starts its own server.
So exactly one process, the *owner*, opens the stores: whoever holds the exclusive lock
on ``<data_dir>/hippograph.lock`` (``ownership``). The owner serves a private RPC on a
socket only this user can reach (``rpc``); every other process is a thin proxy sending each
call there, once the owner has proved it holds the secret of owner.json.
When the owner goes away, the next call finds the lock free, takes it, opens the
stores itself (reconciling LanceDB with Kùzu) and carries on, so callers see a slower
call, never an error.

    MCP tools / CLI -> SharedMemory -> Memory (owner)  or  OwnerClient -> owner's RPC
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import uuid
from pathlib import Path
from typing import Any

import filelock
from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_exponential

from hippograph.api import MemoryAPI
from hippograph.config import Settings
from hippograph.domain.errors import InternalError, StoreError
from hippograph.service.memory import Memory
from hippograph.service.stores import check_writable
from hippograph.sharing.guard import OwnerGuard
from hippograph.sharing.ownership import (
    PRIVATE_FILE_MODE,
    OwnerInfo,
    lock_path,
    publish_owner,
    read_owner,
    remove_owner,
    socket_address,
    unpublish_owner,
)
from hippograph.sharing.rpc import OwnerClient, OwnerGone, OwnerServer
from hippograph.store.embed import Embedder

log = logging.getLogger(__name__)


class SharedMemory(MemoryAPI):
    """The memory of one data dir, whichever process owns it. Thread-safe."""

    def __init__(
        self,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        wait_s: float = 60.0,
        preload_model: bool = True,
    ) -> None:
        self.settings = settings
        self._embedder = embedder
        self._preload_model = preload_model
        self._wait_s = wait_s
        self._lock = threading.RLock()
        # Not thread-local: the lock is taken by the opening thread, checked by the guard's and
        # released by whichever thread closes (a thread-local lock is unheld in the others).
        self._file_lock = filelock.FileLock(
            lock_path(settings.data_dir), timeout=0, mode=PRIVATE_FILE_MODE, thread_local=False
        )
        self._local: Memory | None = None
        self._server: OwnerServer | None = None
        self._remote: OwnerClient | None = None
        self._guard: OwnerGuard | None = None
        self._background = False
        self._opener: threading.Thread | None = None

    @classmethod
    def open(
        cls, settings: Settings, *, embedder: Embedder | None = None, preload_model: bool = True
    ) -> SharedMemory:
        """Join the data dir: own it if nobody does (opening the stores now), else proxy.
        ``preload_model=False``: an owner loads the embedding model only when a call needs it."""
        check_writable(settings.data_dir)
        shared = cls(settings, embedder=embedder, preload_model=preload_model)
        with contextlib.suppress(OwnerGone):  # an owner is starting: the first call waits for it
            shared._backend()
        return shared

    @classmethod
    def serve(cls, settings: Settings, *, embedder: Embedder | None = None) -> SharedMemory:
        """Join the data dir for a long-lived server, without waiting for the stores.

        The stores open in a background thread (at 100k facts that takes seconds), so the
        server can answer MCP ``initialize`` and list its tools at once; a call waits until the
        open is done. If it fails, every call retries it and reports why (e.g. a schema too new).
        Once this process owns the data dir, the background jobs run.
        """
        check_writable(settings.data_dir)
        shared = cls(settings, embedder=embedder)
        shared._background = True
        shared._opener = threading.Thread(target=shared._open_now, name="hippograph-open", daemon=True)
        shared._opener.start()
        return shared

    @property
    def still_opening(self) -> bool:
        """Whether the background open (``serve``) is still under way."""
        return self._opener is not None and self._opener.is_alive()

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
        data_dir = self.settings.data_dir
        memory: Memory | None = None
        server: OwnerServer | None = None
        try:
            # A dead owner's address must not be called while the stores open (seconds at 100k facts).
            remove_owner(data_dir)
            lock_path.chmod(PRIVATE_FILE_MODE)
            memory = Memory.open(self.settings, embedder=self._embedder, preload_model=self._preload_model)
            server = OwnerServer(
                memory, socket_address(data_dir), header_timeout_s=self.settings.header_timeout_s
            )
            info = OwnerInfo(os.getpid(), server.address, server.token)
            publish_owner(data_dir, info)
        except BaseException:
            # Nothing is left behind: no listener, no open store, no lock (and a data dir we
            # refuse to open is left as we found it, lock file included).
            if server is not None:
                server.stop()
            if memory is not None:
                memory.close()
            if not existed:
                lock_path.unlink(missing_ok=True)
            self._file_lock.release()
            raise
        self._local, self._server = memory, server
        self._guard = OwnerGuard(data_dir, info, self._file_lock)
        if self._background:
            memory.start_background()
        log.info("owning %s (owner API at %s)", data_dir, server.address)
        return True

    def _backend(self) -> Memory | OwnerClient:
        """The stores here, or a proved owner's API. A live owner that published its address is
        called even if its lock file is gone (taking a fresh lock would lock everyone out: the
        owner's guard puts the file back); otherwise this process tries to become the owner."""
        with self._lock:
            if self._local is not None:
                return self._local
            info = read_owner(self.settings.data_dir)
            if info is not None and info.pid != os.getpid() and _alive(info.pid):
                if self._remote is None or self._remote.info != info:
                    if self._remote is not None:
                        self._remote.close()
                    self._remote = OwnerClient(info)
                try:
                    self._remote.prove()
                    return self._remote
                except OwnerGone:
                    pass  # not an owner (a dead one's reused pid): the lock decides
            if self._try_to_own():
                if self._remote is not None:
                    self._remote.close()
                    self._remote = None
                return self._local  # type: ignore[return-value]
            raise OwnerGone("the owner has not published its address yet")

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run operation ``name`` on the stores here if this process owns them, else on the owner's."""

        request_id = uuid.uuid4().hex  # one per call, whichever owner its retries reach

        def attempt() -> Any:
            return self._backend().call_once(name, arguments, request_id)

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
        raise InternalError("the retry loop ended without an answer or an error")

    def close(self) -> None:
        with self._lock:
            if self._remote is not None:
                self._remote.close()
                self._remote = None
            if self._guard is not None:
                self._guard.stop()
                self._guard = None
            if self._local is not None:
                # Unpublish first, so proxies stop calling and take over once the lock is free.
                if self._server is not None:
                    server = self._server
                    info = OwnerInfo(os.getpid(), server.address, server.token)
                    unpublish_owner(self.settings.data_dir, info)
                    # Calls not yet written go back to their proxies at once: a client that
                    # closed stdin kills this process two seconds later.
                    self._local.stop_calls()
                    server.stop()
                self._local.close()
                self._local = None
                self._file_lock.release()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
