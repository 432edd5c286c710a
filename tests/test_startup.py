"""Start-up in process: a failed index write is repaired at the next open, and the model is
assembled once into a cache data dirs share.

(Unusable data dirs refused by the CLI and a server, run as processes: tests/e2e/test_startup.py.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hippograph.config import DEFAULT_MODEL, Settings
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder, assemble_default_model


@pytest.mark.embedded
def test_a_failed_vector_write_is_repaired_at_the_next_open_even_after_a_clean_close(
    settings: Settings, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = Memory.open(settings, embedder=embedder)
    table = mem.vectors._tables["facts"]

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(table, "add", disk_full)
    # Acknowledged once the graph has committed; the index write fails behind it.
    out = mem.remember("The boiler service is booked for the second Monday of March.")
    with pytest.raises(OSError):
        mem.vectors.flush()
    assert mem.vectors.write_failed
    # A search still answers; the fact is in the graph, and its vector in those held in memory
    # (store.held_vectors), which answer the vector channel: it is found, though not indexed.
    assert out.id in [h.id for h in mem.search("boiler service", limit=3).results]
    mem.close()  # the disk is still full: logged, and no versions are recorded
    monkeypatch.undo()

    mem = Memory.open(settings, embedder=embedder)
    try:
        hits = mem.search("when is the boiler serviced", limit=3).results
        assert [h.content for h in hits][:1] == [
            "The boiler service is booked for the second Monday of March."
        ]
    finally:
        mem.close()


def test_a_new_data_dir_uses_the_shared_models_cache_and_an_old_one_keeps_its_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HIPPOGRAPH_MODELS_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    shared = tmp_path / "cache" / "hippograph" / "models"
    assert Settings(data_dir=tmp_path / "new").model_cache_dir == shared
    assert Settings(data_dir=tmp_path / "other").model_cache_dir == shared

    (tmp_path / "old" / "models").mkdir(parents=True)  # assembled there by an earlier version
    assert Settings(data_dir=tmp_path / "old").model_cache_dir == tmp_path / "old" / "models"
    monkeypatch.setenv("HIPPOGRAPH_MODELS_DIR", str(tmp_path / "mine"))
    assert Settings(data_dir=tmp_path / "old").model_cache_dir == tmp_path / "mine"


def test_the_model_assembles_once_into_a_shared_dir_and_a_damaged_copy_is_replaced(tmp_path: Path) -> None:
    models = tmp_path / "models"
    target = assemble_default_model(models)
    assert assemble_default_model(models) == target
    (target / "hippograph-model.json").write_text("{}")  # cut short, or an older hippograph's
    assert assemble_default_model(models) == target
    assert sorted(p.name for p in models.iterdir()) == [target.name]  # no staging dir left behind
    assert FastEmbedder(DEFAULT_MODEL, models).dim == 384


def test_a_ctrl_c_swallowed_by_a_callback_reaches_the_main_thread_again() -> None:
    # A Ctrl-C landing in a callback Python runs for itself (an import lock's weakref callback,
    # seen under load at start-up) was printed as "Exception ignored ... Traceback" and dropped.
    script = """
import sys, time, weakref
import hippograph.__main__ as entry
sys.unraisablehook = entry.deliver_again
class Thing: pass
thing = Thing()
def callback(ref): raise KeyboardInterrupt
kept = weakref.ref(thing, callback)
started = time.monotonic()
try:
    del thing
    time.sleep(30)
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted", time.monotonic() - started < 20)  # the sleep was cut short
"""
    # (Timed inside: under load, the interpreter and its imports alone took 30 s once.) The signal
    # is sent once: on a busy machine it can land between the sleep's release of the GIL and its
    # system call (1 run in 40 under three CPU burners), and is then raised when the sleep ends.
    # Resending it until taken would make that rarer, but each resend makes the system calls of
    # native code the main thread may be running (an engine closing) fail with EINTR. So: a few
    # tries; one cut short shows the signal is sent, and every one must be interrupted.
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert done.stdout.strip() in ("interrupted True", "interrupted False"), done
        assert "Traceback" not in done.stderr, done.stderr
        if done.stdout.strip() == "interrupted True":
            return
    raise AssertionError("the sleep was never cut short: the signal reached the main thread late each time")


@pytest.mark.parametrize("ctrl_c", [True, False])
def test_a_ctrl_c_a_library_turned_into_its_own_error_still_stops_quietly(ctrl_c: bool) -> None:
    # pydantic-core, building a model's serializer while the server's modules load, turns a
    # Ctrl-C landing inside it into a SchemaError: that ended in a traceback and exit 1 (CI, once
    # in ~40 runs of test_cli's Ctrl-C test). The same error without a Ctrl-C is still reported.
    script = f"""
import signal, sys, types
import hippograph.__main__ as entry
def main():
    try:
        if {ctrl_c}:
            signal.raise_signal(signal.SIGINT)
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        raise RuntimeError("Error building `literal` serializer: KeyboardInterrupt") from None
sys.modules["hippograph.cli"] = types.SimpleNamespace(main=main)
sys.exit(entry.main())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    if ctrl_c:
        assert (done.returncode, done.stderr) == (130, "hippograph: stopped\n"), done
    else:
        assert done.returncode == 1 and "RuntimeError: Error building" in done.stderr, done
