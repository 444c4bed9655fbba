// A failed insert leaves the filter exactly as it was: no older item is dropped, no hidden victim
// slot is kept, size() stays exact, and freed room is usable again at once.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::table_bytes;

void check_atomicity(unsigned b, unsigned f, unsigned max_kicks) {
  cuckoo::Filter filter{cuckoo::Config{
      .capacity = 2000, .fingerprint_bits = f, .bucket_size = b, .max_kicks = max_kicks}};
  std::vector<std::uint64_t> accepted;
  const auto keys = cuckoo::test::random_keys(filter.slot_count() * 2, b * 100 + f);
  std::size_t failures = 0;
  auto before = table_bytes(filter);
  for (std::uint64_t key : keys) {
    if (filter.insert(key)) {
      accepted.push_back(key);
      before = table_bytes(filter);
    } else {
      ++failures;
      ASSERT_EQ(table_bytes(filter), before) << "a failed insert changed the table, b=" << b;
      ASSERT_EQ(filter.size(), accepted.size());
    }
  }
  ASSERT_GT(failures, keys.size() / 4) << "the filter never filled up";
  EXPECT_EQ(filter.size(), accepted.size());
  for (std::uint64_t key : accepted) ASSERT_TRUE(filter.contains(key)) << "lost an older item";

  // No victim is parked anywhere: free room is found by the very next inserts (a walk is needed
  // to use it, so this part only applies with kicks).
  if (max_kicks == 0) return;
  const std::size_t freed = accepted.size() / 2;
  for (std::size_t i = 0; i < freed; ++i) ASSERT_TRUE(filter.erase(accepted[i]));
  const auto fresh = cuckoo::test::random_keys(freed / 2, 999 + b);
  for (std::uint64_t key : fresh) ASSERT_TRUE(filter.insert(key));
  for (std::size_t i = freed; i < accepted.size(); ++i) ASSERT_TRUE(filter.contains(accepted[i]));
  for (std::uint64_t key : fresh) ASSERT_TRUE(filter.contains(key));
  EXPECT_EQ(filter.size(), accepted.size() - freed + fresh.size());
}

TEST(FailedInsert, LeavesTheTableBitForBitUnchanged) {
  for (unsigned b : {2u, 4u, 8u}) {
    for (unsigned f : {4u, 7u, 12u, 19u}) check_atomicity(b, f, 500);
  }
}

TEST(FailedInsert, AlsoWithoutAnyKicks) {
  for (unsigned b : {2u, 4u, 8u}) check_atomicity(b, 12, 0);
}

}  // namespace
