"""Damaged files and byte strings: every reader refuses them with a ValueError naming the problem.

A reader must never return a filter for bytes it cannot trust, and never crash on them. For small
saved filters (fixed, semi-sorted, growable) this flips every byte, and every bit of every byte,
and cuts the file at every length; for a larger one it flips a deterministic sample of positions
(fixed seed). Each damaged input goes to from_bytes, load and map (with its checksum check), and a
sample to ConcurrentCuckooFilter's readers. The expected message follows from the field the
damage hit (docs/FORMAT.md: a 128-byte header, the table, the v2 stash, an 8-byte checksum).
"""

from __future__ import annotations

import pickle
import random
import struct

import numpy as np
import pytest

import cuckoo

HEADER = 128
CHECKSUM = 8


def _small_fixed():
    f = cuckoo.CuckooFilter(50, bucket_size=4, fingerprint_bits=8, seed=1)
    assert f.add_many(np.arange(30, dtype=np.uint64)) == 30
    return f


def _small_b2():
    f = cuckoo.CuckooFilter(40, bucket_size=2, fingerprint_bits=7)
    assert f.add_many(np.array(["a", "bb", "ccc", "dddd"] * 3)) == 12
    return f


def _small_semi_sorted():
    f = cuckoo.CuckooFilter(60, bucket_size=4, fingerprint_bits=9, semi_sort=True)
    assert f.add_many(np.arange(40, dtype=np.uint64)) == 40
    return f


def _small_growable():
    f = cuckoo.CuckooFilter(8, bucket_size=2, growable=True, seed=3)
    assert f.add_many(np.arange(100, dtype=np.uint64)) == 100
    assert f.doublings >= 2
    return f


def _empty():
    return cuckoo.CuckooFilter(10)


def _larger():
    f = cuckoo.CuckooFilter(5000, fingerprint_bits=12)
    assert f.add_many(np.arange(4000, dtype=np.uint64)) == 4000
    return f


SMALL = {"fixed": _small_fixed, "b2": _small_b2, "semi_sorted": _small_semi_sorted,
         "growable": _small_growable, "empty": _empty}


def expected_words(data: bytes, position: int) -> tuple:
    """What a message may name when the byte at `position` of a sound file is changed: the field
    there, or the checksum where any value of the field is valid in itself."""
    version = struct.unpack_from("<I", data, 8)[0]
    if position >= len(data) - CHECKSUM:
        return ("checksum",)
    if position >= HEADER:
        return ("checksum",)  # the table or the stash: only the checksum can tell
    fields = [  # (start, end, words)
        (0, 8, ("magic",)),
        (8, 12, ("version",)),
        (12, 16, ("kind",)),
        (16, 20, ("hash",)),
        # A shape field changed to another valid value shows as a table of the wrong size.
        (20, 24, ("fingerprint", "table size")),
        (24, 28, ("bucket size", "table size")),
        (28, 32, ("flag", "table size", "semi")),
        (32, 36, ("max_kicks", "checksum")),
        (36, 40, ("reserved",)),
        (40, 48, ("bucket count", "table size", "item count")),
        (48, 56, ("checksum",)),  # the seed: any value is a valid seed
        (56, 64, ("item count", "checksum")),
        (64, 72, ("capacity", "checksum")),
        (72, 80, ("table size",)),
    ]
    if version == 2:
        fields += [(80, 84, ("doublings", "table size", "checksum")),
                   (84, 88, ("stash", "truncated")),
                   # The width schedule: an unknown one is named; the other known one shows
                   # as a table of the wrong size, or (where both give the same widths) only
                   # the checksum can tell.
                   (88, 92, ("growth schedule", "table size", "checksum")),
                   (92, 128, ("reserved",))]
    else:
        fields += [(80, 128, ("reserved",))]
    for start, end, words in fields:
        if start <= position < end:
            return words
    raise AssertionError(position)


def assert_refused(read, damaged: bytes, words: tuple, what: str):
    with pytest.raises(ValueError) as refused:
        got = read(damaged)
        pytest.fail(f"{what}: a damaged input was accepted: {got!r}")
    message = str(refused.value)
    assert any(word in message for word in words), (
        f"{what}: the message {message!r} names none of {words}")


def readers(tmp_path):
    """Every way to read bytes: directly, and through a file with load and map."""
    path = tmp_path / "damaged.cf"

    def through_file(open_):
        def read(data):
            path.write_bytes(data)
            return open_(path)
        return read

    return {
        "from_bytes": cuckoo.CuckooFilter.from_bytes,
        "from_bytearray": lambda data: cuckoo.CuckooFilter.from_bytes(bytearray(data)),
        "load": through_file(cuckoo.CuckooFilter.load),
        "map": through_file(cuckoo.CuckooFilter.map),
    }


def concurrent_readers(tmp_path):
    path = tmp_path / "damaged_concurrent.cf"

    def load(data):
        path.write_bytes(data)
        return cuckoo.ConcurrentCuckooFilter.load(path)

    return {"concurrent_from_bytes": cuckoo.ConcurrentCuckooFilter.from_bytes,
            "concurrent_load": load}


def flipped(data: bytes, position: int, mask: int = 0xFF) -> bytes:
    damaged = bytearray(data)
    damaged[position] ^= mask
    return bytes(damaged)


# ---- Single-byte damage ----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SMALL))
def test_every_byte_flip_is_refused(tmp_path, name):
    data = SMALL[name]().to_bytes()
    assert cuckoo.CuckooFilter.from_bytes(data).to_bytes() == data  # the sound file is read
    read_all = readers(tmp_path)
    read_concurrent = concurrent_readers(tmp_path)
    for position in range(len(data)):
        damaged = flipped(data, position)
        words = expected_words(data, position)
        for how, read in read_all.items():
            assert_refused(read, damaged, words, f"{how}, byte {position} flipped")
        if name != "semi_sorted" and name != "growable" and position % 7 == 0:
            for how, read in read_concurrent.items():
                assert_refused(read, damaged, words, f"{how}, byte {position} flipped")


@pytest.mark.parametrize("name", list(SMALL))
def test_every_bit_flip_is_refused(name):
    # A single flipped bit is the damage a checksum exists for; every one must be caught.
    data = SMALL[name]().to_bytes()
    for position in range(len(data)):
        words = expected_words(data, position)
        for bit in range(8):
            assert_refused(cuckoo.CuckooFilter.from_bytes, flipped(data, position, 1 << bit),
                           words, f"bit {bit} of byte {position}")


def test_sampled_flips_of_a_larger_file(tmp_path):
    data = _larger().to_bytes()
    assert len(data) > 5000
    rng = random.Random(20240611)
    positions = sorted(set(range(HEADER)) | set(range(len(data) - 16, len(data)))
                       | set(rng.sample(range(HEADER, len(data)), 300)))
    read_all = readers(tmp_path)
    for position in positions:
        damaged = flipped(data, position, rng.randrange(1, 256))
        words = expected_words(data, position)
        for how, read in read_all.items():
            assert_refused(read, damaged, words, f"{how}, byte {position} changed")


@pytest.mark.parametrize("name", ["fixed", "semi_sorted", "growable"])
def test_unverified_map_never_crashes(tmp_path, name):
    # map(verify=False) skips the checksum, so table damage goes unnoticed by design; but the
    # header is always checked against the file's length, and whatever it opens must answer
    # lookups without crashing.
    data = SMALL[name]().to_bytes()
    path = tmp_path / "unverified.cf"
    probes = np.arange(2000, dtype=np.uint64)
    for position in range(len(data)):
        path.write_bytes(flipped(data, position))
        try:
            mapped = cuckoo.CuckooFilter.map(path, verify=False)
        except ValueError:
            # The header is always checked; semi-sorted and growable tables have an encoding
            # that is checked too. A plain table's bytes are all valid fingerprints.
            assert position < HEADER or name != "fixed", f"byte {position} refused"
            continue
        assert mapped.read_only
        mapped.contains_many(probes)
        mapped.count_many(probes[:100])
        assert ("x" in mapped) in (True, False)
        len(mapped)


# ---- Truncated and extended ------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SMALL))
def test_every_truncation_is_refused(tmp_path, name):
    data = SMALL[name]().to_bytes()
    read_all = {**readers(tmp_path), **concurrent_readers(tmp_path)}
    for length in range(len(data)):
        words = ("empty",) if length == 0 else ("truncated",)
        for how, read in read_all.items():
            assert_refused(read, data[:length], words, f"{how}, cut to {length} bytes")


@pytest.mark.parametrize("extra", [b"\x00", b"\x00" * 7, b"more", bytes(4096)])
def test_trailing_bytes_are_refused(tmp_path, extra):
    data = _small_growable().to_bytes() + extra
    for how, read in readers(tmp_path).items():
        assert_refused(read, data, ("unexpected bytes", "after the checksum"), how)


def test_a_file_made_of_two_files_is_refused(tmp_path):
    data = _small_fixed().to_bytes()
    for how, read in readers(tmp_path).items():
        assert_refused(read, data + data, ("unexpected bytes",), how)


# ---- Garbage and empty input -----------------------------------------------------------------


@pytest.mark.parametrize("length", [1, 7, 8, 9, 127, 128, 136, 1000, 100_000])
def test_random_garbage_is_refused(tmp_path, length):
    rng = random.Random(length)
    garbage = bytes(rng.randrange(256) for _ in range(length))
    for how, read in {**readers(tmp_path), **concurrent_readers(tmp_path)}.items():
        assert_refused(read, garbage, ("magic", "truncated"), f"{how}, {length} random bytes")


def test_garbage_after_a_true_magic_is_refused(tmp_path):
    # Past the magic, random headers fail on the first field that is out of range.
    rng = random.Random(7)
    for trial in range(200):
        garbage = b"\x89CKOO\r\n\x1a" + bytes(rng.randrange(256) for _ in range(300))
        for how, read in readers(tmp_path).items():
            assert_refused(read, garbage, ("version",), f"{how}, trial {trial}")


def test_a_sound_header_with_a_garbage_table_is_refused(tmp_path):
    data = _larger().to_bytes()
    rng = random.Random(11)
    garbage_table = bytes(rng.randrange(256) for _ in range(len(data) - HEADER - CHECKSUM))
    damaged = data[:HEADER] + garbage_table + data[-CHECKSUM:]
    for how, read in readers(tmp_path).items():
        assert_refused(read, damaged, ("checksum",), how)


def test_text_is_refused(tmp_path):
    text = "".join(f"key-{i}\n" for i in range(1000)).encode()
    for how, read in readers(tmp_path).items():
        assert_refused(read, text, ("magic",), how)


@pytest.mark.parametrize("empty", [b"", bytearray(), memoryview(b"")], ids=["bytes",
                                                                             "bytearray",
                                                                             "memoryview"])
def test_empty_input_is_refused(empty):
    for read in (cuckoo.CuckooFilter.from_bytes, cuckoo.ConcurrentCuckooFilter.from_bytes):
        assert_refused(read, empty, ("empty",), "empty input")


def test_empty_file_is_refused(tmp_path):
    path = tmp_path / "empty.cf"
    path.write_bytes(b"")
    for read in (cuckoo.CuckooFilter.load, cuckoo.CuckooFilter.map,
                 lambda p: cuckoo.CuckooFilter.map(p, verify=False),
                 cuckoo.ConcurrentCuckooFilter.load):
        assert_refused(read, path, ("empty",), "empty file")


# ---- Damaged pickles -------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [cuckoo.CuckooFilter, cuckoo.ConcurrentCuckooFilter])
def test_damaged_pickle_is_refused(cls):
    # A pickle carries the file bytes: damage to them is refused on unpickling as well.
    f = cls(200, fingerprint_bits=10)
    f.add_many(np.arange(100, dtype=np.uint64))
    data = f.to_bytes()
    pickled = pickle.dumps(f, protocol=pickle.HIGHEST_PROTOCOL)
    at = pickled.find(data)
    assert at >= 0, "the pickle does not carry the file bytes as they are"
    for position in (HEADER + 5, len(data) - 1, 9):
        damaged = bytearray(pickled)
        damaged[at + position] ^= 0x10
        with pytest.raises(ValueError):
            pickle.loads(bytes(damaged))
    assert pickle.loads(pickled).to_bytes() == data
