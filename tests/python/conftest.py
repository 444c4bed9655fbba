"""Shared set-up of the Python module's tests (tests/python).

Hypothesis runs under one profile, loaded here for every test file, so that a run is repeatable:
derandomized (the same examples every run, so a failure reproduces and CI never flakes on a new
draw), no example database (nothing written beside the sources), no deadline (a filter that
doubles or a batch of thousands of keys may take longer than Hypothesis' 200 ms default on a busy
2-core machine; timing is not what these tests check). max_examples is kept moderate so that the
whole suite runs in a few minutes; set CUCKOO_HYPOTHESIS_EXAMPLES to explore more.
"""

from __future__ import annotations

import os

import pytest
from support import run_forked
from hypothesis import HealthCheck, settings

settings.register_profile(
    "cuckoo",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=int(os.environ.get("CUCKOO_HYPOTHESIS_EXAMPLES", "40")),
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=False,
)
settings.load_profile("cuckoo")


@pytest.fixture
def rng():
    """A numpy Generator with a fixed seed: random keys that are the same in every run."""
    import numpy as np

    return np.random.default_rng(20140827)


@pytest.fixture
def forked():
    """forked(function, *args): run a test body in a child process, so that a crash of the
    extension module is one failed test, not a dead test run. The body's changes to objects are
    not seen by the parent: do the checks inside it."""
    return run_forked
