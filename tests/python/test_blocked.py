"""CuckooFilter(blocked=True): the blocked cuckoo filter (cuckoo::Config::blocked) from Python.

The C++ tests (tests/unit/test_blocked_*.cpp) prove the block and the filter against exact
models at every vector level; these check what the binding adds: the arguments and their errors,
no false negative through adds and discards against a Python multiset, batches equal to single
keys, the false-positive rate against the format's bound, and every way a filter leaves and
re-enters the process (files, maps, bytes, pickles) keeping blocked=True and its answers.

False-positive bound. A lookup compares its 8-bit remainder with the items of one list of its
block (100 lists), and of a second block only for the few keys past the first block's threshold,
so at n items per block the rate is about (n / 100) * 2**-8 per block read; the format is sized so
that a full filter stays under its documented rate, 0.0025 (error_rate_bound). Over N absent keys
the count of false positives is Binomial(N, q) with q <= 0.0025, so it stays under
N * 0.0025 + 6 sigma except with probability below 1e-9 (test_fpr.py's rule).
"""

from __future__ import annotations

import collections
import math
import pickle

import numpy as np
import pytest

import cuckoo

CAPACITY = 200_000
FORMAT_RATE = 0.0025


@pytest.fixture(scope="module")
def full():
    """A blocked filter holding exactly CAPACITY keys 0..CAPACITY-1."""
    f = cuckoo.CuckooFilter(CAPACITY, blocked=True)
    keys = np.arange(CAPACITY, dtype=np.uint64)
    assert f.add_many(keys) == CAPACITY  # the capacity guarantee
    return f


def test_arguments_and_shape():
    f = cuckoo.CuckooFilter(1000, blocked=True)
    assert f.blocked and not f.growable and not f.semi_sorted
    assert f.error_rate_bound == pytest.approx(FORMAT_RATE)
    assert f.capacity >= 1000
    assert "blocked=True" in repr(f)
    assert not cuckoo.CuckooFilter(1000).blocked
    assert cuckoo.CuckooFilter(1000).error_rate_bound <= 0.001  # None stays 0.001 unblocked
    assert cuckoo.CuckooFilter(1000, 0.01, blocked=True).blocked


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"error_rate": 0.001}, "0.0025"),
        ({"semi_sort": True}, "semi"),
        ({"growable": True}, "grow"),
        ({"fingerprint_bits": 12}, "fingerprint"),
    ],
)
def test_refused_combinations_say_why(kwargs, words):
    with pytest.raises(ValueError, match=words):
        cuckoo.CuckooFilter(1000, blocked=True, **kwargs)


def test_no_false_negatives_against_a_multiset():
    """Adds (with duplicates), discards and re-adds, checked after every round."""
    rng = np.random.default_rng(20261125)
    f = cuckoo.CuckooFilter(20_000, blocked=True)
    model = collections.Counter()
    for _ in range(8):
        batch = rng.integers(0, 30_000, size=4_000, dtype=np.uint64)
        added = f.add_many(batch)
        model.update(int(k) for k in batch[:added])
        assert added == len(batch) or len(f) > 0.9 * f.capacity
        gone = rng.choice(np.fromiter(model.keys(), dtype=np.uint64), size=1_000)
        for key in gone:
            if model[int(key)] > 0 and f.discard(int(key)):
                model[int(key)] -= 1
        held = np.fromiter((k for k, n in model.items() if n > 0), dtype=np.uint64)
        assert f.contains_many(held).all()
        assert len(f) == sum(model.values())
        assert all(f.count(int(k)) >= model[int(k)] for k in held[:200])


def test_batches_answer_as_single_keys(full):
    keys = np.arange(CAPACITY - 5_000, CAPACITY + 5_000, dtype=np.uint64)
    batch = full.contains_many(keys)
    assert batch.tolist() == [int(k) in full for k in keys]
    assert batch[:5_000].all()


def test_false_positive_rate_under_the_format_bound(full):
    n = 2_000_000
    absent = np.arange(2**62, 2**62 + n, dtype=np.uint64)
    false_positives = int(full.contains_many(absent).sum())
    allowance = 6.0 * math.sqrt(n * FORMAT_RATE * (1 - FORMAT_RATE))
    assert false_positives <= n * FORMAT_RATE + allowance
    # The model the filter reports agrees with what it does (same 6-sigma allowance).
    expected = full.expected_error_rate
    assert abs(false_positives - n * expected) <= 6.0 * math.sqrt(n * expected) + 1


def test_files_bytes_maps_and_pickles_keep_it(full, tmp_path):
    keys = np.arange(CAPACITY + 100_000, dtype=np.uint64)
    answers = full.contains_many(keys)
    path = tmp_path / "blocked.cf"
    full.save(path)
    copies = [
        cuckoo.CuckooFilter.load(path),
        cuckoo.CuckooFilter.map(path),
        cuckoo.CuckooFilter.from_bytes(full.to_bytes()),
        pickle.loads(pickle.dumps(full)),
        full.copy(),
    ]
    for copy in copies:
        assert copy.blocked
        assert len(copy) == len(full)
        assert (copy.contains_many(keys) == answers).all()
    assert bytes(full.table) == bytes(copies[0].table)


def test_a_full_filter_refuses_and_keeps_what_it_holds():
    f = cuckoo.CuckooFilter(2_000, blocked=True)
    keys = np.arange(4 * f.capacity, dtype=np.uint64)
    added = f.add_many(keys)
    assert f.capacity <= added < len(keys)
    before = f.to_bytes()
    with pytest.raises(cuckoo.FilterFullError):
        f.add(int(keys[added]), strict=True)
    assert f.to_bytes() == before  # a failed insert changes nothing
    assert f.contains_many(keys[:added]).all()
