"""Fewer C heaps for the engines' threads, and freed memory handed back: memory that stays
flat as writes pile up.

glibc gives each thread that allocates at the same moment as another a heap ("arena") of its
own, up to 8 per core, and returns little of a fragmented arena to the system. LanceDB's
runtime threads allocate and free on every write from whichever thread runs the task, so each
small append leaves a few KB stranded: measured on LanceDB alone, 6,000 single-row appends
took the process from 189 to 245 MB with glibc's default, and from 192 to 202 MB with two
arenas; 1,500 remembers in one process (1k to 2.5k facts) added 31 MB of anonymous memory with
the default and 19 MB with two.

glibc also keeps what is freed in its heaps' free lists rather than returning it to the
system. A Kùzu checkpoint frees the unsaved changes' working memory (~110 KB a remember
between checkpoints): in-process, after 1,000-3,000 remembers, ``malloc_trim`` after a
checkpoint gave back 44-69 MB of the process's ~340 MB of anonymous memory.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import time
from typing import Any

log = logging.getLogger(__name__)

_ARENAS = 2
_M_ARENA_MAX = -8  # mallopt's parameter number, from glibc's malloc.h
_M_MMAP_THRESHOLD = -3  # the same
_MMAP_THRESHOLD = 256 << 10


def limit_malloc_arenas() -> bool:
    """Cap glibc's arenas for threads created from now on (call it early; once is enough);
    return whether the cap was set.

    A ``MALLOC_ARENA_MAX`` set by the user wins; elsewhere than Linux, or with a libc without
    ``mallopt``, nothing happens.
    """
    mallopt = glibc("mallopt", ctypes.c_int, ctypes.c_int)
    if mallopt is None or os.environ.get("MALLOC_ARENA_MAX"):
        return False
    return bool(mallopt(_M_ARENA_MAX, _ARENAS))


def map_large_allocations() -> bool:
    """Serve allocations of ``_MMAP_THRESHOLD`` and more from mappings of their own, handed back
    to the system when freed (call it early; once is enough); return whether it was set.

    glibc starts at 128 KiB and raises the bar each time such a block is freed (up to 32 MiB), so
    the engines' batch buffers (LanceDB's scans, Arrow arrays of several MB) move into the heaps,
    where a few live small blocks among them keep the pages: a full read of 94k vectors left
    +17 / +98 / +166 MB after 1 / 2 / 3 reads, malloc_trim or not, and +1-5 MB with the bar fixed
    (2026-11-29; with jemalloc preloaded, whose live bytes stayed flat, also +1-5 MB: retention,
    not a leak). A ``MALLOC_MMAP_THRESHOLD_`` set by the user wins.
    """
    mallopt = glibc("mallopt", ctypes.c_int, ctypes.c_int)
    if mallopt is None or os.environ.get("MALLOC_MMAP_THRESHOLD_"):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD))


def release_free_memory() -> None:
    """Return the free memory at the top and in the middle of glibc's heaps to the system
    (``malloc_trim(0)``, which walks the heaps: its cost grows with them). Call it after work
    that freed much (a checkpoint)."""
    trim = glibc("malloc_trim", ctypes.c_size_t)
    if trim is None:
        return
    started = time.perf_counter()
    trim(0)
    log.debug("malloc_trim took %.1f ms", (time.perf_counter() - started) * 1000)


def glibc(name: str, *argtypes: Any) -> Any:
    """The C library's function ``name`` with these argument types, or None off Linux or when
    the libc has no such function."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
    function.argtypes = list(argtypes)
    return function
