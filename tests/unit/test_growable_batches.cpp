// A growable filter's batch inserts and erases are its single-key calls in order: the same table,
// byte for byte, through doublings (the batch prefetches keys ahead, and a doubling in between
// moves where they go), and a batch insert stops at the first refused key, changing nothing for it.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cuckoo/growable/growable_filter.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::random_keys;
using cuckoo::test::table_bytes;

template <unsigned kSlots>
void check_same_as_single_calls(std::size_t capacity, std::size_t n, std::uint64_t seed) {
  const cuckoo::Config cfg{.capacity = capacity, .bucket_size = kSlots, .growable = true};
  std::vector<std::uint64_t> keys = random_keys(n, seed);
  // Some duplicates, so that erases and inserts meet equal entries.
  for (std::size_t i = 0; i + 7 < n; i += 97) keys[i + 7] = keys[i];
  cuckoo::BasicGrowableFilter<kSlots> single(cfg), batched(cfg);
  for (const std::uint64_t k : keys) ASSERT_TRUE(single.insert(k));
  // In uneven pieces, so that pipelines start and end at many places.
  std::size_t at = 0;
  for (std::size_t piece = 1; at < n; piece = piece * 3 % 1001 + 1) {
    const std::size_t len = std::min(piece, n - at);
    ASSERT_EQ(batched.insert(std::span<const std::uint64_t>(keys.data() + at, len)), len);
    at += len;
  }
  ASSERT_GE(single.doublings(), 4u);
  EXPECT_EQ(batched.doublings(), single.doublings());
  EXPECT_EQ(batched.size(), single.size());
  EXPECT_EQ(table_bytes(batched), table_bytes(single));
  for (const std::uint64_t k : keys) ASSERT_TRUE(batched.contains(k));

  // Erase every other key: the rest stay.
  std::vector<std::uint64_t> doomed;
  for (std::size_t i = 0; i < n; i += 2) doomed.push_back(keys[i]);
  std::size_t removed = 0;
  for (const std::uint64_t k : doomed) removed += single.erase(k);
  EXPECT_EQ(removed, doomed.size());
  EXPECT_EQ(batched.erase(std::span<const std::uint64_t>(doomed)), removed);
  EXPECT_EQ(batched.size(), single.size());
  EXPECT_EQ(table_bytes(batched), table_bytes(single));
  for (std::size_t i = 1; i < n; i += 2) ASSERT_TRUE(batched.contains(keys[i])) << i;
  // Keys never inserted: most are not found; a false match removes what the single call removes.
  const std::vector<std::uint64_t> strangers = random_keys(n / 10, seed + 1);
  removed = 0;
  for (const std::uint64_t k : strangers) removed += single.erase(k);
  EXPECT_EQ(batched.erase(std::span<const std::uint64_t>(strangers)), removed);
  EXPECT_EQ(table_bytes(batched), table_bytes(single));
}

TEST(GrowableBatches, InsertAndEraseAreTheSingleKeyCallsInOrderB2) {
  check_same_as_single_calls<2>(100, 20'000, 1);
}
TEST(GrowableBatches, InsertAndEraseAreTheSingleKeyCallsInOrderB4) {
  check_same_as_single_calls<4>(1000, 60'000, 2);
  check_same_as_single_calls<4>(1, 5'000, 3);
}
TEST(GrowableBatches, InsertAndEraseAreTheSingleKeyCallsInOrderB8) {
  check_same_as_single_calls<8>(300, 40'000, 4);
}

TEST(GrowableBatches, ABatchInsertStopsAtTheFirstRefusedKey) {
  const cuckoo::Config cfg{.capacity = 500, .growable = true};
  const std::vector<std::uint64_t> keys = random_keys(20'000, 5);
  cuckoo::BasicGrowableFilter<4> single(cfg), batched(cfg);
  single.set_memory_limit(8 * single.memory_bytes());  // room for three doublings, not four
  batched.set_memory_limit(8 * batched.memory_bytes());
  std::size_t first_refused = keys.size();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!single.insert(keys[i])) {
      first_refused = i;
      break;
    }
  }
  ASSERT_LT(first_refused, keys.size());
  EXPECT_EQ(batched.insert(std::span<const std::uint64_t>(keys)), first_refused);
  EXPECT_EQ(batched.size(), first_refused);
  EXPECT_EQ(table_bytes(batched), table_bytes(single));
  for (std::size_t i = 0; i < first_refused; ++i) ASSERT_TRUE(batched.contains(keys[i]));
}

}  // namespace
