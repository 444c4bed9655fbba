// Counting Bloom filter (cuckoo/amq/counting_bloom.hpp): no false negatives against an exact model
// over random insert/erase sequences, also when most counters are saturated; the measured
// false-positive rate within 5 sigma of the Bloom formula for its counters; sizing, budget and
// argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuckoo/amq/concepts.hpp"
#include "cuckoo/amq/counting_bloom.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::binomial_lower;

using cuckoo::amq::CountingBloom;
static_assert(cuckoo::amq::DeletableFilter<CountingBloom>);

void run_random_operations(CountingBloom& filter, std::uint64_t seed, std::size_t operations,
                           const std::vector<std::uint64_t>& pool) {
  cuckoo::test::MultisetModel model;
  std::vector<std::uint64_t> held;
  cuckoo::detail::SplitMix64 rng(seed);
  for (std::size_t op = 0; op < operations; ++op) {
    if (!held.empty() && rng() % 100 < 45) {
      const std::size_t at = rng() % held.size();
      ASSERT_TRUE(filter.erase(held[at])) << "op " << op;
      model.remove(held[at]);
      held[at] = held.back();
      held.pop_back();
    } else {
      const std::uint64_t key = pool[rng() % pool.size()];
      ASSERT_TRUE(filter.insert(key));
      model.add(key);
      held.push_back(key);
    }
    ASSERT_EQ(filter.size(), held.size());
    if (op % 16 == 0) {
      for (const auto& [key, copies] : model.items()) {
        ASSERT_TRUE(filter.contains(key)) << "false negative after op " << op;
      }
    }
  }
}

TEST(AmqCountingBloom, NoFalseNegativesOverRandomInsertsAndErases) {
  auto filter = CountingBloom::with_capacity(2000, 0.01);
  run_random_operations(filter, 1, 20'000, cuckoo::test::random_keys(3000, 2));
}

TEST(AmqCountingBloom, SaturatedCountersNeverCauseFalseNegatives) {
  // 64 counters, k = 3, hundreds of keys: the mean count is far above 15.
  CountingBloom filter(64, 3, 100, 3);
  const auto keys = cuckoo::test::random_keys(600, 4);
  for (std::uint64_t key : keys) ASSERT_TRUE(filter.insert(key));
  ASSERT_GT(filter.saturated_counters(), 32u) << "the scenario needs saturated counters";
  for (std::size_t i = 0; i < 500; ++i) ASSERT_TRUE(filter.erase(keys[i]));
  for (std::size_t i = 500; i < keys.size(); ++i) EXPECT_TRUE(filter.contains(keys[i]));
  // And with repeats mixed in, against the model.
  CountingBloom small(48, 4, 100, 5);
  run_random_operations(small, 6, 5000, cuckoo::test::random_keys(150, 7));
  EXPECT_GT(small.saturated_counters(), 0u);
}

TEST(AmqCountingBloom, EraseOfAnAbsentKeyChangesNothing) {
  auto filter = CountingBloom::with_capacity(1000, 0.001);
  const auto keys = cuckoo::test::random_keys(2000, 8);
  for (std::size_t i = 0; i < 1000; ++i) filter.insert(keys[i]);
  std::size_t refused = 0;
  for (std::size_t i = 1000; i < 2000; ++i) refused += !filter.erase(keys[i]) ? 1 : 0;
  EXPECT_GT(refused, 950u);
  // Each accepted erase (a false positive) decremented the size; each refused one changed nothing.
  EXPECT_EQ(filter.size(), refused);
}

TEST(AmqCountingBloom, FalsePositiveRateMatchesTheFormula) {
  const std::size_t n = 100'000, queries = 1'000'000;
  for (unsigned k : {3u, 6u, 9u}) {
    CountingBloom filter(13 * n, k, n, 9);
    for (std::uint64_t key : cuckoo::test::random_keys(n, 10)) filter.insert(key);
    std::size_t hits = 0;
    cuckoo::detail::SplitMix64 rng(11);
    for (std::size_t i = 0; i < queries; ++i) hits += filter.contains(rng() | (1ull << 63));
    const double measured = static_cast<double>(hits) / queries;
    EXPECT_LT(measured, cuckoo::test::binomial_upper(filter.expected_fpr(), queries)) << k;
    EXPECT_GT(measured, binomial_lower(filter.expected_fpr(), queries)) << k;
  }
}

TEST(AmqCountingBloom, SizingAndBudget) {
  for (double target : {0.1, 0.01, 0.001}) {
    auto filter = CountingBloom::with_capacity(20'000, target);
    for (std::uint64_t key : cuckoo::test::random_keys(20'000, 12)) filter.insert(key);
    EXPECT_LE(filter.expected_fpr(), target);
  }
  for (std::size_t bytes : {64u, 100u, 1000u, 12345u, 1u << 20, 5u << 20}) {
    const auto filter = CountingBloom::with_memory(bytes, 1000);
    EXPECT_LE(filter.memory_bytes(), bytes);
    EXPECT_GT(filter.memory_bytes(), bytes - 64);
  }
  // 52 bits per item of 4-bit counters is 13 counters per item: k = 9.
  EXPECT_EQ(CountingBloom::with_memory(52'000'000 / 8, 1'000'000).hash_count(), 9u);
}

TEST(AmqCountingBloom, BatchAndStringKeys) {
  auto filter = CountingBloom::with_capacity(1000, 0.01);
  const auto keys = cuckoo::test::random_keys(2000, 21);
  for (std::size_t i = 0; i < 1000; ++i) filter.insert(keys[i]);
  auto out = std::make_unique<bool[]>(keys.size());
  filter.contains(std::span<const std::uint64_t>(keys), std::span<bool>(out.get(), keys.size()));
  for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(out[i], filter.contains(keys[i]));
  filter.insert(std::string("alice"));
  EXPECT_TRUE(filter.erase("alice"));
}

TEST(AmqCountingBloom, BadArgumentsThrowWithAMessage) {
  EXPECT_THROW(CountingBloom::with_capacity(0, 0.01), std::invalid_argument);
  EXPECT_THROW(CountingBloom::with_capacity(10, -0.1), std::invalid_argument);
  EXPECT_THROW(CountingBloom::with_memory(32, 10), std::invalid_argument);
  EXPECT_THROW(CountingBloom(0, 3, 10), std::invalid_argument);
  EXPECT_THROW(CountingBloom(100, 0, 10), std::invalid_argument);
}

}  // namespace
