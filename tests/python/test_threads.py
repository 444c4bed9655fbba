"""Python threads sharing one filter.

CuckooFilter serializes its users with one readers-writer lock per object (lookups shared,
changes exclusive), and its batch calls release the GIL while they work; ConcurrentCuckooFilter
takes no lock for lookups. Either way, a key whose add returned before a lookup began must be
found (never a false negative), keys other threads remove must not take a kept key with them, and
the final count must be exact.

No test here measures time: threads are joined with generous bounds only so that a deadlock
fails the test instead of hanging the run.
"""

from __future__ import annotations

import random
import sys
import threading
import time

import numpy as np
import pytest

import cuckoo

JOIN_TIMEOUT = 120  # seconds; the work takes well under one


def run_threads(*targets):
    """Runs each target in its own thread; re-raises the first exception any of them raised."""
    errors = []

    def guarded(target):
        try:
            target()
        except BaseException as error:  # noqa: BLE001 - reported in the main thread below
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(t,), daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
    assert not any(t.is_alive() for t in threads), "threads did not finish: a deadlock?"
    if errors:
        raise errors[0]


def scrambled(lo: int, hi: int) -> np.ndarray:
    # Distinct uint64 keys spread over the whole range (a multiplication by an odd constant is a
    # bijection mod 2**64).
    return np.arange(lo, hi, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)


def make(kind: str):
    if kind == "locked":
        return cuckoo.CuckooFilter(400_000, fingerprint_bits=16)
    if kind == "locked_semi_sort":
        return cuckoo.CuckooFilter(400_000, fingerprint_bits=13, semi_sort=True)
    if kind == "locked_growable":  # doubles many times while the readers read
        return cuckoo.CuckooFilter(1000, growable=True)
    return cuckoo.ConcurrentCuckooFilter(400_000, fingerprint_bits=16)


KINDS = ["locked", "locked_semi_sort", "locked_growable", "concurrent"]
WRITERS, READERS = 3, 2
PER_WRITER, CHUNK = 90_000, 1_500


@pytest.mark.parametrize("kind", KINDS)
def test_writers_and_readers(kind):
    f = make(kind)
    chunks = [[scrambled(w * PER_WRITER + i, w * PER_WRITER + i + CHUNK)
               for i in range(0, PER_WRITER, CHUNK)] for w in range(WRITERS)]
    published = []  # chunks whose add_many has returned; list.append is atomic
    writers_done = threading.Event()
    readers_ready = threading.Barrier(READERS + 1)  # the writers start once the readers run
    rounds = [0] * READERS

    def writer(w):
        def run():
            for chunk in chunks[w]:
                assert f.add_many(chunk) == len(chunk)
                published.append(chunk)
        return run

    def reader(r):
        rng = random.Random(r)

        def run():
            readers_ready.wait(JOIN_TIMEOUT)
            while True:
                finished = writers_done.is_set()  # read before the snapshot below
                visible = list(published)  # every one of these adds had returned
                if not visible:
                    time.sleep(0.0005)  # not yet: leave the GIL to the writers
                    continue
                # The newest chunks (just published) and a sample of older ones.
                sample = visible[-3:] + rng.sample(visible, min(5, len(visible)))
                found = f.contains_many(np.concatenate(sample))
                assert found.all(), f"false negative: {int((~found).sum())} keys lost"
                key = int(rng.choice(visible)[0])
                assert key in f
                rounds[r] += 1
                if finished:
                    return
        return run

    def writers():
        try:
            readers_ready.wait(JOIN_TIMEOUT)
            run_threads(*(writer(w) for w in range(WRITERS)))
        finally:
            writers_done.set()

    run_threads(writers, *(reader(r) for r in range(READERS)))
    everything = np.concatenate([c for per_writer in chunks for c in per_writer])
    assert len(f) == WRITERS * PER_WRITER
    assert f.contains_many(everything).all()
    assert all(n >= 1 for n in rounds)
    if kind == "locked_growable":
        assert f.doublings >= 5


@pytest.mark.parametrize("kind", KINDS)
def test_discard_while_others_look_up(kind):
    # Removing keys that were added never removes another key's entry: readers of the kept keys
    # see every one of them throughout.
    f = make(kind)
    kept = scrambled(0, 100_000)
    doomed = [scrambled(10**6 + i * 50_000, 10**6 + (i + 1) * 50_000) for i in range(2)]
    assert f.add_many(kept) == len(kept)
    for d in doomed:
        assert f.add_many(d) == len(d)
    removers_done = threading.Event()
    removed = [0, 0]

    def remover(i):
        def run():
            for chunk in np.array_split(doomed[i], 25):
                removed[i] += f.discard_many(chunk)
        return run

    def reader(seed):
        rng = np.random.default_rng(seed)

        def run():
            while True:
                finished = removers_done.is_set()
                sample = kept[rng.integers(0, len(kept), 20_000)]
                found = f.contains_many(sample)
                assert found.all(), f"a kept key went missing: {int((~found).sum())}"
                if finished:
                    return
        return run

    def removers():
        try:
            run_threads(remover(0), remover(1))
        finally:
            removers_done.set()

    run_threads(removers, reader(1), reader(2))
    assert removed == [50_000, 50_000]  # every copy of every doomed key was there to remove
    assert len(f) == len(kept)
    assert f.contains_many(kept).all()
    # The removed keys are gone but for false positives (16-bit fingerprints: a few in 10^4).
    leftovers = sum(int(f.contains_many(d).sum()) for d in doomed)
    assert leftovers < 200


@pytest.mark.parametrize("kind", KINDS)
def test_scalar_and_batch_calls_interleave(kind):
    # Scalar calls take the object's lock with the GIL held (trying first, releasing the GIL only
    # to wait) while batch calls hold it without the GIL: mixing them must neither deadlock nor
    # lose a change.
    f = make(kind)
    batch_keys = [scrambled(i, i + 5_000) for i in range(0, 100_000, 5_000)]
    scalar_keys = [int(k) for k in scrambled(10**7, 10**7 + 6_000)]
    removable = scrambled(2 * 10**7, 2 * 10**7 + 20_000)
    assert f.add_many(removable) == len(removable)

    def batches():
        for chunk in batch_keys:
            assert f.add_many(chunk) == len(chunk)
            assert f.contains_many(chunk).all()

    def scalars(part):
        def run():
            for key in scalar_keys[part::2]:
                assert f.add(key)
                assert key in f
                assert f.count(key) >= 1
        return run

    def removals():
        for chunk in np.array_split(removable, 20):
            assert f.discard_many(chunk) == len(chunk)
            for key in chunk[:10].tolist():
                f.add(key)
                f.remove(key)

    run_threads(batches, scalars(0), scalars(1), removals)
    assert len(f) == 100_000 + len(scalar_keys)
    assert f.contains_many(np.concatenate(batch_keys)).all()
    assert all(key in f for key in scalar_keys)
    assert bool(f) and f.size == len(f)


def test_copies_and_snapshots_while_writing():
    # to_bytes, copy and pickling read under the lock: each snapshot is a whole filter at one
    # instant, holding every chunk whose add_many had returned before it was taken.
    f = cuckoo.CuckooFilter(200_000, fingerprint_bits=16)
    chunks = [scrambled(i, i + 4_000) for i in range(0, 160_000, 4_000)]
    published = []
    done = threading.Event()
    snapshots = []

    def writer():
        try:
            for chunk in chunks:
                assert f.add_many(chunk) == len(chunk)
                published.append(chunk)
        finally:
            done.set()

    def snapshotter():
        while True:
            finished = done.is_set()
            visible = len(published)
            snapshot = cuckoo.CuckooFilter.from_bytes(f.to_bytes())
            copied = f.copy()
            snapshots.append((visible, snapshot, copied))
            if finished:
                return

    run_threads(writer, snapshotter)
    for visible, snapshot, copied in snapshots:
        for g in (snapshot, copied):
            assert len(g) >= visible * 4_000 and len(g) % 4_000 == 0
            if visible:
                assert g.contains_many(np.concatenate(chunks[:visible])).all()
    assert len(f) == 160_000


# ---- Batch calls release the GIL ---------------------------------------------------------------

BIG = 10**7


@pytest.fixture(scope="module")
def big_keys():
    return np.arange(BIG, dtype=np.uint64)


CALLS = {
    "CuckooFilter.contains_many": lambda keys: (
        cuckoo.CuckooFilter(100_000), lambda f: f.contains_many(keys)),
    "CuckooFilter.count_many": lambda keys: (
        cuckoo.CuckooFilter(100_000), lambda f: f.count_many(keys[: BIG // 4])),
    "CuckooFilter.add_many": lambda keys: (
        cuckoo.CuckooFilter(3 * 10**6), lambda f: f.add_many(keys[: 3 * 10**6])),
    "ConcurrentCuckooFilter.contains_many": lambda keys: (
        cuckoo.ConcurrentCuckooFilter(100_000), lambda f: f.contains_many(keys)),
    "ConcurrentCuckooFilter.add_many": lambda keys: (
        cuckoo.ConcurrentCuckooFilter(3 * 10**6), lambda f: f.add_many(keys[: 3 * 10**6])),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_batch_call_releases_the_gil(big_keys, name):
    # With the switch interval set far beyond the call's length, the interpreter never takes the
    # GIL from a running thread: the main thread can run while the worker is inside the call only
    # if the call itself let the GIL go. The worker reads the main thread's counter just before
    # and just after the call; any difference is main-thread progress during the call. No clock
    # is involved: the main thread stops after a fixed count, then waits for the worker.
    f, call = CALLS[name](big_keys)
    counter = [0]
    around_call = []
    entered = threading.Event()

    def worker():
        entered.set()
        before = counter[0]
        call(f)
        around_call.append((before, counter[0]))

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(60.0)
    try:
        thread = threading.Thread(target=worker, daemon=True)
        thread.start()
        assert entered.wait(JOIN_TIMEOUT)
        while thread.is_alive() and counter[0] < 1000:
            counter[0] += 1
        thread.join(JOIN_TIMEOUT)
    finally:
        sys.setswitchinterval(old_interval)
    assert not thread.is_alive()
    assert around_call, "the call raised in the worker"
    before, after = around_call[0]
    assert after > before, f"{name} held the GIL for its whole run"
