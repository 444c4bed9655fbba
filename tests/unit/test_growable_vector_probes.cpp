// A growable filter's batch lookups stage 8-byte integer keys eight at a time where the table's
// level has AVX-512 (growable_filter.hpp, LaneView::stage): XXH3, the mix, the first bucket,
// the key's bits and the second bucket with its alternation computed in lanes. Single-key
// calls take the scalar probe_of, so a batch answering exactly as the single keys do, for
// absent keys too, shows the same probes: a wrong bucket or key bits would move the false
// positives (hundreds per stage at a 5% target), a wrong bucket of a held key would be a false
// negative. Checked at every stage from the bare generation 0 through ten doublings, for b = 2,
// 4 and 8, unsigned and signed keys, and batch lengths around the groups (8) and the depth (32).
// Skipped where the CPU lacks AVX-512.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "cuckoo/detail/isa.hpp"
#include "cuckoo/growable/growable_filter.hpp"

#if CUCKOO_HAS_X86_VECTOR_PATHS

namespace {

using cuckoo::Isa;

bool cpu_runs_avx512() {
  return cuckoo::detail::detect_cpu_isa() == Isa::kAvx512;
}

/// Batch contains and count of `queries` (and of prefixes of it around the groups and the depth)
/// against the single-key calls; returns how many of the queries the filter answered yes to.
template <class FilterType, class K>
std::size_t check_batches(const FilterType& filter, const std::vector<K>& queries) {
  const std::size_t lengths[] = {0, 1, 7, 8, 9, 31, 32, 33, 39, 40, 41, 47, 1000, queries.size()};
  std::size_t yes = 0;
  for (const std::size_t n : lengths) {
    const std::span<const K> keys(queries.data(), n);
    std::vector<unsigned char> answers(n + 1, 2);
    std::vector<std::size_t> counts(n + 1, 99);
    filter.contains(keys, std::span<bool>(reinterpret_cast<bool*>(answers.data()), n));
    filter.count(keys, std::span<std::size_t>(counts.data(), n));
    for (std::size_t i = 0; i < n; ++i) {
      const bool single = filter.contains(keys[i]);
      EXPECT_EQ(answers[i] != 0, single) << "length " << n << ", key " << keys[i];
      EXPECT_EQ(counts[i], filter.count(keys[i])) << "length " << n << ", key " << keys[i];
      if (n == queries.size()) yes += single;
    }
    EXPECT_EQ(answers[n], 2) << "wrote past the batch";
    EXPECT_EQ(counts[n], 99u) << "wrote past the batch";
  }
  return yes;
}

template <unsigned kSlots, class K>
void check_every_stage(double target_fpr, std::uint64_t seed, unsigned doublings) {
  cuckoo::Config cfg;
  cfg.capacity = 1000;
  cfg.target_fpr = target_fpr;
  cfg.bucket_size = kSlots;
  cfg.growable = true;
  cfg.seed = seed;
  cuckoo::BasicGrowableFilter<kSlots, cuckoo::Xxh3Hasher, Isa::kAvx512> filter(cfg);
  std::mt19937_64 rng(seed);
  std::vector<K> held;
  const auto insert_one = [&] {
    const K key = static_cast<K>(rng());
    ASSERT_TRUE(filter.insert(key));
    held.push_back(key);
  };
  std::size_t absent_yes = 0;
  double absent_expected_at_least = 0;
  for (unsigned stage = 0; stage <= doublings; ++stage) {
    // Each stage full (to 80% of its slots, below where b = 2 doubles), its fullest lookups.
    while (filter.doublings() == stage && filter.load_factor() < 0.8) insert_one();
    ASSERT_EQ(filter.doublings(), stage);
    SCOPED_TRACE(testing::Message()
                 << "b " << kSlots << ", target " << target_fpr << ", " << filter.doublings()
                 << " doublings, slots of " << filter.slot_bits() << " bits");
    // The edge keys (0, all ones, single bits), held keys, then absent keys, and a length that is
    // not a multiple of eight, so that the last keys take the single-key stage.
    std::vector<K> queries = {K{0}, static_cast<K>(~std::uint64_t{0}), K{1}};
    for (unsigned bit = 0; bit < 64; ++bit) {
      queries.push_back(static_cast<K>(std::uint64_t{1} << bit));
    }
    const std::size_t recent = std::min<std::size_t>(held.size(), 4000);
    queries.insert(queries.end(), held.end() - static_cast<std::ptrdiff_t>(recent), held.end());
    const std::size_t first_absent = queries.size();
    for (std::size_t i = 0; i < 40'005; ++i) queries.push_back(static_cast<K>(rng()));
    const std::size_t yes = check_batches(filter, queries);
    // Every held key answers yes in one batch of them all.
    std::vector<unsigned char> answers(held.size());
    filter.contains(std::span<const K>(held),
                    std::span<bool>(reinterpret_cast<bool*>(answers.data()), held.size()));
    for (std::size_t i = 0; i < held.size(); ++i) ASSERT_NE(answers[i], 0) << "held key " << i;
    // The test's power: an absent key matches an entry of L fingerprint bits with probability
    // 2^-L, and no entry has more than W = slot_bits() (bare) or W - 1 (marked), so each absent
    // key is a false positive with probability at least 2b * load * 2^-W.
    std::size_t held_yes = 0;
    for (std::size_t i = 0; i < first_absent; ++i) held_yes += filter.contains(queries[i]);
    absent_yes += yes - held_yes;
    absent_expected_at_least += static_cast<double>(queries.size() - first_absent) * 2 * kSlots *
                                filter.load_factor() / std::ldexp(1.0, filter.slot_bits());
    while (stage < doublings && filter.doublings() == stage) insert_one();
  }
  // At least half the lower bound (it is some hundreds, so half is many standard deviations
  // below): the comparisons above saw enough false positives to tell probes apart.
  EXPECT_GE(static_cast<double>(absent_yes), absent_expected_at_least / 2);
}

TEST(GrowableVectorProbes, BatchesAnswerAsSingleKeysAtEveryStage) {
  if (!cpu_runs_avx512()) GTEST_SKIP() << "the CPU has no AVX-512";
  check_every_stage<4, std::uint64_t>(0.05, 1, 10);
  check_every_stage<4, std::uint64_t>(0.001, 2, 8);
  check_every_stage<4, std::int64_t>(0.01, 3, 6);
  check_every_stage<2, std::uint64_t>(0.05, 4, 8);
  check_every_stage<8, std::uint64_t>(0.05, 5, 8);
}

}  // namespace

#endif  // CUCKOO_HAS_X86_VECTOR_PATHS
