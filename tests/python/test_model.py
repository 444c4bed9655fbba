"""A model-based test: random sequences of operations on a filter, checked against a
collections.Counter of the keys it must hold.

A cuckoo filter may answer True for a key it does not hold (a false positive), but never False for
one it holds, and it counts items exactly. So after every step, for the multiset M of keys added
and not yet removed:

    len(filter) == sum(M.values())                  (exact)
    key in filter, count(key) >= M[key]      for every key with M[key] > 0 (no false negative)

Operations: add (one key, or a numpy batch that stops at the first key that does not fit), discard
/ remove / discard_many of keys the model holds (discarding a key never added may remove another
key's colliding fingerprint, which is documented, so the model never does it), clear, and round
trips that must lose nothing: to_bytes / from_bytes, save / load in a temporary directory, copy,
deepcopy and pickle. Capacities are small, so fixed filters fill up and refuse: a refused add must
change nothing (the same length, every held key still in, and for CuckooFilter the same bytes,
filter.hpp's "returns false, with the filter unchanged"). A growable filter starts small and
doubles.

Keys mix ints, str and bytes from small pools so that duplicates, collisions of the same key in
different forms (-1 and 2**64 - 1; "é" and b"\\xc3\\xa9"; an int and its 8 little-endian bytes) and
full buckets all happen. The model keys them by their canonical bytes, the bytes the C++ library
hashes.
"""

from __future__ import annotations

import copy
import os
import pickle
import shutil
import tempfile
from collections import Counter

import numpy as np
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import cuckoo


def canonical(key) -> bytes:
    """The bytes the library hashes for `key` (cuckoo/hash.hpp: integers as 8 little-endian
    bytes, str as UTF-8)."""
    if isinstance(key, int):
        return (key % 2**64).to_bytes(8, "little")
    if isinstance(key, str):
        return key.encode("utf-8")
    return bytes(key)


INT_KEYS = st.one_of(
    st.integers(0, 40),
    st.sampled_from([-1, 2**64 - 1, -(2**63), 2**63, 2**64 - 2, -2]),
)
# Text built from a few characters (1, 2 and 3 UTF-8 bytes) rather than st.text, which would make
# Hypothesis cache a Unicode table in a .hypothesis directory wherever the tests run from.
TEXT_KEYS = st.lists(st.sampled_from("abé日"), max_size=3).map("".join)
BYTES_KEYS = st.one_of(
    st.binary(max_size=3),
    st.sampled_from([(5).to_bytes(8, "little"), "é".encode(), b"\xff" * 8]),
)
KEYS = st.one_of(INT_KEYS, TEXT_KEYS, BYTES_KEYS)


class FilterModel(RuleBasedStateMachine):
    """The machine for one kind of filter; subclasses below set `make`."""

    make = None
    # Whether a refused insert must leave the serialized filter byte-identical. The concurrent
    # filter may move entries to their other bucket before it fails (its contents and answers
    # are unchanged, basic_concurrent_filter.hpp), so only CuckooFilter promises the bytes.
    exact_refusals = True

    def __init__(self):
        super().__init__()
        self.filter = type(self).make()
        self.model: Counter = Counter()
        self.forms: dict = {}  # canonical key -> the Python objects it was added as
        self.directory = tempfile.mkdtemp(prefix="cuckoo-model-")
        self.refusals = 0

    def teardown(self):
        shutil.rmtree(self.directory, ignore_errors=True)

    # ---- helpers ----

    def held(self) -> list:
        return [k for k, n in self.model.items() if n > 0]

    def note_added(self, key):
        c = canonical(key)
        self.model[c] += 1
        self.forms.setdefault(c, [])
        if key not in self.forms[c] and len(self.forms[c]) < 4:
            self.forms[c].append(key)

    def note_removed(self, c):
        self.model[c] -= 1
        if self.model[c] == 0:
            del self.model[c]

    def check_refusal(self, size_before, bytes_before):
        self.refusals += 1
        assert len(self.filter) == size_before
        if self.exact_refusals:
            assert self.filter.to_bytes() == bytes_before

    # ---- changes ----

    @rule(key=KEYS)
    def add(self, key):
        size, before = len(self.filter), self.filter.to_bytes()
        if self.filter.add(key):
            self.note_added(key)
            assert key in self.filter
        else:
            self.check_refusal(size, before)

    @rule(values=st.lists(INT_KEYS, max_size=24))
    def add_many_integers(self, values):
        self._add_batch(values, np.array([v % 2**64 for v in values], dtype=np.uint64))

    @rule(values=st.lists(TEXT_KEYS, max_size=12))
    def add_many_text(self, values):
        # A U array; the keys have no NUL, so numpy keeps each one whole.
        self._add_batch(values, np.array(values, dtype="U3"))

    def _add_batch(self, values, array):
        size = len(self.filter)
        n = self.filter.add_many(array)
        assert 0 <= n <= len(values)
        assert len(self.filter) == size + n  # exactly the first n went in
        for key in values[:n]:
            self.note_added(key)
        if n < len(values):  # the refused key: adding it again one at a time changes nothing
            size, before = len(self.filter), self.filter.to_bytes()
            if self.filter.add(values[n]):
                self.note_added(values[n])
            else:
                self.check_refusal(size, before)

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def discard_held(self, data):
        c = data.draw(st.sampled_from(self.held()))
        key = data.draw(st.sampled_from(self.forms[c] + [c]))  # any form of the key
        size = len(self.filter)
        assert self.filter.discard(key) is True  # a held key always has a matching entry
        self.note_removed(c)
        assert len(self.filter) == size - 1

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def remove_held(self, data):
        c = data.draw(st.sampled_from(self.held()))
        self.filter.remove(c)  # no KeyError for a held key
        self.note_removed(c)

    @precondition(lambda self: any(len(c) == 8 for c in self.model))
    @rule(data=st.data())
    def discard_many_held(self, data):
        # Held 8-byte keys, given back as the integers they equal (a uint64 array), respecting
        # the multiplicities the model holds.
        eight = [c for c in self.held() if len(c) == 8]
        picks = data.draw(st.lists(st.sampled_from(eight), max_size=6))
        left = Counter(self.model)
        chosen = []
        for c in picks:
            if left[c] > 0:
                left[c] -= 1
                chosen.append(c)
        array = np.array([int.from_bytes(c, "little") for c in chosen], dtype=np.uint64)
        assert self.filter.discard_many(array) == len(chosen)
        for c in chosen:
            self.note_removed(c)

    @rule()
    def clear(self):
        self.filter.clear()
        self.model.clear()
        assert len(self.filter) == 0

    # ---- round trips ----

    @rule()
    def bytes_round_trip(self):
        data = self.filter.to_bytes()
        self.filter = type(self.filter).from_bytes(data)
        assert self.filter.to_bytes() == data

    @rule()
    def file_round_trip(self):
        path = os.path.join(self.directory, "model.cf")
        self.filter.save(path)
        data = self.filter.to_bytes()
        self.filter = type(self.filter).load(path)
        assert self.filter.to_bytes() == data

    @rule(how=st.sampled_from(["copy", "deepcopy", "pickle"]))
    def copy_round_trip(self, how):
        data = self.filter.to_bytes()
        original = self.filter
        if how == "copy":
            self.filter = original.copy()
        elif how == "deepcopy":
            self.filter = copy.deepcopy(original)
        else:
            self.filter = pickle.loads(pickle.dumps(original))
        assert self.filter is not original and self.filter.to_bytes() == data
        original.clear()  # the copy is independent: clearing the original changes nothing

    # ---- lookups (the invariants check every held key after every step) ----

    @rule(key=KEYS)
    def lookup(self, key):
        c = canonical(key)
        answer = key in self.filter
        if self.model[c] > 0:
            assert answer is True
        assert self.filter.count(key) >= self.model[c]  # (a Counter read adds no entry)

    @invariant()
    def holds_exactly_the_model(self):
        assert len(self.filter) == sum(self.model.values())
        assert bool(self.filter) == (len(self.filter) > 0)
        for c, n in self.model.items():
            assert c in self.filter, f"false negative for {c!r}"
            assert self.filter.count(c) >= n


def machine(name, make, exact_refusals=True):
    cls = type(f"Model_{name}", (FilterModel,), {"make": staticmethod(make),
                                                  "exact_refusals": exact_refusals})
    return cls.TestCase


# Small capacities: 8-24 items, so fixed filters fill and refuse within an example.
TestBucketsOf2 = machine("b2", lambda: cuckoo.CuckooFilter(10, bucket_size=2))
TestBucketsOf4 = machine("b4", lambda: cuckoo.CuckooFilter(16))
TestBucketsOf8 = machine("b8", lambda: cuckoo.CuckooFilter(24, bucket_size=8))
# 4-bit fingerprints: different keys often share one, which count() and discard must survive.
TestNarrowFingerprints = machine("f4", lambda: cuckoo.CuckooFilter(16, fingerprint_bits=4))
TestSemiSorted = machine("semi", lambda: cuckoo.CuckooFilter(16, semi_sort=True))
# A growable filter refuses only past its documented limits; its refusal is checked for the
# contents (length and held keys), and for the bytes by the explicit test below.
TestGrowable = machine(
    "growable", lambda: cuckoo.CuckooFilter(4, growable=True), exact_refusals=False
)
TestConcurrent = machine(
    "concurrent", lambda: cuckoo.ConcurrentCuckooFilter(16), exact_refusals=False
)


def test_growable_refused_add_changes_nothing():
    """growable_filter.hpp: past its limits (at most 2b copies of one key, ...) "insert() returns
    false and changes nothing". Three keys added round-robin reach the limit; the refused add must
    leave the filter as it was, not doubled."""
    f = cuckoo.CuckooFilter(4, growable=True)
    keys = ["k0", "k1", "k2"]
    for step in range(200):
        before, doublings, size = f.to_bytes(), f.doublings, len(f)
        if not f.add(keys[step % 3]):
            break
    else:
        raise AssertionError("200 copies of three keys were all accepted")
    assert len(f) == size
    assert all(k in f for k in keys)
    assert f.doublings == doublings, "the refused add doubled the table"
    assert f.to_bytes() == before
