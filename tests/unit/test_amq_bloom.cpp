// Bloom filter (cuckoo/amq/bloom.hpp): no false negatives; the measured false-positive rate
// within 5 sigma of (1 − (1 − 1/m)^(kn))^k, including the paper's 13 bits per item with k = 9;
// sizing, memory budget and argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "cuckoo/amq/bloom.hpp"
#include "cuckoo/amq/concepts.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::binomial_lower;

using cuckoo::amq::Bloom;
static_assert(cuckoo::amq::MembershipFilter<Bloom>);
static_assert(!cuckoo::amq::DeletableFilter<Bloom>);

double measured_fpr(const Bloom& filter, std::size_t queries, std::uint64_t seed) {
  std::size_t hits = 0;
  cuckoo::detail::SplitMix64 rng(seed);
  for (std::size_t i = 0; i < queries; ++i) hits += filter.contains(rng() | (1ull << 63));
  return static_cast<double>(hits) / static_cast<double>(queries);
}

TEST(AmqBloom, NoFalseNegatives) {
  auto filter = Bloom::with_capacity(20'000, 0.01);
  const auto keys = cuckoo::test::random_keys(20'000, 1);
  for (std::uint64_t key : keys) ASSERT_TRUE(filter.insert(key));
  for (std::uint64_t key : keys) ASSERT_TRUE(filter.contains(key));
  EXPECT_EQ(filter.size(), keys.size());
}

TEST(AmqBloom, FalsePositiveRateMatchesTheFormula) {
  const std::size_t n = 100'000, queries = 1'000'000;
  // The paper's set-up (13 bits per item, k = 9) and a spread of others, including odd m.
  struct Case {
    std::uint64_t bits;
    unsigned k;
  };
  for (const Case c : {Case{13 * n, 9}, Case{8 * n + 7, 5}, Case{10 * n + 3, 3}, Case{4 * n, 2}}) {
    Bloom filter(c.bits, c.k, n, 7);
    for (std::uint64_t key : cuckoo::test::random_keys(n, 8)) filter.insert(key);
    const double expected = filter.expected_fpr();
    const double measured = measured_fpr(filter, queries, 9);
    EXPECT_LT(measured, cuckoo::test::binomial_upper(expected, queries)) << c.bits << " " << c.k;
    EXPECT_GT(measured, binomial_lower(expected, queries)) << c.bits << " " << c.k;
  }
}

TEST(AmqBloom, WithMemoryPicksTheOptimalKAndStaysWithinBudget) {
  // 13 bits per item: k = 9, as in the paper.
  const auto paper = Bloom::with_memory(13'000'000 / 8, 1'000'000);
  EXPECT_EQ(paper.hash_count(), 9u);
  for (std::size_t bytes : {64u, 100u, 1000u, 12345u, 1u << 20, 5u << 20}) {
    const auto filter = Bloom::with_memory(bytes, 1000);
    EXPECT_LE(filter.memory_bytes(), bytes);
    EXPECT_GT(filter.memory_bytes(), bytes - 64);
  }
  const auto explicit_k = Bloom::with_memory_and_hashes(1 << 16, 1000, 4);
  EXPECT_EQ(explicit_k.hash_count(), 4u);
}

TEST(AmqBloom, SizingFromATargetMeetsIt) {
  for (double target : {0.1, 0.01, 0.001}) {
    auto filter = Bloom::with_capacity(50'000, target);
    for (std::uint64_t key : cuckoo::test::random_keys(50'000, 11)) filter.insert(key);
    EXPECT_LE(filter.expected_fpr(), target);
    EXPECT_LT(measured_fpr(filter, 200'000, 12), cuckoo::test::binomial_upper(target, 200'000));
  }
}

TEST(AmqBloom, BatchAndStringKeysAgreeWithSingleLookups) {
  auto filter = Bloom::with_capacity(1000, 0.01);
  const auto keys = cuckoo::test::random_keys(2000, 21);
  for (std::size_t i = 0; i < 1000; ++i) filter.insert(keys[i]);
  auto out = std::make_unique<bool[]>(keys.size());
  filter.contains(std::span<const std::uint64_t>(keys), std::span<bool>(out.get(), keys.size()));
  for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(out[i], filter.contains(keys[i]));
  filter.insert(std::string("alice"));
  EXPECT_TRUE(filter.contains("alice"));
}

TEST(AmqBloom, BadArgumentsThrowWithAMessage) {
  EXPECT_THROW(Bloom::with_capacity(0, 0.01), std::invalid_argument);
  EXPECT_THROW(Bloom::with_capacity(10, 0.0), std::invalid_argument);
  EXPECT_THROW(Bloom::with_capacity(10, 1.0), std::invalid_argument);
  EXPECT_THROW(Bloom::with_memory(63, 10), std::invalid_argument);
  EXPECT_THROW(Bloom::with_memory(1000, 0), std::invalid_argument);
  EXPECT_THROW(Bloom::with_memory_and_hashes(1000, 10, 0), std::invalid_argument);
  EXPECT_THROW(Bloom::with_memory_and_hashes(1000, 10, 33), std::invalid_argument);
  try {
    (void)Bloom::with_memory(10, 10);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("too small"), std::string::npos) << e.what();
  }
}

}  // namespace
