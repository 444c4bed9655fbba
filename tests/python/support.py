"""Helpers shared by the Python tests (one implementation each).

run_forked / crash_isolated: running a piece of a test in a forked child of this interpreter
(conftest's `forked` fixture and the tests that isolate whole test functions use them). A crash of the extension (a signal such as SIGSEGV from a memory bug) then fails one test instead
of ending the whole pytest run, and an exception in the child fails it with the child's
traceback. The child is a copy of this interpreter, with the same str-hash salt; its changes to
objects are not seen by the parent, so checks belong inside the function, or in its result, which
comes back pickled.
"""

from __future__ import annotations

import ast
import functools
import os
import pathlib
import pickle
import signal
import subprocess
import sys
import traceback

import pytest

import cuckoo


def run_forked(function, *args, **kwargs):
    """function(*args, **kwargs) computed in a forked child; returns its (picklable) result."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read_end)
        status = 0
        try:
            payload = pickle.dumps(("ok", function(*args, **kwargs)))
        except BaseException:  # noqa: BLE001 (everything is reported to the parent)
            payload, status = pickle.dumps(("error", traceback.format_exc())), 1
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
        os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        payload = pipe.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        pytest.fail(f"{getattr(function, '__name__', function)} crashed the interpreter ({name})",
                    pytrace=False)
    kind, value = pickle.loads(payload)
    if kind != "ok":
        pytest.fail(value, pytrace=False)
    return value


def crash_isolated(test):
    """Decorator: the whole test function runs in a forked child (see run_forked)."""

    @functools.wraps(test)
    def run_in_child(*args, **kwargs):
        run_forked(test, *args, **kwargs)

    return run_in_child


# The type stubs users' editors read: the source copy when the tests run from the source tree,
# else the one installed beside the module.
STUB = pathlib.Path(__file__).resolve().parents[2] / "python" / "cuckoo" / "_cuckoo.pyi"
if not STUB.exists():
    STUB = pathlib.Path(cuckoo.__file__).with_name("_cuckoo.pyi")


SUBPROCESS_TIMEOUT = 120  # seconds; every child run here finishes well inside one


def run_python(code: str, *args, env_changes: dict | None = None, input: bytes | None = None,
               timeout: float = SUBPROCESS_TIMEOUT) -> bytes:
    """Runs `code` in a fresh interpreter (this one's environment, PYTHONPATH included, with
    `env_changes`); returns its standard output. A child that exits non-zero fails the test with
    its standard error; one that outlives `timeout` (a deadlock, say) fails it with that reason
    instead of hanging the run."""
    env = dict(os.environ)
    env.update(env_changes or {})
    try:
        result = subprocess.run([sys.executable, "-c", code, *args], env=env, input=input,
                                capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child did not finish in {timeout} s: a deadlock?", pytrace=False)
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
    return result.stdout


def stub_members(class_name: str) -> set:
    """Every method and property the stub declares for class_name, its stub base classes' too."""
    tree = ast.parse(STUB.read_text())
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}

    def members(node):
        names = set()
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in classes:
                names |= members(classes[base.id])
        names |= {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        return names

    return members(classes[class_name])
