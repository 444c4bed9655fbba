// The runtime facade and the compile-time core agree: same table, same answers, same accessors;
// and the facade picks a fixed-width table for the common widths.
#include <gtest/gtest.h>

#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

template <class Core>
void expect_same_as_facade(const cuckoo::Config& cfg) {
  cuckoo::Filter facade{cfg};
  Core core{cfg};
  const auto keys = cuckoo::test::random_keys(cfg.capacity, 5);
  for (std::uint64_t key : keys) ASSERT_EQ(facade.insert(key), core.insert(key));
  for (std::uint64_t key : cuckoo::test::random_keys(50'000, 6)) {
    ASSERT_EQ(facade.contains(key), core.contains(key));
  }
  EXPECT_EQ(facade.size(), core.size());
  EXPECT_EQ(facade.bucket_count(), core.bucket_count());
  EXPECT_EQ(facade.slot_count(), core.slot_count());
  EXPECT_EQ(facade.memory_bytes(), core.memory_bytes());
  EXPECT_EQ(facade.fingerprint_bits(), core.fingerprint_bits());
  EXPECT_DOUBLE_EQ(facade.load_factor(), core.load_factor());
  const bool same_bytes = facade.visit([&](const auto& f) {
    auto a = f.table().bytes();
    auto b = core.table().bytes();
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  });
  EXPECT_TRUE(same_bytes);
}

TEST(Facade, CompileTimeCoreGivesIdenticalResults) {
  expect_same_as_facade<cuckoo::BasicFilter<cuckoo::PackedTable<4, 12>>>(
      {.capacity = 20'000, .fingerprint_bits = 12});
  expect_same_as_facade<cuckoo::BasicFilter<cuckoo::PackedTable<4>>>(
      {.capacity = 20'000, .fingerprint_bits = 12});  // runtime width, same layout and answers
  expect_same_as_facade<cuckoo::BasicFilter<cuckoo::PackedTable<2>>>(
      {.capacity = 20'000, .fingerprint_bits = 17, .bucket_size = 2});
  expect_same_as_facade<cuckoo::BasicFilter<cuckoo::PackedTable<8, 32>>>(
      {.capacity = 20'000, .fingerprint_bits = 32, .bucket_size = 8});
}

TEST(Facade, AccessorsDescribeTheFilter) {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 1000, .fingerprint_bits = 12}};
  EXPECT_EQ(filter.capacity(), 1000u);
  EXPECT_EQ(filter.slot_count(), filter.bucket_count() * 4);
  EXPECT_EQ(filter.bucket_count() % 2, 0u);
  EXPECT_GE(filter.slot_count(), 1000u);
  EXPECT_TRUE(filter.empty());
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(filter.insert(i));
  EXPECT_EQ(filter.size(), 500u);
  EXPECT_DOUBLE_EQ(filter.load_factor(), 500.0 / static_cast<double>(filter.slot_count()));
  filter.clear();
  EXPECT_EQ(filter.size(), 0u);
  for (int i = 0; i < 500; ++i) EXPECT_FALSE(filter.contains(i) && filter.count(i) > 1);
  EXPECT_EQ(filter.capacity(), 1000u);
}

TEST(Facade, BatchContainsMatchesSingleKeyContains) {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 10'000}};
  const auto keys = cuckoo::test::random_keys(10'000, 8);
  for (std::uint64_t key : keys) ASSERT_TRUE(filter.insert(key));
  auto probes = cuckoo::test::random_keys(5000, 9);
  probes.insert(probes.end(), keys.begin(), keys.begin() + 5000);
  std::vector<char> out(probes.size());
  std::unique_ptr<bool[]> answers(new bool[probes.size()]);
  filter.contains(std::span<const std::uint64_t>(probes),
                  std::span<bool>(answers.get(), probes.size()));
  for (std::size_t i = 0; i < probes.size(); ++i) ASSERT_EQ(answers[i], filter.contains(probes[i]));
}

TEST(Facade, CopiesAreIndependent) {
  cuckoo::Filter a{cuckoo::Config{.capacity = 100}};
  ASSERT_TRUE(a.insert("x"));
  cuckoo::Filter b = a;
  ASSERT_TRUE(b.erase("x"));
  EXPECT_TRUE(a.contains("x"));
  EXPECT_FALSE(b.contains("x"));
}

}  // namespace
