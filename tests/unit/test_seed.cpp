// Seeds: the same seed gives the same filter and answers (what makes filters saveable); another
// seed gives other false positives (what makes an adversary's precomputed collisions useless).
#include <gtest/gtest.h>

#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::table_bytes;

std::vector<std::uint64_t> false_positives(std::uint64_t seed) {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 10'000, .fingerprint_bits = 8, .seed = seed}};
  for (std::uint64_t key : cuckoo::test::random_keys(10'000, 1)) filter.insert(key);
  std::vector<std::uint64_t> hits;
  for (std::uint64_t key : cuckoo::test::random_keys(100'000, 2)) {
    if (filter.contains(key | (1ull << 63))) hits.push_back(key);
  }
  return hits;
}

TEST(Seed, SameSeedSameTableAndSameAnswers) {
  const auto build = [](std::uint64_t seed) {
    cuckoo::Filter filter{cuckoo::Config{.capacity = 5000, .fingerprint_bits = 10, .seed = seed}};
    for (std::uint64_t key : cuckoo::test::random_keys(5000, 3)) EXPECT_TRUE(filter.insert(key));
    return filter;
  };
  const auto a = build(7), b = build(7);
  EXPECT_EQ(table_bytes(a), table_bytes(b));
  EXPECT_EQ(false_positives(11), false_positives(11));
}

TEST(Seed, AnotherSeedGivesOtherFalsePositives) {
  const auto a = false_positives(11), b = false_positives(12);
  ASSERT_GT(a.size(), 1000u);  // ~ 100k · 8 · 0.94 / 255 ≈ 2900 expected
  ASSERT_GT(b.size(), 1000u);
  std::size_t shared = 0;
  for (std::uint64_t key : a) shared += std::binary_search(b.begin(), b.end(), key);
  // Independent seeds: a key is a false positive under both with probability ≈ p², so the overlap
  // is about |a| · p ≈ 85; anything near |a| would mean the seed is ignored.
  EXPECT_LT(shared, a.size() / 10);
}

TEST(Seed, DefaultSeedIsFixedAcrossInstances) {
  const cuckoo::Filter a{cuckoo::Config{}}, b{cuckoo::Config{}};
  EXPECT_EQ(a.seed(), b.seed());
  EXPECT_EQ(a.seed(), cuckoo::defaults::kSeed);
}

}  // namespace
