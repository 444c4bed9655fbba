// When a growable filter doubles: once its table holds growth::early_growth_size items, an insert
// that finds both its buckets full doubles the table instead of searching (header essay, "When it
// doubles"). So every doubling keeps issue 14's memory bound, bits per item just before it at most
// the fixed filter's f / α_fixed + 2 + log2(1 + doublings), and happens within a few inserts of
// that count, not at the 0.966-0.978 a b = 4 search reaches; and a filter that cannot double
// still fills past the count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cuckoo/growable/growable_filter.hpp"

namespace {

struct DoublingSeen {
  unsigned generation;      // the table's generation before it doubled
  std::size_t size_before;  // items held when the insert that doubled it began
  std::size_t bytes_before;
  std::uint64_t slots_before;
};

template <unsigned kSlots>
std::vector<DoublingSeen> grow_through(double target, std::size_t start, unsigned doublings) {
  cuckoo::BasicGrowableFilter<kSlots> filter(
      {.capacity = start, .target_fpr = target, .bucket_size = kSlots});
  std::vector<DoublingSeen> seen;
  for (std::uint64_t key = 0; filter.doublings() < doublings; ++key) {
    const DoublingSeen before{filter.doublings(), filter.size(), filter.memory_bytes(),
                              filter.slot_count()};
    EXPECT_TRUE(filter.insert(key)) << key;
    if (filter.doublings() != before.generation) seen.push_back(before);
  }
  return seen;
}

// The bound restated from the issue, with the fixed filter's design loads for large tables
// (sizing.hpp: 0.935 for b = 4, 0.97 for b = 8, both for f >= 8).
double issue_bound(unsigned b, unsigned f, unsigned generation) {
  return f / (b == 4 ? 0.935 : 0.97) + 2 + std::log2(1.0 + generation);
}

template <unsigned kSlots>
void check_doublings(double target, unsigned doublings) {
  const unsigned f = cuckoo::BasicGrowableFilter<kSlots>(
                         {.capacity = 1000, .target_fpr = target, .bucket_size = kSlots})
                         .base_fingerprint_bits();
  const std::string label = "b=" + std::to_string(kSlots) + " f=" + std::to_string(f);
  const auto seen = grow_through<kSlots>(target, 1000, doublings);
  ASSERT_EQ(seen.size(), doublings) << label;
  for (const DoublingSeen& d : seen) {
    const double bits =
        8.0 * static_cast<double>(d.bytes_before) / static_cast<double>(d.size_before);
    const double load = static_cast<double>(d.size_before) / static_cast<double>(d.slots_before);
    const std::size_t earliest =
        cuckoo::growth::early_growth_size(d.bytes_before, d.slots_before, kSlots, f, d.generation);
    const std::string at = label + " doubling " + std::to_string(d.generation + 1) + " at load " +
                           std::to_string(load);
    if (earliest == std::numeric_limits<std::size_t>::max()) {
      // The bound needs a load past the slots: the table doubled when a search failed.
      EXPECT_GT(load, 0.96) << at;
      continue;
    }
    const double earliest_load =
        static_cast<double>(earliest) / static_cast<double>(d.slots_before);
    EXPECT_GE(earliest_load, cuckoo::growth::kEarliestGrowthLoad) << at;
    EXPECT_LE(bits, issue_bound(kSlots, f, d.generation)) << at;
    // Within a few inserts of the count: at load 0.95 an insert finds both buckets full with
    // probability about 0.95^8 = 0.66 (b = 4), so the first doubling insert comes within 40
    // inserts but with probability 0.34^40. Not earlier, unless a search failed first, which a
    // b = 4 table of these sizes does only past 0.95 (sizing.hpp: 0.955 for large tables).
    EXPECT_LE(d.size_before, earliest + 40) << at;
    if (kSlots == 4) {
      EXPECT_GE(d.size_before, earliest) << at;
    }
  }
}

TEST(GrowableGrowthLoad, FourSlotTablesDoubleWithinTheMemoryBound) {
  check_doublings<4>(0.001, 11);   // f = 13
  check_doublings<4>(0.01, 11);    // f = 11, the narrowest base
  check_doublings<4>(0.00001, 9);  // f = 20
}

TEST(GrowableGrowthLoad, EightSlotTablesDoubleEarlyOnlyWithinTheMemoryBound) {
  check_doublings<8>(0.001, 9);
}

TEST(GrowableGrowthLoad, TwoSlotTablesDoubleWhenASearchFails) {
  // b = 2 tables fail near 0.9, under every count the bound allows (0.95 and more).
  const auto seen = grow_through<2>(0.001, 1000, 9);
  for (const DoublingSeen& d : seen) {
    EXPECT_LT(static_cast<double>(d.size_before) / static_cast<double>(d.slots_before),
              cuckoo::growth::kEarliestGrowthLoad);
  }
}

TEST(GrowableGrowthLoad, AFilterThatCannotDoubleStillFillsPastTheCount) {
  cuckoo::BasicGrowableFilter<4> filter({.capacity = 20'000, .target_fpr = 0.001});
  filter.set_memory_limit(filter.memory_bytes());
  std::uint64_t key = 0;
  while (filter.insert(key)) ++key;
  EXPECT_EQ(filter.doublings(), 0u);
  EXPECT_EQ(filter.size(), key);
  // The search takes over where the doubling was refused: a b = 4 table of 2^16 slots fills to
  // about 0.967 before one fails (sizing.hpp), well past the 0.95 the doubling would start at.
  EXPECT_GT(filter.load_factor(), cuckoo::growth::kEarliestGrowthLoad + 0.005);
  for (std::uint64_t k = 0; k < key; ++k) ASSERT_TRUE(filter.contains(k)) << k;
}

}  // namespace
