"""cuckoo.locked_update: many writers of one filter file, across processes and tools.

locked_update takes the file's writer lock (flock on the file, the protocol of docs/FORMAT.md that
`cuckoo add` / `remove` follow too), loads, lets the block change the filter and saves atomically
only if the block ends normally. So concurrent writers never lose each other's keys; a block
that raises leaves the file as it was; and a writer that cannot get the lock within `wait`
seconds raises LockTimeoutError (a TimeoutError) without touching the file.

Needs CUCKOO_CLI (the `cuckoo` tool), which ctest sets. Every subprocess is waited for with a
bound and killed if the test leaves early.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pathlib
import select
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import cuckoo

TIMEOUT = 120  # seconds: a bound for any subprocess, never a measurement


@pytest.fixture(scope="module")
def cli() -> pathlib.Path:
    value = os.environ.get("CUCKOO_CLI")
    if not value:
        pytest.fail("CUCKOO_CLI is not set: it must name the `cuckoo` command-line tool (ctest "
                    "sets it)", pytrace=False)
    if not os.access(value, os.X_OK):
        pytest.fail(f"CUCKOO_CLI={value} is not an executable file", pytrace=False)
    return pathlib.Path(value)


@pytest.fixture
def processes():
    """Starts subprocesses (sys.executable, the environment inherited: PYTHONPATH) and kills any
    still running when the test ends."""
    started = []

    def start(args, **kwargs):
        process = subprocess.Popen(args, **kwargs)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(TIMEOUT)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream:
                stream.close()


def run_cli(cli, *args, input=None, expect=0):
    result = subprocess.run([str(cli), *map(str, args)], input=input, capture_output=True,
                            timeout=TIMEOUT)
    assert result.returncode == expect, (
        f"cuckoo {' '.join(map(str, args))}: exit status {result.returncode}, expected {expect}; "
        f"stderr: {result.stderr.decode(errors='replace')[:500]}")
    return result


def write_lines(path, keys):
    path.write_text("".join(f"{k}\n" for k in keys))
    return path


def read_line(process, timeout=TIMEOUT) -> str:
    """The next line of a subprocess's stdout, waiting at most `timeout` seconds."""
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, "the subprocess printed nothing in time"
    return process.stdout.readline().decode().strip()


# ---- Concurrent writers: Python processes and the tool at once --------------------------------

_WRITER_SCRIPT = r'''
import sys
import numpy as np
import cuckoo

path, keys_file, integers, chunk = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
keys = open(keys_file, encoding="utf-8").read().split("\n")[:-1]
if integers:
    keys = np.array([int(k) for k in keys], dtype=np.uint64)
print("ready", flush=True)
sys.stdin.readline()  # every writer starts at once
cycles = 0
for i in range(0, len(keys), chunk):
    with cuckoo.locked_update(path, wait=120) as f:
        assert f.add_many(keys[i:i + chunk]) == len(keys[i:i + chunk])
    cycles += 1
print("done", cycles, flush=True)
'''

PY_WRITERS = 3
KEYS_PER_WRITER = 24_000
CHUNK = 1_500  # 16 load-change-save cycles per writer: plenty of chances to collide
CLI_CHUNKS = 12


def writer_keys(w: int) -> list:
    if w == 0:  # integer keys, as python ints on one side and --u64 lines on the other
        return [(i * 0x9E3779B97F4A7C15 + w) % 2**64 for i in range(1, KEYS_PER_WRITER + 1)]
    return [f"writer{w}-key{i}-ü" for i in range(KEYS_PER_WRITER)]


@pytest.mark.parametrize("kind", ["fixed", "growable"])
def test_concurrent_writers_keep_every_key(cli, tmp_path, processes, kind):
    path = tmp_path / "shared.cf"
    if kind == "fixed":
        cuckoo.CuckooFilter(200_000, fingerprint_bits=16).save(path)
    else:  # doubles several times while the writers take turns
        cuckoo.CuckooFilter(1_000, growable=True).save(path)

    writers = []
    for w in range(PY_WRITERS):
        keys_file = write_lines(tmp_path / f"py{w}.txt", writer_keys(w))
        writers.append(processes(
            [sys.executable, "-c", _WRITER_SCRIPT, str(path), str(keys_file), str(int(w == 0)),
             str(CHUNK)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for process in writers:
        assert read_line(process) == "ready"

    # The tool's writer: a sequence of `cuckoo add` runs, text and --u64 chunks in turn.
    cli_text = [f"cli-key{i}" for i in range(CLI_CHUNKS * 1_000)]
    cli_ints = [2**63 + i * 7919 for i in range(CLI_CHUNKS * 1_000)]
    cli_runs = []
    for c in range(CLI_CHUNKS):
        text = write_lines(tmp_path / f"cli{c}.txt", cli_text[c * 1_000:(c + 1) * 1_000])
        ints = write_lines(tmp_path / f"cli{c}.u64", cli_ints[c * 1_000:(c + 1) * 1_000])
        cli_runs += [[text], [ints, "--u64"]]
    cli_errors = []

    def cli_writer():
        try:
            for args in cli_runs:
                run_cli(cli, "add", path, *args)
        except BaseException as error:  # noqa: BLE001 - reported below
            cli_errors.append(error)

    cli_thread = threading.Thread(target=cli_writer, daemon=True)
    for process in writers:  # go
        process.stdin.write(b"go\n")
        process.stdin.flush()
    cli_thread.start()
    for process in writers:
        out, err = process.communicate(timeout=TIMEOUT)
        assert process.returncode == 0, err.decode(errors="replace")[-2000:]
        assert out.decode().split() == ["done", str(KEYS_PER_WRITER // CHUNK)]
    cli_thread.join(TIMEOUT)
    assert not cli_thread.is_alive(), "the tool's writer did not finish"
    if cli_errors:
        raise cli_errors[0]

    f = cuckoo.CuckooFilter.load(path)
    for w in range(PY_WRITERS):
        keys = writer_keys(w)
        found = f.contains_many(np.array(keys, dtype=np.uint64 if w == 0 else None))
        assert found.all(), f"python writer {w}: {int((~found).sum())} keys lost"
    assert f.contains_many(np.array(cli_text)).all(), "the tool's text keys were lost"
    assert f.contains_many(np.array(cli_ints, dtype=np.uint64)).all(), "the --u64 keys were lost"
    total = PY_WRITERS * KEYS_PER_WRITER + len(cli_text) + len(cli_ints)
    assert len(f) == total
    if kind == "growable":
        assert f.doublings >= 5
    # The tool agrees, and no writer left a temporary file behind.
    every = write_lines(tmp_path / "every.txt", cli_text + writer_keys(1) + writer_keys(2))
    result = run_cli(cli, "query", path, every, "--count")
    assert result.stdout == f"{len(cli_text) + 2 * KEYS_PER_WRITER}\n".encode()
    leftovers = [p.name for p in tmp_path.iterdir() if not p.name.endswith((".txt", ".u64"))]
    assert leftovers == ["shared.cf"]


def test_threads_of_one_process_take_turns(tmp_path):
    # flock locks belong to an open file description: each locked_update opens the file itself,
    # so threads of one process exclude each other too.
    path = tmp_path / "threads.cf"
    cuckoo.CuckooFilter(100_000).save(path)
    errors = []

    def writer(w):
        try:
            for c in range(10):
                keys = np.arange(1_000, dtype=np.uint64) + np.uint64(w * 10**6 + c * 1_000)
                with cuckoo.locked_update(path, wait=TIMEOUT) as f:
                    assert f.add_many(keys) == len(keys)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]
    f = cuckoo.CuckooFilter.load(path)
    assert len(f) == 40_000
    for w in range(4):
        assert f.contains_many(np.arange(10_000, dtype=np.uint64) + np.uint64(w * 10**6)).all()


# ---- A block that raises saves nothing -------------------------------------------------------


@pytest.fixture
def small_file(tmp_path):
    path = tmp_path / "f.cf"
    f = cuckoo.CuckooFilter(1_000, fingerprint_bits=12)
    assert f.add_many(np.arange(500, dtype=np.uint64)) == 500
    f.save(path)
    return path


class Boom(Exception):
    pass


@pytest.mark.parametrize("error", [Boom, KeyboardInterrupt, cuckoo.FilterFullError])
def test_exception_in_the_block_leaves_the_file_untouched(small_file, cli, error):
    path = small_file
    before = path.read_bytes()
    inode = os.stat(path).st_ino
    with pytest.raises(error):
        with cuckoo.locked_update(path) as f:
            assert len(f) == 500
            f.add_many(np.arange(10**6, 10**6 + 300, dtype=np.uint64))
            f.discard_many(np.arange(100, dtype=np.uint64))
            if error is cuckoo.FilterFullError:
                f.add_many(np.arange(2 * 10**6, 3 * 10**6, dtype=np.uint64), strict=True)
            raise error("raised inside the block")
    assert path.read_bytes() == before
    assert os.stat(path).st_ino == inode  # not even replaced by an identical copy
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.cf"]  # no temporary left
    # The lock was let go: another writer gets it at once, here and through the tool.
    with cuckoo.locked_update(path, wait=0) as f:
        assert f.add("after the failed block")
    run_cli(cli, "add", path, "--wait", "0", input=b"from the tool\n")
    f = cuckoo.CuckooFilter.load(path)
    assert len(f) == 502 and "after the failed block" in f and "from the tool" in f


def test_a_block_that_ends_normally_saves(small_file):
    with cuckoo.locked_update(str(small_file)) as f:
        f.discard_many(np.arange(250, dtype=np.uint64))
        f.add("new")
    g = cuckoo.CuckooFilter.load(small_file)
    assert len(g) == 251 and "new" in g
    assert g.to_bytes() == small_file.read_bytes()


@pytest.mark.parametrize("kind", ["pathlib", "str", "bytes"])
def test_path_kinds(small_file, kind):
    path = {"pathlib": small_file, "str": str(small_file), "bytes": os.fsencode(small_file)}[kind]
    with cuckoo.locked_update(path) as f:
        f.add(kind)
    assert kind in cuckoo.CuckooFilter.load(small_file)


def test_missing_file(tmp_path):
    path = tmp_path / "missing.cf"
    with pytest.raises(FileNotFoundError):
        with cuckoo.locked_update(path, wait=0):
            pytest.fail("the block ran without a file")
    assert not path.exists()


def test_damaged_file_is_refused_and_left_alone(small_file):
    data = bytearray(small_file.read_bytes())
    data[300] ^= 0x40
    small_file.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="checksum"):
        with cuckoo.locked_update(small_file, wait=0):
            pytest.fail("the block ran on a damaged file")
    assert small_file.read_bytes() == bytes(data)
    assert not lock_is_held(small_file)  # ... and the lock was let go


# ---- Another holder keeps the lock: LockTimeoutError, file untouched -----------------------

_FLOCK_HOLDER = r'''
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_CLOEXEC)
fcntl.flock(fd, fcntl.LOCK_EX)  # the protocol's lock, taken by hand
print("locked", flush=True)
sys.stdin.readline()
os.close(fd)
'''

_LOCKED_UPDATE_HOLDER = r'''
import sys
import cuckoo
with cuckoo.locked_update(sys.argv[1]) as f:
    print("locked", flush=True)
    f.add(sys.stdin.readline().strip())
'''


def lock_is_held(path) -> bool:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also lets go of the lock if it was taken
    return False


@contextlib.contextmanager
def lock_holder(how, path, cli, processes):
    """A subprocess holding the file's writer lock until the block ends; it adds the key
    "from the holder" on the way out (all but the bare flock holder)."""
    if how == "flock":
        process = processes([sys.executable, "-c", _FLOCK_HOLDER, str(path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert read_line(process) == "locked"
    elif how == "locked_update":
        process = processes([sys.executable, "-c", _LOCKED_UPDATE_HOLDER, str(path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert read_line(process) == "locked"
    else:  # `cuckoo add` holds the lock while it reads keys from a stdin that has none yet
        process = processes([str(cli), "add", str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(TIMEOUT * 100):
            if lock_is_held(path) or process.poll() is not None:
                break
            time.sleep(0.01)
    assert process.poll() is None, "the lock holder exited early"
    assert lock_is_held(path)
    yield process
    process.stdin.write(b"from the holder\n")
    process.stdin.close()
    process.wait(TIMEOUT)
    assert process.returncode == 0


HOLDERS = ["flock", "locked_update", "cli_add"]


@pytest.mark.parametrize("how", HOLDERS)
def test_lock_timeout(small_file, cli, processes, how):
    path = small_file
    before = path.read_bytes()
    inode = os.stat(path).st_ino
    with lock_holder(how, path, cli, processes):
        for wait in (0.2, 0):
            ran = []
            with pytest.raises(cuckoo.LockTimeoutError) as raised:
                with cuckoo.locked_update(path, wait=wait) as f:
                    ran.append(f)
            assert not ran, "the block ran without the lock"
            assert isinstance(raised.value, TimeoutError)
            assert path.read_bytes() == before and os.stat(path).st_ino == inode
        # Readers never wait for the lock.
        assert len(cuckoo.CuckooFilter.load(path)) == 500
        assert len(cuckoo.CuckooFilter.map(path)) == 500
    # Once the holder has gone, the lock is free again.
    with cuckoo.locked_update(path, wait=0) as f:
        if how != "flock":
            assert "from the holder" in f
        f.add("after the holder")
    assert "after the holder" in cuckoo.CuckooFilter.load(path)


@pytest.mark.parametrize("how", HOLDERS)
def test_a_waiting_writer_gets_the_lock_when_the_holder_lets_go(small_file, cli, processes,
                                                                how):
    # A writer waiting (without a time limit that matters) goes in after the holder, on the file
    # the holder wrote: neither loses its key.
    path = small_file
    outcome = []

    def waiting_writer():
        try:
            with cuckoo.locked_update(path, wait=TIMEOUT) as f:
                f.add("from the waiting writer")
            outcome.append("saved")
        except BaseException as error:  # noqa: BLE001 - reported below
            outcome.append(error)

    thread = threading.Thread(target=waiting_writer, daemon=True)
    with lock_holder(how, path, cli, processes):
        thread.start()
    thread.join(TIMEOUT)
    assert not thread.is_alive() and outcome == ["saved"], outcome
    f = cuckoo.CuckooFilter.load(path)
    assert "from the waiting writer" in f
    if how != "flock":
        assert "from the holder" in f
        assert len(f) == 502
