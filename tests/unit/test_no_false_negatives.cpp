// The invariant that matters most: an item the filter accepted and still holds is always found.
// Checked against an exact multiset over long random sequences of inserts, duplicate inserts,
// erases and runs to full, for every fingerprint width 2..32 and every bucket size.
#include <gtest/gtest.h>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

void run_model(unsigned bits, unsigned bucket_size, std::uint64_t seed) {
  const std::size_t capacity = 3000;
  cuckoo::Filter filter{cuckoo::Config{.capacity = capacity,
                                       .fingerprint_bits = bits,
                                       .bucket_size = bucket_size,
                                       .max_kicks = 100,
                                       .seed = seed}};
  cuckoo::test::MultisetModel model;
  std::vector<std::uint64_t> held;  // one entry per copy, for picking erase victims
  cuckoo::detail::SplitMix64 rng(seed * 7 + bits);
  auto verify = [&] {
    ASSERT_EQ(filter.size(), model.total());
    for (const auto& [key, copies] : model.items()) {
      ASSERT_TRUE(filter.contains(key)) << "false negative, f=" << bits << " b=" << bucket_size;
      ASSERT_GE(filter.count(key), copies);
    }
  };
  for (int phase = 0; phase < 3; ++phase) {
    // Fill: fresh keys and some duplicates, past the point where inserts start failing.
    for (std::size_t i = 0; i < capacity * 13 / 10; ++i) {
      const std::uint64_t key =
          (!held.empty() && rng() % 8 == 0) ? held[rng() % held.size()] : rng();
      if (filter.insert(key)) {
        model.add(key);
        held.push_back(key);
      }
    }
    verify();
    // Drain about two thirds, one copy at a time.
    for (std::size_t i = 0; i < held.size() * 2 / 3; ++i) {
      const std::size_t at = rng() % held.size();
      const std::uint64_t key = held[at];
      ASSERT_TRUE(filter.erase(key)) << "erase of a held key failed, f=" << bits;
      model.remove(key);
      held[at] = held.back();
      held.pop_back();
    }
    verify();
  }
}

class NoFalseNegatives : public ::testing::TestWithParam<unsigned> {};

TEST_P(NoFalseNegatives, EveryWidthWithBucketSize2) {
  for (unsigned f = 2; f <= 32; ++f) run_model(f, 2, GetParam());
}
TEST_P(NoFalseNegatives, EveryWidthWithBucketSize4) {
  for (unsigned f = 2; f <= 32; ++f) run_model(f, 4, GetParam());
}
TEST_P(NoFalseNegatives, EveryWidthWithBucketSize8) {
  for (unsigned f = 2; f <= 32; ++f) run_model(f, 8, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Seeds, NoFalseNegatives, ::testing::Values(1u, 2u));

}  // namespace
