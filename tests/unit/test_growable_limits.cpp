// What a growable filter does at its limits: a doubling that cannot get memory leaves the filter
// exactly as it was and the insert returns false; 2b copies of one key are the most it holds (a
// doubling cannot split them); Configs it cannot serve are refused with a message.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuckoo/growable/growable_filter.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::table_bytes;

TEST(GrowableLimits, AFailedDoublingLeavesTheFilterAsItWas) {
  cuckoo::BasicGrowableFilter<4> filter({.capacity = 500});
  std::uint64_t key = 0;
  while (filter.doublings() < 3) ASSERT_TRUE(filter.insert(key++));
  const std::uint64_t first_unlimited = key;
  filter.set_memory_limit(filter.memory_bytes());  // the next doubling cannot get memory
  // Every refused insert leaves the table byte for byte as it was; others may still fit.
  std::vector<std::uint64_t> held;
  unsigned refused = 0;
  for (; refused < 20; ++key) {
    const auto before = table_bytes(filter);
    const std::size_t size = filter.size();
    if (filter.insert(key)) {
      held.push_back(key);
      continue;
    }
    ++refused;
    EXPECT_EQ(filter.size(), size);
    EXPECT_EQ(table_bytes(filter), before);
    EXPECT_EQ(filter.doublings(), 3u);
  }
  EXPECT_GT(filter.load_factor(), 0.9) << "it fills the table before it needs to double";
  for (std::uint64_t k = 0; k < key; ++k) {
    if (k < first_unlimited || std::binary_search(held.begin(), held.end(), k)) {
      ASSERT_TRUE(filter.contains(k)) << k;
    }
  }
  // Lifting the limit lets it grow, and everything is still there.
  filter.set_memory_limit(0);
  while (filter.doublings() == 3) {
    ASSERT_TRUE(filter.insert(key));
    held.push_back(key++);
  }
  EXPECT_EQ(filter.doublings(), 4u);
  for (std::uint64_t k = 0; k < first_unlimited; ++k) ASSERT_TRUE(filter.contains(k)) << k;
  for (const std::uint64_t k : held) ASSERT_TRUE(filter.contains(k)) << k;
}

TEST(GrowableLimits, AtMostTwoBucketsOfCopiesOfOneKey) {
  for (unsigned b : {2u, 4u, 8u}) {
    auto run = [&](auto filter) {
      for (unsigned i = 0; i < 2 * b; ++i) ASSERT_TRUE(filter.insert(std::uint64_t{42})) << i;
      const auto before = table_bytes(filter);
      EXPECT_FALSE(filter.insert(std::uint64_t{42}));
      EXPECT_EQ(filter.doublings(), 0u) << "no doubling for copies it cannot split";
      EXPECT_EQ(table_bytes(filter), before);
      EXPECT_EQ(filter.count(std::uint64_t{42}), 2 * b);
      EXPECT_TRUE(filter.erase(std::uint64_t{42}));
      EXPECT_EQ(filter.count(std::uint64_t{42}), 2 * b - 1);
    };
    if (b == 2) run(cuckoo::BasicGrowableFilter<2>({.capacity = 1000, .bucket_size = 2}));
    if (b == 4) run(cuckoo::BasicGrowableFilter<4>({.capacity = 1000, .bucket_size = 4}));
    if (b == 8) run(cuckoo::BasicGrowableFilter<8>({.capacity = 1000, .bucket_size = 8}));
  }
}

// A few keys inserted over and over in a tiny filter: each key's copies crowd its two buckets,
// so inserts start to fail. A refused insert must not leave a doubling behind (it once did when
// the doubling itself succeeded but the key still found no room), and copies of one key, which
// always follow it into the same children, must not make the filter double at all.
TEST(GrowableLimits, RepeatedKeysNeverLeaveADoublingBehind) {
  for (unsigned keys : {2u, 3u}) {
    cuckoo::BasicGrowableFilter<4> filter({.capacity = 4});
    unsigned refused = 0;
    for (unsigned i = 0; i < 200 && refused < 10; ++i) {
      const std::string key = "k" + std::to_string(i % keys);
      const auto before = table_bytes(filter);
      const unsigned doublings = filter.doublings();
      const std::size_t size = filter.size();
      if (filter.insert(key)) continue;
      ++refused;
      EXPECT_EQ(filter.doublings(), doublings) << "insert " << i;
      EXPECT_EQ(filter.size(), size);
      EXPECT_EQ(table_bytes(filter), before) << "insert " << i;
    }
    EXPECT_EQ(refused, 10u) << "2b copies per key, then refusals";
    EXPECT_LE(filter.size(), keys * 2 * 4);
    // Copies cannot be split, so the table grows at most as far as the distinct keys need.
    EXPECT_LE(filter.doublings(), 2u) << keys << " keys";
    for (unsigned k = 0; k < keys; ++k) {
      EXPECT_GE(filter.count("k" + std::to_string(k)), 1u);
    }
  }
}

TEST(GrowableLimits, ConfigsItCannotServeAreRefused) {
  EXPECT_THROW(cuckoo::BasicGrowableFilter<4>({.semi_sort = true}), std::invalid_argument);
  EXPECT_THROW(cuckoo::BasicGrowableFilter<4>({.fingerprint_bits = 31}), std::invalid_argument);
  EXPECT_THROW(cuckoo::BasicGrowableFilter<4>({.capacity = 0}), std::invalid_argument);
  EXPECT_THROW(cuckoo::BasicGrowableFilter<4>({.bucket_size = 2}), std::invalid_argument);
  EXPECT_THROW(cuckoo::BasicGrowableFilter<4>({.target_fpr = 1.5}), std::invalid_argument);
  EXPECT_NO_THROW(cuckoo::BasicGrowableFilter<4>({.fingerprint_bits = 30}));
}

TEST(GrowableLimits, ALargeTargetIsServedAtTheNarrowestBaseWidth) {
  EXPECT_EQ(cuckoo::BasicGrowableFilter<4>({.target_fpr = 0.2}).base_fingerprint_bits(), 11u);
  EXPECT_EQ(cuckoo::BasicGrowableFilter<4>({.fingerprint_bits = 7}).base_fingerprint_bits(), 11u);
  EXPECT_EQ(cuckoo::BasicGrowableFilter<4>({.fingerprint_bits = 12}).base_fingerprint_bits(), 12u);
}

TEST(GrowableLimits, EqualConfigsAndOperationsGiveEqualFilters) {
  cuckoo::BasicGrowableFilter<4> a({.capacity = 100}), b({.capacity = 100});
  for (std::uint64_t k = 0; k < 20'000; ++k) {
    a.insert(k);
    b.insert(k);
  }
  EXPECT_EQ(table_bytes(a), table_bytes(b));
  EXPECT_EQ(a.doublings(), b.doublings());
}

TEST(GrowableLimits, ShapeReportsTheGrownFilter) {
  cuckoo::BasicGrowableFilter<4> filter({.capacity = 1000, .target_fpr = 0.001});
  const auto start_buckets = filter.bucket_count();
  EXPECT_EQ(filter.base_fingerprint_bits(), 13u);
  EXPECT_EQ(filter.schedule(), cuckoo::growth::Schedule::kBareFirst);
  EXPECT_EQ(filter.fingerprint_bits(), 15u) << "generation 0 is bare: every slot bit compares";
  EXPECT_EQ(filter.slot_bits(), 15u);
  for (std::uint64_t k = 0; k < 10'000; ++k) ASSERT_TRUE(filter.insert(k));
  const unsigned g = filter.doublings();
  EXPECT_GE(g, 3u);
  EXPECT_EQ(filter.bucket_count(), start_buckets << g);
  EXPECT_EQ(filter.capacity(), std::size_t{1000} << g);
  EXPECT_EQ(filter.slot_bits(), filter.fingerprint_bits() + 1);
  EXPECT_EQ(filter.fingerprint_bits(),
            cuckoo::growth::compared_bits(13, g, cuckoo::growth::Schedule::kBareFirst));
  EXPECT_EQ(filter.slot_bits(), 15u + static_cast<unsigned>(std::bit_width(16 * (g + 1) / 15) - 1));
  EXPECT_EQ(filter.shortest_fingerprint_bits(), 15u - g);
  EXPECT_EQ(filter.size(), 10'000u);
  EXPECT_DOUBLE_EQ(filter.load_factor(), 10'000.0 / static_cast<double>(filter.slot_count()));
  EXPECT_EQ(filter.memory_bytes(),
            cuckoo::PackedTable<4>::bytes_for(filter.bucket_count(), filter.slot_bits()));
  filter.clear();
  EXPECT_EQ(filter.size(), 0u);
  EXPECT_FALSE(filter.contains(std::uint64_t{1}));
  EXPECT_EQ(filter.doublings(), g) << "clear keeps the grown table";
}

}  // namespace
