"""Django for the bench scripts that time pages and services in-process.

Importing this module puts the project on the path and sets Django up
(development settings unless the environment names others). ``test_database()``
gives a fresh test database for the length of a ``with`` block, as the test
suite does, so a bench run never touches the data of a running app.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.test.runner import DiscoverRunner  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402


@contextmanager
def test_database() -> Iterator[None]:
    """A test database for the block; removed after it, whatever happens."""
    setup_test_environment()
    runner = DiscoverRunner(verbosity=0)
    databases = runner.setup_databases()
    try:
        yield
    finally:
        runner.teardown_databases(databases)
