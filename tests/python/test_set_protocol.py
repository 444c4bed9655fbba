"""The set protocol of CuckooFilter and ConcurrentCuckooFilter, and their construction.

add / in / discard / remove / count / len / bool / clear / copy / update / repr and every
property, on each table the module can build: plain buckets of 2, 4 and 8 entries, semi-sorted
buckets, a growable filter, and the concurrent filter. What is asserted is what the docstrings and
the C++ headers promise: no false negative ever; a full fixed filter refuses with False (or
FilterFullError when strict) and is left as it was; a growable one doubles instead; bad
construction arguments are refused with ValueError (or TypeError for a wrong type) naming the
problem.
"""

from __future__ import annotations

import copy
import math
import pickle
import re

import numpy as np
import pytest

import cuckoo
from support import stub_members


KINDS = {
    "b4": lambda capacity, **kw: cuckoo.CuckooFilter(capacity, **kw),
    "b2": lambda capacity, **kw: cuckoo.CuckooFilter(capacity, bucket_size=2, **kw),
    "b8": lambda capacity, **kw: cuckoo.CuckooFilter(capacity, bucket_size=8, **kw),
    "semi_sort": lambda capacity, **kw: cuckoo.CuckooFilter(capacity, semi_sort=True, **kw),
    "growable": lambda capacity, **kw: cuckoo.CuckooFilter(capacity, growable=True, **kw),
    "concurrent": lambda capacity, **kw: cuckoo.ConcurrentCuckooFilter(capacity, **kw),
}
FIXED_KINDS = [k for k in KINDS if k != "growable"]


@pytest.fixture(params=list(KINDS))
def kind(request):
    return request.param


@pytest.fixture(params=FIXED_KINDS)
def fixed_kind(request):
    return request.param


def keys(n: int, start: int = 0) -> np.ndarray:
    return np.arange(start, start + n, dtype=np.uint64)


def fill_until_refused(f, start: int = 0) -> int:
    """Adds consecutive integer keys from `start` until one does not fit; returns how many went
    in. The filter then holds keys [start, start + n)."""
    n = f.add_many(keys(64 * f.slot_count + 64, start))
    assert n < 64 * f.slot_count + 64, "a fixed filter must refuse long before 64 keys per slot"
    return n


# ---- single keys -------------------------------------------------------------------------------


def test_add_in_len_bool(kind):
    f = KINDS[kind](100)
    assert len(f) == 0 and not f and bool(f) is False
    assert "alice" not in f  # an empty table matches nothing
    assert f.add("alice") is True
    assert "alice" in f
    assert len(f) == 1 and f and bool(f) is True
    assert f.add(b"bob") is True and f.add(7) is True
    assert len(f) == 3
    assert all(k in f for k in ("alice", b"bob", 7))


def test_duplicates_are_counted_and_removed_one_at_a_time(kind):
    f = KINDS[kind](100, fingerprint_bits=16 if kind != "growable" else None)
    for expected in range(1, 4):
        assert f.add("dup") is True
        assert len(f) == expected
        assert f.count("dup") >= expected  # an upper bound on the copies held...
    assert f.count("dup") == 3  # ...and exact here: nothing else is in the filter
    for left in (2, 1, 0):
        assert f.discard("dup") is True
        assert len(f) == left
        assert f.count("dup") == left
    assert "dup" not in f
    assert f.discard("dup") is False
    assert len(f) == 0


def test_remove_and_key_error(kind):
    f = KINDS[kind](100)
    f.add("here")
    f.remove("here")
    assert "here" not in f and len(f) == 0
    for missing in ("here", b"\x00", 12345):
        with pytest.raises(KeyError) as raised:
            f.remove(missing)
        assert raised.value.args[0] == repr(missing)  # names the key, as set.remove does
    assert len(f) == 0


def test_discard_of_absent_key_changes_nothing(kind):
    # Discarding a key never added may remove a colliding fingerprint (documented), so the keys
    # here are chosen where that cannot happen by chance: 24-bit fingerprints, 50 absent keys
    # against 200 held, a collision probability of about 50 * 2b * 2**-24 < 1e-4 (and the seed
    # is fixed, so the outcome is the same every run).
    f = KINDS[kind](1000, fingerprint_bits=24)
    f.add_many(keys(200))
    assert [f.discard(10**9 + i) for i in range(50)] == [False] * 50
    assert len(f) == 200
    assert f.contains_many(keys(200)).all()


def test_count_is_an_upper_bound(kind):
    f = KINDS[kind](1000)
    stream = [i % 37 for i in range(111)]  # 37 keys, 3 copies each (at most 2b fit)
    for k in stream:
        assert f.add(k)
    counts = f.count_many(np.arange(37))
    expected = np.bincount(stream, minlength=37)
    assert (counts >= expected).all()
    assert [f.count(k) for k in range(37)] == counts.tolist()


def test_clear(kind):
    f = KINDS[kind](500, seed=99)
    f.add_many(keys(400))
    shape = (f.capacity, f.bucket_count, f.slot_count, f.memory_bytes, f.seed)
    f.clear()
    assert len(f) == 0 and not f
    assert f.load_factor == 0.0
    assert not f.contains_many(keys(400)).any()  # an empty table matches nothing
    assert (f.capacity, f.bucket_count, f.slot_count, f.memory_bytes, f.seed) == shape
    assert f.add_many(keys(400)) == 400  # usable again


# ---- copies ------------------------------------------------------------------------------------


COPIES = {
    "copy": lambda f: f.copy(),
    "copy.copy": copy.copy,
    "copy.deepcopy": copy.deepcopy,
    "__copy__": lambda f: f.__copy__(),
}


# __copy__ / __deepcopy__ are CuckooFilter's; copy.copy and copy.deepcopy of the concurrent filter
# go through its pickle support instead.
@pytest.mark.parametrize(
    "kind, how",
    [(k, h) for k in KINDS for h in COPIES if not (k == "concurrent" and h == "__copy__")],
)
def test_copies_are_equal_and_independent(kind, how):
    f = KINDS[kind](300)
    f.add_many(keys(200))
    g = COPIES[how](f)
    assert type(g) is type(f) and g is not f
    assert g.to_bytes() == f.to_bytes()
    assert len(g) == 200 and g.contains_many(keys(200)).all()
    g.add_many(keys(50, 10**6))
    f.discard_many(keys(100))
    assert len(f) == 100 and len(g) == 250
    assert g.contains_many(keys(200)).all()  # f's discards did not reach g
    assert g.contains_many(keys(50, 10**6)).all()
    f.clear()
    assert len(g) == 250


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trip_with_every_protocol(protocol, forked):
    # pickle.dumps(f) picks the highest protocol, but multiprocessing, shelve or an old caller may
    # ask for any. In a child process: protocols 0 and 1 go through copyreg._reduce_ex, which has
    # aborted the interpreter inside pybind11 instead of pickling or raising.
    def body():
        for make in KINDS.values():
            f = make(300)
            f.add_many(keys(200))
            g = pickle.loads(pickle.dumps(f, protocol=protocol))
            assert type(g) is type(f) and g.to_bytes() == f.to_bytes()
            assert g.contains_many(keys(200)).all()

    forked(body)


def test_deepcopy_memo_is_honoured():
    f = cuckoo.CuckooFilter(100)
    f.add(1)
    pair = copy.deepcopy([f, f])
    assert pair[0] is pair[1]  # one object copied once, as deepcopy promises
    assert pair[0] is not f and 1 in pair[0]


# ---- update, strict, full ----------------------------------------------------------------------


def test_update_adds_every_iterable(kind, forked):
    # Run in a child process: reading a Python list as a batch has crashed the interpreter.
    def body():
        f = KINDS[kind](1000)
        f.update(["a", "b"], (b"c",), (i for i in range(10)), keys(5, 100), [])
        f.update()  # nothing to add
        assert len(f) == 2 + 1 + 10 + 5
        assert [k in f for k in ["a", "b", b"c", *range(10), *range(100, 105)]] == [True] * 18

    forked(body)


def test_update_raises_when_full_and_keeps_earlier_keys(fixed_kind):
    f = KINDS[fixed_kind](60)
    first = keys(10)
    stream = keys(100 * f.slot_count, 1000)
    with pytest.raises(cuckoo.FilterFullError) as raised:
        f.update(first, stream)
    assert isinstance(raised.value, RuntimeError)
    assert "full" in str(raised.value)
    held = len(f) - len(first)
    assert 0 < held < len(stream)
    assert f.contains_many(first).all()
    assert f.contains_many(stream[:held]).all()  # the keys before the refused one are in


def test_strict_add(fixed_kind):
    f = KINDS[fixed_kind](60)
    assert f.add("first", strict=True) is True
    n = fill_until_refused(f)
    full = len(f)
    refused = 0
    for i in range(200):
        before = f.contains_many(keys(n))
        try:
            added = f.add(10**7 + i, strict=True)
        except cuckoo.FilterFullError:
            refused += 1
            assert len(f) == full
            assert (f.contains_many(keys(n)) == before).all() and before.all()
        else:
            assert added is True  # strict never returns False
            full += 1
    assert refused > 0
    assert "first" in f


def test_full_fixed_filter_refuses_and_loses_nothing(fixed_kind):
    """add returns False when no room is found; the filter is then as it was: same length, every
    key still in. CuckooFilter promises more (filter.hpp: "Returns false, with the filter
    unchanged"): the table's bytes are identical, the kick walk undone bit for bit. The concurrent
    filter may have moved entries to their other bucket before failing (documented in
    basic_concurrent_filter.hpp), so for it the answers, not the bytes, are compared."""
    f = KINDS[fixed_kind](500)
    n = fill_until_refused(f)
    assert n >= 500  # capacity distinct keys fit (sizing.hpp)
    assert f.load_factor > 0.75
    held = keys(n)
    probes = keys(5_000, 10**9)  # absent keys: a refusal must not change their answers either
    refusals = 0
    for i in range(300):
        key = 10**8 + i
        snapshot, size, answers = f.to_bytes(), len(f), f.contains_many(probes)
        if f.add(key):
            assert key in f
            continue
        refusals += 1
        assert len(f) == size
        if fixed_kind != "concurrent":
            assert f.to_bytes() == snapshot
        assert (f.contains_many(probes) == answers).all()
        assert f.contains_many(held).all()  # no false negative
    assert refusals > 0
    assert f.contains_many(held).all()
    assert len(f) == n + (300 - refusals)


def test_completely_full_table_refuses_every_key(fixed_kind):
    """With every slot taken there is certainly no room: add must return False for any key."""
    f = KINDS[fixed_kind](40, fingerprint_bits=16)
    start = 0
    for _ in range(200):  # fresh keys after each refusal, until every slot is taken
        start += f.add_many(keys(10 * f.slot_count, start)) + 1
        if len(f) == f.slot_count:
            break
    assert f.load_factor == 1.0, "200 rounds of fresh keys left a slot free"
    for key in ("x", b"y", 2**64 - 1, -5, 10**12):
        assert f.add(key) is False
        with pytest.raises(cuckoo.FilterFullError):
            f.add(key, strict=True)
    assert f.add_many(np.array(["x", "y"])) == 0
    assert len(f) == f.slot_count


def test_growable_grows_past_capacity_and_keeps_every_key():
    f = cuckoo.CuckooFilter(100, growable=True)
    assert f.growable is True and f.doublings == 0 and f.capacity == 100
    n = 100 * 40
    assert f.add_many(keys(n)) == n  # never refuses while growing
    assert f.doublings >= 5
    assert f.capacity == 100 * 2**f.doublings
    assert len(f) == n
    assert f.contains_many(keys(n)).all()
    assert [f.add(f"text-{i}") for i in range(100)] == [True] * 100
    assert all(f"text-{i}" in f for i in range(100))
    assert f.discard_many(keys(n)) == n
    assert len(f) == 100


# ---- repr and properties -----------------------------------------------------------------------


def parse_repr(text: str) -> tuple[str, dict]:
    match = re.fullmatch(r"(\w+)\((.*)\)", text)
    assert match, text
    fields = dict(part.split("=", 1) for part in match.group(2).split(", "))
    return match.group(1), fields


def test_repr_mentions_size_capacity_and_shape(kind):
    f = KINDS[kind](1000)
    f.add_many(keys(321))
    name, fields = parse_repr(repr(f))
    assert name == type(f).__name__
    assert int(fields["size"]) == len(f) == 321
    assert int(fields["capacity"]) == f.capacity
    assert int(fields["bucket_size"]) == f.bucket_size
    assert int(fields["fingerprint_bits"]) == f.fingerprint_bits
    assert float(fields["load_factor"]) == pytest.approx(f.load_factor, abs=1e-4)
    assert int(fields["memory_bytes"]) == f.memory_bytes
    if kind == "semi_sort":
        assert fields["semi_sort"] == "True"
    if kind == "growable":
        assert fields["growable"] == "True"
        assert int(fields["doublings"]) == f.doublings


@pytest.mark.parametrize("bucket_size", [2, 4, 8])
@pytest.mark.parametrize("error_rate", [0.1, 0.01, 0.001, 1e-5, 2**-7])
def test_fingerprint_width_follows_eq6(bucket_size, error_rate):
    # Paper Eq. 6: f = ceil(log2(2b / eps)) is the narrowest width whose bound 2b * 2**-f <= eps.
    # 2**-7 with b = 4 is exact: log2(1024) = 10, so f must be 10, not 11.
    f = cuckoo.CuckooFilter(100, error_rate, bucket_size=bucket_size)
    expected = max(2, math.ceil(math.log2(2 * bucket_size / error_rate)))
    assert f.fingerprint_bits == expected
    assert f.error_rate_bound <= error_rate
    c = cuckoo.ConcurrentCuckooFilter(100, error_rate, bucket_size=bucket_size)
    assert c.fingerprint_bits == expected


@pytest.mark.parametrize("kind_name", FIXED_KINDS)
def test_shape_properties(kind_name):
    f = KINDS[kind_name](1000, seed=12345, max_kicks=77)
    f.add_many(keys(600))
    assert f.capacity == 1000
    assert f.size == len(f) == 600
    assert f.bucket_size == {"b2": 2, "b8": 8}.get(kind_name, 4)
    assert f.slot_count == f.bucket_count * f.bucket_size
    assert f.slot_count >= f.capacity  # sized so that capacity keys fit
    assert f.bucket_count % 2 == 0  # addressing.hpp needs an even count
    assert f.load_factor == pytest.approx(600 / f.slot_count)
    assert f.seed == 12345
    assert f.max_kicks == 77
    assert f.memory_bytes * 8 >= f.slot_count * (f.fingerprint_bits - 1)
    if kind_name == "concurrent":
        return
    assert f.semi_sorted is (kind_name == "semi_sort")
    assert f.growable is False and f.doublings == 0
    assert f.read_only is False
    b, bits = f.bucket_size, f.fingerprint_bits
    assert f.error_rate_bound == pytest.approx(1 - (1 - 2.0**-bits) ** (2 * b), rel=1e-12)
    # expected_error_rate: the same formula at the current load, so below the full-load bound.
    assert 0 < f.expected_error_rate <= f.error_rate_bound
    table = f.table
    assert table.readonly and table.nbytes == f.memory_bytes
    assert bytes(table) in f.to_bytes()  # the file format's table section, zero-copy


def test_growable_properties():
    f = cuckoo.CuckooFilter(1000, 0.001, growable=True)
    base = max(11, math.ceil(math.log2(8 / 0.001)))  # growable_filter.hpp: f >= 11
    # The bits an entry inserted now compares: L_0 = f + 2 (bare), then
    # L_g = f + 1 + floor(log2(16 (g + 1) / 15)).
    assert f.fingerprint_bits == base + 2
    f.add_many(keys(7000))
    g = f.doublings
    assert g >= 2 and f.capacity == 1000 * 2**g
    assert f.fingerprint_bits == base + 1 + (16 * (g + 1) // 15).bit_length() - 1
    assert f.semi_sorted is False and f.growable is True
    with pytest.raises(BufferError, match="growable"):
        f.table  # noqa: B018 (the table moves when it doubles: no zero-copy view)


def test_growable_base_fingerprint_bits():
    # Declared in _cuckoo.pyi: "The width a growable filter started with (fingerprint_bits for a
    # fixed one)".
    f = cuckoo.CuckooFilter(1000, 0.001, growable=True)
    f.add_many(keys(7000))
    assert f.base_fingerprint_bits == max(11, math.ceil(math.log2(8 / 0.001)))
    fixed = cuckoo.CuckooFilter(1000, 0.001)
    assert fixed.base_fingerprint_bits == fixed.fingerprint_bits


def test_defaults():
    f = cuckoo.CuckooFilter()
    assert f.capacity == cuckoo.DEFAULT_CAPACITY
    assert f.bucket_size == cuckoo.DEFAULT_BUCKET_SIZE
    assert f.max_kicks == cuckoo.DEFAULT_MAX_KICKS
    assert f.seed == cuckoo.DEFAULT_SEED == 0x243F6A8885A308D3  # pi's fraction, documented
    bits = math.ceil(math.log2(2 * cuckoo.DEFAULT_BUCKET_SIZE / cuckoo.DEFAULT_ERROR_RATE))
    assert f.fingerprint_bits == bits
    assert f.semi_sorted is False and f.growable is False
    c = cuckoo.ConcurrentCuckooFilter(1000)
    assert c.seed == cuckoo.DEFAULT_SEED and c.max_kicks == cuckoo.DEFAULT_MAX_KICKS


def test_seed_changes_the_table():
    a = cuckoo.CuckooFilter(100, seed=1)
    b = cuckoo.CuckooFilter(100, seed=2)
    a.add("k")
    b.add("k")
    assert a.seed == 1 and b.seed == 2
    assert bytes(a.table) != bytes(b.table)
    c = cuckoo.CuckooFilter(100, seed=2**64 - 1)
    assert c.seed == 2**64 - 1


@pytest.mark.parametrize(
    "name",
    ["size", "capacity", "bucket_count", "slot_count", "bucket_size", "fingerprint_bits",
     "load_factor", "max_kicks", "seed", "memory_bytes"],
)
def test_properties_are_read_only(kind, name):
    f = KINDS[kind](100)
    with pytest.raises(AttributeError):
        setattr(f, name, 1)


# ---- construction errors -----------------------------------------------------------------------

BAD_ARGUMENTS = [
    (dict(capacity=0), ValueError, "capacity"),
    (dict(capacity=-1), ValueError, "capacity"),
    (dict(capacity=10, error_rate=0.0), ValueError, "(0, 1)"),
    (dict(capacity=10, error_rate=1.0), ValueError, "(0, 1)"),
    (dict(capacity=10, error_rate=1.5), ValueError, "(0, 1)"),
    (dict(capacity=10, error_rate=-0.01), ValueError, "(0, 1)"),
    (dict(capacity=10, error_rate=float("nan")), ValueError, "(0, 1)"),
    (dict(capacity=10, bucket_size=3), ValueError, "bucket_size must be 2, 4 or 8"),
    (dict(capacity=10, bucket_size=16), ValueError, "bucket_size must be 2, 4 or 8"),
    (dict(capacity=10, fingerprint_bits=0), ValueError, "fingerprint_bits"),
    (dict(capacity=10, fingerprint_bits=1), ValueError, "fingerprint_bits"),
    (dict(capacity=10, fingerprint_bits=33), ValueError, "fingerprint_bits"),
    (dict(capacity=10, seed=-1), ValueError, "seed"),
    (dict(capacity=10, seed=2**64), ValueError, "seed"),
    (dict(capacity=10, seed=1.5), TypeError, "seed"),
    (dict(capacity=10, seed=True), TypeError, "seed"),
    (dict(capacity=10, seed="1"), TypeError, "seed"),
    (dict(capacity=10, max_kicks=2**20 + 1), ValueError, "max_kicks"),
    (dict(capacity=10, fingerprint_bits=-1), TypeError, ""),
    (dict(capacity=10, max_kicks=-1), TypeError, ""),
    (dict(capacity="10"), TypeError, ""),
]
CUCKOO_ONLY_BAD_ARGUMENTS = [
    (dict(capacity=10, semi_sort=True, bucket_size=2), ValueError, "semi_sort needs bucket_size 4"),
    (dict(capacity=10, semi_sort=True, bucket_size=8), ValueError, "semi_sort needs bucket_size 4"),
    (dict(capacity=10, semi_sort=True, fingerprint_bits=3), ValueError, "fingerprint_bits"),
    (dict(capacity=10, semi_sort=True, growable=True), ValueError, "semi_sort"),
    (dict(capacity=10, growable=True, fingerprint_bits=31), ValueError, "growable"),
]


@pytest.mark.parametrize("cls", [cuckoo.CuckooFilter, cuckoo.ConcurrentCuckooFilter])
@pytest.mark.parametrize("arguments, error, words", BAD_ARGUMENTS)
def test_bad_arguments_are_refused(cls, arguments, error, words):
    with pytest.raises(error) as raised:
        cls(**arguments)
    assert words in str(raised.value)


@pytest.mark.parametrize("arguments, error, words", CUCKOO_ONLY_BAD_ARGUMENTS)
def test_bad_table_options_are_refused(arguments, error, words):
    with pytest.raises(error) as raised:
        cuckoo.CuckooFilter(**arguments)
    assert words in str(raised.value)


def test_concurrent_has_no_semi_sort_or_growable():
    # "Plain tables only (no semi_sort, no growable)": the options do not exist.
    with pytest.raises(TypeError):
        cuckoo.ConcurrentCuckooFilter(10, semi_sort=True)
    with pytest.raises(TypeError):
        cuckoo.ConcurrentCuckooFilter(10, growable=True)


def test_table_options_are_keyword_only():
    with pytest.raises(TypeError):
        cuckoo.CuckooFilter(100, 0.01, 2)


# ---- subclasses --------------------------------------------------------------------------------


def test_subclass_that_calls_super_init_works():
    class Named(cuckoo.CuckooFilter):
        def __init__(self, name):
            super().__init__(100)
            self.name = name

    f = Named("users")
    f.add("alice")
    assert "alice" in f and f.name == "users" and len(f) == 1


def test_subclass_that_skips_super_init_is_refused():
    class Broken(cuckoo.CuckooFilter):
        def __init__(self):
            pass

    with pytest.raises(TypeError, match="__init__"):
        Broken()


# ---- the stub is the API -----------------------------------------------------------------------


@pytest.mark.parametrize("class_name", ["CuckooFilter", "ConcurrentCuckooFilter", "SoleWriterSession",
                                        "ApproximateMap"])
def test_every_member_the_stub_declares_exists(class_name):
    # _cuckoo.pyi is what type checkers and IDEs show users; each method and property it declares
    # must be there at run time.
    runtime = getattr(cuckoo, class_name)
    declared = stub_members(class_name)
    missing = sorted(n for n in declared if not hasattr(runtime, n))
    assert missing == []


def test_the_filter_itself_is_not_a_buffer():
    # The table's bytes are offered as f.table (a read-only view that keeps the filter alive), not
    # through the filter object: memoryview(f) would suggest the whole filter, stash and header
    # included, and the stub does not declare it.
    assert "__buffer__" not in stub_members("CuckooFilter")
    with pytest.raises(TypeError):
        memoryview(cuckoo.CuckooFilter(100))
