"""The ``hippograph`` command (and ``python -m hippograph``): Ctrl-C at any moment stops it quietly.

Nothing heavy is imported here: a Ctrl-C that lands while the server's modules still load (a
few seconds on a busy machine) is caught like one that lands later, instead of ending in a
traceback of whichever import it interrupted. One that lands inside a callback Python runs for
itself (an import lock's weakref callback) cannot propagate from there: Python would print it as
"Exception ignored" and drop it; ``deliver_again`` sends it to the main thread again instead.
One that lands inside a library that turns it into an error of its own (pydantic-core building a
model's serializer at import: a SchemaError) is still a stop: ``interrupt`` notes every Ctrl-C.
"""

import _thread
import os
import signal
import sys
import threading
from typing import Any, NoReturn


def deliver_again(unraisable: Any, *, previous: Any = sys.unraisablehook) -> None:
    """``sys.unraisablehook``: a Ctrl-C swallowed by a callback is raised again in the main thread
    (where the command handles it); anything else is reported as Python would."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        # A real SIGINT to the main thread, sent from another one: raised in the main thread
        # itself it would end in this hook, and only a signal wakes a main thread that waits.
        main_thread = threading.main_thread().ident or 0
        while True:
            try:
                _thread.start_new_thread(signal.pthread_kill, (main_thread, signal.SIGINT))
                return
            except RuntimeError:  # at interpreter shutdown: stopping anyway
                return
            except KeyboardInterrupt:
                # Under load the signal can come back before this hook returns: raised here,
                # it would be swallowed as the first one was. Send it again.
                continue
    previous(unraisable)


INTERRUPTED: list[int] = []  # the Ctrl-Cs received, noted before they are raised


def interrupt(signum: int, frame: Any) -> None:
    """The SIGINT handler until serving starts: Python's own (raise ``KeyboardInterrupt``),
    noting first that the user asked to stop, whatever the exception turns into on its way up."""
    INTERRUPTED.append(signum)
    raise KeyboardInterrupt


def one_blas_thread() -> None:
    """numpy's matrix products run on one thread unless the user says otherwise (before numpy
    loads: OpenBLAS reads it once). Ours are small (a query against at most the few thousand
    vectors the memory budget holds), where a second thread costs more than it brings: 8,000 x 384
    against one query took 0.63 ms on one thread and 2.1 ms on two, on 2 busy cores (2026-11-29)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main() -> int:
    sys.unraisablehook = deliver_again
    signal.signal(signal.SIGINT, interrupt)
    one_blas_thread()
    try:
        from hippograph.cli import main as run

        return run()
    except Exception:
        if not INTERRUPTED:
            raise
        stopped()
    except KeyboardInterrupt:
        stopped()


def stopped() -> NoReturn:
    """Reached only before a server serves (serving handles Ctrl-C itself and exits 0): no call
    was answered yet. The threads opening the stores are not waited for; a store is safe to leave
    at any moment (kill -9 included)."""
    print("hippograph: stopped", file=sys.stderr, flush=True)
    os._exit(130)


if __name__ == "__main__":
    sys.exit(main())
