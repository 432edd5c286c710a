"""Entry point of ``python -m bench.locomo``."""

from bench.locomo.cli import main

main()
