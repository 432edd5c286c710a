"""A started server hands the libraries' pages it read while starting back to the kernel
(store/code_pages.py), once it has answered a call; Linux only."""

from __future__ import annotations

import gc
import os
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from hippograph.domain.topics import MAX_TOPIC
from hippograph.service import memory as memory_module
from hippograph.service.memory import Memory
from hippograph.store.code_pages import _library_spans, release_library_pages


def _kernel_has_pageout() -> bool:
    """Linux 5.4 or later (MADV_PAGEOUT)."""
    if not sys.platform.startswith("linux"):
        return False
    major, minor = (int(part) for part in re.findall(r"\d+", os.uname().release)[:2])
    return (major, minor) >= (5, 4)


linux_only = pytest.mark.skipif(not _kernel_has_pageout(), reason="MADV_PAGEOUT is Linux's, since 5.4")


def test_only_read_only_mappings_of_libraries_are_chosen(tmp_path: Path) -> None:
    maps = tmp_path / "maps"
    maps.write_text(
        "7f0000000000-7f0000002000 r-xp 00000000 08:01 11 /usr/lib/libz.so.1.2.13\n"
        "7f0000002000-7f0000003000 r--p 00002000 08:01 11 /usr/lib/libz.so.1.2.13\n"
        "7f0000003000-7f0000004000 rw-p 00003000 08:01 11 /usr/lib/libz.so.1.2.13\n"
        "7f0000010000-7f0000020000 r-xp 00000000 08:01 12 /venv/lancedb/_lancedb.abi3.so\n"
        "7f0000020000-7f0000030000 r--p 00000000 08:01 13 /data/vectors.lance/data/0.lance\n"
        "7f0000030000-7f0000040000 rw-p 00000000 00:00 0 \n"
        "7f0000040000-7f0000041000 r-xp 00000000 00:00 0 [vdso]\n"
        "7f0000050000-7f0000051000 r--p 00000000 08:01 14 /home/me/notes.so.txt\n"
    )
    assert list(_library_spans(str(maps))) == [
        (0x7F0000000000, 0x7F0000002000),
        (0x7F0000002000, 0x7F0000003000),
        (0x7F0000010000, 0x7F0000020000),
    ]


def test_a_missing_maps_file_asks_nothing(tmp_path: Path) -> None:
    assert release_library_pages(str(tmp_path / "no-maps")) == 0


@linux_only
def test_the_kernel_takes_the_request_for_every_library_mapping() -> None:
    # Whether the pages leave RSS depends on who else maps them (the kernel keeps a page another
    # process maps, as a second test worker does): bench.growth measures that, not this test.
    spans = list(_library_spans("/proc/self/maps"))
    assert len(spans) > 20
    assert release_library_pages() == sum(end - start for start, end in spans)


def test_the_pages_go_back_once_on_the_second_tick_after_a_call_is_answered(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int] = []
    monkeypatch.setattr(memory_module, "release_library_pages", lambda: asked.append(release_library_pages()))
    frozen: list[int] = []  # the start's objects leave the collector's full passes then too
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(len(asked)))
    memory._settle_after_start()
    memory._settle_after_start()
    assert asked == []  # no call answered yet: the server is still starting

    memory.call("remember", {"content": "Noor keeps the spare router in the hall cupboard."})
    memory._settle_after_start()  # the first tick that finds a call answered only arms
    assert asked == []
    memory._settle_after_start()
    assert len(asked) == 1 and frozen == [1]
    memory._settle_after_start()
    assert len(asked) == 1 and frozen == [1]  # once

    # The calls' code comes back as they run: nothing else changes.
    hits = memory.call("search", {"query": "where is the spare router"}).results
    assert hits and "hall cupboard" in hits[0].content


def test_a_server_hands_the_pages_back_before_and_after_loading_what_writes_use(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[bool] = []  # whether the recogniser had loaded at each hand-back
    recogniser = memory.stores.names._recogniser
    assert recogniser is not None

    def release() -> int:  # the settle job's hand-back (after ~20 s) is not this one's
        if threading.current_thread().name == "hippograph-warm":
            asked.append(recogniser.loaded)
        return 0

    monkeypatch.setattr(memory_module, "release_library_pages", release)
    memory.call("search", {"query": "where is the spare router"})
    assert asked == []  # a memory no server started loads nothing after a call

    memory.start_background()
    memory.call("search", {"query": "where is the spare router"})
    deadline = time.monotonic() + 60
    while len(asked) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    memory.call("search", {"query": "where is the spare router"})
    time.sleep(0.2)
    assert len(asked) == 2 and asked[1]  # before and after the load, once: after the first call only
    assert memory.call("remember", {"content": "Noor keeps the spare router in the hall cupboard."}).id


def test_the_pages_go_back_after_the_background_job_finds_topics_again(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int] = []
    monkeypatch.setattr(memory_module, "release_library_pages", lambda: asked.append(release_library_pages()))
    memory._consolidate_if_due()
    assert asked == []  # nothing written: not due, nothing run

    memory.remember_many([{"content": f"Box {n} of the move holds pans."} for n in range(MAX_TOPIC)])
    assert memory.consolidator.due()
    memory._consolidate_if_due()
    assert len(asked) == 1 and not memory.consolidator.due()
    memory._consolidate_if_due()
    assert len(asked) == 1  # not due again until enough is written
