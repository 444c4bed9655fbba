// The capacity guarantee: a filter built for n items accepts n distinct random keys, at every n
// (tiny ones, ones just past a power of two), for every bucket size, across many seeds, and does
// so without power-of-two waste: from n = 10^4 on, memory stays within f/0.94 + 1 bits per item
// of capacity for b = 4 and 8 (b = 2 cannot reach that load; its bound is in sizing.hpp).
#include <gtest/gtest.h>

#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

std::vector<std::size_t> capacities() {
  std::vector<std::size_t> n = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                11, 13, 15, 16, 17, 20, 25, 31, 32, 33};
  for (std::size_t p = 64; p <= 4096; p *= 4) {
    n.push_back(p - 1);
    n.push_back(p);
    n.push_back(p + 1);
  }
  n.push_back(100);
  n.push_back(1000);
  n.push_back(3000);
  return n;
}

void fill_to_capacity(std::size_t n, unsigned b, unsigned f, std::uint64_t seed) {
  cuckoo::Filter filter{
      cuckoo::Config{.capacity = n, .fingerprint_bits = f, .bucket_size = b, .seed = seed}};
  const auto keys = cuckoo::test::random_keys(n, seed * 31 + n);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(filter.insert(keys[i]))
        << "n=" << n << " b=" << b << " f=" << f << " seed=" << seed << " failed at item " << i
        << " of " << filter.slot_count() << " slots";
  }
  for (std::uint64_t key : keys) ASSERT_TRUE(filter.contains(key));
}

TEST(Capacity, SmallAndAwkwardCapacitiesHoldEveryItemOverManySeeds) {
  for (unsigned b : {2u, 4u, 8u}) {
    for (std::size_t n : capacities()) {
      const int trials = n <= 100 ? 300 : n <= 1100 ? 60 : 15;
      for (int t = 0; t < trials; ++t) fill_to_capacity(n, b, t % 2 == 0 ? 7 : 12, t + 1);
    }
  }
}

TEST(Capacity, LargerCapacitiesHoldEveryItem) {
  for (unsigned b : {2u, 4u, 8u}) {
    for (std::size_t n : {10'000u, 16'385u, 65'537u, 100'000u}) {
      for (unsigned f : {7u, 8u, 12u, 16u}) fill_to_capacity(n, b, f, f + n);
    }
  }
}

TEST(Capacity, NoPowerOfTwoWaste) {
  for (unsigned b : {4u, 8u}) {
    for (std::size_t n : {10'000ull, 65'537ull, (1ull << 20) + 1, 3'000'000ull, 100'000'000ull}) {
      for (unsigned f : {7u, 12u, 16u, 24u, 32u}) {
        const cuckoo::Filter filter{
            cuckoo::Config{.capacity = n, .fingerprint_bits = f, .bucket_size = b}};
        const double bits_per_item = filter.memory_bytes() * 8.0 / static_cast<double>(n);
        EXPECT_LE(bits_per_item, f / 0.94 + 1) << "n=" << n << " b=" << b << " f=" << f;
      }
    }
  }
  // The reference implementation spends 24 bits per item here (2^21 buckets of 4 × 12 bits).
  const cuckoo::Filter filter{cuckoo::Config{.capacity = (1u << 20) + 1, .fingerprint_bits = 12}};
  EXPECT_LT(filter.memory_bytes() * 8.0 / ((1u << 20) + 1), 13.5);
}

}  // namespace
