"""The owner of a data dir: private to its user, proved before it is trusted, and leaving nothing behind.

(A proxy server taking over when the owning server exits: tests/e2e/test_owner_trust.py.)"""

from __future__ import annotations

import os
import socket
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import filelock
import pytest

from hippograph.config import Settings
from hippograph.domain.errors import StoreError
from hippograph.sharing.ownership import OwnerInfo, lock_path, publish_owner, read_owner, socket_address
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_data_dir_and_the_owners_files_are_this_users_alone(
    settings: Settings, embedder: FastEmbedder
) -> None:
    settings.data_dir.mkdir(mode=0o755)
    settings.data_dir.chmod(0o755)  # as an older version left it
    shared = SharedMemory.open(settings, embedder=embedder)
    try:
        info = read_owner(settings.data_dir)
        assert info is not None and info.address.startswith("unix:")
        assert _mode(settings.data_dir) == 0o700
        assert _mode(lock_path(settings.data_dir)) == 0o600
        assert _mode(settings.data_dir / "owner.json") == 0o600
        assert _mode(Path(info.address.removeprefix("unix:"))) == 0o600
    finally:
        shared.close()
    assert read_owner(settings.data_dir) is None
    assert not Path(info.address.removeprefix("unix:")).exists()


class _Squatter:
    """A process listening where a dead owner listened, answering every request, recording it."""

    def __init__(self, address: str) -> None:
        self.received = b""
        self.path = Path(address.removeprefix("unix:"))
        self.path.unlink(missing_ok=True)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(self.path))
        self._sock.listen()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    self.received += conn.recv(65536)
                except OSError:
                    continue
                body = b'{"proof": "trust me", "result": {"id": "fake", "status": "active"}}'
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                    + str(len(body)).encode()
                    + b"\r\nconnection: close\r\n\r\n"
                    + body
                )

    def close(self) -> None:
        self._sock.close()
        self.path.unlink(missing_ok=True)


@pytest.fixture
def squatter(settings: Settings) -> Iterator[_Squatter]:
    settings.data_dir.mkdir(mode=0o700)
    squatter = _Squatter(socket_address(settings.data_dir))
    yield squatter
    squatter.close()


def test_a_squatter_on_a_dead_owners_address_receives_nothing(
    settings: Settings, embedder: FastEmbedder, squatter: _Squatter
) -> None:
    # A dead owner's owner.json is still there, its pid reused by a live process, and a process
    # that took the lock is still opening the stores: a proxy finds an address it has not proved.
    stale = OwnerInfo(pid=os.getppid(), address=f"unix:{squatter.path}", token="t0ken")
    publish_owner(settings.data_dir, stale)
    opening = filelock.FileLock(lock_path(settings.data_dir), timeout=0)
    opening.acquire()
    proxy = SharedMemory(settings, embedder=embedder, wait_s=1.0)
    try:
        with pytest.raises(StoreError):
            proxy.remember("The vault code is kept in the blue folder")
        assert b"/hello" in squatter.received
        assert b"blue folder" not in squatter.received
        assert b"t0ken" not in squatter.received
        opening.release()
        # The lock is free: the proxy owns the data dir and the write is stored, not faked.
        fact = proxy.remember("The vault code is kept in the blue folder")
        assert fact.id != "fake"
        assert proxy.is_owner
        assert proxy.search("vault code").results[0].id == fact.id
    finally:
        proxy.close()
    assert b"blue folder" not in squatter.received


def test_an_owner_that_cannot_publish_leaves_no_store_listener_or_lock(
    settings: Settings, embedder: FastEmbedder
) -> None:
    settings.data_dir.mkdir(mode=0o700)
    (settings.data_dir / "owner.tmp").mkdir()  # publishing owner.json fails
    with pytest.raises(OSError):
        SharedMemory.open(settings, embedder=embedder)
    assert not [t for t in threading.enumerate() if t.name == "hippograph-owner-api"]
    assert read_owner(settings.data_dir) is None
    (settings.data_dir / "owner.tmp").rmdir()
    # The lock was released and the graph closed: this process opens it again at once.
    shared = SharedMemory.open(settings, embedder=embedder)
    try:
        assert shared.is_owner
        assert shared.remember("Ilse plays the cello").id
    finally:
        shared.close()
