"""Who owns a data dir: the lock every process tries, owner.json where the owner publishes its
API, and where that API listens, all private to the user who runs hippograph.

The data dir is 0700 and the lock file and owner.json are 0600, so another user can neither
take the lock, read the owner's token, nor read the stores. The owner listens on a Unix domain
socket inside the data dir (or, if that path is too long for a socket, inside a 0700 directory
of this user's in the temp dir), where no other user can connect or squat; only where the
platform has no Unix sockets does it fall back to a loopback TCP port.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

LOCK_FILE = "hippograph.lock"
_OWNER_FILE = "owner.json"
_SOCKET_FILE = "owner.sock"
# sun_path holds 108 bytes on Linux, 104 on macOS; keep a margin.
_MAX_SOCKET_PATH = 100
PRIVATE_FILE_MODE = 0o600


@dataclass(frozen=True)
class OwnerInfo:
    """Where the owner's private API listens (``unix:<path>`` or ``tcp:<port>``), and its secret."""

    pid: int
    address: str
    token: str


def lock_path(data_dir: Path) -> Path:
    """The file whose exclusive lock makes a process the owner (the OS drops it when the process dies)."""
    return data_dir / LOCK_FILE


def socket_address(data_dir: Path) -> str:
    """Where this data dir's owner listens: a Unix socket no other user can reach, or loopback TCP."""
    if not hasattr(socket, "AF_UNIX"):
        return "tcp:0"
    path = data_dir.resolve() / _SOCKET_FILE
    if len(os.fsencode(path)) > _MAX_SOCKET_PATH:
        runtime = Path(tempfile.gettempdir()) / f"hippograph-{os.getuid()}"
        runtime.mkdir(mode=0o700, exist_ok=True)
        info = runtime.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
            raise OSError(f"{runtime} is not a directory private to this user: remove it")
        path = runtime / f"{hashlib.sha256(os.fsencode(data_dir.resolve())).hexdigest()[:24]}.sock"
    return f"unix:{path}"


def read_owner(data_dir: Path) -> OwnerInfo | None:
    """The owner's published address, or None if there is none (yet) or it is unreadable."""
    try:
        raw = json.loads((data_dir / _OWNER_FILE).read_text("utf-8"))
        return OwnerInfo(int(raw["pid"]), str(raw["address"]), str(raw["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def publish_owner(data_dir: Path, info: OwnerInfo) -> None:
    """Write owner.json atomically, readable by this user only (the token is a secret)."""
    path = data_dir / _OWNER_FILE
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"pid": info.pid, "address": info.address, "token": info.token}, fh)
    os.replace(tmp, path)


def remove_owner(data_dir: Path) -> None:
    """Remove whatever owner.json says: called by a new owner, before it opens the stores, so no
    process calls a dead owner's address while the stores open."""
    (data_dir / _OWNER_FILE).unlink(missing_ok=True)


def unpublish_owner(data_dir: Path, info: OwnerInfo) -> None:
    """Remove owner.json if it still names ``info`` (a newer owner's file is left alone)."""
    if read_owner(data_dir) == info:
        remove_owner(data_dir)
