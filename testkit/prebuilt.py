"""The type of conftest's ``prebuilt`` fixture, for the test modules that name it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hippograph.service.memory import Memory

Fill = Callable[[Memory], Any]  # writes a module's starting memory, returns what its tests look up
Prebuilt = Callable[[Fill], tuple[Path, Any]]  # fill -> (its data dir, what it returned)
