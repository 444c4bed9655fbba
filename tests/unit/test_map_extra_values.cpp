// Extra values: a lookup returns, besides a key's own values, the values of other entries whose
// fingerprint collides with its own in its two buckets. Each of the 2b slots is occupied with
// probability α (the load) by a fingerprint uniform on 1..2^f − 1, independent of the query's, so
// an absent key gets on average exactly 2bα / (2^f − 1) values (basic_approximate_map.hpp), and a
// stored key at most that many besides its own. Checked with a 5-sigma binomial margin around the
// mean (2b·N trials of probability α / (2^f − 1)), from below too: far fewer extra values would
// mean a lookup that skips slots.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

TEST(ApproximateMapExtraValues, FollowTheFingerprintArithmetic) {
  for (unsigned b : {2u, 4u, 8u}) {
    for (unsigned f : {6u, 8u, 10u}) {
      const std::string label = "b=" + std::to_string(b) + " f=" + std::to_string(f);
      cuckoo::ApproximateMap<std::uint32_t> map{
          cuckoo::Config{.capacity = 20'000, .fingerprint_bits = f, .bucket_size = b}};
      const auto keys = cuckoo::test::random_keys(map.capacity(), 31 * f + b);
      for (std::size_t i = 0; i < keys.size(); ++i) {
        map.insert(keys[i], static_cast<std::uint32_t>(i));  // narrow f may refuse some: fine
      }
      const double per_slot = map.load_factor() / (std::ldexp(1.0, static_cast<int>(f)) - 1.0);

      // Absent keys (another stream, top bit set: distinct from the stored ones).
      constexpr std::size_t kQueries = 200'000;
      cuckoo::detail::SplitMix64 rng(0xABCD + f * 8 + b);
      std::size_t values = 0;
      for (std::size_t i = 0; i < kQueries; ++i) values += map.find(rng() | (1ull << 63)).size();
      const double trials = 2.0 * b * kQueries;
      const double rate = static_cast<double>(values) / trials;
      EXPECT_LT(rate, cuckoo::test::binomial_upper(per_slot, trials)) << label;
      EXPECT_GT(rate, cuckoo::test::binomial_lower(per_slot, trials)) << label;

      // Stored keys: their own value (the only copy), plus extras at most at the same rate.
      std::size_t extras = 0, stored = 0;
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const auto found = map.find(keys[i]);
        if (found.empty()) continue;  // refused at insert (narrow f), checked below
        ++stored;
        std::size_t own = 0;
        for (auto v : found) own += v == static_cast<std::uint32_t>(i);
        ASSERT_EQ(own, 1u) << label;
        extras += found.size() - 1;
      }
      EXPECT_EQ(stored, map.size()) << label;
      const double stored_trials = 2.0 * b * static_cast<double>(stored);
      EXPECT_LT(static_cast<double>(extras) / stored_trials,
                cuckoo::test::binomial_upper(per_slot, stored_trials))
          << label;
    }
  }
}

}  // namespace
