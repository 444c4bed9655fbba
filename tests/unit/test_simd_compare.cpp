// The bucket compares: contains_pair and match_mask_pair (whatever this build selected), their
// portable SWAR forms and,
// when compiled in (__AVX2__ / __AVX512F__; tests/CMakeLists.txt builds this file a second time
// with them on machines that run them), the vector forms give identical answers, which equal the
// slot-by-slot truth, for every b and f, on buckets at every offset within a cache line.
#include <gtest/gtest.h>

#include <cstdint>

#include "cuckoo/detail/rng.hpp"
#include "cuckoo/table/packed_table.hpp"
#include "support/packed_shapes.hpp"

namespace {

template <class Table>
void check_table(unsigned bits) {
  constexpr unsigned b = Table::kBucketSize;
  // 130 buckets: with any f, bucket starts fall on every byte offset of a 64-byte line that the
  // layout allows, including loads that would run into the next line.
  const std::uint64_t m = 130;
  Table table(m, bits);
  cuckoo::detail::SplitMix64 rng(bits * 10 + b);
  const std::uint32_t mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  for (std::uint64_t i = 0; i < m; ++i) {
    for (unsigned s = 0; s < b; ++s) {
      // A quarter empty, some small values to make equal lanes and borrows likely.
      const std::uint64_t r = rng();
      const std::uint32_t v = (r & 3) == 0 ? 0 : (r & 4) ? (r >> 8) & 3 : (r >> 32) & mask;
      table.write(i, s, v);
    }
  }
  auto truth = [&](std::uint64_t b1, std::uint64_t b2, std::uint32_t v) {
    bool hit = false;
    for (unsigned s = 0; s < b; ++s) hit |= table.read(b1, s) == v || table.read(b2, s) == v;
    return hit;
  };
  for (int q = 0; q < 20000; ++q) {
    const std::uint64_t b1 = rng() % m, b2 = rng() % m;
    std::uint32_t v;
    switch (rng() % 4) {
      case 0:
        v = table.read(b1, static_cast<unsigned>(rng() % b));
        break;
      case 1:
        v = table.read(b2, static_cast<unsigned>(rng() % b));
        break;
      case 2:
        v = static_cast<std::uint32_t>(rng() % 4);
        break;
      default:
        v = static_cast<std::uint32_t>(rng()) & mask;
        break;
    }
    const bool expected = truth(b1, b2, v);
    unsigned expected_mask = 0;
    for (unsigned s = 0; s < b; ++s) {
      expected_mask |= unsigned{table.read(b1, s) == v} << s | unsigned{table.read(b2, s) == v}
                                                                   << (b + s);
    }
    ASSERT_EQ(table.match_mask_pair(b1, b2, v), expected_mask) << "b=" << b << " f=" << bits;
    ASSERT_EQ(table.match_mask_pair_portable(b1, b2, v), expected_mask);
    ASSERT_EQ(table.contains_pair_portable(b1, b2, v), expected)
        << "b=" << b << " f=" << bits << " buckets " << b1 << "," << b2 << " v=" << v;
    ASSERT_EQ(table.contains_pair(b1, b2, v), expected) << "b=" << b << " f=" << bits;
    ASSERT_EQ(table.contains(b1, v) || table.contains(b2, v), expected);
#if defined(__AVX2__)
    ASSERT_EQ(table.contains_pair_avx2(b1, b2, v), expected) << "avx2 b=" << b << " f=" << bits;
#endif
#if defined(__AVX512F__)
    ASSERT_EQ(table.contains_pair_avx512(b1, b2, v), expected) << "avx512 b=" << b << " f=" << bits;
#endif
  }
}

constexpr auto kCheckTable = []<class Table>(unsigned bits) { check_table<Table>(bits); };

TEST(SimdCompare, AllPathsAgreeForEveryWidthAndBucketSize) {
  cuckoo::test::for_every_runtime_width(kCheckTable);
}

// The byte-aligned shapes among these take contains_pair_avx2_aligned, the others the
// run-time-shift forms.
TEST(SimdCompare, AllPathsAgreeForEveryCompileTimeWidth) {
  cuckoo::test::for_every_fixed_width(kCheckTable);
}

TEST(SimdCompare, ReportsWhichPathsThisBuildTested) {
#if defined(__AVX512F__)
  RecordProperty("vector_paths", "avx2+avx512");
#elif defined(__AVX2__)
  RecordProperty("vector_paths", "avx2");
#else
  RecordProperty("vector_paths", "portable only");
#endif
  SUCCEED();
}

}  // namespace
