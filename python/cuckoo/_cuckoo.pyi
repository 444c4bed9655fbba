"""Type stubs for cuckoo._cuckoo, the compiled half of ``import cuckoo``."""

from __future__ import annotations

import os
from typing import Iterable, Iterator, Union

import numpy as np
import numpy.typing as npt

#: A key: ``str`` (its UTF-8 bytes), ``bytes`` / ``bytearray`` / ``memoryview`` (their bytes) or an
#: integer in [-2**63, 2**64) (the C++ API's 64-bit key; negatives are their two's complement).
#: ``bool`` and ``float`` are refused with ``TypeError``.
Key = Union[str, bytes, bytearray, memoryview, int]
#: A batch: a numpy array of integers (any width), of ``S`` or ``U`` strings or of objects, or any
#: iterable of keys.
Keys = Union[npt.ArrayLike, Iterable[Key]]
PathLike = Union[str, bytes, os.PathLike]

DEFAULT_SEED: int
DEFAULT_CAPACITY: int
DEFAULT_ERROR_RATE: float
DEFAULT_BUCKET_SIZE: int
DEFAULT_MAX_KICKS: int
DEFAULT_LOCK_WAIT: float

class FilterFullError(RuntimeError):
    """An ``add(..., strict=True)``, ``add_many(..., strict=True)`` or ``update`` found no room.
    The filter holds every key it held before, plus the keys added before the one that failed."""

class LockTimeoutError(TimeoutError):
    """``locked_update`` waited longer than ``wait`` for another writer of the file."""

class _Filter:
    # ---- single keys --------------------------------------------------------------------------
    def add(self, key: Key, *, strict: bool = False) -> bool:
        """Inserts one copy of ``key``. False when there is no room (nothing is lost then);
        with ``strict=True`` raises FilterFullError instead."""
    def __contains__(self, key: object) -> bool:
        """True if ``key`` may be in the set; False means it certainly is not."""
    def __len__(self) -> int: ...
    def __bool__(self) -> bool: ...
    def add_many(self, keys: Keys, *, strict: bool = False) -> int:
        """Inserts keys in order; stops at the first that does not fit and returns how many went
        in (with ``strict=True`` raises FilterFullError then)."""
    def contains_many(self, keys: Keys) -> npt.NDArray[np.bool_]:
        """``result[i] = keys[i] in self``; the array has the shape of a numpy input."""
    def update(self, *iterables: Keys) -> None:
        """Adds every key of every iterable; raises FilterFullError at the first that does not fit
        (the keys before it stay in)."""
    @property
    def capacity(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...
    @property
    def seed(self) -> int: ...

class CuckooFilter(_Filter):
    """A cuckoo filter (Fan et al., CoNEXT 2014): approximate set membership with deletion.

    Safe to share between threads: every object has a readers-writer lock; batch calls release the
    GIL and hold it shared (lookups) or exclusive (changes). See ConcurrentCuckooFilter for
    lock-free lookups.
    """
    def __init__(
        self,
        capacity: int = ...,
        error_rate: float | None = None,
        *,
        bucket_size: int = 4,
        fingerprint_bits: int | None = None,
        semi_sort: bool = False,
        seed: int | None = None,
        growable: bool = False,
        max_kicks: int = 500,
        blocked: bool = False,
    ) -> None:
        """error_rate=None is 0.001, or 0.0025 (the blocked format's rate) with blocked=True."""
    def clear(self) -> None:
        """Removes every item; the shape and the seed stay."""
    def discard(self, key: Key) -> bool:
        """Removes one copy of ``key``; False if no copy matched."""
    def remove(self, key: Key) -> None:
        """Removes one copy of ``key``; KeyError if none matched."""
    def count(self, key: Key) -> int:
        """Copies of ``key``'s fingerprint in its two buckets (an upper bound on its count)."""
    def discard_many(self, keys: Keys) -> int:
        """Removes one copy of each key in order; returns how many copies were removed."""
    def count_many(self, keys: Keys) -> npt.NDArray[np.int64]: ...
    def copy(self) -> CuckooFilter:
        """An independent, writable copy (also of a mapped filter)."""
    def __copy__(self) -> CuckooFilter: ...
    def __deepcopy__(self, memo: dict) -> CuckooFilter: ...
    # ---- files and bytes (the library's format, docs/FORMAT.md) --------------------------------
    def save(self, path: PathLike) -> None:
        """Writes the filter atomically (temporary file, fsync, rename)."""
    @staticmethod
    def load(path: PathLike) -> CuckooFilter:
        """Reads a saved filter; ValueError naming the problem if the file cannot be trusted."""
    @staticmethod
    def map(path: PathLike, *, verify: bool = True) -> CuckooFilter:
        """Opens a saved filter read-only, zero-copy: lookups read the mapped file. Changes raise
        TypeError; ``copy()`` gives a writable filter."""
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes | bytearray | memoryview) -> CuckooFilter: ...
    def __reduce__(self) -> tuple: ...
    # ---- shape and state --------------------------------------------------------------------------
    @property
    def size(self) -> int: ...
    @property
    def bucket_count(self) -> int: ...
    @property
    def slot_count(self) -> int: ...
    @property
    def bucket_size(self) -> int: ...
    @property
    def fingerprint_bits(self) -> int:
        """f; for a growable filter the bits an entry inserted now compares."""
    @property
    def base_fingerprint_bits(self) -> int:
        """The width a growable filter started with (fingerprint_bits for a fixed one)."""
    @property
    def semi_sorted(self) -> bool: ...
    @property
    def load_factor(self) -> float: ...
    @property
    def max_kicks(self) -> int: ...
    @property
    def blocked(self) -> bool: ...
    @property
    def growable(self) -> bool: ...
    @property
    def doublings(self) -> int: ...
    @property
    def error_rate_bound(self) -> float:
        """The false-positive rate bound of the full table: 1 - (1 - 2**-f)**(2b) for a fixed
        filter, the growable filter's bound at its current size."""
    @property
    def expected_error_rate(self) -> float:
        """The expected false-positive rate at the current load."""
    @property
    def read_only(self) -> bool: ...
    @property
    def table(self) -> memoryview:
        """The fingerprint table's bytes, read-only and zero-copy (fixed-size filters only: a
        growable table moves when it doubles)."""

class ConcurrentCuckooFilter(_Filter):
    """A cuckoo filter for many threads: lookups take no lock (optimistic reads validated by
    striped version counters), writers lock two stripes. Plain tables only (no semi_sort, no
    growable)."""
    def __init__(
        self,
        capacity: int = ...,
        error_rate: float = 0.001,
        *,
        bucket_size: int = 4,
        fingerprint_bits: int | None = None,
        seed: int | None = None,
        max_kicks: int = 500,
    ) -> None: ...
    def clear(self) -> None: ...
    def discard(self, key: Key) -> bool: ...
    def remove(self, key: Key) -> None: ...
    def count(self, key: Key) -> int: ...
    def discard_many(self, keys: Keys) -> int: ...
    def count_many(self, keys: Keys) -> npt.NDArray[np.int64]: ...
    def copy(self) -> ConcurrentCuckooFilter: ...
    def save(self, path: PathLike) -> None: ...
    @staticmethod
    def load(path: PathLike) -> ConcurrentCuckooFilter: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes | bytearray | memoryview) -> ConcurrentCuckooFilter: ...
    def to_filter(self) -> CuckooFilter: ...
    @staticmethod
    def from_filter(filter: CuckooFilter) -> ConcurrentCuckooFilter: ...
    def sole_writer(self) -> SoleWriterSession:
        """A context manager that makes the calling thread this filter's only writer: its writes
        take no locked instruction; other threads' lookups go on, their writes wait (without the
        GIL) until it ends. Nested for the same filter it does nothing; while this thread is
        another filter's sole writer, entering it raises RuntimeError."""
    @property
    def size(self) -> int: ...
    @property
    def bucket_count(self) -> int: ...
    @property
    def slot_count(self) -> int: ...
    @property
    def bucket_size(self) -> int: ...
    @property
    def fingerprint_bits(self) -> int: ...
    @property
    def load_factor(self) -> float: ...
    @property
    def max_kicks(self) -> int: ...

class SoleWriterSession:
    """A sole-writer session of a ConcurrentCuckooFilter (its sole_writer()); it must end on the
    thread that began it (RuntimeError on another)."""
    def __enter__(self) -> SoleWriterSession: ...
    def __exit__(self, *exc_info: object) -> bool: ...

class ApproximateMap:
    """Value association (the paper's section 6): keys to small unsigned integers in a few bits
    per key. ``find`` returns every value stored with a key, never missing one, plus rarely a value
    of another key whose fingerprint matches (on average 2*b*load / (2**f - 1) per lookup).
    Fixed-size plain tables only (no semi_sort, growable or blocked)."""
    def __init__(
        self,
        capacity: int = ...,
        error_rate: float = 0.001,
        *,
        value_bits: int = 32,
        bucket_size: int = 4,
        fingerprint_bits: int | None = None,
        seed: int | None = None,
        max_kicks: int = 500,
    ) -> None: ...
    # ---- single keys --------------------------------------------------------------------------
    def insert(self, key: Key, value: int, *, strict: bool = False) -> bool:
        """Stores the pair. False when there is no room (nothing changes then); with
        ``strict=True`` raises FilterFullError instead."""
    def find(self, key: Key) -> list[int]:
        """Every value stored with ``key`` (and not erased), plus rarely another key's."""
    def erase(self, key: Key, value: int) -> bool:
        """Removes one entry matching ``key`` whose value is ``value``; False if none."""
    def __contains__(self, key: object) -> bool: ...
    def count(self, key: Key) -> int: ...
    def __len__(self) -> int: ...
    def __bool__(self) -> bool: ...
    def clear(self) -> None: ...
    # ---- batches ------------------------------------------------------------------------------
    def insert_many(self, keys: Keys, values: npt.ArrayLike | Iterable[int], *,
                    strict: bool = False) -> int:
        """Stores (keys[i], values[i]) in order; stops at the first pair that does not fit and
        returns how many were stored."""
    def contains_many(self, keys: Keys) -> npt.NDArray[np.bool_]: ...
    def erase_many(self, keys: Keys, values: npt.ArrayLike | Iterable[int]) -> int:
        """Erases the pairs (keys[i], values[i]) in order; returns how many were found."""
    def count_many(self, keys: Keys) -> npt.NDArray[np.int64]: ...
    def find_many(self, keys: Keys) -> tuple[npt.NDArray[np.unsignedinteger], npt.NDArray[np.int64]]:
        """(values, offsets): key i's values are ``values[offsets[i]:offsets[i + 1]]``."""
    # ---- copies, files and bytes --------------------------------------------------------------
    def copy(self) -> ApproximateMap: ...
    def __copy__(self) -> ApproximateMap: ...
    def __deepcopy__(self, memo: dict) -> ApproximateMap: ...
    def save(self, path: PathLike) -> None: ...
    @staticmethod
    def load(path: PathLike) -> ApproximateMap: ...
    @staticmethod
    def map(path: PathLike, *, verify: bool = True) -> ApproximateMap: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes | bytearray | memoryview) -> ApproximateMap: ...
    # ---- shape and state ----------------------------------------------------------------------
    @property
    def size(self) -> int: ...
    @property
    def capacity(self) -> int: ...
    @property
    def bucket_count(self) -> int: ...
    @property
    def slot_count(self) -> int: ...
    @property
    def bucket_size(self) -> int: ...
    @property
    def fingerprint_bits(self) -> int: ...
    @property
    def value_bits(self) -> int: ...
    @property
    def value_dtype(self) -> np.dtype: ...
    @property
    def load_factor(self) -> float: ...
    @property
    def max_kicks(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...
    @property
    def fingerprint_memory_bytes(self) -> int: ...
    @property
    def value_memory_bytes(self) -> int: ...
    @property
    def expected_error_rate(self) -> float: ...
    @property
    def read_only(self) -> bool: ...

class _Comparator(_Filter):
    """The paper's comparators: sized by (capacity, error_rate), no files, no pickling."""
    def __init__(self, capacity: int = ..., error_rate: float = 0.001, *,
                 seed: int | None = None) -> None: ...

class _DeletingComparator(_Comparator):
    def discard(self, key: Key) -> bool: ...
    def remove(self, key: Key) -> None: ...
    def discard_many(self, keys: Keys) -> int: ...

class BloomFilter(_Comparator): ...
class BlockedBloomFilter(_Comparator): ...
class CountingBloomFilter(_DeletingComparator): ...
class DLeftCountingBloomFilter(_DeletingComparator): ...
class QuotientFilter(_DeletingComparator): ...

def locked_update(path: PathLike, *, wait: float = ...) -> Iterator[CuckooFilter]:
    """Context manager: ``with cuckoo.locked_update("f.cf") as f: f.add_many(keys)`` takes the
    file's writer lock (waiting up to ``wait`` seconds, LockTimeoutError after), loads the filter,
    and saves it atomically when the block ends without an exception; concurrent writers through
    it or through ``cuckoo add`` never lose each other's keys."""
