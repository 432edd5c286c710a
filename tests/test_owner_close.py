"""An owner that closes while proxies' writes are under way: each write runs once, and its reply
is either kept (it had begun writing) or the call goes back to the proxy to send again.

(The same with real processes, whose MCP clients kill an owner two seconds after closing its
stdin: tests/e2e/test_concurrency.py.)"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from hippograph.config import Settings
from hippograph.domain.errors import Closing
from hippograph.service.memory import Memory
from hippograph.sharing.ownership import read_owner
from hippograph.sharing.proxy import SharedMemory
from hippograph.sharing.rpc import OwnerClient, OwnerGone
from hippograph.store.embed import FastEmbedder

_WAIT_S = 60.0


class PausingEmbedder:
    """The real model; embedding a text that holds ``pause_on`` waits until ``resume`` is set."""

    def __init__(self, model: FastEmbedder, pause_on: str) -> None:
        self.name, self.dim, self._model = model.name, model.dim, model
        self.pause_on = pause_on
        self.paused, self.resume = threading.Event(), threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any(self.pause_on in text for text in texts):
            self.paused.set()
            assert self.resume.wait(_WAIT_S)
        return self._model.embed(texts)

    def count_tokens(self, text: str) -> int:
        return self._model.count_tokens(text)


def _in_thread(job: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    """Run ``job`` in a thread; the dict gets its ``result`` or its ``error``."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = job()
        except BaseException as err:
            outcome["error"] = err

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def _until(condition: Callable[[], bool]) -> None:
    for _ in range(int(_WAIT_S / 0.01)):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError("the condition never held")


def _proxy(settings: Settings) -> OwnerClient:
    info = read_owner(settings.data_dir)
    assert info is not None
    return OwnerClient(info)


def test_a_write_under_way_when_the_owner_closes_keeps_its_reply(
    settings: Settings, embedder: FastEmbedder
) -> None:
    pausing = PausingEmbedder(embedder, "Ravi")
    owner = SharedMemory.open(settings, embedder=pausing)
    memory = owner.local
    assert memory is not None
    proxy = _proxy(settings)
    args = {"content": "Ravi keeps the spare keys in the blue tin"}
    call, sent = _in_thread(lambda: proxy.call_once("remember", args, "req-ravi"))
    assert pausing.paused.wait(_WAIT_S)
    closing, closed = _in_thread(owner.close)
    _until(lambda: memory.calls_closing)
    with pytest.raises(Closing):  # a new call is refused, not run on stores about to close
        memory.remember("Mira waters the ferns on Fridays")
    pausing.resume.set()
    call.join(_WAIT_S)
    closing.join(_WAIT_S)
    proxy.close()
    assert closed == {"result": None}
    assert "result" in sent, sent
    again = Memory.open(settings, embedder=embedder)
    try:
        assert again.call_once("remember", args, "req-ravi") == sent["result"]
        assert again.stats()["facts"] == 1
    finally:
        again.close()


def test_a_queued_write_goes_back_to_its_proxy_when_the_owner_closes(
    settings: Settings, embedder: FastEmbedder
) -> None:
    owner = SharedMemory.open(settings, embedder=embedder)
    memory = owner.local
    assert memory is not None
    proxy = _proxy(settings)
    args = {"content": "Odile moved the retro to Thursday"}
    with memory.stores.write_lock:  # another write holds the lock: this one queues
        call, sent = _in_thread(lambda: proxy.call_once("remember", args, "req-odile"))
        _until(lambda: memory.calls_running == 1)
        closing, closed = _in_thread(owner.close)
        call.join(_WAIT_S)  # it gives way while the lock is still held
        assert isinstance(sent.get("error"), OwnerGone), sent
    closing.join(_WAIT_S)
    proxy.close()
    assert closed == {"result": None}
    again = Memory.open(settings, embedder=embedder)
    try:
        assert again.graph.receipts.get("req-odile") is None  # nothing of it was written
        assert again.stats()["facts"] == 0
        # The proxy's retry runs it on the next owner, once.
        first = again.call_once("remember", args, "req-odile")
        assert again.call_once("remember", args, "req-odile") == first
        assert again.stats()["facts"] == 1
    finally:
        again.close()
