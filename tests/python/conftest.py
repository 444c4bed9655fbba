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
import signal
import traceback

import pytest
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


def _run_forked(function, *args, **kwargs):
    """Runs function(*args, **kwargs) in a forked child of this interpreter. An exception in the
    child fails the test with the child's traceback; a crash (a signal such as SIGSEGV from a bug
    in the extension) fails only this test instead of ending the whole pytest run."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read_end)
        status = 0
        try:
            function(*args, **kwargs)
        except BaseException:  # noqa: BLE001 (everything is reported to the parent)
            os.write(write_end, traceback.format_exc().encode("utf-8", "replace"))
            status = 1
        os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = pipe.read().decode("utf-8", "replace")
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        pytest.fail(f"{getattr(function, '__name__', function)} crashed the interpreter ({name})")
    if os.WEXITSTATUS(status) != 0:
        pytest.fail(report, pytrace=False)


@pytest.fixture
def forked():
    """forked(function, *args): run a test body in a child process, so that a crash of the
    extension module is one failed test, not a dead test run. The body's changes to objects are
    not seen by the parent: do the checks inside it."""
    return _run_forked
