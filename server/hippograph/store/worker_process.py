"""Work on arrays done in a fresh interpreter, which hands all its memory back when it exits.

A topics run reads every fact's vector and builds the graph of facts over them: in the server,
at 100k facts, that raised its peak RSS by ~100 MB and kept ~40 MB of it in the allocators of
LanceDB and numpy after (2026-12-01). ``in_worker`` runs such a step in a child process
instead: ``function`` (a module-level function of this package, arrays in, arrays out) gets the
arrays from a temporary ``.npz`` file and its answer comes back on stdout, as ``.npz`` too.

The child is this interpreter with ``-P`` (a client may start the server in a project whose own
``numpy.py`` would otherwise be imported first) and this package's root last on its path (found
however the server was started, shadowing nothing); it inherits the server's environment.
"""

from __future__ import annotations

import importlib
import io
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

Arrays = dict[str, np.ndarray]


def in_worker(function: Callable[[Arrays], Arrays], given: Mapping[str, Any], *, what: str) -> Arrays:
    """``function`` of the arrays ``given`` (each value made one: a path or a count becomes a 0-d
    array), run in a child process; RuntimeError naming ``what`` if it fails."""
    package_root = str(Path(__file__).resolve().parents[2])
    start = f"import sys; sys.path.append({package_root!r}); from {__name__} import _main; _main()"
    with tempfile.TemporaryDirectory(prefix=f"hippograph-{what}-") as work:
        file = Path(work) / "in.npz"
        arrays: dict[str, Any] = {name: np.asarray(value) for name, value in given.items()}
        np.savez(file, **arrays)
        done = subprocess.run(
            [sys.executable, "-P", "-c", start, function.__module__, function.__name__, str(file)],
            capture_output=True,
            check=False,
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),  # no console window on Windows
        )
    if done.returncode:
        told = done.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise RuntimeError(f"the {what} worker failed (exit {done.returncode}): {' / '.join(told)}")
    with np.load(io.BytesIO(done.stdout)) as answer:
        return {name: answer[name] for name in answer.files}


def _main() -> None:
    """The child: ``sys.argv`` names the module, the function and the input file."""
    module, name, given = sys.argv[1:4]
    function = getattr(importlib.import_module(module), name)
    with np.load(given) as arrays:
        answer = function({key: arrays[key] for key in arrays.files})
    out = io.BytesIO()
    np.savez(out, **answer)
    sys.stdout.buffer.write(out.getbuffer())
