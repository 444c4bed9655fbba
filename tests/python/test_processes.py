"""Filters between processes: through multiprocessing (pickles, in "spawn" and "forkserver" pools) and
between interpreters whose str hashes are salted differently (PYTHONHASHSEED).

A filter must answer the same in every process: keys are hashed by the library's XXH3 with the
filter's own seed, never by Python's per-process salted hash(). Worker functions live at module
level so that a "spawn" child can import them by name (pytest puts this folder on sys.path,
which the child inherits; PYTHONPATH reaches it through the environment).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import pickle

import numpy as np
import pytest

import cuckoo
from support import run_forked, run_python

RESULT_TIMEOUT = 120  # seconds for any one answer from a worker or a subprocess


# ---- Keys and filters shared by the parent and the workers ------------------------------------


def integer_probes() -> np.ndarray:
    return np.arange(0, 60000, 3, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)


def string_probes() -> list:
    return [f"probe-{i}-ñ" for i in range(0, 20000, 2)]


def build(kind: str):
    """A filter of each kind, filled with integer and string keys (the same in every process)."""
    ints = np.arange(0, 30000, 3, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    strs = np.array([f"probe-{i}-ñ" for i in range(0, 10000, 2)])  # U array
    if kind == "concurrent":
        f = cuckoo.ConcurrentCuckooFilter(20000, fingerprint_bits=8, seed=42)
    elif kind == "growable":
        f = cuckoo.CuckooFilter(100, growable=True, bucket_size=2, seed=42)
    elif kind == "semi_sort":
        f = cuckoo.CuckooFilter(20000, fingerprint_bits=9, semi_sort=True, seed=42)
    else:
        f = cuckoo.CuckooFilter(20000, fingerprint_bits=8, bucket_size=8, seed=42)
    assert f.add_many(ints) == len(ints)
    assert f.add_many(strs) == len(strs)
    for key in (b"bytes-key", "str-key", 2**64 - 1):
        assert f.add(key)
    return f


KINDS = ["fixed", "semi_sort", "growable", "concurrent"]


def answers(f) -> dict:
    """Everything a worker reports about a filter it received."""
    out = {
        "type": type(f).__name__,
        "len": len(f),
        "ints": f.contains_many(integer_probes()),
        "strs": f.contains_many(np.array(string_probes())),
        "scalars": [key in f for key in (b"bytes-key", "str-key", 2**64 - 1, -1, "absent")],
        "counts": f.count_many(integer_probes()),
        "bytes": hashlib.sha256(f.to_bytes()).hexdigest(),
        "pid": os.getpid(),
    }
    return out


def worker_answer(f):
    return answers(f)


def worker_change_and_answer(f):
    # The worker's filter is its own copy: changing it must not reach the parent's.
    f.clear()
    f.add("only in the worker")
    return len(f), "only in the worker" in f


def worker_build(kind):
    return build(kind)


def worker_contains_many(f, lo, hi):
    # One slice of a large lookup, the way a job is split across a pool.
    return f.contains_many(integer_probes()[lo:hi])


def assert_same_answers(got: dict, want: dict):
    assert got["type"] == want["type"]
    assert got["len"] == want["len"]
    np.testing.assert_array_equal(got["ints"], want["ints"])
    np.testing.assert_array_equal(got["strs"], want["strs"])
    np.testing.assert_array_equal(got["counts"], want["counts"])
    assert got["scalars"] == want["scalars"]
    assert got["bytes"] == want["bytes"]


# ---- multiprocessing pools ------------------------------------------------------------------


# "forkserver" rather than "fork": a pool forked straight from the pytest process (which by then
# has run threads, and under ASan holds the preloaded runtime's locks) hung one worker for the
# 120 s timeout in one of two ASan runs; forking from a fresh single-threaded server is the
# hazard-free form of fork (Python 3.14's default on Linux). The fork-based tests of this file
# (run_forked) still cover a forked copy of this interpreter.
@pytest.fixture(scope="module", params=["spawn", "forkserver"])
def pool(request):
    context = multiprocessing.get_context(request.param)
    workers = context.Pool(2)
    yield workers
    workers.terminate()  # bounded: kills the workers rather than waiting for them
    workers.join()


@pytest.mark.parametrize("kind", KINDS)
def test_workers_answer_as_the_parent(pool, kind):
    f = build(kind)
    want = answers(f)
    assert want["ints"].any() and not want["ints"].all()  # members and non-members both probed
    results = [pool.apply_async(worker_answer, (f,)) for _ in range(4)]
    pids = set()
    for result in results:
        got = result.get(timeout=RESULT_TIMEOUT)
        assert_same_answers(got, want)
        pids.add(got["pid"])
    assert os.getpid() not in pids  # really answered elsewhere


def test_mapped_filter_goes_to_workers(pool, tmp_path):
    # A mapped filter pickles as its contents; the worker gets a filter that answers alike.
    f = build("fixed")
    f.save(tmp_path / "f.cf")
    mapped = cuckoo.CuckooFilter.map(tmp_path / "f.cf")
    got = pool.apply_async(worker_answer, (mapped,)).get(timeout=RESULT_TIMEOUT)
    assert_same_answers(got, answers(f))


@pytest.mark.parametrize("kind", KINDS)
def test_worker_changes_stay_in_the_worker(pool, kind):
    f = build(kind)
    before = f.to_bytes()
    size, found = pool.apply_async(worker_change_and_answer, (f,)).get(timeout=RESULT_TIMEOUT)
    assert (size, found) == (1, True)
    assert f.to_bytes() == before and "only in the worker" not in f


@pytest.mark.parametrize("kind", KINDS)
def test_worker_returns_a_filter(pool, kind):
    got = pool.apply_async(worker_build, (kind,)).get(timeout=RESULT_TIMEOUT)
    want = build(kind)
    assert type(got) is type(want)
    assert got.to_bytes() == want.to_bytes()
    assert_same_answers(answers(got), answers(want))
    # The returned filter is a full, writable filter in the parent.
    assert got.add("added in the parent") and "added in the parent" in got


def test_pool_map_over_slices(pool):
    # A lookup split across the pool gives the answer of one lookup in the parent.
    f = build("concurrent")
    n = len(integer_probes())
    bounds = [(i, min(i + 2500, n)) for i in range(0, n, 2500)]
    parts = pool.starmap_async(worker_contains_many,
                               [(f, lo, hi) for lo, hi in bounds]).get(timeout=RESULT_TIMEOUT)
    np.testing.assert_array_equal(np.concatenate(parts), f.contains_many(integer_probes()))


# ---- Different PYTHONHASHSEEDs: the same filter, the same answers ------------------------------

_HASH_SEED_SCRIPT = r'''
import hashlib, sys
import numpy as np
import cuckoo

def report():
    # str keys in a fixed order (a list; iterating a set would order them by the salted hash).
    keys = [f"user-{i}-ü" for i in range(20000)]
    lines = [str(hash("a str whose hash() the seed salts"))]
    for make in (lambda: cuckoo.CuckooFilter(30000, fingerprint_bits=10),
                 lambda: cuckoo.CuckooFilter(100, growable=True),
                 lambda: cuckoo.ConcurrentCuckooFilter(30000, fingerprint_bits=10)):
        f = make()
        f.update(keys[:10000])
        for key in keys[10000:]:
            f.add(key)
        f.add_many(np.array([k.encode() for k in keys[:500]]))
        probes = [f"other-{i}" for i in range(20000)] + keys[::7]
        lines.append(hashlib.sha256(f.to_bytes()).hexdigest())
        lines.append(hashlib.sha256(np.packbits(f.contains_many(probes)).tobytes()).hexdigest())
        lines.append(str(sum(1 for k in probes[:3000] if k in f)))
    return lines

if __name__ == "__main__":
    print("\n".join(report()))
'''


def test_different_hash_seeds_build_the_same_filter():
    namespace = {"__name__": "in_process"}
    exec(_HASH_SEED_SCRIPT, namespace)
    here = run_forked(namespace["report"])  # this interpreter, with its own salt
    outputs = {seed: run_python(_HASH_SEED_SCRIPT, env_changes={"PYTHONHASHSEED": seed})
               .decode().split("\n")[:-1] for seed in ("1", "2", "3141592653")}
    # The seeds really salted str hashes differently in each process...
    salts = {lines[0] for lines in outputs.values()}
    assert len(salts) == len(outputs), "PYTHONHASHSEED did not change hash() between processes"
    # ...and yet every process built byte-identical filters with identical answers.
    for seed, lines in outputs.items():
        assert lines[1:] == here[1:], f"PYTHONHASHSEED={seed} built a different filter"


_UNPICKLE_SCRIPT = r'''
import hashlib, pickle, sys
import numpy as np
f = pickle.loads(sys.stdin.buffer.read())
probes = [f"probe-{i}-ñ" for i in range(0, 20000, 2)]
print(hashlib.sha256(np.packbits(f.contains_many(probes)).tobytes()).hexdigest())
print(sum(key in f for key in probes))
print(len(f))
'''


@pytest.mark.parametrize("kind", KINDS)
def test_pickle_answers_alike_under_another_hash_seed(kind):
    f = build(kind)
    answers_here = f.contains_many(np.array(string_probes()))  # a U array here, a list there
    want = [hashlib.sha256(np.packbits(answers_here).tobytes()).hexdigest(),
            str(int(answers_here.sum())), str(len(f))]
    for seed in ("0", "12345"):
        out = run_python(_UNPICKLE_SCRIPT, env_changes={"PYTHONHASHSEED": seed},
                         input=pickle.dumps(f, protocol=pickle.HIGHEST_PROTOCOL))
        assert out.decode().split("\n")[:-1] == want
