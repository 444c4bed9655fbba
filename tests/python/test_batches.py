"""Batches: add_many / contains_many / discard_many / count_many answer exactly as the single-key
calls do, key by key and in order, whatever form the batch takes.

The reference is always the single-key API on a twin filter built alike: a batch call must leave
the same table (compared byte for byte through to_bytes, which is exact because inserts are
deterministic) and give the same answers as the loop of single calls over the same keys as Python
objects. numpy integer arrays of any width are read as integers (negatives sign-extended: -1 of
int8 is the key 2**64 - 1, the same as the int -1); S and U arrays as bytes and UTF-8 text, numpy's
trailing NULs dropped as numpy itself drops them; object arrays, lists, tuples and generators key
by key.

The tests that pass Python iterables (lists, tuples, generators, object arrays) run their body in
a child process (the `forked` fixture): reading such a batch has crashed the interpreter, and a
crash must fail one test, not end the run.
"""

from __future__ import annotations

import numpy as np
import pytest

import cuckoo

CLASSES = [cuckoo.CuckooFilter, cuckoo.ConcurrentCuckooFilter]


@pytest.fixture(params=CLASSES, ids=lambda c: c.__name__)
def cls(request):
    return request.param


def python_keys(array: np.ndarray) -> list:
    """The keys of a numpy array as Python objects, as the single-key calls take them."""
    return array.ravel().tolist()


def twins(cls, capacity=10_000, **kw):
    return cls(capacity, **kw), cls(capacity, **kw)


def assert_batch_equals_singles(cls, batch, singles, held=()):
    """Every batch method on `batch` against the single-key calls on `singles` (the same keys as
    Python objects, in order), on twin filters that already hold `held`."""
    batch_filter, single_filter = twins(cls)
    for k in held:
        assert batch_filter.add(k) and single_filter.add(k)
    shape = batch.shape if isinstance(batch, np.ndarray) else (len(singles),)

    answers = batch_filter.contains_many(batch)
    assert answers.dtype == np.bool_ and answers.shape == shape
    assert answers.ravel().tolist() == [k in single_filter for k in singles]

    counts = batch_filter.count_many(batch)
    assert counts.dtype == np.int64 and counts.shape == shape
    assert counts.ravel().tolist() == [single_filter.count(k) for k in singles]

    assert batch_filter.add_many(batch) == len(singles)
    assert all(single_filter.add(k) for k in singles)
    assert batch_filter.to_bytes() == single_filter.to_bytes()
    assert len(batch_filter) == len(held) + len(singles)

    removed = batch_filter.discard_many(batch)
    assert removed == sum(single_filter.discard(k) for k in singles) == len(singles)
    assert batch_filter.to_bytes() == single_filter.to_bytes()


# ---- numpy integer arrays ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype", [np.uint64, np.int64, np.uint32, np.int32, np.uint16, np.int16, np.uint8, np.int8]
)
def test_integer_arrays_of_every_width(cls, dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(2014)
    array = rng.integers(info.min, info.max, size=200, dtype=dtype, endpoint=True)
    array = np.concatenate([array, np.array([info.min, info.max, 0, 1], dtype=dtype)])
    held = python_keys(array[::3])
    assert_batch_equals_singles(cls, array, python_keys(array), held)


def test_negative_narrow_integers_are_the_same_int_keys(cls):
    # -1 as int8, int32 or int64 is the int -1, whose two's complement is 2**64 - 1.
    for dtype in (np.int8, np.int32, np.int64):
        batch, single = twins(cls)
        array = np.array([-1, -5, -(2**7)], dtype=dtype)
        assert batch.add_many(array) == 3
        for k in (2**64 - 1, -5, -(2**7)):
            single.add(k)
        assert batch.to_bytes() == single.to_bytes()
        assert batch.contains_many(np.array([2**64 - 1], dtype=np.uint64)).all()


def test_int64_and_its_uint64_view_are_the_same_keys(cls):
    signed = np.array([-(2**63), -2, -1, 0, 1, 2**63 - 1], dtype=np.int64)
    f = cls(1000)
    f.add_many(signed)
    unsigned = signed.view(np.uint64)
    assert f.contains_many(unsigned).all()
    assert (f.count_many(unsigned) == f.count_many(signed)).all()
    assert f.discard_many(unsigned) == 6 and len(f) == 0


def test_byte_order_does_not_matter(cls):
    # A big-endian array holds the same integers: the same keys.
    little = np.arange(100, dtype="<u8") * 7919
    big = little.astype(">u8")
    a, b = twins(cls)
    a.add_many(little)
    b.add_many(big)
    assert a.to_bytes() == b.to_bytes()
    assert a.contains_many(big).all()


def test_two_dimensional_arrays_keep_their_shape(cls):
    grid = np.arange(60, dtype=np.uint64).reshape(6, 10)
    assert_batch_equals_singles(cls, grid, python_keys(grid), held=python_keys(grid[::2]))
    f = cls(1000)
    f.add_many(grid[:3])
    answers = f.contains_many(grid)
    assert answers.shape == (6, 10)
    assert answers[:3].all()
    counts = f.count_many(grid.reshape(3, 4, 5))
    assert counts.shape == (3, 4, 5)
    assert (counts.ravel()[:30] >= 1).all()


def test_non_contiguous_arrays_are_their_elements(cls):
    base = np.arange(1000, dtype=np.uint64) * 3
    for view in (base[::2], base[::-1], base.reshape(20, 50).T, base.reshape(20, 50)[:, 5:9]):
        assert not view.flags.c_contiguous
        assert_batch_equals_singles(cls, view, python_keys(view), held=python_keys(view[::3]))
    fortran = np.asfortranarray(base.reshape(25, 40))
    f = cls(2000)
    f.add_many(base[:500])
    assert (f.contains_many(fortran) == f.contains_many(np.ascontiguousarray(fortran))).all()


def test_zero_dimensional_array_is_a_one_key_batch(cls):
    f = cls(100)
    assert f.add_many(np.array(7, dtype=np.uint64)) == 1
    assert 7 in f
    answer = f.contains_many(np.array(7, dtype=np.uint64))
    assert answer.shape == () and bool(answer) is True


# ---- numpy string arrays -----------------------------------------------------------------------


def test_bytes_arrays_drop_trailing_nuls_as_numpy_does(cls):
    array = np.array([b"ab", b"c", b"", b"a\x00b", b"xyz\x00\x00"], dtype="S5")
    # numpy's own items: the S5 padding and any trailing NUL are gone, inner NULs stay.
    assert array.tolist() == [b"ab", b"c", b"", b"a\x00b", b"xyz"]
    assert_batch_equals_singles(cls, array, array.tolist(), held=[b"ab"])
    a, b = twins(cls)
    a.add_many(np.array([b"ab"], dtype="S5"))
    b.add(b"ab")
    assert a.to_bytes() == b.to_bytes()  # b"ab", not the padded b"ab\0\0\0"


def test_unicode_arrays_are_utf8(cls):
    array = np.array(["é", "日本語", "", "a\x00b", "\U0001f600", "tail\x00"])
    assert array.tolist()[-1] == "tail"  # numpy drops the trailing NUL
    assert_batch_equals_singles(cls, array, array.tolist(), held=["é"])
    f = cls(100)
    f.add_many(np.array(["é"]))
    assert "é".encode() in f  # a U array's text is its UTF-8 bytes


def test_string_arrays_of_two_dimensions_and_strides(cls):
    words = np.array([f"word-{i}" for i in range(40)]).reshape(5, 8)
    assert_batch_equals_singles(cls, words, python_keys(words), held=python_keys(words)[:7])
    strided = words[:, ::3]
    assert_batch_equals_singles(cls, strided, python_keys(strided))
    as_bytes = np.char.encode(words, "utf-8")[::2]
    assert_batch_equals_singles(cls, as_bytes, python_keys(as_bytes))


# ---- Python iterables (in a child process, see the module docstring) ---------------------------


def test_lists_and_tuples(cls, forked):
    def body():
        items = [f"user-{i}" for i in range(100)] + list(range(100)) + [b"raw", bytearray(b"ba")]
        assert_batch_equals_singles(cls, items, items, held=items[::4])
        assert_batch_equals_singles(cls, tuple(items), items, held=items[1::5])

    forked(body)


def test_short_lists(cls, forked):
    # The smallest batches are where an off-by-one shows first.
    def body():
        for items in ([1], ["a"], [1, 2], ["a", "b"], [1, "a"], ["a", 1], [2**64 - 1, -1]):
            assert_batch_equals_singles(cls, items, items)
            f = cls(100)
            assert f.add_many(items) == len(items)
            assert [k in f for k in items] == [True] * len(items)

    forked(body)


def test_generators(cls, forked):
    def body():
        keys = [f"g{i}" for i in range(50)] + list(range(50))
        batch, single = twins(cls)
        assert batch.add_many(k for k in keys) == len(keys)
        for k in keys:
            single.add(k)
        assert batch.to_bytes() == single.to_bytes()
        assert batch.contains_many(iter(keys)).all()
        assert (batch.count_many(k for k in keys) >= 1).all()
        assert batch.discard_many(k for k in keys) == len(keys)
        assert len(batch) == 0

    forked(body)


def test_mixed_lists_keep_the_order_of_answers(cls, forked):
    def body():
        f = cls(1000, fingerprint_bits=32)
        f.add_many(["in-1", 10, b"in-2", 20])
        probe = [10, "in-1", "out-1", 11, b"in-2", 20, "out-2", 12, "in-1"]
        expected = [True, True, False, False, True, True, False, False, True]
        assert f.contains_many(probe).tolist() == expected
        assert f.count_many(probe).tolist() == [int(e) for e in expected]
        # Runs of one kind are handed over in order: each answer is its own key's.
        for size in range(1, len(probe) + 1):
            assert f.contains_many(probe[:size]).tolist() == expected[:size]

    forked(body)


def test_object_arrays(cls, forked):
    def body():
        objects = np.array(["a", 1, b"b", -1, "é", np.uint64(7)], dtype=object)
        singles = ["a", 1, b"b", -1, "é", 7]
        assert_batch_equals_singles(cls, objects, singles)
        grid = np.array([["x", 1], [2, "y"]], dtype=object)
        f = cls(100)
        f.add_many(["x", 2])
        answers = f.contains_many(grid)
        assert answers.shape == (2, 2)
        assert answers[0, 0] and answers[1, 0]

    forked(body)


def test_numpy_array_and_list_agree(cls, forked):
    def body():
        rng = np.random.default_rng(7)
        array = rng.integers(0, 2**63, size=5000, dtype=np.uint64)
        held = cls(10_000)
        held.add_many(array[:2500])
        as_list = array.tolist()
        assert (held.contains_many(array) == held.contains_many(as_list)).all()
        assert (held.count_many(array) == held.count_many(as_list)).all()
        a, b = twins(cls)
        a.add_many(array)
        b.add_many(as_list)
        assert a.to_bytes() == b.to_bytes()

    forked(body)


# ---- empty and refused batches -----------------------------------------------------------------


@pytest.mark.parametrize(
    "empty",
    [np.array([], dtype=np.uint64), np.array([], dtype="S3"), np.array([], dtype="U2"),
     np.array([], dtype=object), np.array([], dtype=np.int8), [], (), iter([])],
    ids=["uint64", "S", "U", "object", "int8", "list", "tuple", "iterator"],
)
def test_empty_batches(cls, empty):
    f = cls(100)
    f.add("x")
    answers = f.contains_many(empty)
    assert answers.dtype == np.bool_ and answers.shape == (0,)
    assert f.add_many(empty) == 0
    assert f.discard_many(empty) == 0
    counts = f.count_many(empty)
    assert counts.dtype == np.int64 and counts.shape == (0,)
    assert len(f) == 1


def test_empty_two_dimensional_batch_keeps_its_shape(cls):
    f = cls(100)
    assert f.contains_many(np.zeros((0, 3), dtype=np.uint64)).shape == (0, 3)
    assert f.count_many(np.zeros((4, 0), dtype=np.int32)).shape == (4, 0)


@pytest.mark.parametrize(
    "array, words",
    [
        (np.array([True, False]), "bool"),
        (np.zeros((2, 2), dtype=bool), "bool"),
        (np.array([1.0, 2.0]), "float64"),
        (np.array([1.0], dtype=np.float32), "float32"),
        (np.array([1 + 2j]), "complex"),
        (np.array(["2024-01-01"], dtype="datetime64[D]"), "datetime64"),
    ],
)
def test_bool_and_float_arrays_are_refused(cls, array, words):
    # A bool array is a mask passed for keys, a float array a numeric mistake: both TypeError,
    # before any key is added.
    f = cls(100)
    for method in (f.add_many, f.contains_many, f.discard_many, f.count_many, f.update):
        with pytest.raises(TypeError, match=words):
            method(array)
    assert len(f) == 0


def test_a_bad_key_in_a_batch_adds_nothing(cls):
    # The whole batch is converted before the work starts, so a refused key anywhere in it
    # leaves the filter untouched (the error names the type).
    f = cls(100)
    for bad in (1.5, None, True):
        with pytest.raises(TypeError):
            f.add_many([1, 2, "three", bad])
        with pytest.raises(TypeError):
            f.contains_many(["one", bad])
    with pytest.raises(OverflowError):
        f.add_many([1, 2, 2**64])
    assert len(f) == 0
    # update takes its iterables in order: the first is added, the bad one adds nothing.
    with pytest.raises(TypeError):
        f.update(np.array([1, 2], dtype=np.uint64), [3, None])
    assert len(f) == 2


# ---- full filters ------------------------------------------------------------------------------


def test_add_many_stops_at_the_first_key_that_does_not_fit(cls):
    batch_filter, single_filter = cls(200), cls(200)
    keys = np.arange(10 * batch_filter.slot_count, dtype=np.uint64)
    n = batch_filter.add_many(keys)
    assert 200 <= n < len(keys)
    # The same keys one at a time, stopping at the first refusal: the same count, the same table.
    singles = 0
    while single_filter.add(int(keys[singles])):
        singles += 1
    assert singles == n
    assert len(batch_filter) == n
    assert batch_filter.contains_many(keys[:n]).all()
    if cls is cuckoo.CuckooFilter:
        assert batch_filter.to_bytes() == single_filter.to_bytes()


def test_add_many_strict_raises_and_keeps_the_keys_before(cls):
    f = cls(200)
    keys = np.arange(10 * f.slot_count, dtype=np.uint64)
    with pytest.raises(cuckoo.FilterFullError) as raised:
        f.add_many(keys, strict=True)
    n = len(f)
    assert f"key {n} of the batch did not fit" in str(raised.value)
    assert f.contains_many(keys[:n]).all()
    # A batch that fits does not raise, even with strict=True.
    g = cls(200)
    assert g.add_many(keys[:100], strict=True) == 100


def test_add_many_on_a_string_batch_that_overflows(cls):
    f = cls(100)
    words = np.array([f"w{i}" for i in range(10 * f.slot_count)])
    n = f.add_many(words)
    assert 100 <= n < len(words)
    assert f.contains_many(words[:n]).all()
    assert len(f) == n


@pytest.mark.parametrize("kind", ["plain", "growable", "blocked", "concurrent", "map"])
def test_count_many_over_many_runs_of_the_batch_count(kind):
    """count_many hands integer keys to the C++ batch count in runs of 4096: every answer, across
    those runs, is its own key's count, and a held key's count is at least its copies."""
    make = {
        "plain": lambda: cuckoo.CuckooFilter(12_000),
        "growable": lambda: cuckoo.CuckooFilter(500, growable=True),
        "blocked": lambda: cuckoo.CuckooFilter(12_000, error_rate=0.003, blocked=True),
        "concurrent": lambda: cuckoo.ConcurrentCuckooFilter(12_000),
        "map": lambda: cuckoo.ApproximateMap(12_000),
    }[kind]
    f = make()
    rng = np.random.default_rng(20261202)
    keys = rng.integers(0, 2**64, size=10_000, dtype=np.uint64)
    held, twice = keys[:5_000], keys[:5_000:3]
    for batch in (held, twice):
        if kind == "map":
            assert f.insert_many(batch, np.arange(len(batch))) == len(batch)
        else:
            assert f.add_many(batch) == len(batch)
    probe = np.concatenate([keys, keys[::-1]])  # 20,000 keys: five runs, the last one short
    counts = f.count_many(probe)
    assert counts.tolist() == [f.count(int(k)) for k in probe]
    copies = {int(k): 1 for k in held}
    for k in twice:
        copies[int(k)] += 1
    assert all(c >= copies.get(int(k), 0) for c, k in zip(counts.tolist(), probe))
