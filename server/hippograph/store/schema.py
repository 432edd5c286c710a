"""Reads the versioned storage schema in ``graph_schema/`` (shipped in the wheel).

The stores call this; it knows files and versions, not databases.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from hippograph.domain.errors import InternalError, StoreError


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


def _schema_root() -> Traversable:
    packaged = resources.files("hippograph") / "graph_schema"
    if packaged.is_dir():
        return packaged
    # Running from a source checkout (editable install): the top-level graph_schema/.
    source = Path(__file__).resolve().parents[3] / "graph_schema"
    if source.is_dir():
        return source
    raise StoreError("graph_schema/ is missing from this installation: reinstall hippograph")


def _split_statements(text: str) -> tuple[str, ...]:
    without_comments = "\n".join(line for line in text.splitlines() if not line.strip().startswith("//"))
    return tuple(s.strip() for s in re.split(r";\s*(?:\n|$)", without_comments) if s.strip())


@cache
def kuzu_migrations() -> tuple[Migration, ...]:
    found = []
    for entry in (_schema_root() / "kuzu").iterdir():
        match = re.fullmatch(r"(\d{3})_(\w+)\.cypher", entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], _split_statements(entry.read_text("utf-8"))))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise InternalError(
            f"graph_schema/kuzu migrations are not numbered 1..N: {[m.version for m in found]}"
        )
    return tuple(found)


def graph_schema_version() -> int:
    return kuzu_migrations()[-1].version


@cache
def lance_table_spec(table: str) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads((_schema_root() / "lance" / f"{table}.json").read_text("utf-8"))
    return spec
