"""Files, bytes and pickles: every way a filter leaves a Python object and comes back.

A filter that went through save/load, map, to_bytes/from_bytes or pickle must be the same filter:
the same answers for members and non-members (false positives included: a restored filter that
answered "maybe" for other keys would betray a changed table), the same len and shape, and the
same bytes when written again. The file format is docs/FORMAT.md: a 128-byte header, the table,
then (version 2) the stash and an 8-byte checksum; the `table` view is exactly that table section.
"""

from __future__ import annotations

import copy
import errno
import gc
import os
import pathlib
import pickle
import struct
import subprocess
import sys
import weakref

import numpy as np
import pytest

import cuckoo

HEADER_BYTES = 128  # docs/FORMAT.md: the table starts at offset 128
CHECKSUM_BYTES = 8
TABLE_BYTES_OFFSET = 72  # u64 "table bytes T" in the header

# ---- The filters under test ------------------------------------------------------------------

# Fixed filters: every bucket size, narrow to widest fingerprints, semi-sorted buckets, a
# non-default seed and max_kicks (which the file must carry too).
FIXED_CONFIGS = {
    "b2_f7": dict(capacity=3000, bucket_size=2, fingerprint_bits=7),
    "b2_f13_seed": dict(capacity=3000, bucket_size=2, fingerprint_bits=13, seed=2**64 - 5),
    "b4_f12": dict(capacity=3000, bucket_size=4, fingerprint_bits=12),
    "b4_f32": dict(capacity=3000, bucket_size=4, fingerprint_bits=32, max_kicks=77),
    "b4_fpr": dict(capacity=3000, error_rate=0.01, bucket_size=4),
    "b8_f16": dict(capacity=3000, bucket_size=8, fingerprint_bits=16),
    "b8_f5": dict(capacity=3000, bucket_size=8, fingerprint_bits=5, seed=12345),
    "semi_f9": dict(capacity=3000, bucket_size=4, fingerprint_bits=9, semi_sort=True),
    "semi_f13": dict(capacity=3000, bucket_size=4, fingerprint_bits=13, semi_sort=True, seed=7),
}
# Growable filters that start small and double several times while filled.
GROWABLE_CONFIGS = {
    "grow_b2": dict(capacity=40, bucket_size=2, growable=True),
    "grow_b4": dict(capacity=40, bucket_size=4, growable=True, seed=99),
    "grow_b8_f20": dict(capacity=40, bucket_size=8, fingerprint_bits=20, growable=True),
}
CONCURRENT_CONFIGS = {
    "conc_b2": dict(capacity=3000, bucket_size=2, fingerprint_bits=8),
    "conc_b4": dict(capacity=3000, bucket_size=4, seed=31337),
    "conc_b8": dict(capacity=3000, bucket_size=8, fingerprint_bits=16),
}
GROWABLE_KEYS = 2500  # from capacity 40: six doublings


def _integer_keys(n: int, salt: int) -> np.ndarray:
    # Spread-out 64-bit integers, including values above 2**63.
    return (np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) ^ np.uint64(salt)


def _fill(f, n: int) -> list:
    """Adds about n keys of three kinds (integers, str, bytes); returns the keys that went in."""
    ints = _integer_keys(n // 2, 0x5EED)
    strs = np.array([f"user-{i}-é" for i in range(n // 4)])  # U array: UTF-8 keys
    # An S array (numpy drops trailing NULs of S items, so each key ends in "!").
    raw = np.array([b"\x00raw\xff" + i.to_bytes(4, "big") + b"!" for i in range(n // 4)])
    added = []
    for batch in (ints, strs, raw):
        done = f.add_many(batch)
        added.extend(batch[:done].tolist())
        if done < len(batch):
            break
    # A few single adds of each kind too (the scalar path).
    for key in ("solo-str", b"solo-bytes", 2**64 - 1, -5):
        if f.add(key):
            added.append(key)
    assert len(added) > n * 0.7, "the filter took too few keys to be a meaningful test"
    return added


def _probes(members: list) -> list:
    # Members and as many non-members (which may be false positives: they must stay the same).
    others = _integer_keys(3000, 0xABCDEF).tolist() + [f"absent-{i}" for i in range(2000)]
    return list(members) + others


def _answers(f, probes: list):
    ints = np.array([k for k in probes if isinstance(k, int) and k >= 0], dtype=np.uint64)
    strs = np.array([k for k in probes if isinstance(k, str)])
    raw = [k for k in probes if isinstance(k, bytes)]
    out = [f.contains_many(ints), f.contains_many(strs)]
    out.append(np.array([k in f for k in raw], dtype=bool))
    if hasattr(f, "count_many"):
        out.append(f.count_many(ints))
        out.append(np.array([f.count(k) for k in raw]))
    out.append(np.array([k in f for k in probes if isinstance(k, int) and k < 0], dtype=bool))
    return out


def _shape(f) -> dict:
    names = ["size", "capacity", "bucket_count", "slot_count", "bucket_size", "fingerprint_bits",
             "load_factor", "max_kicks", "memory_bytes", "seed"]
    if isinstance(f, cuckoo.CuckooFilter):
        names += ["semi_sorted", "growable", "doublings", "error_rate_bound"]
    shape = {name: getattr(f, name) for name in names}
    shape["len"] = len(f)
    shape["bool"] = bool(f)
    return shape


def _assert_same_filter(restored, original, probes):
    assert type(restored) is type(original)
    assert _shape(restored) == _shape(original)
    for got, want in zip(_answers(restored, probes), _answers(original, probes)):
        np.testing.assert_array_equal(got, want)
    assert restored.to_bytes() == original.to_bytes()


def _table_bytes_field(data: bytes) -> int:
    return struct.unpack_from("<Q", data, TABLE_BYTES_OFFSET)[0]


@pytest.fixture(params=list(FIXED_CONFIGS) + list(GROWABLE_CONFIGS))
def filled(request):
    """(filter, members, probes) for each fixed and growable configuration."""
    name = request.param
    config = dict(FIXED_CONFIGS.get(name) or GROWABLE_CONFIGS[name])
    capacity = config.pop("capacity")
    f = cuckoo.CuckooFilter(capacity, **config)
    members = _fill(f, GROWABLE_KEYS if f.growable else capacity)
    if f.growable:
        assert f.doublings >= 3, "the growable filter should have grown several times"
    return f, members, _probes(members)


@pytest.fixture(params=list(CONCURRENT_CONFIGS))
def filled_concurrent(request):
    config = dict(CONCURRENT_CONFIGS[request.param])
    capacity = config.pop("capacity")
    f = cuckoo.ConcurrentCuckooFilter(capacity, **config)
    members = _fill(f, capacity)
    return f, members, _probes(members)


# ---- Round trips -----------------------------------------------------------------------------


def test_members_are_found_before_any_round_trip(filled):
    # The baseline the round trips compare against must itself be sound.
    f, members, _ = filled
    assert all(k in f for k in members)


def test_save_then_load(filled, tmp_path):
    f, _, probes = filled
    path = tmp_path / "f.cf"
    f.save(str(path))
    loaded = cuckoo.CuckooFilter.load(str(path))
    _assert_same_filter(loaded, f, probes)
    assert not loaded.read_only


def test_saved_file_is_to_bytes(filled, tmp_path):
    # save() writes exactly to_bytes(); the header's table size and the file length agree with
    # docs/FORMAT.md (136 + T for version 1; version 2 adds 16 bytes per stash entry).
    f, _, _ = filled
    path = tmp_path / "f.cf"
    f.save(path)
    data = path.read_bytes()
    assert data == f.to_bytes()
    assert data[:8] == b"\x89CKOO\r\n\x1a"
    version = struct.unpack_from("<I", data, 8)[0]
    assert version == (2 if f.growable else 1)
    table = _table_bytes_field(data)
    stash = struct.unpack_from("<I", data, 84)[0] if f.growable else 0
    assert len(data) == HEADER_BYTES + table + 16 * stash + CHECKSUM_BYTES


def test_save_leaves_only_the_file(filled, tmp_path):
    # The atomic save goes through a temporary file beside the target; none may be left behind,
    # also when a file is saved over an existing one.
    f, _, _ = filled
    path = tmp_path / "f.cf"
    f.save(path)
    f.save(path)
    assert sorted(os.listdir(tmp_path)) == ["f.cf"]


def test_to_bytes_from_bytes(filled):
    f, _, probes = filled
    data = f.to_bytes()
    assert isinstance(data, bytes)
    for source in (data, bytearray(data), memoryview(data)):
        _assert_same_filter(cuckoo.CuckooFilter.from_bytes(source), f, probes)


def test_to_bytes_is_deterministic(filled):
    f, _, _ = filled
    assert f.to_bytes() == f.to_bytes()


@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
def test_pickle(filled, protocol):
    f, _, probes = filled
    restored = pickle.loads(pickle.dumps(f, protocol=protocol))
    _assert_same_filter(restored, f, probes)


_OLD_PROTOCOL_SCRIPT = """
import pickle, sys
import cuckoo
protocol = int(sys.argv[1])
for f in (cuckoo.CuckooFilter(100, seed=5), cuckoo.ConcurrentCuckooFilter(100, seed=5)):
    f.add("x")
    try:
        g = pickle.loads(pickle.dumps(f, protocol=protocol))
    except (TypeError, pickle.PicklingError, pickle.UnpicklingError) as refused:
        print("refused:", type(f).__name__, refused)  # a clean refusal is acceptable
        continue
    assert type(g) is type(f) and g.to_bytes() == f.to_bytes() and "x" in g, g
print("ok")
"""


@pytest.mark.parametrize("protocol", [0, 1])
def test_pickle_old_protocols(protocol):
    # Pickle protocols 0 and 1 rebuild objects through copyreg (object.__new__ + __setstate__),
    # which a compiled class must either support or refuse with a Python exception. Run in a
    # subprocess: if it brings the interpreter down, that is this test's failure, not the end of
    # the test run.
    result = subprocess.run([sys.executable, "-c", _OLD_PROTOCOL_SCRIPT, str(protocol)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), (
        f"pickle protocol {protocol}: exit status {result.returncode}, "
        f"stderr: {result.stderr.strip()[-500:]}")


def test_pickle_in_a_container_keeps_identity_and_independence(filled):
    # Two references to one filter stay one object through pickle; the copy is independent.
    f, members, _ = filled
    a, b = pickle.loads(pickle.dumps([f, f]))
    assert a is b
    before = len(f)
    assert a.discard(members[0])
    assert len(f) == before and len(a) == before - 1


def test_map_answers_as_loaded(filled, tmp_path):
    f, _, probes = filled
    path = tmp_path / "f.cf"
    f.save(path)
    mapped = cuckoo.CuckooFilter.map(path)
    assert mapped.read_only
    _assert_same_filter(mapped, f, probes)


def test_map_without_verify_answers_as_loaded(filled, tmp_path):
    f, _, probes = filled
    path = tmp_path / "f.cf"
    f.save(path)
    mapped = cuckoo.CuckooFilter.map(path, verify=False)
    assert mapped.read_only
    _assert_same_filter(mapped, f, probes)


def test_loaded_filter_keeps_working_as_the_original(filled, tmp_path):
    # A restored filter is not a frozen snapshot: the same changes give the same bytes.
    f, members, _ = filled
    path = tmp_path / "f.cf"
    f.save(path)
    loaded = cuckoo.CuckooFilter.load(path)
    for g in (f, loaded):
        for key in members[: len(members) // 3]:
            assert g.discard(key)
        g.add_many(np.arange(100, dtype=np.uint64) + np.uint64(10**15))
    assert loaded.to_bytes() == f.to_bytes()


# ---- ConcurrentCuckooFilter: the same files as CuckooFilter -------------------------------------


def test_concurrent_save_load(filled_concurrent, tmp_path):
    f, _, probes = filled_concurrent
    path = tmp_path / "c.cf"
    f.save(pathlib.Path(path))
    assert path.read_bytes() == f.to_bytes()
    _assert_same_filter(cuckoo.ConcurrentCuckooFilter.load(path), f, probes)
    _assert_same_filter(cuckoo.ConcurrentCuckooFilter.load(str(path)), f, probes)


def test_concurrent_bytes_and_pickle(filled_concurrent):
    f, _, probes = filled_concurrent
    _assert_same_filter(cuckoo.ConcurrentCuckooFilter.from_bytes(f.to_bytes()), f, probes)
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        _assert_same_filter(pickle.loads(pickle.dumps(f, protocol=protocol)), f, probes)


def test_concurrent_files_are_cuckoo_filter_files(filled_concurrent, tmp_path):
    # "Files, bytes and pickles are CuckooFilter's": each class opens the other's file, and both
    # write the same bytes for the same contents.
    f, _, probes = filled_concurrent
    path = tmp_path / "c.cf"
    f.save(path)
    plain = cuckoo.CuckooFilter.load(path)
    assert plain.to_bytes() == f.to_bytes() == f.to_filter().to_bytes()
    mapped = cuckoo.CuckooFilter.map(path)
    want = _answers(f, probes)
    for g in (plain, mapped):
        for got, expected in zip(_answers(g, probes), want):
            np.testing.assert_array_equal(got, expected)
    plain.save(tmp_path / "plain.cf")
    back = cuckoo.ConcurrentCuckooFilter.load(tmp_path / "plain.cf")
    _assert_same_filter(back, f, probes)


# ---- map(): read-only, zero-copy ---------------------------------------------------------------

MUTATORS = {
    "add": lambda f: f.add("new"),
    "add_strict": lambda f: f.add(5, strict=True),
    "add_many": lambda f: f.add_many(np.arange(3, dtype=np.uint64)),
    "update": lambda f: f.update(np.arange(3, dtype=np.uint64)),
    "discard": lambda f: f.discard(1),
    "remove": lambda f: f.remove(1),
    "discard_many": lambda f: f.discard_many(np.arange(3, dtype=np.uint64)),
    "clear": lambda f: f.clear(),
}


@pytest.fixture
def mapped_file(tmp_path):
    f = cuckoo.CuckooFilter(2000, bucket_size=4, fingerprint_bits=12, seed=3)
    keys = np.arange(1500, dtype=np.uint64)
    assert f.add_many(keys) == len(keys)
    path = tmp_path / "m.cf"
    f.save(path)
    return f, keys, path


@pytest.mark.parametrize("verify", [True, False])
@pytest.mark.parametrize("change", list(MUTATORS))
def test_map_refuses_changes(mapped_file, change, verify):
    f, keys, path = mapped_file
    before = path.read_bytes()
    mapped = cuckoo.CuckooFilter.map(path, verify=verify)
    with pytest.raises(TypeError, match="read-only"):
        MUTATORS[change](mapped)
    # Nothing changed, neither in the object nor in the file.
    assert len(mapped) == len(keys)
    assert mapped.contains_many(keys).all()
    assert path.read_bytes() == before
    assert mapped.to_bytes() == before


def test_map_lookups(mapped_file):
    f, keys, path = mapped_file
    mapped = cuckoo.CuckooFilter.map(path)
    assert len(mapped) == len(keys) and bool(mapped)
    assert mapped.contains_many(keys).all()
    assert all(int(k) in mapped for k in keys[:100])
    assert (mapped.count_many(keys) >= 1).all()
    assert mapped.count(int(keys[0])) >= 1
    others = np.arange(10**9, 10**9 + 20000, dtype=np.uint64)
    np.testing.assert_array_equal(mapped.contains_many(others), f.contains_many(others))
    assert "read_only=True" in repr(mapped)


def test_map_copy_is_writable_and_independent(mapped_file):
    _, keys, path = mapped_file
    before = path.read_bytes()
    mapped = cuckoo.CuckooFilter.map(path)
    for make_copy in (lambda m: m.copy(), copy.copy, copy.deepcopy,
                      lambda m: pickle.loads(pickle.dumps(m))):
        writable = make_copy(mapped)
        assert not writable.read_only
        assert writable.to_bytes() == before
        assert writable.add("added to the copy")
        assert writable.discard(int(keys[0]))
        writable.clear()
        assert len(writable) == 0
    # The mapped filter and its file are as they were.
    assert len(mapped) == len(keys) and mapped.contains_many(keys).all()
    assert path.read_bytes() == before


def test_map_keeps_its_file_when_the_path_is_replaced(mapped_file):
    # save() replaces a file by rename, so a mapped filter keeps reading the version it opened.
    f, keys, path = mapped_file
    mapped = cuckoo.CuckooFilter.map(path)
    old = mapped.to_bytes()
    cuckoo.CuckooFilter(10).save(path)
    assert mapped.to_bytes() == old
    assert mapped.contains_many(keys).all()
    os.unlink(path)
    assert mapped.contains_many(keys).all() and len(mapped) == len(keys)


def test_map_growable(tmp_path):
    g = cuckoo.CuckooFilter(30, growable=True, bucket_size=4)
    keys = np.arange(3000, dtype=np.uint64) * np.uint64(7919)
    assert g.add_many(keys) == len(keys)
    g.save(tmp_path / "g.cf")
    mapped = cuckoo.CuckooFilter.map(tmp_path / "g.cf")
    assert mapped.growable and mapped.read_only and mapped.doublings == g.doublings
    assert mapped.contains_many(keys).all()
    with pytest.raises(TypeError):
        mapped.add(1)


# ---- The zero-copy table view ------------------------------------------------------------------


def _table_section(f) -> bytes:
    data = f.to_bytes()
    table = _table_bytes_field(data)
    return data[HEADER_BYTES:HEADER_BYTES + table]


@pytest.mark.parametrize("name", list(FIXED_CONFIGS))
def test_table_is_the_files_table_section(name):
    config = dict(FIXED_CONFIGS[name])
    f = cuckoo.CuckooFilter(config.pop("capacity"), **config)
    _fill(f, 2000)
    view = f.table
    assert isinstance(view, memoryview)
    assert view.readonly
    assert view.ndim == 1 and view.itemsize == 1 and view.format == "B"
    data = f.to_bytes()
    table = _table_bytes_field(data)
    assert view.nbytes == table == len(data) - HEADER_BYTES - CHECKSUM_BYTES
    assert view.tobytes() == data[HEADER_BYTES:HEADER_BYTES + table]
    assert view.nbytes == f.memory_bytes
    # numpy reads it without a copy, and cannot write through it.
    array = np.frombuffer(view, dtype=np.uint8)
    assert not array.flags.writeable
    assert array.tobytes() == view.tobytes()


def test_table_cannot_be_written():
    f = cuckoo.CuckooFilter(100)
    f.add("x")
    view = f.table
    with pytest.raises(TypeError):
        view[0] = 1
    with pytest.raises((TypeError, ValueError)):
        np.frombuffer(view, dtype=np.uint8)[0] = 1


def test_table_is_zero_copy():
    # A view taken before a change shows the change: it is the filter's memory, not a copy.
    f = cuckoo.CuckooFilter(1000, bucket_size=4, fingerprint_bits=16)
    view = f.table
    assert view.tobytes() == bytes(view.nbytes)  # empty table: all zero
    assert f.add_many(np.arange(500, dtype=np.uint64)) == 500
    assert view.tobytes() == _table_section(f)
    assert any(view.tobytes())
    f.discard_many(np.arange(250, dtype=np.uint64))
    assert view.tobytes() == _table_section(f)
    f.clear()  # clear() zeroes the table in place
    assert view.tobytes() == bytes(view.nbytes)


def test_table_view_outlives_the_filter_object():
    # The view holds the filter: deleting the last Python name for it frees nothing while the
    # view lives; only when the view goes does the filter go.
    f = cuckoo.CuckooFilter(5000, bucket_size=4, fingerprint_bits=12)
    f.add_many(np.arange(4000, dtype=np.uint64))
    snapshot = _table_section(f)
    alive = weakref.ref(f)
    view = f.table
    del f
    gc.collect()
    assert alive() is not None, "the table view does not keep its filter alive"
    # Churn the allocator with same-sized tables of other contents: a dangling view would
    # likely show their bytes.
    others = [cuckoo.CuckooFilter(5000, bucket_size=4, fingerprint_bits=12) for _ in range(8)]
    for i, other in enumerate(others):
        other.add_many(np.arange(4000, dtype=np.uint64) + np.uint64(10**6 * (i + 1)))
    assert view.tobytes() == snapshot
    array = np.frombuffer(view, dtype=np.uint8)  # a derived buffer holds it too
    del view
    gc.collect()
    assert alive() is not None
    assert array.tobytes() == snapshot
    del array
    gc.collect()
    assert alive() is None, "the filter was never freed after its views went"


def test_mapped_table_is_the_files_bytes(mapped_file):
    _, _, path = mapped_file
    data = path.read_bytes()
    mapped = cuckoo.CuckooFilter.map(path)
    view = mapped.table
    assert view.readonly
    table = _table_bytes_field(data)
    assert view.nbytes == table
    assert view.tobytes() == data[HEADER_BYTES:HEADER_BYTES + table]
    # The view keeps the mapping alive after the filter object and the file's name are gone.
    del mapped
    gc.collect()
    os.unlink(path)
    assert view.tobytes() == data[HEADER_BYTES:HEADER_BYTES + table]


@pytest.mark.parametrize("name", list(GROWABLE_CONFIGS))
def test_growable_table_raises_buffer_error(name):
    config = dict(GROWABLE_CONFIGS[name])
    g = cuckoo.CuckooFilter(config.pop("capacity"), **config)
    with pytest.raises(BufferError):
        g.table
    _fill(g, 500)
    with pytest.raises(BufferError, match="growable"):
        g.table
    # The refusal leaves the filter usable.
    assert g.add("after") and "after" in g


def test_growable_mapped_table_raises_buffer_error(tmp_path):
    g = cuckoo.CuckooFilter(20, growable=True)
    g.add_many(np.arange(500, dtype=np.uint64))
    g.save(tmp_path / "g.cf")
    with pytest.raises(BufferError):
        cuckoo.CuckooFilter.map(tmp_path / "g.cf").table


# ---- Paths and the errors of the file system ---------------------------------------------------


class _FsPath:
    """An os.PathLike that is not pathlib: only __fspath__."""

    def __init__(self, path):
        self._path = os.fspath(path)

    def __fspath__(self):
        return self._path


@pytest.mark.parametrize("kind", ["pathlib", "str", "bytes", "fspath"])
def test_path_kinds(tmp_path, kind):
    target = tmp_path / "p.cf"
    path = {"pathlib": target, "str": str(target), "bytes": os.fsencode(target),
            "fspath": _FsPath(target)}[kind]
    f = cuckoo.CuckooFilter(500)
    f.add_many(np.arange(300, dtype=np.uint64))
    f.save(path)
    assert target.read_bytes() == f.to_bytes()
    assert cuckoo.CuckooFilter.load(path).to_bytes() == f.to_bytes()
    assert cuckoo.CuckooFilter.map(path).to_bytes() == f.to_bytes()
    c = cuckoo.ConcurrentCuckooFilter.load(path)
    assert c.to_bytes() == f.to_bytes()
    c.save(path)
    assert target.read_bytes() == f.to_bytes()


def test_non_ascii_path(tmp_path):
    path = tmp_path / "fïltér ü.cf"
    f = cuckoo.CuckooFilter(100)
    f.add("k")
    f.save(path)
    assert cuckoo.CuckooFilter.load(path).to_bytes() == f.to_bytes()
    assert "k" in cuckoo.CuckooFilter.map(path)


OPENERS = {
    "load": cuckoo.CuckooFilter.load,
    "map": cuckoo.CuckooFilter.map,
    "map_noverify": lambda p: cuckoo.CuckooFilter.map(p, verify=False),
    "concurrent_load": cuckoo.ConcurrentCuckooFilter.load,
}


@pytest.mark.parametrize("opener", list(OPENERS))
def test_missing_file(tmp_path, opener):
    path = tmp_path / "does-not-exist.cf"
    with pytest.raises(FileNotFoundError) as error:
        OPENERS[opener](path)
    assert error.value.errno == errno.ENOENT
    assert "does-not-exist.cf" in str(error.value)


@pytest.mark.parametrize("opener", list(OPENERS))
def test_directory_is_refused(tmp_path, opener):
    with pytest.raises(OSError) as error:
        OPENERS[opener](tmp_path)
    assert not isinstance(error.value, FileNotFoundError)


def test_save_errors(tmp_path):
    f = cuckoo.CuckooFilter(100)
    with pytest.raises(FileNotFoundError):
        f.save(tmp_path / "no-such-dir" / "f.cf")
    (tmp_path / "dir.cf").mkdir()
    with pytest.raises(OSError):
        f.save(tmp_path / "dir.cf")
    assert (tmp_path / "dir.cf").is_dir()
    with pytest.raises(OSError):
        cuckoo.ConcurrentCuckooFilter(100).save(tmp_path / "no-such-dir" / "c.cf")
    # A failed save leaves no temporary file behind.
    assert sorted(os.listdir(tmp_path)) == ["dir.cf"]
