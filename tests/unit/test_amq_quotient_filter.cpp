// Quotient filter (cuckoo/amq/quotient_filter.hpp): no false negatives against an exact multiset
// model over random insert/erase sequences, with the metadata invariants checked after every
// operation, including runs that wrap round the table's end; the 90% load cap; the measured
// false-positive rate against 1 − (1 − 1/(m·2^r))^n; sizing and argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuckoo/amq/concepts.hpp"
#include "cuckoo/amq/quotient_filter.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::binomial_lower;

using cuckoo::amq::QuotientFilter;
static_assert(cuckoo::amq::DeletableFilter<QuotientFilter>);

// Random inserts (of fresh keys and of repeats) and erases of held keys, checked against the model
// after every operation: invariants hold and every held key is found.
void run_random_operations(QuotientFilter& filter, std::uint64_t seed, std::size_t operations,
                           const std::vector<std::uint64_t>& pool) {
  cuckoo::test::MultisetModel model;
  std::vector<std::uint64_t> held;
  cuckoo::detail::SplitMix64 rng(seed);
  for (std::size_t op = 0; op < operations; ++op) {
    const bool erase = !held.empty() && rng() % 100 < 45;
    if (erase) {
      const std::size_t at = rng() % held.size();
      const std::uint64_t key = held[at];
      ASSERT_TRUE(filter.erase(key)) << "op " << op;
      model.remove(key);
      held[at] = held.back();
      held.pop_back();
    } else {
      const std::uint64_t key = pool[rng() % pool.size()];
      if (filter.insert(key)) {
        model.add(key);
        held.push_back(key);
      } else {
        ASSERT_EQ(filter.size(), filter.capacity()) << "insert refused below the load cap";
      }
    }
    ASSERT_EQ(filter.check_invariants(), "") << "after op " << op;
    ASSERT_EQ(filter.size(), held.size());
    for (const auto& [key, copies] : model.items()) {
      ASSERT_TRUE(filter.contains(key)) << "false negative after op " << op;
    }
  }
}

TEST(AmqQuotientFilter, NoFalseNegativesAndInvariantsAfterEveryOperation) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    QuotientFilter filter(200, 6, seed);
    // A pool a little larger than the table: repeats are common, the load reaches the cap.
    run_random_operations(filter, seed, 4000, cuckoo::test::random_keys(260, seed * 7));
  }
}

TEST(AmqQuotientFilter, NarrowRemaindersMakeEqualRemaindersInARun) {
  QuotientFilter filter(64, 1, 5);  // 1-bit remainders: every run holds duplicates
  run_random_operations(filter, 5, 3000, cuckoo::test::random_keys(80, 55));
}

// Keys whose home slots are the last few slots of the table: their runs and cluster wrap round
// to slot 0, then are taken apart again in random order.
TEST(AmqQuotientFilter, RunsWrapRoundTheEndOfTheTable) {
  const std::uint64_t slots = 100;
  QuotientFilter filter(slots, 8, 11);
  cuckoo::Xxh3Hasher hasher(filter.seed());
  std::vector<std::uint64_t> keys;
  // The home slot is the documented (hi32 · m) >> 32.
  for (std::uint64_t key : cuckoo::test::random_keys(20'000, 12)) {
    if (((hasher(key) >> 32) * slots >> 32) >= slots - 3 && keys.size() < 40) keys.push_back(key);
  }
  ASSERT_EQ(keys.size(), 40u);
  cuckoo::test::MultisetModel model;
  for (std::uint64_t key : keys) {
    ASSERT_TRUE(filter.insert(key));
    model.add(key);
    ASSERT_EQ(filter.check_invariants(), "");
  }
  for (std::uint64_t key : keys) EXPECT_TRUE(filter.contains(key));
  cuckoo::detail::SplitMix64 rng(13);
  while (!keys.empty()) {
    const std::size_t at = rng() % keys.size();
    ASSERT_TRUE(filter.erase(keys[at]));
    model.remove(keys[at]);
    keys[at] = keys.back();
    keys.pop_back();
    ASSERT_EQ(filter.check_invariants(), "");
    for (const auto& [key, copies] : model.items()) ASSERT_TRUE(filter.contains(key));
  }
  EXPECT_EQ(filter.size(), 0u);
}

TEST(AmqQuotientFilter, LongShiftedRunsAtTheLoadCap) {
  QuotientFilter filter(2000, 10, 21);
  const auto keys = cuckoo::test::random_keys(filter.capacity(), 22);
  for (std::uint64_t key : keys) ASSERT_TRUE(filter.insert(key));
  EXPECT_EQ(filter.size(), 1800u);
  EXPECT_FALSE(filter.insert(std::uint64_t{1})) << "the 90% cap";
  EXPECT_EQ(filter.check_invariants(), "");
  // Erase every other key; the rest must all still be found, the table still valid.
  for (std::size_t i = 0; i < keys.size(); i += 2) {
    ASSERT_TRUE(filter.erase(keys[i]));
    if (i % 64 == 0) {
      ASSERT_EQ(filter.check_invariants(), "");
    }
  }
  EXPECT_EQ(filter.check_invariants(), "");
  for (std::size_t i = 1; i < keys.size(); i += 2) EXPECT_TRUE(filter.contains(keys[i]));
}

TEST(AmqQuotientFilter, FalsePositiveRateMatchesTheFormula) {
  for (unsigned r : {4u, 6u, 9u}) {
    QuotientFilter filter(100'000, r, 31);
    for (std::uint64_t key : cuckoo::test::random_keys(filter.capacity(), 32)) {
      ASSERT_TRUE(filter.insert(key));
    }
    const double expected = filter.expected_fpr();
    const std::size_t queries = 1'000'000;
    std::size_t hits = 0;
    cuckoo::detail::SplitMix64 rng(33);
    for (std::size_t i = 0; i < queries; ++i) hits += filter.contains(rng() | (1ull << 63));
    const double measured = static_cast<double>(hits) / queries;
    EXPECT_LT(measured, cuckoo::test::binomial_upper(expected, queries)) << "r=" << r;
    EXPECT_GT(measured, binomial_lower(expected, queries)) << "r=" << r;
  }
}

TEST(AmqQuotientFilter, SizingFromCapacityAndTarget) {
  for (double target : {0.1, 0.01, 0.001}) {
    auto filter = QuotientFilter::with_capacity(50'000, target);
    EXPECT_GE(filter.capacity(), 50'000u);
    for (std::uint64_t key : cuckoo::test::random_keys(50'000, 41)) ASSERT_TRUE(filter.insert(key));
    EXPECT_LE(filter.expected_fpr(), target);
  }
}

TEST(AmqQuotientFilter, WithMemoryStaysWithinTheBudget) {
  for (std::size_t bytes : {64u, 100u, 1000u, 12345u, 1u << 20, 5u << 20}) {
    const auto filter = QuotientFilter::with_memory(bytes, 1000);
    EXPECT_LE(filter.memory_bytes(), bytes);
    EXPECT_EQ(filter.remainder_bits(), QuotientFilter::kPaperRemainderBits);
    EXPECT_GT(filter.memory_bytes() + 128, bytes * 9 / 10 < 128 ? 0 : bytes * 9 / 10);
  }
  // The paper's set-up: 192 MiB of 12-bit slots is 2^27 slots.
  EXPECT_EQ(QuotientFilter::with_memory(std::size_t{192} << 20, 1).slot_count() >> 20, 127u);
}

TEST(AmqQuotientFilter, BatchAndStringKeysAgreeWithSingleLookups) {
  auto filter = QuotientFilter::with_capacity(1000, 0.01);
  const auto keys = cuckoo::test::random_keys(2000, 51);
  for (std::size_t i = 0; i < 900; ++i) ASSERT_TRUE(filter.insert(keys[i]));
  auto out = std::make_unique<bool[]>(keys.size());
  filter.contains(std::span<const std::uint64_t>(keys), std::span<bool>(out.get(), keys.size()));
  for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(out[i], filter.contains(keys[i]));
  EXPECT_TRUE(filter.insert(std::string("alice")));
  EXPECT_TRUE(filter.contains("alice"));
  EXPECT_TRUE(filter.erase(std::string_view("alice")));
}

TEST(AmqQuotientFilter, BadArgumentsThrowWithAMessage) {
  EXPECT_THROW(QuotientFilter::with_capacity(0, 0.01), std::invalid_argument);
  EXPECT_THROW(QuotientFilter::with_capacity(10, 0.0), std::invalid_argument);
  EXPECT_THROW(QuotientFilter::with_capacity(10, 1.0), std::invalid_argument);
  EXPECT_THROW(QuotientFilter::with_capacity(10, 1e-12), std::invalid_argument);
  EXPECT_THROW(QuotientFilter::with_memory(63, 10), std::invalid_argument);
  EXPECT_THROW(QuotientFilter(1, 8), std::invalid_argument);
  EXPECT_THROW(QuotientFilter(100, 0), std::invalid_argument);
  EXPECT_THROW(QuotientFilter(100, 33), std::invalid_argument);
  try {
    (void)QuotientFilter::with_capacity(10, 2.0);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("target_fpr"), std::string::npos) << e.what();
  }
}

}  // namespace
