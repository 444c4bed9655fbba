"""False-positive rates of CuckooFilter, measured over millions of absent keys and held to bounds
derived from the maths.

Fixed filter (Fan et al. §4 and Eq. 6). A lookup of a key x that was never added compares x's f-bit
fingerprint with the entries of its two buckets, at most 2b of them. An entry stored for another
key holds that key's fingerprint, independent of x's, so each comparison matches with probability
2**-f and

    P(false positive) <= 1 - (1 - 2**-f)**(2b)            (full table; error_rate_bound)
    E[rate] = 1 - (1 - 2**-f)**(2b * alpha)               (load alpha; expected_error_rate)

and f = ceil(log2(2b / error_rate)) makes the bound <= 2b * 2**-f <= error_rate.

Growable filter (growable_filter.hpp). With base width f = max(11, ceil(log2(2b / error_rate))),
an entry inserted in generation j compares L_j = f + 1 + ceil(log2(j + 1)) bits and loses one per
doubling. After g doublings the table has two sides of M = m0 * 2**g buckets; a lookup reads one
bucket on each side, so an entry is in one of them with probability 1 / M, and one of generation
j then matches with probability 2**-(L_j - (g - j)). The expected number of matching entries, an
upper bound on the false-positive rate (union bound), is sum_j n_j * 2**-(L_j - g + j) / M for n_j
entries of generation j. Generations 0..j together fit in generation j's table, 2b * m0 * 2**j
slots, and an older entry weighs more (L_j + j grows with j), so the sum is largest when each
generation fills its table exactly, n_0 = 2b * m0 and n_j = b * m0 * 2**j:

    sum_e 2**-len(e) / M <= 2b * 2**-L_0 + sum_{j=1..g} b * 2**-L_j    (growth::fpr_bound)

which stays under error_rate for the first 15 doublings.

Measurement. Given the table, each absent key is a false positive independently with the same
probability q <= p (the keys are hashed, so distinct absent keys are independent trials), so the
count X over n absent keys is Binomial(n, q): X <= n*p + 6*sqrt(n*p*(1 - p)) fails with probability
below 1e-9 (normal tail; Chernoff gives the same order). The same allowance either side of
E[rate] checks that the filter is not better than its fingerprints allow either (which would mean
that fingerprint_bits misstates the table). Seeds are fixed: the outcome is the same every run.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import cuckoo

ABSENT_KEYS = 2_000_000
SIGMAS = 6.0


def absent_keys(n: int = ABSENT_KEYS) -> np.ndarray:
    """Keys no test here adds: the filters hold small integers, these start at 2**62."""
    return np.arange(2**62, 2**62 + n, dtype=np.uint64)


def tail_allowance(n: int, p: float) -> float:
    """SIGMAS standard deviations of Binomial(n, p), in false positives."""
    return SIGMAS * math.sqrt(n * p * (1.0 - p))


def fill_until_refused(f) -> int:
    """Adds 0, 1, 2, ... until a key does not fit; the table is then as full as it gets (about
    84% / 95% / 98% of its slots for b = 2 / 4 / 8, the paper's §5.1 loads)."""
    keys = np.arange(4 * f.slot_count, dtype=np.uint64)
    n = f.add_many(keys)
    assert n < len(keys)
    assert f.contains_many(keys[:n]).all()  # no false negative, before measuring the positives
    return n


def growable_bound(bucket_size: int, base_bits: int, doublings: int) -> float:
    """2b * 2**-L_0 + sum_{j=1..g} b * 2**-L_j, with L_0 = f + 2 (the bare first generation) and
    L_j = f + 1 + floor(log2(16 (j + 1) / 15)) (growable_filter.hpp, the bare-first schedule)."""
    def compared(j):
        if j == 0:
            return base_bits + 2
        return base_bits + 1 + (16 * (j + 1) // 15).bit_length() - 1

    return 2 * bucket_size * 2.0 ** -compared(0) + sum(
        bucket_size * 2.0 ** -compared(j) for j in range(1, doublings + 1))


@pytest.mark.parametrize(
    "error_rate, bucket_size",
    [(0.01, 4), (0.001, 4), (0.001, 2), (0.001, 8)],
)
def test_fixed_filter_false_positive_rate(error_rate, bucket_size):
    f = cuckoo.CuckooFilter(400_000, error_rate, bucket_size=bucket_size, seed=2014)
    n = fill_until_refused(f)
    assert n >= 400_000  # capacity keys fit
    bits, b = f.fingerprint_bits, f.bucket_size
    assert bits == math.ceil(math.log2(2 * b / error_rate))
    bound = 1.0 - (1.0 - 2.0**-bits) ** (2 * b)
    assert f.error_rate_bound == pytest.approx(bound, rel=1e-12)
    assert bound <= error_rate
    expected = 1.0 - (1.0 - 2.0**-bits) ** (2 * b * f.load_factor)
    assert f.expected_error_rate == pytest.approx(expected, rel=1e-9)

    absent = absent_keys()
    false_positives = int(f.contains_many(absent).sum())
    assert false_positives <= ABSENT_KEYS * bound + tail_allowance(ABSENT_KEYS, bound)
    assert abs(false_positives - ABSENT_KEYS * expected) <= tail_allowance(ABSENT_KEYS, expected)


def test_single_lookups_agree_with_the_batch():
    # The rate is measured with contains_many; `in` must give the same answers.
    f = cuckoo.CuckooFilter(50_000, 0.01, seed=7)
    fill_until_refused(f)
    absent = absent_keys(100_000)
    batch = f.contains_many(absent)
    assert batch.sum() > 0
    assert [int(k) in f for k in absent] == batch.tolist()


def test_string_keys_have_the_same_rate():
    # The bound depends on fingerprints, not on the kind of key: text keys are hashed as bytes.
    f = cuckoo.CuckooFilter(200_000, 0.01, seed=11)
    words = np.array([f"present-{i}" for i in range(3 * f.slot_count)])
    n = f.add_many(words)
    assert f.contains_many(words[:n]).all()
    probes = np.array([f"absent-{i}" for i in range(1_000_000)])
    bound = f.error_rate_bound
    false_positives = int(f.contains_many(probes).sum())
    assert false_positives <= len(probes) * bound + tail_allowance(len(probes), bound)


def grown_filter():
    """A growable filter started at 4096 items and given 64 times as many."""
    f = cuckoo.CuckooFilter(4096, 0.001, growable=True, seed=2023)
    keys = np.arange(64 * 4096, dtype=np.uint64)
    assert f.add_many(keys) == len(keys)  # a growable filter never refuses here
    assert f.contains_many(keys).all()
    assert f.doublings >= 6 and f.capacity >= len(keys)
    return f


def test_growable_filter_false_positive_rate():
    f = grown_filter()
    b = f.bucket_size
    base = max(11, math.ceil(math.log2(2 * b / 0.001)))
    bound = growable_bound(b, base, f.doublings)
    assert bound <= 0.001  # held under the target for the first 15 doublings
    absent = absent_keys()
    false_positives = int(f.contains_many(absent).sum())
    assert false_positives <= ABSENT_KEYS * bound + tail_allowance(ABSENT_KEYS, bound)
    # expected_error_rate sums 2**-len over the entries actually stored, divided as above.
    expected = f.expected_error_rate
    assert expected <= bound
    assert abs(false_positives - ABSENT_KEYS * expected) <= tail_allowance(ABSENT_KEYS, expected)


def test_growable_error_rate_bound_property():
    # error_rate_bound is documented as "the growable filter's bound at its current size": the
    # sum above for the filter's base width and doublings, not for its current entries' width.
    f = cuckoo.CuckooFilter(4096, 0.001, growable=True)
    base = max(11, math.ceil(math.log2(2 * f.bucket_size / 0.001)))
    assert f.error_rate_bound == pytest.approx(growable_bound(f.bucket_size, base, 0), rel=1e-12)
    g = grown_filter()
    assert g.error_rate_bound == pytest.approx(
        growable_bound(g.bucket_size, base, g.doublings), rel=1e-12)
    # So the measured rate stays under the property too.
    false_positives = int(g.contains_many(absent_keys()).sum())
    bound = g.error_rate_bound
    assert false_positives <= ABSENT_KEYS * bound + tail_allowance(ABSENT_KEYS, bound)
