"""Keys: what the module accepts as a key, which Python objects are the same key, and the errors.

A key is what the C++ filters hash (cuckoo/hash.hpp): a 64-bit integer, hashed as its 8
little-endian bytes, or a byte string. From Python, str is its UTF-8 bytes; bytes, bytearray and
memoryview are their bytes; int (and anything with __index__, numpy integer scalars included) in
[-2**63, 2**64) is the 64-bit integer, negatives as their two's complement. bool is refused (a
mask passed where keys were meant), and so is everything else, with TypeError naming the type.

"Same key" is checked exactly, not through a membership answer (which a false positive could
satisfy): two filters built alike, one given key a and the other key b, must serialize to the
same bytes. Insertion is deterministic (fixed seed, fixed kick-walk PRNG), so equal keys give equal
tables; with 32-bit fingerprints, different keys give different tables unless their hashes agree
on bucket and fingerprint, which for the fixed keys below does not happen.
"""

from __future__ import annotations

import array
import enum

import numpy as np
import pytest

import cuckoo

# Every class: they all read keys through the same conversion (python/src/keys.cpp).
ALL_CLASSES = [
    cuckoo.CuckooFilter,
    cuckoo.ConcurrentCuckooFilter,
    cuckoo.BloomFilter,
    cuckoo.BlockedBloomFilter,
    cuckoo.CountingBloomFilter,
    cuckoo.DLeftCountingBloomFilter,
    cuckoo.QuotientFilter,
]
# The classes whose whole state can be compared exactly (to_bytes).
SERIALIZABLE = [cuckoo.CuckooFilter, cuckoo.ConcurrentCuckooFilter]


def table_with(cls, key) -> bytes:
    """The serialized filter after adding just `key` to a fresh, wide-fingerprint filter."""
    f = cls(64, fingerprint_bits=32)
    assert f.add(key) is True
    return f.to_bytes()


def assert_same_key(a, b, cls=cuckoo.CuckooFilter):
    """a and b are one key: identical filters, and each finds and removes the other."""
    assert table_with(cls, a) == table_with(cls, b), f"{a!r} and {b!r} should be the same key"
    f = cls(64, fingerprint_bits=32)
    f.add(a)
    assert b in f
    assert f.count(b) == 1
    assert f.discard(b) is True
    assert len(f) == 0 and a not in f


def assert_different_keys(a, b, cls=cuckoo.CuckooFilter):
    assert table_with(cls, a) != table_with(cls, b), f"{a!r} and {b!r} should be different keys"


# ---- str, bytes-like ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", SERIALIZABLE)
@pytest.mark.parametrize("text", ["é", "alice", "", "日本語", "\U0001f600 emoji", "a\x00b"])
def test_str_is_its_utf8_bytes(cls, text):
    assert_same_key(text, text.encode("utf-8"), cls)


def test_unicode_normalization_is_not_applied():
    # "é" precomposed (U+00E9) and decomposed (e + U+0301) are different UTF-8 byte strings, so
    # different keys: the module hashes bytes, it does not normalize text.
    assert_different_keys("\u00e9", "e\u0301")


@pytest.mark.parametrize("cls", SERIALIZABLE)
def test_bytes_bytearray_memoryview_are_their_bytes(cls):
    data = b"\x00\x01key\xff"
    assert_same_key(data, bytearray(data), cls)
    assert_same_key(data, memoryview(data), cls)
    assert_same_key(data, memoryview(bytearray(data)), cls)


def test_contiguous_memoryview_slice_is_its_bytes():
    data = b"0123456789"
    assert_same_key(memoryview(data)[2:7], data[2:7])


def test_typed_memoryviews_are_their_raw_bytes():
    # A memoryview of any C-contiguous buffer is the buffer's bytes, whatever its item format.
    ints = array.array("I", [1, 2, 3])
    assert_same_key(memoryview(ints), ints.tobytes())
    grid = np.arange(12, dtype=np.uint16).reshape(3, 4)
    assert_same_key(memoryview(grid), grid.tobytes())


@pytest.mark.parametrize("cls", ALL_CLASSES)
def test_non_contiguous_memoryview_is_value_error(cls):
    f = cls(100)
    strided = memoryview(b"abcdefgh")[::2]
    for operation in (f.add, f.__contains__, lambda k: k in f):
        with pytest.raises(ValueError, match="contiguous"):
            operation(strided)
    with pytest.raises(ValueError, match="contiguous"):
        f.add_many([b"ok", strided])
    assert len(f) == 0


def test_different_kinds_of_key_differ():
    # The integer 1 is hashed as 8 bytes; the text "1" is one byte: different keys.
    assert_different_keys(1, "1")
    assert_different_keys(1, b"1")
    assert_different_keys("a", "A")
    assert_different_keys(b"", b"\x00")


# ---- integers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", SERIALIZABLE)
@pytest.mark.parametrize("value", [0, 1, 255, 2**32, 2**63, 2**64 - 1, 0x243F6A8885A308D3])
def test_int_is_its_eight_little_endian_bytes(cls, value):
    # cuckoo/hash.hpp: integers are hashed as their 8 little-endian bytes, so that a filter built
    # on one host answers identically on another; the Python module keeps that.
    assert_same_key(value, value.to_bytes(8, "little"), cls)


@pytest.mark.parametrize("cls", SERIALIZABLE)
@pytest.mark.parametrize("negative", [-1, -2, -(2**31), -(2**63)])
def test_negative_int_is_its_twos_complement(cls, negative):
    assert_same_key(negative, negative + 2**64, cls)


def test_extreme_ints_are_accepted():
    f = cuckoo.CuckooFilter(100)
    for value in (0, 2**64 - 1, -(2**63), 2**63 - 1, 2**63):
        assert f.add(value)
        assert value in f
    assert len(f) == 5


@pytest.mark.parametrize("cls", ALL_CLASSES)
@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 10**30, -(10**30)])
def test_out_of_range_int_is_overflow_error(cls, value):
    f = cls(100)
    with pytest.raises(OverflowError, match=r"\[-2\*\*63, 2\*\*64\)"):
        f.add(value)
    with pytest.raises(OverflowError):
        value in f  # noqa: B015 (the lookup itself must raise)
    with pytest.raises(OverflowError):
        f.add_many([1, 2, value])
    with pytest.raises(OverflowError):
        f.contains_many([value])
    assert len(f) == 0


class Color(enum.IntEnum):
    RED = 7


class Indexable:
    """Not an int, but usable as one (operator.index), like numpy's integer scalars."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


def test_int_subclasses_and_index_types_are_their_value():
    assert_same_key(Color.RED, 7)
    assert_same_key(Indexable(2**64 - 1), -1)
    with pytest.raises(OverflowError):
        cuckoo.CuckooFilter(10).add(Indexable(2**64))


@pytest.mark.parametrize(
    "scalar, value",
    [
        (np.uint64(2**64 - 1), 2**64 - 1),
        (np.uint64(5), 5),
        (np.int64(-(2**63)), 2**63),
        (np.int8(-1), 2**64 - 1),
        (np.int16(-300), 2**64 - 300),
        (np.int32(-5), -5),
        (np.uint8(200), 200),
        (np.uint32(2**32 - 1), 2**32 - 1),
    ],
)
def test_numpy_integer_scalars_are_their_value(scalar, value):
    # np.int8(-1) is -1, whose two's complement is 2**64 - 1: the width of the numpy type does not
    # matter, only the integer it holds.
    assert_same_key(scalar, value)


def test_zero_dimensional_integer_array_is_its_value():
    assert_same_key(np.array(42, dtype=np.uint16), 42)


# ---- refused types -----------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ALL_CLASSES)
@pytest.mark.parametrize("mask", [True, False, np.bool_(True), np.bool_(False)])
def test_bool_is_refused(cls, mask):
    # True == 1 in Python, but a bool passed as a key is almost always a mask passed by mistake.
    f = cls(100)
    with pytest.raises(TypeError, match="bool"):
        f.add(mask)
    with pytest.raises(TypeError, match="bool"):
        mask in f  # noqa: B015
    with pytest.raises(TypeError, match="bool"):
        f.add_many([1, mask])
    if hasattr(f, "discard"):
        with pytest.raises(TypeError, match="bool"):
            f.discard(mask)
    if hasattr(f, "count"):
        with pytest.raises(TypeError, match="bool"):
            f.count(mask)
    assert len(f) == 0


@pytest.mark.parametrize("cls", ALL_CLASSES)
@pytest.mark.parametrize(
    "key, type_name",
    [
        (1.0, "float"),
        (float("nan"), "float"),
        (None, "NoneType"),
        ([1, 2], "list"),
        ({"a": 1}, "dict"),
        ((1,), "tuple"),
        (1j, "complex"),
        (object(), "object"),
        (np.float64(3.0), "float64"),
        ({1}, "set"),
    ],
)
def test_other_types_are_type_error_naming_the_type(cls, key, type_name):
    f = cls(100)
    with pytest.raises(TypeError, match=type_name):
        f.add(key)
    with pytest.raises(TypeError, match=type_name):
        key in f  # noqa: B015
    with pytest.raises(TypeError, match=type_name):
        f.add_many(["fine", key])
    with pytest.raises(TypeError, match=type_name):
        f.contains_many([key])
    assert len(f) == 0


@pytest.mark.parametrize("cls", ALL_CLASSES)
def test_lone_surrogate_is_unicode_encode_error(cls):
    # A str with a lone surrogate has no UTF-8 form. UnicodeEncodeError is a ValueError, so a
    # caller catching ValueError for bad input catches it too.
    f = cls(100)
    with pytest.raises(UnicodeEncodeError) as raised:
        f.add("a\ud800b")
    assert isinstance(raised.value, ValueError)
    with pytest.raises(UnicodeEncodeError):
        "\udfff" in f  # noqa: B015
    with pytest.raises(ValueError):
        f.add_many(["ok", "\ud800"])
    with pytest.raises(ValueError, match="Unicode"):
        f.add_many(np.array(["ok", "\ud800"]))
    assert len(f) == 0


@pytest.mark.parametrize("cls", ALL_CLASSES)
@pytest.mark.parametrize("batch", ["abc", b"abc", bytearray(b"abc")])
def test_one_string_is_not_a_batch(cls, batch):
    # Iterating "abc" would add "a", "b" and "c"; the module refuses instead of guessing.
    f = cls(100)
    with pytest.raises(TypeError, match="single key"):
        f.add_many(batch)
    with pytest.raises(TypeError, match="single key"):
        f.contains_many(batch)
    with pytest.raises(TypeError):
        f.update(batch)
    if hasattr(f, "discard_many"):
        with pytest.raises(TypeError):
            f.discard_many(batch)
    assert len(f) == 0


@pytest.mark.parametrize("cls", ALL_CLASSES)
@pytest.mark.parametrize("not_iterable", [5, None, 1.5])
def test_a_batch_must_be_iterable(cls, not_iterable):
    f = cls(100)
    with pytest.raises(TypeError, match="iterable"):
        f.add_many(not_iterable)
    with pytest.raises(TypeError, match="iterable"):
        f.contains_many(not_iterable)
