// cuckoo/io/serialize.hpp included first and on its own (cuckoo.hpp includes it back in the
// middle: see its top). This file does not build if that order breaks; it then checks that what
// the header brings in works end to end.
#include "cuckoo/io/serialize.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

TEST(SerializeHeaderAlone, FilterRoundTripsThroughBytes) {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 1000}};
  for (std::uint64_t k = 0; k < 900; ++k) ASSERT_TRUE(filter.insert(k));
  const std::vector<std::byte> bytes = filter.serialize();
  const cuckoo::Filter copy = cuckoo::Filter::deserialize(bytes);
  EXPECT_EQ(copy.size(), filter.size());
  for (std::uint64_t k = 0; k < 900; ++k) ASSERT_TRUE(copy.contains(k)) << k;
  EXPECT_EQ(copy.serialize(), bytes);
}
