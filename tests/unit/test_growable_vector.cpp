// The growable filter's vector lookup (growable_filter.hpp, pair_matches_avx2: b = 4, slots of at
// most 30 bits) answers exactly as the scalar compare does. Built into cuckoo_simd_tests, whose
// flags enable AVX2, so contains() here takes the vector path; count() reads the slots one by one
// with the scalar code in every build, so contains(k) == (count(k) > 0) compares the two paths on
// the same table: for held keys (no false negative) and for absent keys (the same false
// positives, which are where a wrong lane or shift would show). Widths run from 13 to 31 bits and
// through doublings, so slots sit at every bit offset and cross the first 8-byte word; at 31 bits
// the filter leaves the vector path, and the same checks cover the switch.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cuckoo/growable/growable_filter.hpp"

#if defined(__AVX2__)

namespace {

void check_paths_agree(double target_fpr, std::size_t keys, std::uint64_t seed) {
  cuckoo::Config cfg;
  cfg.capacity = 1000;
  cfg.target_fpr = target_fpr;
  cfg.bucket_size = 4;
  cfg.growable = true;
  cfg.seed = seed;
  cuckoo::BasicGrowableFilter<4> filter(cfg);
  std::vector<std::uint64_t> held;
  std::size_t positives = 0, checked_doublings = 0;
  for (std::uint64_t i = 0; i < keys; ++i) {
    const std::uint64_t key = i * 0x9E3779B97F4A7C15ull + seed;
    ASSERT_TRUE(filter.insert(key));
    held.push_back(key);
    // After each doubling, and at the end.
    if (filter.doublings() == checked_doublings && i + 1 != keys) continue;
    checked_doublings = filter.doublings();
    const auto label = "target " + std::to_string(target_fpr) + ", " +
                       std::to_string(filter.doublings()) + " doublings, slots of " +
                       std::to_string(filter.slot_bits()) + " bits";
    for (const std::uint64_t k : held) {
      ASSERT_TRUE(filter.contains(k)) << label << ": false negative";
      ASSERT_GE(filter.count(k), 1u) << label;
    }
    for (std::uint64_t a = 0; a < 200'000; ++a) {
      const std::uint64_t absent = ~(a * 0xD1B54A32D192ED03ull);
      const bool hit = filter.contains(absent);
      ASSERT_EQ(hit, filter.count(absent) > 0) << label << ": absent key " << absent;
      positives += hit;
    }
    std::vector<std::uint64_t> batch(held.end() - std::min<std::size_t>(held.size(), 5000),
                                     held.end());
    for (std::uint64_t a = 0; a < 5000; ++a) batch.push_back(a * 0x2545F4914F6CDD1Dull);
    const std::unique_ptr<bool[]> out(new bool[batch.size()]);
    filter.contains(std::span<const std::uint64_t>(batch),
                    std::span<bool>(out.get(), batch.size()));
    for (std::size_t j = 0; j < batch.size(); ++j) {
      ASSERT_EQ(out[j], filter.count(batch[j]) > 0) << label << ": batch key " << j;
    }
  }
  // The absent keys were compared where they matched too, not only where both paths said no.
  if (target_fpr >= 1e-3) {
    EXPECT_GT(positives, 0u);
  }
}

TEST(GrowableVectorLookup, MatchesTheScalarCompareAtEveryWidth) {
  check_paths_agree(0.01, 200'000, 1);   // slots of 13 bits at the start, wider as it grows
  check_paths_agree(0.001, 200'000, 2);  // 15
  check_paths_agree(1e-5, 100'000, 3);   // 22
  check_paths_agree(1e-7, 60'000, 4);    // 29, then 30, then 31: the scalar path
}

}  // namespace

#endif
