"""cuckoo.ApproximateMap: value association (the paper's section 6) from Python.

The C++ tests prove the map itself (tests/unit/test_approximate_map*.cpp); these prove what the
bindings add: the value widths, the value checks, batches against single keys, files, and the
promise that matters, checked against an exact multimap: find(key) always includes every value
stored with key and not erased.
"""

from __future__ import annotations

import collections
import copy
import math
import os
import pathlib
import pickle
import subprocess
import threading

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from support import crash_isolated

import cuckoo

WIDTHS = [8, 16, 32, 64]
DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def all_values_present(m, key, values):
    """find(key) holds every value of `values` at least as often as `values` lists it."""
    found = collections.Counter(m.find(key))
    return all(found[v] >= n for v, n in collections.Counter(values).items())


# ---- Against an exact multimap ------------------------------------------------------------------

# (bucket size, fingerprint bits, value bits, capacity): small tables, so that inserts are refused
# and entries are displaced; f = 6 makes fingerprint collisions (extra values) common.
SHAPES = [(4, 12, 32, 40), (2, 8, 8, 30), (8, 16, 64, 60), (4, 6, 16, 24)]
KEYS = st.one_of(st.integers(0, 40), st.sampled_from(["alice", "bob", "carol", "dave", "é"]))


def machine_for(bucket_size, bits, value_bits, capacity):
    value_range = st.integers(0, min(2**value_bits - 1, 6))  # few values: repeated pairs too

    class MapModel(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            self.map = cuckoo.ApproximateMap(capacity, value_bits=value_bits,
                                             bucket_size=bucket_size, fingerprint_bits=bits,
                                             max_kicks=50)
            self.pairs = collections.Counter()  # (key, value) -> copies stored

        @rule(key=KEYS, value=value_range)
        def insert(self, key, value):
            before = self.map.to_bytes()
            if self.map.insert(key, value):
                self.pairs[(key, value)] += 1
            else:
                assert self.map.to_bytes() == before  # a refused insert changes nothing

        @rule(keys=st.lists(KEYS, max_size=12), data=st.data())
        def insert_many(self, keys, data):
            values = data.draw(st.lists(value_range, min_size=len(keys), max_size=len(keys)))
            twin = self.map.copy()
            stored = self.map.insert_many(keys, np.array(values, dtype=np.uint64))
            singles = 0
            while singles < len(keys) and twin.insert(keys[singles], values[singles]):
                singles += 1
            assert stored == singles  # the batch is the single-key calls in order
            assert self.map.to_bytes() == twin.to_bytes()
            for key, value in zip(keys[:stored], values[:stored]):
                self.pairs[(key, value)] += 1

        @precondition(lambda self: self.pairs)
        @rule(data=st.data())
        def erase_a_stored_pair(self, data):
            key, value = data.draw(st.sampled_from(sorted(self.pairs, key=repr)))
            assert self.map.erase(key, value)
            self.pairs[(key, value)] -= 1
            if not self.pairs[(key, value)]:
                del self.pairs[(key, value)]

        @rule(via=st.sampled_from(["bytes", "pickle", "copy"]))
        def reload(self, via):
            if via == "bytes":
                self.map = cuckoo.ApproximateMap.from_bytes(self.map.to_bytes())
            elif via == "pickle":
                self.map = pickle.loads(pickle.dumps(self.map))
            else:
                self.map = copy.deepcopy(self.map)

        @precondition(lambda self: self.pairs)
        @rule(data=st.data())
        def erase_many_stored_pairs(self, data):
            pairs = data.draw(st.lists(st.sampled_from(sorted(self.pairs, key=repr)), max_size=6))
            wanted = collections.Counter(pairs)
            pairs = [p for p in wanted for _ in range(min(wanted[p], self.pairs[p]))]
            keys, values = [k for k, _ in pairs], [v for _, v in pairs]
            twin = self.map.copy()
            assert self.map.erase_many(keys, values) == len(pairs)
            for key, value in pairs:
                assert twin.erase(key, value)
                self.pairs[(key, value)] -= 1
                if not self.pairs[(key, value)]:
                    del self.pairs[(key, value)]
            assert self.map.to_bytes() == twin.to_bytes()  # the batch is the single erases

        @invariant()
        def every_stored_value_is_found(self):
            by_key = collections.defaultdict(list)
            for (key, value), n in self.pairs.items():
                by_key[key] += [value] * n
            assert len(self.map) == sum(self.pairs.values())
            for key, values in by_key.items():
                assert all_values_present(self.map, key, values)
                assert key in self.map
                assert self.map.count(key) >= len(values)
            keys = list(by_key)
            counts = self.map.count_many(keys)
            assert counts.tolist() == [self.map.count(k) for k in keys]
            found, offsets = self.map.find_many(keys)
            for i, key in enumerate(keys):
                assert list(found[offsets[i]:offsets[i + 1]]) == self.map.find(key)

    MapModel.__name__ = f"MapModel_b{bucket_size}_f{bits}_v{value_bits}"
    return MapModel


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "b%d-f%d-v%d-cap%d" % s)
@crash_isolated
def test_never_misses_a_stored_value(shape):
    machine_for(*shape).TestCase().runTest()


# ---- Values --------------------------------------------------------------------------------------


@pytest.mark.parametrize("bits", WIDTHS)
def test_value_widths_and_their_limits(bits):
    m = cuckoo.ApproximateMap(100, value_bits=bits)
    assert m.value_bits == bits and m.value_dtype == np.dtype(DTYPES[bits])
    top = 2**bits - 1
    assert m.insert("top", top) and m.find("top") == [top]
    before = m.to_bytes()
    for bad in (2**bits, -1, 2**64):
        with pytest.raises(OverflowError, match=r"\[0, 2\*\*%d\)" % bits):
            m.insert("x", bad)
    for bad in (True, np.bool_(False), 1.0, "7", None):
        with pytest.raises(TypeError):
            m.insert("x", bad)
    with pytest.raises(OverflowError):
        m.erase("top", 2**bits)
    assert m.to_bytes() == before  # refused values change nothing
    assert m.insert(np.uint64(5), np.int8(3)) and m.find(5) == [3]  # numpy scalars are ints


@pytest.mark.parametrize("bits", WIDTHS)
def test_batch_values_are_checked_before_anything_is_stored(bits):
    m = cuckoo.ApproximateMap(100, value_bits=bits)
    before = m.to_bytes()
    keys = np.arange(4, dtype=np.uint64)
    for bad in (np.array([1, 2, 3, 2**bits], dtype=np.uint64) if bits < 64 else None,
                np.array([1, 2, -1, 3], dtype=np.int64), [1, 2, 3, -5]):
        if bad is not None:
            with pytest.raises(OverflowError):
                m.insert_many(keys, bad)
    for bad in (np.ones(4), np.ones(4, dtype=bool), "abcd", b"abcd", [1, 2, 3, 1.5]):
        with pytest.raises(TypeError):
            m.insert_many(keys, bad)
    for bad in (np.arange(3), np.arange(5), [1, 2, 3], [1, 2, 3, 4, 5]):
        with pytest.raises(ValueError, match="4 keys"):
            m.insert_many(keys, bad)
        with pytest.raises(ValueError, match="4 keys"):
            m.erase_many(keys, bad)
    assert m.to_bytes() == before and len(m) == 0
    # Any integer dtype, 2-D arrays (flattened in order), lists and generators are taken.
    for values in (np.array([[1, 2], [3, 4]], dtype=np.int16), [1, 2, 3, 4],
                   (v for v in (1, 2, 3, 4)), np.array([1, 2, 3, 4], dtype=object)):
        twin = cuckoo.ApproximateMap(100, value_bits=bits)
        assert twin.insert_many(keys, values) == 4
        assert [twin.find(int(k)) for k in keys] == [[1], [2], [3], [4]]


# ---- Batches equal single keys ------------------------------------------------------------------


@pytest.mark.parametrize("bits", WIDTHS)
def test_batches_equal_single_keys(bits, rng):
    n = 3000
    keys = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    values = rng.integers(0, 2**bits, size=n, dtype=DTYPES[bits])
    batch = cuckoo.ApproximateMap(4000, value_bits=bits)
    single = cuckoo.ApproximateMap(4000, value_bits=bits)
    assert batch.insert_many(keys, values) == n
    for k, v in zip(keys, values):
        assert single.insert(int(k), int(v))
    assert batch.to_bytes() == single.to_bytes()

    probes = np.concatenate([keys[:500], rng.integers(0, 2**64, size=500, dtype=np.uint64)])
    found, offsets = batch.find_many(probes)
    assert found.dtype == np.dtype(DTYPES[bits]) and offsets.dtype == np.int64
    assert offsets[0] == 0 and len(offsets) == len(probes) + 1 and offsets[-1] == len(found)
    for i, k in enumerate(probes):
        assert list(found[offsets[i]:offsets[i + 1]]) == batch.find(int(k))
    for i in range(500):
        assert values[i] in found[offsets[i]:offsets[i + 1]]
    np.testing.assert_array_equal(batch.contains_many(probes), [int(k) in batch for k in probes])
    # 2-D keys: contains_many keeps the shape, find_many reads them in flattened order.
    grid = probes[:600].reshape(20, 30)
    assert batch.contains_many(grid).shape == (20, 30)
    found2, offsets2 = batch.find_many(grid)
    np.testing.assert_array_equal(offsets2, offsets[:601])
    np.testing.assert_array_equal(found2, found[:offsets[600]])


def test_mixed_key_kinds_in_one_batch():
    m = cuckoo.ApproximateMap(1000, value_bits=16)
    keys = ["alice", 7, b"raw", 2**63, "é", -1]
    assert m.insert_many(keys, range(10, 16)) == 6
    found, offsets = m.find_many(keys + ["absent"])
    for i, key in enumerate(keys):
        assert 10 + i in found[offsets[i]:offsets[i + 1]]
        assert m.find(key) == list(found[offsets[i]:offsets[i + 1]])
    assert m.find("é".encode()) == m.find("é") and m.find(2**64 - 1) == m.find(-1)
    assert m.contains_many(keys).all()


# ---- Extra values at the rate the arithmetic predicts ------------------------------------------


def test_absent_keys_get_values_at_the_fingerprint_rate(rng):
    # f = 8 so that the rate is measurable: an absent key's two buckets hold 2b·α entries, each
    # matching with probability 1 / (2^f − 1) (fingerprints are never 0). The number of extra
    # values over N lookups is a sum of independent Bernoulli trials: within 6σ of its mean.
    m = cuckoo.ApproximateMap(20000, value_bits=32, fingerprint_bits=8)
    stored = rng.integers(0, 2**63, size=20000, dtype=np.uint64)
    values = rng.integers(0, 2**32, size=20000, dtype=np.uint32)
    assert m.insert_many(stored, values) == 20000
    absent = rng.integers(2**63, 2**64, size=200_000, dtype=np.uint64)
    found, offsets = m.find_many(absent)
    mean = 2 * m.bucket_size * m.load_factor / (2**8 - 1) * len(absent)
    assert abs(len(found) - mean) <= 6 * math.sqrt(mean), (len(found), mean)
    assert set(found.tolist()) <= set(values.tolist())  # every value returned was stored
    hit = np.diff(offsets) > 0
    np.testing.assert_array_equal(hit, m.contains_many(absent))
    assert abs(hit.mean() - m.expected_error_rate) <= 6 * math.sqrt(m.expected_error_rate / 200_000)


# ---- A full map --------------------------------------------------------------------------------


def test_a_full_map_refuses_and_changes_nothing():
    # Copies taken just before each insert hold the same state (the kick walk's random stream
    # included), so each refuses the key that the map itself refused.
    m = cuckoo.ApproximateMap(50, value_bits=8, max_kicks=20)
    stored = 0
    while True:
        before, strict, batch, strict_batch = m.to_bytes(), m.copy(), m.copy(), m.copy()
        if not m.insert(stored, stored % 256):
            break
        stored += 1
    assert stored >= 50 and m.to_bytes() == before and len(m) == stored
    with pytest.raises(cuckoo.FilterFullError):
        strict.insert(stored, stored % 256, strict=True)
    assert batch.insert_many([stored, stored + 1], [stored % 256, 1]) == 0
    with pytest.raises(cuckoo.FilterFullError, match="pair 0"):
        strict_batch.insert_many([stored, stored + 1], [stored % 256, 1], strict=True)
    for twin in (strict, batch, strict_batch):
        assert twin.to_bytes() == before
    assert all(i % 256 in m.find(i) for i in range(stored))
    m.clear()
    assert len(m) == 0 and not m and m.find(0) == []


# ---- Files, bytes, pickles -------------------------------------------------------------------


@pytest.mark.parametrize("bits", WIDTHS)
@crash_isolated
def test_files_keep_pairs_and_width(bits, tmp_path):
    m = cuckoo.ApproximateMap(500, value_bits=bits, bucket_size=2, seed=99)
    keys = [f"k{i}" for i in range(400)]
    assert m.insert_many(keys, [i % 200 for i in range(400)]) == 400
    path = tmp_path / "pairs.cfm"
    m.save(path)
    mapped = cuckoo.ApproximateMap.map(path)
    copies = [cuckoo.ApproximateMap.load(path), mapped, cuckoo.ApproximateMap.map(path, verify=False),
              cuckoo.ApproximateMap.from_bytes(m.to_bytes()), copy.copy(m), m.copy(),
              cuckoo.ApproximateMap.from_bytes(bytearray(path.read_bytes()))]
    copies += [pickle.loads(pickle.dumps(m, protocol=p)) for p in range(pickle.HIGHEST_PROTOCOL + 1)]
    want = [m.find(k) for k in keys]
    for c in copies:
        assert c.value_bits == bits and c.seed == 99 and c.bucket_size == 2 and len(c) == 400
        assert [c.find(k) for k in keys] == want
        assert c.to_bytes() == path.read_bytes()
    assert mapped.read_only and not m.read_only and "read_only=True" in repr(mapped)
    for change in (lambda x: x.insert("new", 1), lambda x: x.erase("k1", 1), lambda x: x.clear(),
                   lambda x: x.insert_many(["new"], [1])):
        with pytest.raises(TypeError, match="read-only"):
            change(mapped)
    writable = mapped.copy()
    assert writable.insert("new", 1) and writable.find("new") == [1]


def test_files_of_the_wrong_kind_are_refused_by_name(tmp_path):
    cuckoo.CuckooFilter(100).save(tmp_path / "filter.cf")
    cuckoo.ApproximateMap(100).save(tmp_path / "map.cfm")
    for opener in (cuckoo.ApproximateMap.load, cuckoo.ApproximateMap.map):
        with pytest.raises(ValueError, match="a filter, not an approximate map"):
            opener(tmp_path / "filter.cf")
    with pytest.raises(ValueError, match="not a filter"):
        cuckoo.CuckooFilter.load(tmp_path / "map.cfm")
    with pytest.raises(FileNotFoundError):
        cuckoo.ApproximateMap.load(tmp_path / "absent.cfm")
    with pytest.raises(ValueError):
        cuckoo.ApproximateMap.from_bytes(b"")
    with pytest.raises(ValueError):
        cuckoo.ApproximateMap.from_bytes(b"not a map at all" * 20)


@crash_isolated
def test_every_damaged_byte_is_refused():
    m = cuckoo.ApproximateMap(8, value_bits=16)
    m.insert_many(range(6), range(100, 106))
    data = m.to_bytes()
    for i in range(len(data)):
        damaged = bytearray(data)
        damaged[i] ^= 0x5A
        with pytest.raises(ValueError):
            cuckoo.ApproximateMap.from_bytes(bytes(damaged))
    for cut in range(len(data)):
        with pytest.raises(ValueError):
            cuckoo.ApproximateMap.from_bytes(data[:cut])


def test_the_cli_reads_a_map_saved_from_python(tmp_path):
    cli = os.environ.get("CUCKOO_CLI")
    if not cli:
        pytest.skip("CUCKOO_CLI is not set (ctest sets it)")
    m = cuckoo.ApproximateMap(1000, value_bits=16)
    m.insert_many(range(500), range(500))
    m.save(tmp_path / "m.cfm")
    info = subprocess.run([cli, "info", str(tmp_path / "m.cfm")], capture_output=True, text=True,
                          timeout=60)
    assert info.returncode == 0, info.stderr
    assert "approximate map" in info.stdout and "2 bytes per slot" in info.stdout
    assert "items            500" in info.stdout and "checksum         ok" in info.stdout


GOLDEN_MAPS = ["golden_v3_map_b4_f12_u32.cf", "golden_v3_map_b2_f9_u32.cf"]


@pytest.mark.parametrize("name", GOLDEN_MAPS)
def test_golden_map_files_answer_as_recorded(name):
    # Written by tests/data/make_golden.cpp: "u <i> <values...>" / "s <i> <values...>" for each
    # probe that found values. Integer key i is i * 0x9E3779B97F4A7C15 + 7 mod 2**64.
    data = pathlib.Path(os.environ.get("CUCKOO_TESTS_SOURCE_DIR",
                                       pathlib.Path(__file__).parents[1])) / "data"
    m = cuckoo.ApproximateMap.load(data / name)
    lines = (data / (name + ".expected")).read_text().split("\n")
    assert lines[0] == f"size {len(m)}" and m.value_bits == 32
    expected = {"u": {}, "s": {}}
    for line in lines[1:]:
        if line:
            kind, index, *values = line.split()
            expected[kind][int(index)] = [int(v) for v in values]
    ints = np.arange(50_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(7)
    found, offsets = m.find_many(ints)
    for i in range(len(ints)):
        assert list(found[offsets[i]:offsets[i + 1]]) == expected["u"].get(i, [])
    for i in range(2000):
        assert m.find(f"golden-{i}") == expected["s"].get(i, [])
    assert m.to_bytes() == (data / name).read_bytes()


# ---- Construction, threads ---------------------------------------------------------------------


def test_construction_errors():
    for kwargs in ({"value_bits": 12}, {"value_bits": 0}, {"value_bits": 128},
                   {"bucket_size": 3}, {"fingerprint_bits": 0}, {"capacity": 0},
                   {"error_rate": 0.0}):
        with pytest.raises(ValueError):
            cuckoo.ApproximateMap(**{"capacity": 100, **kwargs})
    with pytest.raises(TypeError):
        cuckoo.ApproximateMap(100, seed=True)
    with pytest.raises(TypeError):
        cuckoo.ApproximateMap(100, semi_sort=True)  # not an argument: values need fixed slots
    m = cuckoo.ApproximateMap(1000, 0.01, value_bits=8, bucket_size=8)
    assert (m.bucket_size, m.value_bits, m.capacity) == (8, 8, 1000)
    assert m.memory_bytes == m.fingerprint_memory_bytes + m.value_memory_bytes
    assert m.value_memory_bytes == m.slot_count  # one byte per slot


def test_readers_never_miss_while_a_writer_inserts():
    m = cuckoo.ApproximateMap(40_000, value_bits=32)
    keys = np.arange(30_000, dtype=np.uint64)
    done, misses = threading.Event(), []

    def writer():
        for start in range(0, 30_000, 1000):
            assert m.insert_many(keys[start:start + 1000], keys[start:start + 1000] * 3) == 1000
        done.set()

    def reader():
        while not done.is_set():
            visible = len(m)  # pairs are inserted in order: the first `visible` are stored
            found, offsets = m.find_many(keys[:visible])
            for i in range(0, visible, 97):
                if 3 * i not in found[offsets[i]:offsets[i + 1]]:
                    misses.append(i)

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert misses == [] and len(m) == 30_000
