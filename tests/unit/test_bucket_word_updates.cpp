// The packed table's single-load bucket updates leave exactly the bytes of their slot-by-slot
// references and answer the same, for every b and f, on buckets at every offset in a cache line:
//   erase_pair(b1, b2, v)  the lowest slot holding v in b1, else in b2, cleared (with repeated
//                          values in a bucket, absent values, and b1 == b2);
//   try_place(b, v)        v written into the lowest empty slot of b (full buckets refused).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cuckoo/detail/rng.hpp"
#include "cuckoo/table/packed_table.hpp"
#include "support/packed_shapes.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::bytes_of;

template <class Table>
bool reference_erase(Table& table, std::uint64_t b1, std::uint64_t b2, std::uint32_t value) {
  for (const std::uint64_t bucket : {b1, b2}) {
    for (unsigned s = 0; s < Table::kBucketSize; ++s) {
      if (table.read(bucket, s) == value) {
        table.write(bucket, s, 0);
        return true;
      }
    }
  }
  return false;
}

template <class Table>
void check_erase_pair(unsigned bits) {
  constexpr unsigned b = Table::kBucketSize;
  const std::uint64_t m = 130;  // bucket starts at every byte offset the layout allows
  Table fast(m, bits), reference(m, bits);
  cuckoo::detail::SplitMix64 rng(bits * 100 + b);
  const std::uint32_t mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  const auto random_value = [&] {
    const std::uint64_t r = rng();
    // Small values repeat within a bucket and make the SWAR borrows likely.
    const std::uint32_t v = (r & 4) ? (r >> 8) & 3 : (r >> 32) & mask;
    return v == 0 ? 1u : v;
  };
  for (int round = 0; round < 40; ++round) {
    for (std::uint64_t i = 0; i < m; ++i) {
      for (unsigned s = 0; s < b; ++s) {
        const std::uint32_t v = (rng() & 3) == 0 ? 0 : random_value();
        fast.write(i, s, v);
        reference.write(i, s, v);
      }
    }
    for (int q = 0; q < 400; ++q) {
      const std::uint64_t b1 = rng() % m;
      const std::uint64_t b2 = (rng() & 7) == 0 ? b1 : rng() % m;
      std::uint32_t v;
      switch (rng() % 3) {
        case 0:
          v = fast.read(b1, static_cast<unsigned>(rng() % b));
          break;
        case 1:
          v = fast.read(b2, static_cast<unsigned>(rng() % b));
          break;
        default:
          v = random_value();
      }
      if (v == 0) continue;  // erase is never asked for the empty marker
      const bool expected = reference_erase(reference, b1, b2, v);
      ASSERT_EQ(fast.erase_pair(b1, b2, v), expected)
          << "f=" << bits << " b=" << b << " b1=" << b1 << " b2=" << b2 << " v=" << v;
      ASSERT_EQ(bytes_of(fast), bytes_of(reference))
          << "f=" << bits << " b=" << b << " b1=" << b1 << " b2=" << b2 << " v=" << v;
    }
  }
}

template <class Table>
void check_try_place(unsigned bits) {
  constexpr unsigned b = Table::kBucketSize;
  const std::uint64_t m = 130;
  Table fast(m, bits), reference(m, bits);
  cuckoo::detail::SplitMix64 rng(bits * 1000 + b);
  const std::uint32_t mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  for (int round = 0; round < 20; ++round) {
    // Each round starts from buckets 0..b slots full, the free slots anywhere.
    for (std::uint64_t i = 0; i < m; ++i) {
      for (unsigned s = 0; s < b; ++s) {
        const std::uint32_t v =
            (rng() % (b + 1)) <= s ? 0 : 1 + static_cast<std::uint32_t>(rng()) % mask;
        fast.write(i, s, v);
        reference.write(i, s, v);
      }
    }
    for (int q = 0; q < 600; ++q) {
      const std::uint64_t bucket = rng() % m;
      const std::uint32_t v = 1 + static_cast<std::uint32_t>(rng() % mask);
      const int slot = reference.find(bucket, 0);
      if (slot >= 0) reference.write(bucket, static_cast<unsigned>(slot), v);
      ASSERT_EQ(fast.try_place(bucket, v), slot >= 0) << "f=" << bits << " b=" << b;
      ASSERT_EQ(bytes_of(fast), bytes_of(reference)) << "f=" << bits << " b=" << b;
    }
  }
}

constexpr auto kCheckTryPlace = []<class Table>(unsigned bits) { check_try_place<Table>(bits); };
constexpr auto kCheckErasePair = []<class Table>(unsigned bits) { check_erase_pair<Table>(bits); };

TEST(TryPlace, MatchesFindThenWriteForEveryWidthAndBucketSize) {
  cuckoo::test::for_every_runtime_width(kCheckTryPlace);
}

// Byte-aligned buckets of up to 64 bits (f = 16, b = 4; f = 8, b = 8; f = 32, b = 2) are one
// whole-word group, the others groups in a 57-bit window.
TEST(TryPlace, EveryCompileTimeWidth) {
  cuckoo::test::for_every_fixed_width(kCheckTryPlace);
}

TEST(ErasePair, MatchesTheTwoStepEraseForEveryWidthAndBucketSize) {
  cuckoo::test::for_every_runtime_width(kCheckErasePair);
}

// Byte-aligned buckets of b <= 4 lanes in one load take erase_pair_avx2_aligned where AVX2 is
// compiled in (tests/CMakeLists.txt builds this file a second time with it), the others the SWAR
// and slot-by-slot forms.
TEST(ErasePair, EveryCompileTimeWidth) {
  cuckoo::test::for_every_fixed_width(kCheckErasePair);
}

}  // namespace
