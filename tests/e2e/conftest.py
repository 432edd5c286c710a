"""Fixtures of a fast test module that its process-level half needs too (``tests/conftest.py``'s
are seen here already): imported here, not in the test modules, so that a test's argument of the
same name does not shadow an import."""

import signal

import pytest

from tests.test_explorer import seeded  # noqa: F401
from tests.test_trust_over_time import opened  # noqa: F401


@pytest.fixture(autouse=True, scope="session")
def _ctrl_c_reaches_servers() -> None:
    """Servers a test starts stop on Ctrl-C whatever started the test run.

    A shell without job control starts a background job with SIGINT ignored, and an ignored
    signal stays ignored in every child: run that way (``cmd &`` in a script), every server
    ignored the Ctrl-C tests' SIGINT and they timed out. A caught signal is reset to its default
    in a child, so catching it here is enough.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
