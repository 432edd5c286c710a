"""The ``hippograph`` command (and ``python -m hippograph``): Ctrl-C at any moment stops it quietly.

Nothing heavy is imported here: a Ctrl-C that lands while the server's modules still load (a
few seconds on a busy machine) is caught like one that lands later, instead of ending in a
traceback of whichever import it interrupted. One that lands inside a callback Python runs for
itself (an import lock's weakref callback) cannot propagate from there: Python would print it as
"Exception ignored" and drop it; ``deliver_again`` sends it to the main thread again instead.
"""

import _thread
import os
import signal
import sys
import threading
import time
from typing import Any


def deliver_again(unraisable: Any, *, previous: Any = sys.unraisablehook) -> None:
    """``sys.unraisablehook``: a Ctrl-C swallowed by a callback is raised again in the main thread
    (where the command handles it); anything else is reported as Python would."""
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        previous(unraisable)
        return
    while True:
        try:
            _interrupt_main_thread()
            return
        except RuntimeError:  # at interpreter shutdown: stopping anyway
            return
        except KeyboardInterrupt:
            # Under load the signal can come back before this hook returns: raised here, it
            # would be swallowed as the first one was. Send it again.
            continue


def _interrupt_main_thread() -> None:
    """A real SIGINT to the main thread, sent from another one until the main thread has taken it.

    Raised in the main thread itself it would end in the hook, and only a signal wakes a main
    thread that waits. One signal is not enough: landing between a blocking call's release of the
    GIL and its system call, it is noticed only when the call returns (a 30 s sleep slept 30 s on
    a busy machine). So the main thread takes it through a handler of ours, and the sender repeats
    it until that handler has run (then the previous handler is back and raises as it would)."""
    main_thread = threading.main_thread().ident or 0
    if threading.get_ident() != main_thread:  # no handler can be set from here: one signal
        _thread.start_new_thread(signal.pthread_kill, (main_thread, signal.SIGINT))
        return
    before = signal.getsignal(signal.SIGINT)

    def taken(signum: int, frame: Any) -> Any:
        signal.signal(signal.SIGINT, before)
        if callable(before):
            return before(signum, frame)
        raise KeyboardInterrupt

    def send_until_taken() -> None:
        while signal.getsignal(signal.SIGINT) is taken:
            try:
                signal.pthread_kill(main_thread, signal.SIGINT)
            except OSError:  # the main thread is gone
                return
            time.sleep(0.05)

    signal.signal(signal.SIGINT, taken)
    _thread.start_new_thread(send_until_taken, ())


def one_blas_thread() -> None:
    """numpy's matrix products run on one thread unless the user says otherwise (before numpy
    loads: OpenBLAS reads it once). Ours are small (a query against at most the few thousand
    vectors the memory budget holds), where a second thread costs more than it brings: 8,000 x 384
    against one query took 0.63 ms on one thread and 2.1 ms on two, on 2 busy cores (2026-11-29)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main() -> int:
    sys.unraisablehook = deliver_again
    one_blas_thread()
    try:
        from hippograph.cli import main as run

        return run()
    except KeyboardInterrupt:
        # Reached only before a server serves (serving handles Ctrl-C itself and exits 0): no
        # call was answered yet. The threads opening the stores are not waited for; a store is
        # safe to leave at any moment (kill -9 included).
        print("hippograph: stopped", file=sys.stderr, flush=True)
        os._exit(130)


if __name__ == "__main__":
    sys.exit(main())
