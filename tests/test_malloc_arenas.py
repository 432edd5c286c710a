"""The server's process caps glibc's heaps (store/malloc_arenas.py) unless the user chose a cap."""

from __future__ import annotations

import subprocess
import sys

_PROBE = "from hippograph.store.malloc_arenas import limit_malloc_arenas as f; print(f())"


def _run(env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_cap_is_set_in_a_fresh_process(monkeypatch: object) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    assert _run(env) == ("True" if sys.platform.startswith("linux") else "False")


def test_a_cap_the_user_set_is_left_alone() -> None:
    import os

    assert _run({**os.environ, "MALLOC_ARENA_MAX": "4"}) == "False"
