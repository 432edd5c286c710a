"""Who owns a data dir: the lock every process tries, and owner.json, where the owner publishes its API."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

LOCK_FILE = "hippograph.lock"
_OWNER_FILE = "owner.json"


@dataclass(frozen=True)
class OwnerInfo:
    """Where the owner's private API listens, and the token it wants."""

    pid: int
    port: int
    token: str


def lock_path(data_dir: Path) -> Path:
    """The file whose exclusive lock makes a process the owner (the OS drops it when the process dies)."""
    return data_dir / LOCK_FILE


def read_owner(data_dir: Path) -> OwnerInfo | None:
    """The owner's published address, or None if there is none (yet) or it is unreadable."""
    try:
        raw = json.loads((data_dir / _OWNER_FILE).read_text("utf-8"))
        return OwnerInfo(int(raw["pid"]), int(raw["port"]), str(raw["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def publish_owner(data_dir: Path, info: OwnerInfo) -> None:
    """Write owner.json atomically, readable by this user only (the token is a secret)."""
    path = data_dir / _OWNER_FILE
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"pid": info.pid, "port": info.port, "token": info.token}, fh)
    os.replace(tmp, path)


def unpublish_owner(data_dir: Path, info: OwnerInfo) -> None:
    """Remove owner.json if it still names ``info`` (a newer owner's file is left alone)."""
    if read_owner(data_dir) == info:
        (data_dir / _OWNER_FILE).unlink(missing_ok=True)
