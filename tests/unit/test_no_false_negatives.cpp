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
  cuckoo::test::fill_and_drain_against_model(
      filter, capacity, seed * 7 + bits,
      "f=" + std::to_string(bits) + " b=" + std::to_string(bucket_size));
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
