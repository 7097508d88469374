"""Shared pytest setup.

The compile cache (utils/compile_cache.py) never touches the user's cache: the
run points `TILECRAFT_CACHE_DIR` at a fresh temporary directory before any test
is collected; xdist workers and the tools tests start as subprocesses inherit
it, so a model several tests compile is compiled once per run (entries are
written atomically, so workers share it safely). The directory is removed at
the end of the run.

Random test data does not depend on which tests ran before: a test module's
`RNG` generator is reseeded from the test's id for each test, so xdist's
scheduling cannot turn a tolerance that is too tight into a failure one run in
a hundred; such a test fails every run or never.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zlib

import numpy as np
import pytest

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


@pytest.fixture(autouse=True)
def _seeded_rng(request):
    module = request.module
    if not isinstance(getattr(module, "RNG", None), np.random.Generator):
        yield
        return
    saved = module.RNG
    module.RNG = np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
    try:
        yield
    finally:
        module.RNG = saved
