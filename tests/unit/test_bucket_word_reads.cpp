// The packed table's single-load bucket reads, which the insert search uses, answer exactly as
// reading slot by slot, for every b and f (run-time and compile-time widths, so both the 57-bit
// groups and the whole 64-bit words of byte-aligned buckets), on buckets at every offset in a
// cache line:
//   entries(b)   the b entries in slot order;
//   has_free(b)  whether some slot is empty.
#include <gtest/gtest.h>

#include <cstdint>

#include "cuckoo/detail/rng.hpp"
#include "cuckoo/table/packed_table.hpp"
#include "support/packed_shapes.hpp"

namespace {

template <class Table>
void check_reads(unsigned bits) {
  constexpr unsigned b = Table::kBucketSize;
  const std::uint64_t m = 130;  // bucket starts at every byte offset the layout allows
  Table table(m, bits);
  cuckoo::detail::SplitMix64 rng(bits * 7 + b);
  const std::uint32_t mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  for (int round = 0; round < 20; ++round) {
    // Each round fills buckets with 0..b empty slots anywhere; non-empty values include the
    // all-ones lane and small values, which exercise the SWAR borrows.
    for (std::uint64_t i = 0; i < m; ++i) {
      const unsigned empties = static_cast<unsigned>(rng() % (b + 1));
      for (unsigned s = 0; s < b; ++s) {
        const std::uint64_t r = rng();
        std::uint32_t v = (r & 3) == 0 ? mask : (r & 4) ? 1 + ((r >> 8) & 1) : (r >> 32) & mask;
        if (v == 0) v = 1;
        if ((r >> 16) % b < empties) v = 0;
        table.write(i, s, v);
      }
    }
    for (std::uint64_t i = 0; i < m; ++i) {
      const auto got = table.entries(i);
      bool free = false;
      for (unsigned s = 0; s < b; ++s) {
        ASSERT_EQ(got[s], table.read(i, s)) << "f=" << bits << " b=" << b << " bucket " << i;
        free |= table.read(i, s) == 0;
      }
      ASSERT_EQ(table.has_free(i), free) << "f=" << bits << " b=" << b << " bucket " << i;
    }
  }
}

constexpr auto kCheckReads = []<class Table>(unsigned bits) { check_reads<Table>(bits); };

TEST(BucketWordReads, MatchSlotBySlotForEveryWidthAndBucketSize) {
  cuckoo::test::for_every_runtime_width(kCheckReads);
}

TEST(BucketWordReads, MatchSlotBySlotForEveryCompileTimeWidth) {
  cuckoo::test::for_every_fixed_width(kCheckReads);
}

}  // namespace
