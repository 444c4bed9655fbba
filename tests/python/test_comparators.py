"""The paper's comparators from Python: BloomFilter, BlockedBloomFilter, CountingBloomFilter,
DLeftCountingBloomFilter and QuotientFilter.

They share the cuckoo filters' set protocol (add, in, len, bool, add_many, contains_many, update,
capacity, memory_bytes, seed), answer with no false negative, and offer discard / remove /
discard_many only where the design can delete (the counting Bloom filter, the d-left counting Bloom
filter and the quotient filter; a plain or blocked Bloom filter cannot). They have no file format,
so pickling and copying are refused with TypeError rather than done wrongly.
"""

from __future__ import annotations

import copy
import pickle
import re

import numpy as np
import pytest

import cuckoo
from support import stub_members

BLOOMS = [cuckoo.BloomFilter, cuckoo.BlockedBloomFilter]
DELETING = [cuckoo.CountingBloomFilter, cuckoo.DLeftCountingBloomFilter, cuckoo.QuotientFilter]
COMPARATORS = BLOOMS + DELETING
# Designs with a fixed number of cells, which refuse an insert when there is no room.
REFUSING = [cuckoo.DLeftCountingBloomFilter, cuckoo.QuotientFilter]



@pytest.fixture(params=COMPARATORS, ids=lambda c: c.__name__)
def cls(request):
    return request.param


@pytest.fixture(params=DELETING, ids=lambda c: c.__name__)
def deleting(request):
    return request.param


def test_set_protocol(cls):
    f = cls(1000, 0.01)
    assert len(f) == 0 and not f
    assert "alice" not in f  # an empty filter holds nothing
    assert f.add("alice") is True
    assert "alice" in f and len(f) == 1 and f
    assert f.add(b"bob") and f.add(12) and f.add(-1)
    assert all(k in f for k in ("alice", b"bob", 12, 2**64 - 1))
    assert f.add_many(np.arange(100, 200, dtype=np.uint64)) == 100
    assert f.add_many(np.array(["x", "y", "z"])) == 3
    answers = f.contains_many(np.arange(100, 200, dtype=np.uint64).reshape(10, 10))
    assert answers.shape == (10, 10) and answers.dtype == np.bool_ and answers.all()
    f.update(np.arange(1000, 1010, dtype=np.int64), np.array([b"u", b"v"]))
    assert len(f) == 4 + 100 + 3 + 10 + 2
    assert f.contains_many(np.array([b"u", b"v", b"x"])).all()


def test_properties_and_repr(cls):
    f = cls(5000, 0.01, seed=77)
    f.add_many(np.arange(123, dtype=np.uint64))
    assert f.seed == 77
    assert cls(10).seed == cuckoo.DEFAULT_SEED
    assert f.capacity >= 5000  # the d-left filter rounds up to whole buckets
    assert f.memory_bytes > 0
    match = re.fullmatch(r"(\w+)\(size=(\d+), capacity=(\d+), memory_bytes=(\d+)\)", repr(f))
    assert match, repr(f)
    assert match.group(1) == cls.__name__
    assert (int(match.group(2)), int(match.group(3)), int(match.group(4))) == (
        123, f.capacity, f.memory_bytes)
    with pytest.raises(AttributeError):
        f.capacity = 1  # read-only


def test_memory_grows_as_the_error_rate_falls(cls):
    # Every design spends more bits per item for a smaller false-positive rate.
    loose, tight = cls(10_000, 0.05), cls(10_000, 0.001)
    assert tight.memory_bytes > loose.memory_bytes


@pytest.mark.parametrize("n", [10_000, 100_000])
def test_no_false_negatives(cls, n):
    f = cls(n, 0.01)
    rng = np.random.default_rng(n)
    integers = rng.integers(0, 2**64, size=n - n // 10, dtype=np.uint64, endpoint=False)
    words = np.array([f"key-{i}" for i in range(n // 10)])
    assert f.add_many(integers) == len(integers)
    assert f.add_many(words) == len(words)
    assert len(f) == n
    assert f.contains_many(integers).all()
    assert f.contains_many(words).all()
    # The single-key path answers alike.
    assert all(int(k) in f for k in integers[:500])
    assert all(str(w) in f for w in words[:500])


def test_seed_changes_the_answers_for_absent_keys(cls):
    # Different seeds hash differently: the false positives among absent keys differ, while the
    # added keys are found under both.
    a, b = cls(2000, 0.05, seed=1), cls(2000, 0.05, seed=2)
    keys = np.arange(2000, dtype=np.uint64)
    a.add_many(keys)
    b.add_many(keys)
    assert a.contains_many(keys).all() and b.contains_many(keys).all()
    absent = np.arange(10**6, 10**6 + 20_000, dtype=np.uint64)
    assert (a.contains_many(absent) != b.contains_many(absent)).any()


# ---- deletion ----------------------------------------------------------------------------------


def test_only_the_deleting_designs_can_discard():
    for cls in BLOOMS:
        for name in ("discard", "remove", "discard_many"):
            assert not hasattr(cls, name), f"{cls.__name__}.{name}"
            assert not hasattr(cls(10), name)
    for cls in DELETING:
        for name in ("discard", "remove", "discard_many"):
            assert callable(getattr(cls(10), name)), f"{cls.__name__}.{name}"


def test_discard_remove_and_discard_many(deleting):
    n = 20_000
    f = deleting(n, 0.01)
    keys = np.arange(n, dtype=np.uint64) * 2654435761
    assert f.add_many(keys) == n
    assert f.discard_many(keys[: n // 2]) == n // 2
    assert len(f) == n - n // 2
    # Deleting some keys never hides the others (each was added once and removed at most once).
    assert f.contains_many(keys[n // 2:]).all()
    assert f.discard(int(keys[-1])) is True
    f.remove(int(keys[-2]))
    assert len(f) == n - n // 2 - 2
    assert f.contains_many(keys[n // 2: -2]).all()


def test_remove_of_a_missing_key_is_key_error(deleting):
    f = deleting(100)
    with pytest.raises(KeyError) as raised:
        f.remove("never added")
    assert raised.value.args[0] == repr("never added")
    assert f.discard("never added") is False  # an empty filter matches nothing
    assert f.discard_many(np.arange(50, dtype=np.uint64)) == 0
    assert len(f) == 0


def test_duplicates_are_held_and_removed_one_at_a_time(deleting):
    f = deleting(1000)
    for _ in range(2):
        assert f.add("twice")
    assert len(f) == 2
    assert f.discard("twice") is True
    assert "twice" in f and len(f) == 1  # one copy left
    assert f.discard("twice") is True
    assert len(f) == 0


def test_full_designs_refuse_without_losing_keys():
    for cls in REFUSING:
        f = cls(500, 0.01)
        keys = np.arange(100 * f.capacity, dtype=np.uint64)
        n = f.add_many(keys)
        assert f.capacity <= n < len(keys), cls.__name__
        assert len(f) == n
        assert f.contains_many(keys[:n]).all()
        with pytest.raises(cuckoo.FilterFullError):
            f.add_many(keys[n:], strict=True)
        assert f.contains_many(keys[:n]).all()
        refused = [k for k in range(10**9, 10**9 + 200) if not f.add(k)]
        assert refused, cls.__name__
        assert f.contains_many(keys[:n]).all()


def test_blooms_never_refuse():
    # A Bloom filter has no cells to run out of: past capacity it only answers less precisely.
    for cls in BLOOMS + [cuckoo.CountingBloomFilter]:
        f = cls(100, 0.01)
        keys = np.arange(10_000, dtype=np.uint64)
        assert f.add_many(keys, strict=True) == 10_000
        assert len(f) == 10_000 and f.contains_many(keys).all()


# ---- no pickling, no copies --------------------------------------------------------------------


def test_copying_is_refused(cls):
    f = cls(100)
    f.add("k")
    with pytest.raises(TypeError, match="pickle"):
        copy.copy(f)
    with pytest.raises(TypeError, match="pickle"):
        copy.deepcopy(f)
    assert not hasattr(f, "save") and not hasattr(f, "to_bytes")


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickling_is_refused_with_every_protocol(protocol, forked):
    # In a child process: protocols 0 and 1 go through copyreg._reduce_ex, which has aborted the
    # interpreter inside pybind11 ("instance allocation failed") instead of raising.
    def body():
        for cls in COMPARATORS:
            f = cls(100)
            f.add("k")
            with pytest.raises(TypeError, match="pickle"):
                pickle.dumps(f, protocol=protocol)

    forked(body)


# ---- construction ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments, error",
    [
        (dict(capacity=0), ValueError),
        (dict(capacity=-10), ValueError),
        (dict(capacity=10, error_rate=0.0), ValueError),
        (dict(capacity=10, error_rate=1.0), ValueError),
        (dict(capacity=10, error_rate=1.5), ValueError),
        (dict(capacity=10, error_rate=float("nan")), ValueError),
        (dict(capacity="10"), TypeError),
    ],
)
def test_bad_arguments_are_refused(cls, arguments, error):
    with pytest.raises(error):
        cls(**arguments)


def test_bad_seeds_are_refused_as_for_cuckoo_filters():
    # CuckooFilter refuses these with ValueError (out of range) or TypeError (not an int, bool
    # included); the comparators take the same seed argument and must refuse it the same way,
    # not with pybind11's generic RuntimeError "Unable to cast Python instance", nor accept True.
    seeds = [(-1, ValueError), (2**64, ValueError), (1.5, TypeError), (True, TypeError),
             ("1", TypeError)]
    wrong = {}
    for seed, error in seeds:
        with pytest.raises(error):
            cuckoo.CuckooFilter(10, seed=seed)
        for cls in COMPARATORS:
            try:
                cls(10, seed=seed)
            except error:
                continue
            except Exception as other:  # noqa: BLE001 (the wrong exception is the finding)
                wrong[(cls.__name__, repr(seed))] = type(other).__name__
            else:
                wrong[(cls.__name__, repr(seed))] = "accepted"
    assert wrong == {}


def test_every_member_the_stub_declares_exists():
    # _cuckoo.pyi declares the comparators as _Filter subclasses: every method _Filter and the
    # class declare must exist at run time.
    missing = {
        cls.__name__: sorted(n for n in stub_members(cls.__name__) if not hasattr(cls, n))
        for cls in COMPARATORS
    }
    assert missing == {cls.__name__: [] for cls in COMPARATORS}
