"""The ``hippograph`` command (and ``python -m hippograph``): Ctrl-C at any moment stops it quietly.

Nothing heavy is imported here: a Ctrl-C that lands while the server's modules still load (a
few seconds on a busy machine) is caught like one that lands later, instead of ending in a
traceback of whichever import it interrupted.
"""

import os
import sys


def main() -> int:
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
