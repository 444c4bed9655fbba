// Semi-sorted buckets, table level: the 12-bit tuple index round-trips every sorted nibble tuple,
// every reachable bucket state reads back as the multiset written, the encoding is canonical (the
// same multiset written in any order gives the same bytes, neighbours untouched), and a bucket
// costs exactly 4f − 4 bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <vector>

#include "cuckoo/table/packed_table.hpp"
#include "cuckoo/table/semisort_table.hpp"
#include "support/test_support.hpp"

namespace {

namespace ss = cuckoo::detail::semisort;

bool is_sorted_tuple(std::uint32_t tuple) {
  for (unsigned lane = 0; lane < 3; ++lane) {
    if (((tuple >> (4 * lane)) & 15) > ((tuple >> (4 * lane + 4)) & 15)) return false;
  }
  return true;
}

TEST(SemiSortEncoding, EverySortedTupleRoundTripsThroughItsIndex) {
  std::bitset<4096> seen;
  unsigned sorted_tuples = 0;
  for (std::uint32_t tuple = 0; tuple < 65536; ++tuple) {
    if (!is_sorted_tuple(tuple)) continue;
    ++sorted_tuples;
    const unsigned index = ss::rank(tuple);
    ASSERT_LT(index, ss::kTupleCount) << std::hex << tuple;
    ASSERT_FALSE(seen[index]) << "two tuples share index " << index;
    seen.set(index);
    ASSERT_EQ(ss::kDecode[index], tuple);
  }
  EXPECT_EQ(sorted_tuples, 3876u);  // C(19, 4): multisets of 4 from 16 values
  EXPECT_EQ(seen.count(), 3876u);   // so the indices are exactly 0..3875
  EXPECT_EQ(ss::rank(0), 0u);       // an all-zero bucket is an empty bucket
  EXPECT_EQ(ss::rank(0xFFFF), 3875u);
  for (unsigned index = 0; index < ss::kTupleCount; ++index) {
    ASSERT_TRUE(is_sorted_tuple(ss::kDecode[index]));
    ASSERT_EQ(ss::rank(ss::kDecode[index]), index);
  }
  // Indices no encoding produces decode to an empty bucket rather than to garbage.
  for (unsigned index = ss::kTupleCount; index < 4096; ++index) ASSERT_EQ(ss::kDecode[index], 0u);
}

TEST(SemiSortEncoding, NibbleLaneMatchIsExactForEveryTupleAndNibble) {
  for (std::uint32_t tuple = 0; tuple < 65536; ++tuple) {
    for (std::uint32_t nibble = 0; nibble < 16; ++nibble) {
      unsigned expected = 0;
      for (unsigned lane = 0; lane < 4; ++lane) {
        expected |= static_cast<unsigned>(((tuple >> (4 * lane)) & 15) == nibble) << lane;
      }
      ASSERT_EQ(ss::nibble_matches(tuple, nibble), expected) << std::hex << tuple << " " << nibble;
    }
  }
}

// A value generator that makes collisions of the high nibble or of the low part likely, so that
// lanes where only one half matches are exercised, not just distinct random values.
std::uint32_t tricky_value(cuckoo::detail::SplitMix64& rng, unsigned bits) {
  const unsigned low_bits = bits - 4;
  const std::uint32_t low_mask =
      low_bits == 0 ? 0 : static_cast<std::uint32_t>((1ull << low_bits) - 1);
  const std::uint32_t nibble = static_cast<std::uint32_t>(rng() % 4 == 0 ? rng() % 2 : rng() % 16);
  std::uint32_t low;
  switch (rng() % 4) {
    case 0:
      low = 0;
      break;
    case 1:
      low = 1 & low_mask;
      break;
    case 2:
      low = low_mask;
      break;
    default:
      low = static_cast<std::uint32_t>(rng()) & low_mask;
      break;
  }
  return nibble << low_bits | low;
}

void check_random_states(unsigned bits) {
  const std::uint64_t buckets = 37;  // odd, so buckets straddle bytes in every way
  cuckoo::SemiSortedTable<> table(buckets, bits);
  std::vector<std::vector<std::uint32_t>> model(buckets, std::vector<std::uint32_t>(4, 0));
  cuckoo::detail::SplitMix64 rng(1000 + bits);
  auto check_bucket = [&](std::uint64_t bucket) {
    std::vector<std::uint32_t> expected = model[bucket];
    std::sort(expected.begin(), expected.end());
    for (unsigned slot = 0; slot < 4; ++slot) {
      ASSERT_EQ(table.read(bucket, slot), expected[slot]) << "f=" << bits << " bucket " << bucket;
    }
    for (int probe = 0; probe < 8; ++probe) {
      const std::uint32_t v = probe < 4 ? expected[probe] : tricky_value(rng, bits);
      const auto copies = static_cast<unsigned>(std::count(expected.begin(), expected.end(), v));
      ASSERT_EQ(table.count(bucket, v), copies) << "f=" << bits << " v=" << v;
      ASSERT_EQ(table.contains(bucket, v), copies != 0);
      const auto first = std::find(expected.begin(), expected.end(), v);
      ASSERT_EQ(table.find(bucket, v),
                first == expected.end() ? -1 : static_cast<int>(first - expected.begin()));
    }
  };
  for (int step = 0; step < 4000; ++step) {
    const std::uint64_t bucket = rng() % buckets;
    const auto slot = static_cast<unsigned>(rng() % 4);
    std::vector<std::uint32_t> sorted = model[bucket];
    std::sort(sorted.begin(), sorted.end());
    const std::uint32_t value = tricky_value(rng, bits);
    const auto before = std::vector<std::byte>(table.bytes().begin(), table.bytes().end());
    const std::uint32_t old = table.exchange(bucket, slot, value);
    ASSERT_EQ(old, sorted[slot]);  // slots are positions in the sorted order
    *std::find(model[bucket].begin(), model[bucket].end(), old) = value;
    check_bucket(bucket);
    if (step % 3 == 0) {  // undo by value restores the exact bytes
      table.undo_exchange(bucket, slot, value, old);
      ASSERT_TRUE(std::equal(before.begin(), before.end(), table.bytes().begin()))
          << "undo_exchange did not restore the bytes, f=" << bits;
      *std::find(model[bucket].begin(), model[bucket].end(), value) = old;
    }
  }
  for (std::uint64_t bucket = 0; bucket < buckets; ++bucket) check_bucket(bucket);
  EXPECT_TRUE(table.is_canonical());

  // Canonical: the same multisets written in another order, into a fresh table, give the same
  // bytes — including every bit of the neighbours and of the tail padding.
  cuckoo::SemiSortedTable<> rebuilt(buckets, bits);
  for (std::uint64_t bucket = buckets; bucket-- > 0;) {
    std::vector<std::uint32_t> entries = model[bucket];
    std::reverse(entries.begin(), entries.end());
    std::rotate(entries.begin(), entries.begin() + static_cast<long>(bucket % 4), entries.end());
    for (std::uint32_t entry : entries) {  // each into a free slot, as an insert does
      if (entry != 0) rebuilt.write(bucket, static_cast<unsigned>(rebuilt.find(bucket, 0)), entry);
    }
  }
  EXPECT_TRUE(std::equal(table.bytes().begin(), table.bytes().end(), rebuilt.bytes().begin()))
      << "f=" << bits;
}

TEST(SemiSortEncoding, RandomBucketStatesReadBackAndEncodeCanonicallyForEveryWidth) {
  for (unsigned bits = 4; bits <= 32; ++bits) check_random_states(bits);
}

TEST(SemiSortEncoding, CompileTimeWidthAgreesWithRunTimeWidth) {
  cuckoo::SemiSortedTable<13> fixed(101, 13);
  cuckoo::SemiSortedTable<> runtime(101, 13);
  cuckoo::detail::SplitMix64 rng(13);
  for (int step = 0; step < 2000; ++step) {
    const std::uint64_t bucket = rng() % 101;
    const auto slot = static_cast<unsigned>(rng() % 4);
    const std::uint32_t value = tricky_value(rng, 13);
    ASSERT_EQ(fixed.exchange(bucket, slot, value), runtime.exchange(bucket, slot, value));
    ASSERT_EQ(fixed.count(bucket, value), runtime.count(bucket, value));
  }
  EXPECT_TRUE(std::equal(fixed.bytes().begin(), fixed.bytes().end(), runtime.bytes().begin()));
}

TEST(SemiSortEncoding, ABucketCostsExactly4fMinus4Bits) {
  for (unsigned bits = 4; bits <= 32; ++bits) {
    for (std::uint64_t buckets : {2ull, 3ull, 10ull, 1001ull, 65536ull}) {
      const cuckoo::SemiSortedTable<> table(buckets, bits);
      const std::uint64_t payload_bits = buckets * (4 * bits - 4);
      EXPECT_EQ(table.memory_bytes(), (payload_bits + 7) / 8 + 8) << "f=" << bits;  // + padding
      // One bit per entry less than the plain table of the same width.
      EXPECT_EQ(cuckoo::PackedTable<4>::bytes_for(buckets, bits) -
                    cuckoo::SemiSortedTable<>::bytes_for(buckets, bits),
                (buckets * 4 * bits + 7) / 8 - (payload_bits + 7) / 8);
    }
  }
}

TEST(SemiSortEncoding, DamagedBytesAreDetectedAndNeverReadOutOfBounds) {
  cuckoo::SemiSortedTable<> table(4, 13);
  EXPECT_TRUE(table.is_canonical());
  // Bucket 1's index field: bits 48 + 36 .. 48 + 47, i.e. the top 12 bits of bytes 10..11.
  table.bytes()[10] |= std::byte{0xF0};
  table.bytes()[11] = std::byte{0xFF};  // index 4095
  EXPECT_FALSE(table.is_canonical());
  EXPECT_EQ(table.read(1, 0), 0u);  // decodes as empty nibbles, from inside the decode table
  cuckoo::SemiSortedTable<> unsorted(4, 13);
  unsorted.bytes()[0] = std::byte{1};  // low part 1 with nibble 0 in slot 0, zeros after it
  EXPECT_FALSE(unsorted.is_canonical());
}

TEST(SemiSortEncoding, BadWidthsAreRejected) {
  for (unsigned bits : {0u, 2u, 3u, 33u}) {
    EXPECT_THROW(cuckoo::SemiSortedTable<>(8, bits), std::invalid_argument) << bits;
  }
  EXPECT_THROW(cuckoo::SemiSortedTable<13>(8, 12), std::invalid_argument);
}

}  // namespace
