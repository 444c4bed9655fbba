// d-left counting Bloom filter (cuckoo/amq/dleft_counting_bloom.hpp): no false negatives against
// an exact model over random insert/erase sequences, also when tiny fingerprints make keys share
// cells and saturate counters; a failed insert changes nothing; the measured false-positive rate
// within 5 sigma of D/(B·2^r); the design load; sizing, budget and argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuckoo/amq/concepts.hpp"
#include "cuckoo/amq/dleft_counting_bloom.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::binomial_lower;

using cuckoo::amq::DLeftCountingBloom;
static_assert(cuckoo::amq::DeletableFilter<DLeftCountingBloom>);

void run_random_operations(DLeftCountingBloom& filter, std::uint64_t seed, std::size_t operations,
                           const std::vector<std::uint64_t>& pool) {
  cuckoo::test::MultisetModel model;
  std::vector<std::uint64_t> held;
  cuckoo::detail::SplitMix64 rng(seed);
  std::size_t refused = 0;
  for (std::size_t op = 0; op < operations; ++op) {
    if (!held.empty() && rng() % 100 < 45) {
      const std::size_t at = rng() % held.size();
      ASSERT_TRUE(filter.erase(held[at])) << "op " << op;
      model.remove(held[at]);
      held[at] = held.back();
      held.pop_back();
    } else {
      const std::uint64_t key = pool[rng() % pool.size()];
      if (filter.insert(key)) {
        model.add(key);
        held.push_back(key);
      } else {
        ++refused;
      }
    }
    ASSERT_EQ(filter.size(), held.size());
    for (const auto& [key, copies] : model.items()) {
      ASSERT_TRUE(filter.contains(key)) << "false negative after op " << op;
    }
  }
  ::testing::Test::RecordProperty("refused_inserts", static_cast<int>(refused));
}

TEST(AmqDLeftCountingBloom, NoFalseNegativesOverRandomInsertsAndErases) {
  DLeftCountingBloom filter(32, 10, 1);  // 512 cells
  run_random_operations(filter, 2, 6000, cuckoo::test::random_keys(600, 3));
}

TEST(AmqDLeftCountingBloom, CollidingFingerprintsNeverCauseFalseNegatives) {
  // 2-bit remainders over 4 buckets per subtable: only 16 true fingerprints, so nearly every key
  // shares its cell with others and counters saturate.
  DLeftCountingBloom filter(4, 2, 4);
  run_random_operations(filter, 5, 4000, cuckoo::test::random_keys(200, 6));
  DLeftCountingBloom wider(16, 3, 7);  // 128 fingerprints in 256 cells: mixed sharing
  run_random_operations(wider, 8, 6000, cuckoo::test::random_keys(400, 9));
}

TEST(AmqDLeftCountingBloom, AFailedInsertChangesNothing) {
  DLeftCountingBloom filter(8, 12, 10);  // 128 cells
  const auto keys = cuckoo::test::random_keys(400, 11);
  const auto probes = cuckoo::test::random_keys(20'000, 12);
  std::vector<std::uint64_t> held;
  std::size_t failures = 0;
  for (std::uint64_t key : keys) {
    std::vector<bool> before;
    for (std::uint64_t probe : probes) before.push_back(filter.contains(probe));
    const std::size_t size = filter.size();
    const double load = filter.load_factor();
    if (filter.insert(key)) {
      held.push_back(key);
      continue;
    }
    ++failures;
    EXPECT_EQ(filter.size(), size);
    EXPECT_EQ(filter.load_factor(), load);
    for (std::size_t i = 0; i < probes.size(); ++i) {
      ASSERT_EQ(filter.contains(probes[i]), before[i]);
    }
    for (std::uint64_t h : held) ASSERT_TRUE(filter.contains(h));
  }
  EXPECT_GT(failures, 0u) << "the table must fill up for this test to mean anything";
}

TEST(AmqDLeftCountingBloom, DesignCapacityIsAccepted) {
  // kDesignLoad = 0.75 sits below the first failure of d-left insertion with d = 4 and 4 cells
  // (about 0.79 at 2^24 cells, 0.82 at 2^20; the paper saw 0.78 at 2^27).
  for (std::size_t n : {1u, 10u, 1000u, 100'000u}) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      auto filter = DLeftCountingBloom::with_capacity(n, 0.01, seed);
      EXPECT_GE(filter.capacity(), n);
      for (std::uint64_t key : cuckoo::test::random_keys(n, seed + 100)) {
        ASSERT_TRUE(filter.insert(key)) << "n=" << n << " size=" << filter.size();
      }
    }
  }
}

TEST(AmqDLeftCountingBloom, FalsePositiveRateMatchesTheFormula) {
  const std::size_t queries = 1'000'000;
  for (unsigned r : {6u, 8u, 10u}) {
    DLeftCountingBloom filter(5000, r, 13);  // 80 000 cells
    for (std::uint64_t key : cuckoo::test::random_keys(60'000, 14)) ASSERT_TRUE(filter.insert(key));
    // Exact for this filter: one cell per distinct true fingerprint D, out of B·2^r values.
    const double distinct = filter.load_factor() * static_cast<double>(filter.cell_count());
    const double expected = distinct / (5000.0 * std::ldexp(1.0, static_cast<int>(r)));
    std::size_t hits = 0;
    cuckoo::detail::SplitMix64 rng(15);
    for (std::size_t i = 0; i < queries; ++i) hits += filter.contains(rng() | (1ull << 63));
    const double measured = static_cast<double>(hits) / queries;
    EXPECT_LT(measured, cuckoo::test::binomial_upper(expected, queries)) << "r=" << r;
    EXPECT_GT(measured, binomial_lower(expected, queries)) << "r=" << r;
    EXPECT_LE(expected, filter.expected_fpr());
  }
}

TEST(AmqDLeftCountingBloom, SizingAndBudget) {
  for (double target : {0.1, 0.01, 0.001}) {
    auto filter = DLeftCountingBloom::with_capacity(20'000, target);
    for (std::uint64_t key : cuckoo::test::random_keys(20'000, 16)) ASSERT_TRUE(filter.insert(key));
    EXPECT_LE(filter.expected_fpr(), target);
  }
  for (std::size_t bytes : {64u, 100u, 1000u, 12345u, 1u << 20, 5u << 20}) {
    const auto filter = DLeftCountingBloom::with_memory(bytes, 1000);
    EXPECT_LE(filter.memory_bytes(), bytes);
    EXPECT_EQ(filter.remainder_bits(), DLeftCountingBloom::kPaperRemainderBits);
  }
  // The paper's set-up: 192 MiB of 12-bit cells, 2^27 cells (less one bucket for the padding).
  const auto paper = DLeftCountingBloom::with_memory(std::size_t{192} << 20, 1);
  EXPECT_EQ((paper.cell_count() + 16) >> 20, 128u);
}

TEST(AmqDLeftCountingBloom, BatchAndStringKeys) {
  auto filter = DLeftCountingBloom::with_capacity(1000, 0.01);
  const auto keys = cuckoo::test::random_keys(2000, 21);
  for (std::size_t i = 0; i < 1000; ++i) ASSERT_TRUE(filter.insert(keys[i]));
  auto out = std::make_unique<bool[]>(keys.size());
  filter.contains(std::span<const std::uint64_t>(keys), std::span<bool>(out.get(), keys.size()));
  for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(out[i], filter.contains(keys[i]));
  EXPECT_TRUE(filter.insert(std::string("alice")));
  EXPECT_TRUE(filter.erase("alice"));
}

TEST(AmqDLeftCountingBloom, BadArgumentsThrowWithAMessage) {
  EXPECT_THROW(DLeftCountingBloom::with_capacity(0, 0.01), std::invalid_argument);
  EXPECT_THROW(DLeftCountingBloom::with_capacity(10, 1.0), std::invalid_argument);
  EXPECT_THROW(DLeftCountingBloom::with_capacity(10, 1e-6), std::invalid_argument);
  EXPECT_THROW(DLeftCountingBloom::with_memory(32, 10), std::invalid_argument);
  EXPECT_THROW(DLeftCountingBloom(0, 8), std::invalid_argument);
  EXPECT_THROW(DLeftCountingBloom(10, 15), std::invalid_argument);
  try {
    (void)DLeftCountingBloom::with_capacity(10, 1e-6);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("remainders"), std::string::npos) << e.what();
  }
}

}  // namespace
