// Capacity at scale: filters of millions of items, just past powers of two, filled to their
// configured capacity for every bucket size, with the narrowest width the guarantee covers.
#include <gtest/gtest.h>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

TEST(CapacityStress, MillionsOfItemsJustPastAPowerOfTwo) {
  for (unsigned b : {2u, 4u, 8u}) {
    for (unsigned f : {7u, 12u}) {
      const std::size_t n = (std::size_t{1} << 21) + 1;
      cuckoo::Filter filter{cuckoo::Config{.capacity = n, .fingerprint_bits = f, .bucket_size = b}};
      const auto keys = cuckoo::test::random_keys(n, b * 100 + f);
      std::size_t failed = 0;
      for (std::uint64_t key : keys) failed += !filter.insert(key);
      EXPECT_EQ(failed, 0u) << "b=" << b << " f=" << f << " load " << filter.load_factor();
      std::size_t missing = 0;
      for (std::uint64_t key : keys) missing += !filter.contains(key);
      EXPECT_EQ(missing, failed);
    }
  }
}

}  // namespace
