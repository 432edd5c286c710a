"""Entry point of ``python -m bench.perf`` (and of its ``--worker N`` processes)."""

import sys

from bench.perf.cli import main

sys.exit(main())
