"""The shared libraries' pages a server read while starting, handed back once it has started.

A server maps ~300 MB of shared libraries (LanceDB's alone is 176 MB). While it opens its stores,
loads its models and answers its first calls, the kernel reads in each page of code that runs,
and the pages around it, and they stay in the process's RSS for good, though much of that code
never runs again (creating tables, migrations, building the model's graph). Measured in one
process on 2026-11-30 (a fresh store; 100 remembers and 25 searches, then 2,000 remembers and 500
searches): RSS at the end 444 MB, and 368 MB when the libraries' pages were handed back after
the first 100 remembers (~160 MB at once, ~85 MB read in again by the calls after), the calls as
fast.

``MADV_PAGEOUT`` (Linux 5.4 and later) asks the kernel to reclaim a mapping's pages now. A
read-only mapping of a shared library holds clean copies of the file's pages: a page needed
again is read back from the file, nothing is lost. The kernel keeps a page another process maps
too (a second server on the machine: the page is shared, not counted twice in memory used); a
page no process maps leaves the page cache as well, so the next process to run that code (a
hook's command, say) reads it from the file once more.
Writable mappings (the libraries' data) are left alone. Elsewhere than Linux, or on an older
kernel, nothing happens.
"""

from __future__ import annotations

import ctypes
import logging
import re
from collections.abc import Iterator

from hippograph.store.malloc_arenas import glibc

log = logging.getLogger(__name__)

_MADV_PAGEOUT = 21  # from the kernel's mman-common.h
_LIBRARY = re.compile(r"\.so(?:\.\d+)*$")
_READ_ONLY = ("r-xp", "r--p")


def release_library_pages(maps: str = "/proc/self/maps") -> int:
    """Ask the kernel to reclaim the pages of this process's read-only library mappings; return
    how many bytes of mappings it took the request for (0 where it cannot)."""
    madvise = glibc("madvise", ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    if madvise is None:
        return 0
    try:
        spans = list(_library_spans(maps))
    except OSError:
        return 0
    asked = sum(end - start for start, end in spans if madvise(start, end - start, _MADV_PAGEOUT) == 0)
    log.debug("asked the kernel to reclaim %d MB of library pages", asked >> 20)
    return asked


def _library_spans(maps: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each read-only mapping of a shared library listed in ``maps``."""
    with open(maps, encoding="utf-8") as lines:
        for line in lines:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[1] in _READ_ONLY and _LIBRARY.search(fields[5].rstrip()):
                start, end = fields[0].split("-")
                yield int(start, 16), int(end, 16)
