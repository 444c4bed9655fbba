"""Cuckoo filters from Python: approximate set membership with deletion.

    import cuckoo, numpy as np
    f = cuckoo.CuckooFilter(1_000_000, 0.001)      # capacity, target false-positive rate
    f.add("alice")                                  # False only when full; nothing is lost
    "alice" in f                                    # True: never a false negative
    f.add_many(np.arange(500_000, dtype=np.uint64))  # numpy batches, GIL released
    f.contains_many(np.array([1, 2, 10**9]))         # -> array([ True,  True, False])
    f.save("users.cf"); g = cuckoo.CuckooFilter.load("users.cf")

Keys are str (UTF-8), bytes-like objects, or integers in [-2**63, 2**64), hashed exactly as the C++
library and the ``cuckoo`` tool hash them, with a fixed default seed, so a filter answers the same
in every process and its files open everywhere (never Python's per-process salted hash()).
See the project README for the full guide.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator, Union

from ._cuckoo import (
    DEFAULT_BUCKET_SIZE,
    DEFAULT_CAPACITY,
    DEFAULT_ERROR_RATE,
    DEFAULT_LOCK_WAIT,
    DEFAULT_MAX_KICKS,
    DEFAULT_SEED,
    ApproximateMap,
    BlockedBloomFilter,
    BloomFilter,
    ConcurrentCuckooFilter,
    CountingBloomFilter,
    CuckooFilter,
    DLeftCountingBloomFilter,
    FilterFullError,
    LockTimeoutError,
    QuotientFilter,
    SoleWriterSession,
    _WriterLock,
)

__all__ = [
    "DEFAULT_BUCKET_SIZE",
    "DEFAULT_CAPACITY",
    "DEFAULT_ERROR_RATE",
    "DEFAULT_LOCK_WAIT",
    "DEFAULT_MAX_KICKS",
    "DEFAULT_SEED",
    "ApproximateMap",
    "BlockedBloomFilter",
    "BloomFilter",
    "ConcurrentCuckooFilter",
    "CountingBloomFilter",
    "CuckooFilter",
    "DLeftCountingBloomFilter",
    "FilterFullError",
    "LockTimeoutError",
    "QuotientFilter",
    "SoleWriterSession",
    "locked_update",
]


def _unpickle(cls: type, data: bytes):
    """How pickles of CuckooFilter, ConcurrentCuckooFilter and ApproximateMap come back: their file
    bytes."""
    return cls.from_bytes(data)


@contextlib.contextmanager
def locked_update(
    path: Union[str, bytes, os.PathLike], *, wait: float = DEFAULT_LOCK_WAIT
) -> Iterator[CuckooFilter]:
    """Change a filter file that other writers may change at the same time.

        with cuckoo.locked_update("users.cf") as f:
            f.add_many(new_keys)

    Takes the file's writer lock (the one ``cuckoo add`` / ``remove`` and the C++
    ``cuckoo::update_file`` take), waiting up to ``wait`` seconds (LockTimeoutError after, with the
    file untouched), loads the filter, and saves it atomically when the block ends normally. If the
    block raises, nothing is saved. Readers (load, map, ``cuckoo query``) never wait.
    """
    lock = _WriterLock(os.fsdecode(path) if isinstance(path, bytes) else path, wait)
    try:
        filter_ = CuckooFilter.load(path)
        yield filter_
        filter_.save(path)
    finally:
        lock.release()
