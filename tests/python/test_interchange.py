"""Filter files move between Python, the `cuckoo` command-line tool and C++ in both directions.

Python hashes keys exactly as the C++ library does (str as UTF-8 bytes, bytes as themselves,
integers as 64-bit integers), with the same default seed and the same kick walk, so the same
parameters and the same keys in the same order give the same table: byte-identical files. The
tool's own keys are lines (their bytes) or, with --u64, decimal integers.

Needs CUCKOO_CLI (the tool) and CUCKOO_TESTS_SOURCE_DIR (tests/, for the golden files), which
ctest sets.
"""

from __future__ import annotations

import os
import pathlib
import random
import struct
import subprocess

import numpy as np
import pytest

import cuckoo
from support import crash_isolated

CLI_TIMEOUT = 120  # seconds; the tool takes well under one for these inputs


def _environment_path(name: str, what: str) -> pathlib.Path:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: it must name {what} (ctest sets it)", pytrace=False)
    path = pathlib.Path(value)
    if not path.exists():
        pytest.fail(f"{name}={value}: no such file or directory ({what})", pytrace=False)
    return path


@pytest.fixture(scope="module")
def cli() -> pathlib.Path:
    path = _environment_path("CUCKOO_CLI", "the `cuckoo` command-line tool")
    if not os.access(path, os.X_OK):
        pytest.fail(f"CUCKOO_CLI={path} is not executable", pytrace=False)
    return path


@pytest.fixture(scope="module")
def data_dir() -> pathlib.Path:
    return _environment_path("CUCKOO_TESTS_SOURCE_DIR", "the project's tests/ folder") / "data"


def run(cli, *args, input=None, expect=0, cwd=None) -> subprocess.CompletedProcess:
    result = subprocess.run([str(cli), *map(str, args)], input=input, capture_output=True,
                            timeout=CLI_TIMEOUT, cwd=cwd)
    assert expect is None or result.returncode == expect, (
        f"cuckoo {' '.join(map(str, args))}: exit status {result.returncode}, expected {expect}; "
        f"stderr: {result.stderr.decode(errors='replace')[:500]}")
    return result


def write_lines(path: pathlib.Path, lines) -> pathlib.Path:
    # Lines as the tool reads them: bytes up to each '\n'.
    path.write_bytes(b"".join((line.encode() if isinstance(line, str) else line) + b"\n"
                              for line in lines))
    return path


def string_keys(n: int, seed: int) -> list:
    """Distinct text keys of every sort a line can be: ASCII, UTF-8, spaces and tabs, a carriage
    return, a long line, and the empty line (the empty key)."""
    rng = random.Random(seed)
    keys = [f"user-{i}-{rng.randrange(10**12)}" for i in range(n)]
    keys[1::97] = [f"naïve café {i} 日本語 🦆" for i in range(len(keys[1::97]))]
    keys[2::89] = [f" spaced\tkey {i} " for i in range(len(keys[2::89]))]
    keys[3::501] = [f"cr{i}\r" for i in range(len(keys[3::501]))]
    keys += ["", "x" * 5000, "-", "0", "18446744073709551615"]
    assert len(set(keys)) == len(keys)
    return keys


def integer_keys(n: int, seed: int) -> list:
    rng = random.Random(seed)
    keys = {0, 1, 2**63 - 1, 2**63, 2**64 - 1}
    while len(keys) < n:
        keys.add(rng.randrange(2**64))
    keys = sorted(keys)
    rng.shuffle(keys)
    return keys


def info_fields(text: str) -> dict:
    # `cuckoo info` prints "name" padded to 17 columns, then the value.
    fields = {}
    for line in text.splitlines():
        fields[line[:17].strip()] = line[17:].strip()
    return fields


# ---- (a) The same keys through the tool and through Python: the same file ---------------------

# Parameters as the tool takes them; python_filter() builds the same from Python.
CONFIGS = {
    "default_fpr_b4": dict(capacity=25000),
    "fpr_b2_seed": dict(capacity=25000, fpr=0.0005, bucket_size=2, seed=77, max_kicks=300),
    "bits9_b2": dict(capacity=25000, bits=9, bucket_size=2),
    "bits16_b8_hexseed": dict(capacity=25000, bits=16, bucket_size=8, seed="0xDEADBEEF12345678"),
    "bits32_b4": dict(capacity=25000, bits=32, bucket_size=4, seed=2**64 - 1),
    "semi_sort_bits13": dict(capacity=25000, bits=13, semi_sort=True, seed=5),
    "grow_b4": dict(capacity=100, grow=True, seed=11),
    "grow_b2_bits14": dict(capacity=300, grow=True, bits=14, bucket_size=2),
}
KEYS_PER_FILTER = 20000  # 80% of the fixed filters' capacity: kicks happen; the growable double


def create_args(path, config) -> list:
    args = ["create", path, "--capacity", config["capacity"]]
    if "fpr" in config:
        args += ["--fpr", repr(config["fpr"])]
    if "bits" in config:
        args += ["--bits", config["bits"]]
    for option in ("bucket_size", "seed", "max_kicks"):
        if option in config:
            args += ["--" + option.replace("_", "-"), config[option]]
    if config.get("semi_sort"):
        args.append("--semi-sort")
    if config.get("grow"):
        args.append("--grow")
    return args


def python_filter(config) -> cuckoo.CuckooFilter:
    seed = config.get("seed")
    return cuckoo.CuckooFilter(
        config["capacity"], config.get("fpr", 0.001),
        bucket_size=config.get("bucket_size", 4), fingerprint_bits=config.get("bits"),
        semi_sort=config.get("semi_sort", False), growable=config.get("grow", False),
        seed=int(seed, 16) if isinstance(seed, str) else seed,
        max_kicks=config.get("max_kicks", 500))


@pytest.mark.parametrize("name", list(CONFIGS))
@crash_isolated
def test_string_keys_cli_and_python_write_the_same_file(cli, tmp_path, name):
    config = CONFIGS[name]
    keys = string_keys(KEYS_PER_FILTER, seed=len(name))
    keys_file = write_lines(tmp_path / "keys.txt", keys)
    cli_file = tmp_path / "cli.cf"
    run(cli, *create_args(cli_file, config))
    run(cli, "add", cli_file, keys_file)

    batch = python_filter(config)  # one add_many of a list of str
    assert batch.add_many(keys) == len(keys)
    one_by_one = python_filter(config)  # add() per key, as the tool inserts
    assert all(one_by_one.add(k) for k in keys)
    as_bytes = python_filter(config)  # the same keys as bytes: the same keys
    assert as_bytes.add_many([k.encode() for k in keys]) == len(keys)
    if config.get("grow"):
        assert batch.doublings >= 3, "the growable filter should have grown several times"

    cli_bytes = cli_file.read_bytes()
    assert one_by_one.to_bytes() == cli_bytes
    assert batch.to_bytes() == cli_bytes
    assert as_bytes.to_bytes() == cli_bytes
    saved = tmp_path / "py.cf"
    batch.save(saved)
    assert saved.read_bytes() == cli_bytes

    # Each opens in the other: Python reads the tool's file, the tool reads Python's.
    loaded = cuckoo.CuckooFilter.load(cli_file)
    assert len(loaded) == len(keys) and loaded.contains_many(keys).all()
    result = run(cli, "query", saved, keys_file, "--count")
    assert result.stdout == f"{len(keys)}\n".encode()


@pytest.mark.parametrize("name", ["default_fpr_b4", "semi_sort_bits13", "grow_b4"])
@crash_isolated
def test_cli_fills_a_python_file_and_python_fills_a_cli_file(cli, tmp_path, name):
    # An empty filter made by one side and filled by the other equals one made and filled by
    # either side alone: the file carries every parameter an insert needs.
    config = CONFIGS[name]
    keys = string_keys(KEYS_PER_FILTER, seed=3)
    keys_file = write_lines(tmp_path / "keys.txt", keys)
    reference = python_filter(config)
    assert reference.add_many(keys) == len(keys)

    py_made = tmp_path / "py_made.cf"
    python_filter(config).save(py_made)
    run(cli, "add", py_made, keys_file)
    assert py_made.read_bytes() == reference.to_bytes()

    cli_made = tmp_path / "cli_made.cf"
    run(cli, *create_args(cli_made, config))
    with cuckoo.locked_update(cli_made) as f:
        assert f.add_many(keys) == len(keys)
    assert cli_made.read_bytes() == reference.to_bytes()


@pytest.mark.parametrize("name", ["default_fpr_b4", "semi_sort_bits13", "grow_b4"])
@crash_isolated
def test_python_and_cli_take_turns_on_one_file(cli, tmp_path, name):
    # Alternating writers: Python adds, the tool adds, Python removes, the tool removes. Every
    # key added and not removed is found by both, and the count is exact. (Not byte-compared
    # with a one-session filter: the kick walk's random state is not part of the file, so a
    # growable filter that kicked before the save kicks differently after the load.)
    config = CONFIGS[name]
    keys = string_keys(KEYS_PER_FILTER, seed=6)
    quarter = len(keys) // 4
    a, b, c, d = (keys[i * quarter:(i + 1) * quarter] for i in range(4))
    path = tmp_path / "f.cf"
    run(cli, *create_args(path, config))
    f = cuckoo.CuckooFilter.load(path)
    assert f.add_many(a + b) == len(a + b)
    f.save(path)
    run(cli, "add", path, write_lines(tmp_path / "cd.txt", c + d))
    f = cuckoo.CuckooFilter.load(path)
    assert len(f) == 4 * quarter
    assert f.discard_many(a) == len(a)
    f.save(path)
    run(cli, "remove", path, write_lines(tmp_path / "c.txt", c))
    kept = b + d
    f = cuckoo.CuckooFilter.load(path)
    assert len(f) == len(kept)
    assert f.contains_many(kept).all()
    result = run(cli, "query", path, write_lines(tmp_path / "kept.txt", kept), "--count")
    assert result.stdout == f"{len(kept)}\n".encode()
    fields = info_fields(run(cli, "info", path).stdout.decode())
    assert fields["items"] == str(len(kept))


@pytest.mark.parametrize("name", ["default_fpr_b4", "bits16_b8_hexseed", "semi_sort_bits13",
                                  "grow_b2_bits14"])
@crash_isolated
def test_u64_keys_cli_and_python_write_the_same_file(cli, tmp_path, name):
    config = CONFIGS[name]
    keys = integer_keys(KEYS_PER_FILTER, seed=len(name))
    keys_file = write_lines(tmp_path / "ints.txt", map(str, keys))
    cli_file = tmp_path / "cli.cf"
    run(cli, *create_args(cli_file, config))
    run(cli, "add", cli_file, keys_file, "--u64")
    f = python_filter(config)
    assert f.add_many(np.array(keys, dtype=np.uint64)) == len(keys)
    assert f.to_bytes() == cli_file.read_bytes()
    result = run(cli, "query", cli_file, keys_file, "--u64", "--count")
    assert result.stdout == f"{len(keys)}\n".encode()


# ---- (b) A Python-saved filter answers `cuckoo query` as Python does ---------------------------

QUERY_CONFIGS = {
    # Narrow fingerprints so that non-members give many false positives: those must agree too.
    "b4_bits6": dict(capacity=6000, bits=6),
    "b2_bits5_seed": dict(capacity=6000, bits=5, bucket_size=2, seed=99),
    "b8_bits8": dict(capacity=6000, bits=8, bucket_size=8),
    "semi_bits6": dict(capacity=6000, bits=6, semi_sort=True),
    "grow_b4": dict(capacity=50, grow=True),
}


def _query_case(tmp_path, name, integer: bool):
    config = QUERY_CONFIGS[name]
    f = python_filter(config)
    if integer:
        members = integer_keys(5000, seed=1)
        member_set = set(members)
        others = [k for k in integer_keys(25000, seed=2) if k not in member_set][:20000]
    else:
        members = string_keys(5000, seed=1)
        member_set = set(members)
        others = [k for k in string_keys(20000, seed=2) if k not in member_set]
    assert f.add_many(np.array(members, dtype=np.uint64) if integer else members) == len(members)
    probes = list(members) + others
    random.Random(7).shuffle(probes)
    path = tmp_path / "f.cf"
    f.save(path)
    probe_file = write_lines(tmp_path / "probes.txt", map(str, probes))
    answers = f.contains_many(np.array(probes, dtype=np.uint64) if integer else probes)
    assert answers.dtype == np.bool_ and answers.shape == (len(probes),)
    return f, path, probe_file, probes, answers, set(members)


@pytest.mark.parametrize("integer", [False, True], ids=["str", "u64"])
@pytest.mark.parametrize("name", list(QUERY_CONFIGS))
@crash_isolated
def test_cli_query_answers_as_python(cli, tmp_path, name, integer):
    f, path, probe_file, probes, answers, members = _query_case(tmp_path, name, integer)
    u64 = ["--u64"] if integer else []
    present = [str(k) for k, a in zip(probes, answers) if a]
    absent = [str(k) for k, a in zip(probes, answers) if not a]
    # The comparison means something only if both sides have false positives and true negatives.
    false_positives = sum(1 for k, a in zip(probes, answers) if a and k not in members)
    assert false_positives > 0 and absent

    def lines(result):
        return result.stdout.decode().split("\n")[:-1]

    assert lines(run(cli, "query", path, probe_file, *u64)) == present
    assert lines(run(cli, "query", path, probe_file, "--absent", *u64)) == absent
    assert lines(run(cli, "query", path, probe_file, "--count", *u64)) == [str(len(present))]
    assert lines(run(cli, "query", path, probe_file, "--absent", "--count", *u64)) == [
        str(len(absent))]
    # The keys on stdin ('-') are answered alike.
    stdin = probe_file.read_bytes()
    assert lines(run(cli, "query", path, "-", *u64, input=stdin)) == present
    # Nothing selected is exit status 1: --absent over the members alone.
    member_file = write_lines(tmp_path / "members.txt", (str(k) for k in members))
    result = run(cli, "query", path, member_file, "--absent", "--count", *u64, expect=1)
    assert lines(result) == ["0"]


@crash_isolated
def test_cli_query_of_a_mapped_and_a_concurrent_filters_file(cli, tmp_path):
    # ConcurrentCuckooFilter.save writes the same format; the tool answers it like Python.
    keys = string_keys(3000, seed=4)
    c = cuckoo.ConcurrentCuckooFilter(4000, fingerprint_bits=7, seed=123)
    assert c.add_many(keys) == len(keys)
    c.save(tmp_path / "c.cf")
    probes = string_keys(10000, seed=5)
    probe_file = write_lines(tmp_path / "probes.txt", probes)
    answers = c.contains_many(probes)
    result = run(cli, "query", tmp_path / "c.cf", probe_file)
    assert result.stdout.decode().split("\n")[:-1] == [k for k, a in zip(probes, answers) if a]
    mapped = cuckoo.CuckooFilter.map(tmp_path / "c.cf")
    np.testing.assert_array_equal(mapped.contains_many(probes), answers)


@pytest.mark.parametrize("name", ["default_fpr_b4", "fpr_b2_seed", "bits16_b8_hexseed",
                                  "semi_sort_bits13"])
@crash_isolated
def test_cli_info_reads_a_python_file(cli, tmp_path, name):
    config = CONFIGS[name]
    f = python_filter(config)
    assert f.add_many(np.arange(12345, dtype=np.uint64)) == 12345
    path = tmp_path / "f.cf"
    f.save(path)
    fields = info_fields(run(cli, "info", path).stdout.decode())
    assert fields["file"] == f"{path} ({len(f.to_bytes())} bytes)"
    assert fields["format"] == "cuckoo filter, format version 1"
    assert fields["growable"] == "no"
    assert fields["hash"] == f"XXH3-64, seed {f.seed:#018x}"
    assert fields["fingerprint"] == f"{f.fingerprint_bits} bits"
    assert fields["bucket size"] == str(f.bucket_size) + (" (semi-sorted)" if f.semi_sorted
                                                          else "")
    assert fields["buckets"] == f"{f.bucket_count} ({f.slot_count} slots)"
    assert fields["capacity"] == str(f.capacity)
    assert fields["items"] == str(len(f)) == "12345"
    assert fields["load"] == f"{100 * f.load_factor:.2f}%"
    assert fields["max kicks"] == str(f.max_kicks)
    assert fields["checksum"].startswith("ok")


@pytest.mark.parametrize("name", ["grow_b4", "grow_b2_bits14"])
@crash_isolated
def test_cli_info_shows_a_python_filters_growth(cli, tmp_path, name):
    config = CONFIGS[name]
    f = python_filter(config)
    path = tmp_path / "g.cf"
    f.save(path)
    fields = info_fields(run(cli, "info", path).stdout.decode())
    assert fields["doublings"] == "0" and fields["items"] == "0"
    assert f.add_many(np.arange(30000, dtype=np.uint64)) == 30000
    assert f.doublings >= 5
    f.save(path)
    fields = info_fields(run(cli, "info", path).stdout.decode())
    assert fields["format"] == "cuckoo filter, format version 2"
    assert fields["growable"].startswith("yes")
    assert fields["hash"] == f"XXH3-64, seed {f.seed:#018x}"
    assert fields["doublings"] == str(f.doublings)
    assert fields["start capacity"] == str(config["capacity"])
    assert fields["capacity"] == f"{f.capacity} (start x 2^{f.doublings})"
    assert f.capacity == config["capacity"] << f.doublings
    assert fields["items"] == str(len(f)) == "30000"
    assert fields["buckets"] == f"{f.bucket_count} ({f.slot_count} slots)"
    assert fields["bucket size"] == str(f.bucket_size)
    assert fields["compared bits"].split()[0] == str(f.fingerprint_bits)
    header_base_bits = struct.unpack_from("<I", path.read_bytes(), 20)[0]
    assert fields["base fingerprint"].split()[0] == str(header_base_bits)
    assert fields["checksum"].startswith("ok")


# ---- (c) The golden files written by C++ load in Python and answer as recorded -----------------

GOLDEN_SEED = 0x676F6C64656E3031  # tests/data/golden_keys.hpp
GOLDEN = {  # name: (bucket size, f (the base width for a growable file), growable)
    "golden_v1_b4_f12.cf": (4, 12, False),
    "golden_v1_b2_f7.cf": (2, 7, False),
    "golden_v1_b8_f16.cf": (8, 16, False),
    "golden_v2_grow_b4_f13.cf": (4, 13, True),
    "golden_v2_grow_b2_f11.cf": (2, 11, True),
    "golden_v2_barefirst_b4_f13.cf": (4, 13, True),
    "golden_v2_barefirst_b2_f11.cf": (2, 11, True),
}
INSERTED_INTEGERS, PROBED_INTEGERS = 1500, 50000
INSERTED_STRINGS, PROBED_STRINGS = 400, 2000


def golden_integer_keys(n: int) -> np.ndarray:
    # integer_key(i) = i * 0x9E3779B97F4A7C15 + 7 mod 2**64: numpy's uint64 arithmetic wraps.
    return np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(7)


def read_expected(path: pathlib.Path):
    """make_golden.cpp's record: "size <n>", then "u <i>" / "s <i>" for each probe that answered
    "maybe present" when the file was written."""
    lines = path.read_text().split("\n")
    word, size = lines[0].split()
    assert word == "size"
    positives = {"u": set(), "s": set()}
    for line in lines[1:]:
        if line:
            kind, index = line.split()
            positives[kind].add(int(index))
    return int(size), positives


@pytest.mark.parametrize("opener", ["load", "map", "from_bytes", "cli_then_python"])
@pytest.mark.parametrize("name", list(GOLDEN))
@crash_isolated
def test_golden_files_answer_as_recorded(cli, data_dir, tmp_path, name, opener):
    path = data_dir / name
    bucket_size, bits, growable = GOLDEN[name]
    size, positives = read_expected(data_dir / (name + ".expected"))
    assert len(positives["u"]) > INSERTED_INTEGERS  # the record includes false positives
    if opener == "load":
        f = cuckoo.CuckooFilter.load(path)
    elif opener == "map":
        f = cuckoo.CuckooFilter.map(path)
    elif opener == "from_bytes":
        f = cuckoo.CuckooFilter.from_bytes(path.read_bytes())
    else:
        # The tool rewrites the file through a no-op add (load + save): still the same file.
        copy = tmp_path / name
        copy.write_bytes(path.read_bytes())
        run(cli, "add", copy, input=b"")
        f = cuckoo.CuckooFilter.load(copy)

    assert len(f) == size
    assert f.seed == GOLDEN_SEED
    assert f.bucket_size == bucket_size and f.growable == growable
    assert struct.unpack_from("<I", path.read_bytes(), 20)[0] == bits
    if growable:
        assert f.doublings >= 3 and f.capacity == 100 << f.doublings
    else:
        assert f.fingerprint_bits == bits and f.capacity == 2000 and f.doublings == 0

    integer_answers = f.contains_many(golden_integer_keys(PROBED_INTEGERS))
    want = np.zeros(PROBED_INTEGERS, dtype=bool)
    want[sorted(positives["u"])] = True
    np.testing.assert_array_equal(integer_answers, want)
    string_answers = f.contains_many([f"golden-{i}" for i in range(PROBED_STRINGS)])
    want = np.zeros(PROBED_STRINGS, dtype=bool)
    want[sorted(positives["s"])] = True
    np.testing.assert_array_equal(string_answers, want)
    # Scalar lookups (int and str) agree with the batches, and every inserted key is there.
    for i in range(0, PROBED_INTEGERS, 997):
        assert (int(golden_integer_keys(i + 1)[i]) in f) == (i in positives["u"])
    assert all(f"golden-{i}" in f for i in range(INSERTED_STRINGS))
    assert integer_answers[:INSERTED_INTEGERS].all()
    # Writing it again reproduces the committed bytes exactly.
    assert f.to_bytes() == path.read_bytes()


@crash_isolated
def test_golden_files_pass_cli_info(cli, data_dir):
    for name in GOLDEN:
        fields = info_fields(run(cli, "info", data_dir / name).stdout.decode())
        f = cuckoo.CuckooFilter.load(data_dir / name)
        assert fields["items"] == str(len(f))
        assert fields["checksum"].startswith("ok")


# ---- (d) One integer key, three spellings: Python int, numpy uint64, the tool's --u64 ---------


@crash_isolated
def test_python_int_numpy_uint64_and_cli_u64_are_the_same_keys(cli, tmp_path):
    keys = integer_keys(15000, seed=8)
    config = dict(capacity=20000, bits=12, bucket_size=4, seed=2024)
    keys_file = write_lines(tmp_path / "ints.txt", map(str, keys))
    cli_file = tmp_path / "cli.cf"
    run(cli, *create_args(cli_file, config))
    run(cli, "add", cli_file, keys_file, "--u64")
    want = cli_file.read_bytes()

    spellings = {
        "int list": keys,
        "int tuple": tuple(keys),
        "int generator": (k for k in keys),
        "uint64 array": np.array(keys, dtype=np.uint64),
        # Keys >= 2**63 as negative ints / int64: their two's complement is the same 64 bits.
        "negative ints": [k - 2**64 if k >= 2**63 else k for k in keys],
        "int64 array": np.array(keys, dtype=np.uint64).view(np.int64),
        "object array": np.array(keys, dtype=object),
        "numpy scalars": [np.uint64(k) for k in keys],
    }
    for spelling, batch in spellings.items():
        f = python_filter(config)
        assert f.add_many(batch) == len(keys), spelling
        assert f.to_bytes() == want, f"{spelling}: not the tool's --u64 filter"
    one_by_one = python_filter(config)
    for k in keys:
        assert one_by_one.add(k)
    assert one_by_one.to_bytes() == want

    # And the other way: the tool's --u64 file answers Python's ints of every spelling.
    loaded = cuckoo.CuckooFilter.load(cli_file)
    assert loaded.contains_many(np.array(keys, dtype=np.uint64)).all()
    assert loaded.contains_many(keys).all()
    assert all(k in loaded for k in keys[:500])
    assert all((k - 2**64 if k >= 2**63 else k) in loaded for k in keys[:500])


@crash_isolated
def test_small_integers_are_not_their_decimal_strings(cli, tmp_path):
    # --u64 "5" is the integer 5; without --u64 "5" is the one-byte string: different keys, in
    # Python (5 vs "5") as in the tool.
    f = cuckoo.CuckooFilter(1000, fingerprint_bits=32)
    f.add_many(np.arange(100, dtype=np.uint64))
    f.save(tmp_path / "f.cf")
    numbers = write_lines(tmp_path / "n.txt", map(str, range(100)))
    assert run(cli, "query", tmp_path / "f.cf", numbers, "--u64", "--count").stdout == b"100\n"
    as_text = run(cli, "query", tmp_path / "f.cf", numbers, "--count", expect=1)
    python_text = int(f.contains_many([str(i) for i in range(100)]).sum())
    assert as_text.stdout == f"{python_text}\n".encode()
    assert python_text == 0  # 32-bit fingerprints: no false positive among 100 probes
