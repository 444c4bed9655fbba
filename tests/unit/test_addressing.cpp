// Partial-key cuckoo hashing's addressing: indices in range, alt an involution without fixed
// points, fingerprints never 0 and of the requested width, for many kinds of bucket count.
#include "cuckoo/addressing.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "support/test_support.hpp"

namespace {

using cuckoo::Addressing;

std::vector<std::uint64_t> bucket_counts() {
  std::vector<std::uint64_t> counts = {2,
                                       4,
                                       6,
                                       8,
                                       10,
                                       12,
                                       100,
                                       1000,
                                       1022,
                                       1024,
                                       1026,
                                       4098,
                                       65534,
                                       65536,
                                       65538,
                                       1'000'002,
                                       (1u << 20) + 2,
                                       (1ull << 31),
                                       (1ull << 32) - 2,
                                       1ull << 32};
  for (std::uint64_t p : {7ull, 31ull, 127ull, 8191ull, 131071ull, 524287ull}) {
    counts.push_back(p + 1);  // even neighbours of primes (Mersenne primes + 1)
    counts.push_back(p * 2);  // twice a prime
  }
  return counts;
}

TEST(Addressing, BucketsInRangeAndAltIsAnInvolutionWithoutFixedPoints) {
  const auto hashes = cuckoo::test::random_keys(20'000, 1);
  for (std::uint64_t m : bucket_counts()) {
    for (unsigned f : {2u, 7u, 12u, 16u, 31u, 32u}) {
      const Addressing addressing(m, f);
      for (std::uint64_t h : hashes) {
        const auto pos = addressing.position(h);
        ASSERT_LT(pos.bucket, m);
        const auto alt = addressing.alternate(pos.bucket, pos.fingerprint);
        ASSERT_LT(alt, m) << "m=" << m << " f=" << f;
        ASSERT_NE(alt, pos.bucket) << "m=" << m;
        ASSERT_EQ(addressing.alternate(alt, pos.fingerprint), pos.bucket) << "m=" << m;
      }
    }
  }
}

TEST(Addressing, AltIsAnInvolutionForEveryBucketAndFingerprintOfSmallTables) {
  for (std::uint64_t m = 2; m <= 64; m += 2) {
    const Addressing addressing(m, 8);
    for (std::uint64_t i = 0; i < m; ++i) {
      for (std::uint32_t fp = 1; fp < 256; ++fp) {
        const auto alt = addressing.alternate(i, fp);
        ASSERT_LT(alt, m);
        ASSERT_NE(alt, i);
        ASSERT_EQ(addressing.alternate(alt, fp), i);
      }
    }
  }
}

TEST(Addressing, FingerprintsAreNonZeroAndUseTheWholeRange) {
  for (unsigned f = 2; f <= 32; ++f) {
    const Addressing addressing(1000, f);
    const std::uint64_t max = (std::uint64_t{1} << f) - 1;
    bool saw_max = false, saw_one = false;
    for (std::uint64_t h : cuckoo::test::random_keys(50'000, f)) {
      const auto fp = addressing.position(h).fingerprint;
      ASSERT_GE(fp, 1u);
      ASSERT_LE(fp, max);
      saw_max |= fp == max;
      saw_one |= fp == 1;
    }
    // Extremes of the range are reached for narrow widths (3 bits: 1/7 of keys each).
    if (f <= 8) {
      EXPECT_TRUE(saw_max && saw_one) << "f=" << f;
    }
  }
}

TEST(Addressing, BucketIndexIsUniform) {
  // Chi-square of 200k hashes over 1000 buckets: df = 999, mean 999, sd ≈ 44.7; 6 sd above.
  const std::uint64_t m = 1000;
  const Addressing addressing(m, 12);
  std::vector<double> hits(m, 0);
  const auto hashes = cuckoo::test::random_keys(200'000, 9);
  for (auto h : hashes) hits[addressing.position(h).bucket] += 1;
  const double expected = 200.0;
  double chi2 = 0;
  for (double x : hits) chi2 += (x - expected) * (x - expected) / expected;
  EXPECT_LT(chi2, 999 + 6 * 44.7);
}

}  // namespace
