"""ConcurrentCuckooFilter.sole_writer(): one Python thread writes without locked instructions.

What a user may rely on: the session's writes build the same filter as writes without one; other
threads' lookups go on during a session; their writes wait for it without holding the GIL, so the
session's thread keeps running Python code and ends the session (a write that waited holding the
GIL would deadlock the two threads); nesting, a second filter's refusal, and a session that must
end on its own thread.

The scenarios with waiting threads run in a child interpreter with a time limit, so that a
deadlock (which would hold the GIL and stop pytest itself) is one failed test, not a hung run.
"""

from __future__ import annotations

import textwrap
import threading

import numpy as np
import pytest

import cuckoo
from support import SUBPROCESS_TIMEOUT, run_python

def run_child(code: str) -> str:
    return run_python(textwrap.dedent(code)).decode()


def keys(n: int, offset: int = 0) -> np.ndarray:
    return (np.arange(offset, offset + n, dtype=np.uint64) + np.uint64(1)) * np.uint64(
        0x9E3779B97F4A7C15)


@pytest.mark.parametrize("bucket_size, bits", [(4, 12), (2, 8), (4, 27)])
def test_session_builds_the_same_filter(bucket_size, bits):
    """Single-key and batch adds and discards inside a session give the same bytes as without."""
    made = [cuckoo.ConcurrentCuckooFilter(20_000, bucket_size=bucket_size, fingerprint_bits=bits,
                                          seed=0x5013) for _ in range(2)]
    batch, singles = keys(15_000), [f"key-{i}" for i in range(2_000)]

    def fill(f):
        added = f.add_many(batch)
        added += sum(f.add(k) for k in singles)
        removed = f.discard_many(batch[:1000]) + sum(f.discard(k) for k in singles[:100])
        return added, removed

    plain = fill(made[0])
    with made[1].sole_writer() as session:
        assert isinstance(session, cuckoo.SoleWriterSession)
        in_session = fill(made[1])
    assert plain == in_session and plain[1] == 1100
    assert made[0].to_bytes() == made[1].to_bytes()
    f = made[1]
    assert f.size == plain[0] - plain[1]
    assert f.contains_many(batch[1000:plain[0] - len(singles)]).all()
    assert all(k in f for k in singles[100:])


def test_nesting_and_a_second_filter():
    first = cuckoo.ConcurrentCuckooFilter(1000, seed=1)
    second = cuckoo.ConcurrentCuckooFilter(1000, seed=2)
    with first.sole_writer():
        with first.sole_writer():  # nothing: the outer session keeps the filter
            assert first.add("a")
        assert first.add("b")
        with pytest.raises(RuntimeError, match="another filter"):
            with second.sole_writer():
                pass
        assert second.add("c")  # the refused session held nothing
    with second.sole_writer():
        assert second.add("d")
    assert (first.size, second.size) == (2, 2)


def test_a_session_ends_only_on_its_own_thread():
    f = cuckoo.ConcurrentCuckooFilter(1000, seed=3)
    session = f.sole_writer()
    session.__enter__()
    errors = []

    def end_elsewhere():
        try:
            session.__exit__(None, None, None)
        except RuntimeError as error:
            errors.append(error)

    t = threading.Thread(target=end_elsewhere)
    t.start()
    t.join(SUBPROCESS_TIMEOUT)
    assert len(errors) == 1 and "thread that began it" in str(errors[0])
    assert f.add("still the sole writer")  # the session is still this thread's
    session.__exit__(None, None, None)
    session.__exit__(None, None, None)  # ended already: nothing
    t = threading.Thread(target=lambda: f.add("another thread"))
    t.start()
    t.join(SUBPROCESS_TIMEOUT)
    assert not t.is_alive() and "another thread" in f and f.size == 2


def test_other_threads_wait_without_the_gil_and_lookups_do_not():
    out = run_child("""
        import threading, time
        import cuckoo

        f = cuckoo.ConcurrentCuckooFilter(100_000, seed=7)
        for i in range(1000):
            assert f.add(i)
        started = threading.Barrier(4)
        finished = {}

        def writer(name, call):
            started.wait()
            result = call()
            finished[name] = (time.monotonic(), result)

        def reader():
            started.wait()
            finished["lookups"] = (time.monotonic(), all(i in f for i in range(1000)))

        threads = [threading.Thread(target=writer, args=("add", lambda: f.add("other"))),
                   threading.Thread(target=writer, args=("discard", lambda: f.discard(5))),
                   threading.Thread(target=writer, args=("snapshot", lambda: "late" in f.to_filter())),
                   threading.Thread(target=reader)]
        with f.sole_writer():
            for t in threads:
                t.start()
            # This thread runs Python code (it needs the GIL) while the writers wait.
            deadline = time.monotonic() + 0.5
            n = 0
            while time.monotonic() < deadline or "lookups" not in finished:
                if n < 20_000:
                    assert f.add(f"own-{n}")
                    n += 1
                if n % 1000 == 0:
                    time.sleep(0.001)
            assert sorted(finished) == ["lookups"], sorted(finished)
            assert f.add("late")
            ended = time.monotonic()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        assert finished["lookups"][1] and finished["lookups"][0] < ended
        for name in ("add", "discard", "snapshot"):
            at, result = finished[name]
            assert result is True and at >= ended, (name, result)
        assert "other" in f and all(f"own-{i}" in f for i in range(n))
        assert f.size == 1000 - 1 + 1 + n + 1
        print("ok", n)
    """)
    assert out.startswith("ok ")
