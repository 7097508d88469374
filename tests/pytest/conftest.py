"""Shared pytest setup.

The compile cache (utils/compile_cache.py) never touches the user's cache: the
run points `TILECRAFT_CACHE_DIR` at a fresh temporary directory before any test
is collected; xdist workers and the tools tests start as subprocesses inherit
it, so a model several tests compile is compiled once per run (entries are
written atomically, so workers share it safely). The directory is removed at
the end of the run.
"""

from __future__ import annotations

import os
import shutil
import tempfile

_OWNER = "TILECRAFT_TEST_CACHE_OWNER"  # the pid of the process that made the directory


def pytest_configure(config):
    if os.environ.get(_OWNER):
        return  # an xdist worker: the controller's directory is already set
    os.environ["TILECRAFT_CACHE_DIR"] = tempfile.mkdtemp(prefix="tilecraft-test-cache-")
    os.environ[_OWNER] = str(os.getpid())


def pytest_unconfigure(config):
    if os.environ.get(_OWNER) == str(os.getpid()):
        shutil.rmtree(os.environ["TILECRAFT_CACHE_DIR"], ignore_errors=True)
        del os.environ[_OWNER]
