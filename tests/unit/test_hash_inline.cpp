// The integer hash takes xxHash's inlined 8-byte kernel; it must equal the public XXH3 entry
// point bit for bit (saved filters and other hosts depend on the hash never changing).
#include <gtest/gtest.h>

#include <cstdint>

#include "cuckoo/detail/endian.hpp"
#include "cuckoo/detail/rng.hpp"
#include "cuckoo/hash.hpp"

TEST(HashInline, IntegerHashEqualsPublicXxh3) {
  cuckoo::detail::SplitMix64 rng(5);
  for (int s = 0; s < 64; ++s) {
    const std::uint64_t seed = s < 4 ? static_cast<std::uint64_t>(s) : rng();
    const cuckoo::Xxh3Hasher h(seed);
    for (int i = 0; i < 2000; ++i) {
      const std::uint64_t key = i < 8 ? static_cast<std::uint64_t>(i) - 4 : rng();
      const std::uint64_t le = cuckoo::detail::little_endian(key);
      ASSERT_EQ(h(key), XXH3_64bits_withSeed(&le, sizeof le, seed)) << key << " seed " << seed;
    }
  }
}
