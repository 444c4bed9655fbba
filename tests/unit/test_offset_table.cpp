// The alternate-bucket offset table (BasicFilter::kOffsetTableMaxBits): filters of at least
// kOffsetTableMinBytes with f ≤ 12 keep H(fp) in a table, and alt(i, fp) read through it is
// exactly addressing.hpp's alt(i, fp) for every fingerprint and bucket tried; smaller or wider
// filters keep none. A filter that keeps one still never answers "no" for an item it holds.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "cuckoo/detail/rng.hpp"
#include "support/test_support.hpp"

namespace {

// Buckets for a table of about `bytes` bytes (b·f bits each), even as addressing requires.
std::uint64_t buckets_for(std::size_t bytes, unsigned b, unsigned f) {
  const std::uint64_t m = bytes * 8 / (b * f) + 2;
  return m - (m & 1);
}

template <class Filter>
void expect_table_matches_addressing(const Filter& filter) {
  ASSERT_TRUE(filter.keeps_offset_table());
  const std::uint64_t m = filter.bucket_count();
  const std::uint32_t max_fp = (std::uint32_t{1} << filter.fingerprint_bits()) - 1;
  cuckoo::detail::SplitMix64 rng(filter.fingerprint_bits());
  for (std::uint32_t fp = 1; fp <= max_fp; ++fp) {
    for (const std::uint64_t bucket :
         {std::uint64_t{0}, std::uint64_t{1}, m - 1, m / 2, rng() % m, rng() % m}) {
      const std::uint64_t alt = filter.alternate(bucket, fp);
      ASSERT_EQ(alt, filter.addressing().alternate(bucket, fp)) << "fp=" << fp << " i=" << bucket;
      ASSERT_EQ(filter.alternate(alt, fp), bucket) << "fp=" << fp << " i=" << bucket;
    }
  }
}

using Fixed12 = cuckoo::BasicFilter<cuckoo::PackedTable<4, 12>>;
using AnyWidth = cuckoo::BasicFilter<cuckoo::PackedTable<4>>;
using Semi = cuckoo::BasicFilter<cuckoo::SemiSortedTable<>>;

TEST(OffsetTable, MatchesAddressingForEveryFingerprint) {
  const std::size_t bytes = Fixed12::kOffsetTableMinBytes;
  expect_table_matches_addressing(
      Fixed12(cuckoo::Layout{buckets_for(bytes, 4, 12), 12, 4, false}, 1000, 500, 7));
  for (unsigned f : {2u, 7u, 12u}) {
    expect_table_matches_addressing(
        AnyWidth(cuckoo::Layout{buckets_for(bytes, 4, f), f, 4, false}, 1000, 500, 7));
  }
  expect_table_matches_addressing(
      Semi(cuckoo::Layout{buckets_for(bytes, 4, 11), 12, 4, true}, 1000, 500, 7));
}

TEST(OffsetTable, KeptOnlyForLargeNarrowFilters) {
  const std::size_t bytes = Fixed12::kOffsetTableMinBytes;
  EXPECT_FALSE(Fixed12(cuckoo::Layout{buckets_for(bytes / 2, 4, 12), 12, 4, false}, 1000, 500, 7)
                   .keeps_offset_table());
  EXPECT_FALSE(AnyWidth(cuckoo::Layout{buckets_for(bytes, 4, 13), 13, 4, false}, 1000, 500, 7)
                   .keeps_offset_table());
  using Fixed16 = cuckoo::BasicFilter<cuckoo::PackedTable<4, 16>>;
  EXPECT_FALSE(Fixed16(cuckoo::Layout{buckets_for(4 * bytes, 4, 16), 16, 4, false}, 1000, 500, 7)
                   .keeps_offset_table());
}

TEST(OffsetTable, NoFalseNegativesThroughFillAndDrain) {
  Fixed12 filter(cuckoo::Layout{buckets_for(Fixed12::kOffsetTableMinBytes, 4, 12), 12, 4, false},
                 1000, 500, 11);
  ASSERT_TRUE(filter.keeps_offset_table());
  const auto keys = cuckoo::test::random_keys(filter.slot_count() * 95 / 100, 5);
  ASSERT_EQ(filter.insert(std::span<const std::uint64_t>(keys)), keys.size());
  for (const auto k : keys) ASSERT_TRUE(filter.contains(k));
  for (std::size_t i = 0; i < keys.size(); i += 2) ASSERT_TRUE(filter.erase(keys[i]));
  for (std::size_t i = 1; i < keys.size(); i += 2) ASSERT_TRUE(filter.contains(keys[i]));
}

}  // namespace
