// The bit-packed table: every width 2..32 with every bucket size reads back what was written,
// leaves its neighbours alone, and its word-at-a-time find / contains / count / count_pair /
// match_mask agree with a plain per-slot model, including on buckets crafted so that the SWAR
// trick's spurious lanes appear.
#include "cuckoo/table/packed_table.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "cuckoo/detail/rng.hpp"

namespace {

template <unsigned B, unsigned F = 0>
void check_table(unsigned bits, std::uint64_t buckets, std::uint64_t seed) {
  cuckoo::PackedTable<B, F> table(buckets, bits);
  ASSERT_EQ(table.fingerprint_bits(), bits);
  std::vector<std::uint32_t> model(buckets * B, 0);
  cuckoo::detail::SplitMix64 rng(seed);
  const std::uint32_t max = static_cast<std::uint32_t>((std::uint64_t{1} << bits) - 1);
  // Values drawn from a tiny alphabet so that buckets hold equal lanes and lanes differing by one
  // (the borrow cases of the SWAR zero test), plus the extremes 0 and 2^f − 1.
  auto value = [&] {
    switch (rng() % 4) {
      case 0:
        return std::uint32_t{0};
      case 1:
        return max;
      case 2:
        return static_cast<std::uint32_t>(1 + rng() % 3);
      default:
        return static_cast<std::uint32_t>(rng() & max);
    }
  };
  for (int round = 0; round < 4000; ++round) {
    const auto b = rng() % buckets;
    const auto s = static_cast<unsigned>(rng() % B);
    const auto v = value();
    table.write(b, s, v);
    model[b * B + s] = v;
    // Probe this and the neighbouring buckets against the model.
    for (std::uint64_t probe : {b, b == 0 ? buckets - 1 : b - 1, (b + 1) % buckets}) {
      for (std::uint32_t q : {std::uint32_t{0}, v, max, std::uint32_t{1}, std::uint32_t{2},
                              static_cast<std::uint32_t>(rng() & max)}) {
        int first = -1;
        unsigned n = 0, mask = 0;
        for (unsigned j = 0; j < B; ++j) {
          ASSERT_EQ(table.read(probe, j), model[probe * B + j]);
          if (model[probe * B + j] == q) {
            if (first < 0) first = static_cast<int>(j);
            ++n;
            mask |= 1u << j;
          }
        }
        ASSERT_EQ(table.match_mask(probe, q), mask) << "b=" << B << " f=" << bits << " q=" << q;
        ASSERT_EQ(table.find(probe, q), first) << "b=" << B << " f=" << bits << " q=" << q;
        ASSERT_EQ(table.contains(probe, q), first >= 0);
        ASSERT_EQ(table.count(probe, q), n);
        unsigned in_b = 0;
        for (unsigned j = 0; j < B; ++j) in_b += model[b * B + j] == q;
        ASSERT_EQ(table.count_pair(probe, b, q), n + in_b) << "b=" << B << " f=" << bits;
      }
    }
  }
  for (std::uint64_t b = 0; b < buckets; ++b) {
    for (unsigned j = 0; j < B; ++j) ASSERT_EQ(table.read(b, j), model[b * B + j]);
  }
  table.clear();
  for (std::uint64_t b = 0; b < buckets; ++b) ASSERT_EQ(table.find(b, 0), 0);
}

TEST(PackedTable, EveryWidthAndBucketSizeMatchesAPerSlotModel) {
  for (unsigned bits = 2; bits <= 32; ++bits) {
    check_table<2>(bits, 14, bits);
    check_table<4>(bits, 10, bits + 100);
    check_table<8>(bits, 6, bits + 200);
  }
}

TEST(PackedTable, CompileTimeWidthsMatchTheModelToo) {
  check_table<4, 8>(8, 10, 1);
  check_table<4, 12>(12, 10, 2);
  check_table<4, 16>(16, 10, 3);
  check_table<8, 32>(32, 6, 4);
  check_table<2, 3>(3, 14, 5);
}

TEST(PackedTable, MemoryIsExactlyTheBitsPlusTailPadding) {
  for (unsigned bits = 2; bits <= 32; ++bits) {
    cuckoo::PackedTable<4> table(1001 * 2, bits);
    EXPECT_EQ(table.memory_bytes(), (2002ull * 4 * bits + 7) / 8 + 8);
  }
}

TEST(PackedTable, RejectsWidthsOutsideTheRangeOrTheCompiledWidth) {
  EXPECT_THROW((cuckoo::PackedTable<4>(10, 1)), std::invalid_argument);
  EXPECT_THROW((cuckoo::PackedTable<4>(10, 33)), std::invalid_argument);
  EXPECT_THROW((cuckoo::PackedTable<4, 12>(10, 13)), std::invalid_argument);
}

}  // namespace
