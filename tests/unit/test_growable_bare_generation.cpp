// The bare-first schedule's first generation (growable_filter.hpp, "Slots"): until the first
// doubling a slot holds all W_0 = f + 2 bits of its entry and no marker, so a lookup compares
// every bit; the key whose W_0 bits are all zero is stored as 1, which stands for W_0 − 1 zero
// bits, so no entry is ever the empty slot 0. The first doubling gives every bare entry its marker
// and moves it as a marked entry. Keys in the two corners (W_0 bits 0 and 1) are found by search.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "cuckoo/growable/growable_filter.hpp"

namespace {

using Growable = cuckoo::BasicGrowableFilter<4>;

/// Hashes whose first W_0 bits of w (what a bare slot holds) equal `bits`.
std::vector<std::uint64_t> hashes_with_leading(unsigned w0, std::uint64_t bits, std::size_t n) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t h = 1; out.size() < n; ++h) {
    if (cuckoo::growth::mix(h) >> (64 - w0) == bits) out.push_back(h);
  }
  return out;
}

TEST(GrowableBareGeneration, EveryBitOfTheFirstGenerationCompares) {
  Growable filter({.capacity = 1000, .target_fpr = 0.001});
  ASSERT_EQ(filter.schedule(), cuckoo::growth::Schedule::kBareFirst);
  EXPECT_EQ(filter.slot_bits(), 15u);
  EXPECT_EQ(filter.fingerprint_bits(), 15u);
  // Two hashes that agree on their first 14 bits of w and differ in the 15th: a marked slot of
  // 15 bits (14 compared) could not tell them apart, a bare one can, when they share buckets.
  // The same hash with its base bucket kept and the last compared bit flipped is found by search.
  const std::uint64_t a = hashes_with_leading(15, 0x1234, 1)[0];
  ASSERT_TRUE(filter.insert_hash(a));
  std::size_t twins = 0, twins_found = 0;
  for (std::uint64_t h = 1; twins < 3 && h < (std::uint64_t{1} << 32); ++h) {
    // Same first bucket (base bucket from the hash's high 32 bits), bits 0x1235.
    if ((h >> 32) != (a >> 32)) h = (a >> 32) << 32;
    if (cuckoo::growth::mix(h) >> 49 != 0x1235) continue;
    ++twins;
    twins_found += filter.contains_hash(h);
  }
  ASSERT_EQ(twins, 3u);
  EXPECT_EQ(twins_found, 0u) << "a bare slot compares all 15 bits";
  EXPECT_DOUBLE_EQ(filter.expected_fpr() * static_cast<double>(filter.bucket_count() / 2),
                   std::ldexp(1.0, -15));
}

TEST(GrowableBareGeneration, TheZeroCornerIsStoredAsOneAndSurvivesDoublings) {
  Growable filter({.capacity = 1000, .target_fpr = 0.001});
  const std::vector<std::uint64_t> zeros = hashes_with_leading(15, 0, 4);
  const std::vector<std::uint64_t> ones = hashes_with_leading(15, 1, 4);
  for (const std::uint64_t h : zeros) ASSERT_TRUE(filter.insert_hash(h));
  for (const std::uint64_t h : ones) ASSERT_TRUE(filter.insert_hash(h));
  ASSERT_EQ(filter.doublings(), 0u);
  EXPECT_EQ(filter.size(), 8u);
  for (const std::uint64_t h : zeros) EXPECT_TRUE(filter.contains_hash(h));
  for (const std::uint64_t h : ones) EXPECT_TRUE(filter.contains_hash(h));
  // Each is stored as 1: 14 compared bits, so the expected rate counts it at 2^-14.
  EXPECT_DOUBLE_EQ(filter.expected_fpr() * static_cast<double>(filter.bucket_count() / 2),
                   8 * std::ldexp(1.0, -14));
  // Erasing one removes one entry and leaves the rest found.
  ASSERT_TRUE(filter.erase_hash(zeros[0]));
  for (std::size_t i = 1; i < zeros.size(); ++i) EXPECT_TRUE(filter.contains_hash(zeros[i]));
  for (const std::uint64_t h : ones) EXPECT_TRUE(filter.contains_hash(h));
  // Through several doublings, every other key kept.
  std::uint64_t key = 0;
  while (filter.doublings() < 4) ASSERT_TRUE(filter.insert(key++));
  for (std::size_t i = 1; i < zeros.size(); ++i) EXPECT_TRUE(filter.contains_hash(zeros[i]));
  for (const std::uint64_t h : ones) EXPECT_TRUE(filter.contains_hash(h));
  for (std::uint64_t k = 0; k < key; ++k) ASSERT_TRUE(filter.contains(k)) << k;
  EXPECT_EQ(filter.shortest_fingerprint_bits(), 15u - 4u);
}

TEST(GrowableBareGeneration, TheFirstDoublingAddsTheMarker) {
  Growable filter({.capacity = 1000, .target_fpr = 0.001});
  std::uint64_t key = 0;
  while (filter.doublings() == 0) ASSERT_TRUE(filter.insert(key++));
  // Generation 1: slots of 16 bits, new entries compare 15, the first generation's 14.
  EXPECT_EQ(filter.slot_bits(), 16u);
  EXPECT_EQ(filter.fingerprint_bits(), 15u);
  EXPECT_EQ(filter.shortest_fingerprint_bits(), 14u);
  for (std::uint64_t k = 0; k < key; ++k) ASSERT_TRUE(filter.contains(k)) << k;
  // Every entry now has a marker: a new entry's (15 bits) is bit 0, the first generation's
  // (14 bits, or 13 for the zero corner) above it.
  std::size_t first_generation = 0, newer = 0;
  for (std::uint64_t b = 0; b < filter.bucket_count(); ++b) {
    for (const std::uint32_t v : filter.table().entries(b)) {
      if (v == 0) continue;
      if ((v & 1u) == 0u) ++first_generation;
      if ((v & 1u) == 1u) ++newer;
    }
  }
  EXPECT_EQ(first_generation + newer, filter.size());
  EXPECT_EQ(newer, 1u) << "only the key that made the table double is of generation 1";
}

}  // namespace
