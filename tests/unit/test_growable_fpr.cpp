// The false-positive rate of a growable filter at each stage of its growth: within a binomial bound
// of expected_fpr() (the header's arithmetic over the entries actually stored), and that under the
// closed-form bound growth::fpr_bound() and, for the 15 doublings the essay promises, the target.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "cuckoo/growable/growable_filter.hpp"

namespace {

// Negative queries are keys from a range never inserted.
constexpr std::uint64_t kAbsent = std::uint64_t{1} << 62;

template <unsigned kSlots>
void check_stages(double target, std::size_t start, std::size_t final_size, std::uint64_t queries) {
  cuckoo::BasicGrowableFilter<kSlots> filter(
      {.capacity = start, .target_fpr = target, .bucket_size = kSlots});
  const std::string label = "b=" + std::to_string(kSlots) + " target=" + std::to_string(target);
  std::uint64_t next = 0;
  std::uint64_t query_base = kAbsent;
  for (std::size_t stage = start; stage <= final_size; stage *= 8) {
    while (next < stage) ASSERT_TRUE(filter.insert(next++)) << label;
    std::uint64_t hits = 0;
    for (std::uint64_t q = 0; q < queries; ++q) hits += filter.contains(query_base + q);
    query_base += queries;
    const double measured = static_cast<double>(hits) / static_cast<double>(queries);
    const double expected = filter.expected_fpr();
    // Binomial: five standard deviations of a count with mean queries·expected; expected_fpr sums
    // match probabilities (a union bound), so the true rate can only sit a little under it.
    const double sd = std::sqrt(expected * (1 - expected) / static_cast<double>(queries));
    EXPECT_LE(measured, expected + 5 * sd + 1e-6) << label << " at " << stage;
    EXPECT_GE(measured, expected * (1 - expected * 4 * kSlots) - 5 * sd)
        << label << " at " << stage;
    const double bound =
        cuckoo::growth::fpr_bound(kSlots, filter.base_fingerprint_bits(), filter.doublings());
    EXPECT_LE(expected, bound) << label << " at " << stage << " after " << filter.doublings();
    if (filter.doublings() <= 15) {
      EXPECT_LE(expected, target) << label << " at " << stage << " after " << filter.doublings();
    }
  }
  EXPECT_GE(filter.doublings(), 9u) << label;
}

TEST(GrowableFpr, BucketSize4) {
  check_stages<4>(0.001, 200, 200 * 4096, 400'000);
}
TEST(GrowableFpr, BucketSize2) {
  check_stages<2>(0.01, 100, 100 * 4096, 200'000);
}
TEST(GrowableFpr, BucketSize8) {
  check_stages<8>(0.001, 400, 400 * 2048, 400'000);
}

TEST(GrowableFpr, TheClosedFormHoldsTheTargetForFifteenDoublings) {
  // The essay's claim, from the closed form alone (α = 1): under ε through 15 doublings for the
  // widths ε derives, and at most 1.2ε at the 31-doubling limit.
  for (double target : {0.01, 0.001, 0.0001, 0.00001}) {
    for (unsigned b : {2u, 4u, 8u}) {
      const unsigned f = cuckoo::fingerprint_bits_for(target, b);
      for (unsigned g = 0; g <= 15; ++g) {
        EXPECT_LE(cuckoo::growth::fpr_bound(b, f, g), target) << "b=" << b << " g=" << g;
      }
      EXPECT_LE(cuckoo::growth::fpr_bound(b, f, 31), 1.2 * target) << "b=" << b;
    }
  }
}

}  // namespace
