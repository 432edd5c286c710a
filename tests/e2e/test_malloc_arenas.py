"""The server's process caps glibc's heaps (store/malloc_arenas.py) unless the user chose a cap,
and hands freed heap memory back to the system."""

from __future__ import annotations

import os
import subprocess
import sys

_PROBE = "from hippograph.store.malloc_arenas import limit_malloc_arenas as f; print(f())"


def _run(env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_cap_is_set_in_a_fresh_process() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    assert _run(env) == ("True" if sys.platform.startswith("linux") else "False")


def test_a_cap_the_user_set_is_left_alone() -> None:
    assert _run({**os.environ, "MALLOC_ARENA_MAX": "4"}) == "False"


_FRAGMENTED = """
from hippograph.store.malloc_arenas import release_free_memory

def anon_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) // 1024 for line in f if line.startswith("RssAnon"))

blocks = [bytearray(1000) for _ in range(100_000)]  # ~100 MB from glibc's heap
kept = blocks[::50]  # a few stay: the heap cannot shrink from its top
del blocks
before = anon_mb()
release_free_memory()
print(before - anon_mb())
"""


def test_freed_heap_memory_goes_back_to_the_system() -> None:
    if not sys.platform.startswith("linux"):
        return
    done = subprocess.run(
        [sys.executable, "-c", _FRAGMENTED], env=dict(os.environ), capture_output=True, text=True, check=True
    )
    assert int(done.stdout) > 50  # MB handed back of the ~98 MB freed
