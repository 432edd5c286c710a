"""Fixtures of a fast test module that its process-level half needs too (``tests/conftest.py``'s
are seen here already): imported here, not in the test modules, so that a test's argument of the
same name does not shadow an import."""

from tests.test_explorer import seeded  # noqa: F401
from tests.test_trust_over_time import opened  # noqa: F401
