// One block of the blocked cuckoo filter (cuckoo/blocked/pocket_block.hpp) on its own, against a
// model that does not use the library: a sorted multiset of values, decoded from the block by
// walking its header bits one at a time, and encoded back into the 64 bytes the layout comment
// describes. Random sequences of adds and removes, with values spread evenly and with values
// crowded into a few lists (lists longer than 8 items, groups of 33 lists holding more than 29:
// the lookups' slow paths), check after every step that the block holds exactly the model's
// items, that every read (size, value_at, count and contains at every level this CPU runs, the
// counts c1 and c2) agrees, and that the bytes are the canonical ones for the multiset. Removes
// run at every level (the fast path finds the item as contains does) and by the exact path, and
// must write the same bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cuckoo/blocked/pocket_block.hpp"
#include "cuckoo/detail/isa.hpp"
#include "cuckoo/detail/rng.hpp"
#include "support/isa_levels.hpp"

namespace {

namespace pocket = cuckoo::detail::pocket;
using cuckoo::Isa;

// The layout, restated from the header comment rather than taken from the library's constants, so
// that a wrong constant there is caught here.
constexpr unsigned kLists = 100;
constexpr unsigned kSlots = 43;
constexpr unsigned kHeaderBits = 143;
constexpr unsigned kThresholdFirstBit = 143;
constexpr unsigned kThresholdFieldBits = 9;
constexpr unsigned kNoThreshold = 511;
constexpr std::size_t kCountByte1 = 19, kCountByte2 = 20, kFirstRemainder = 21;
constexpr unsigned kValueCount = 256 * kLists;

struct alignas(64) Block {
  std::array<std::byte, 64> bytes{};
  std::byte* data() { return bytes.data(); }
  const std::byte* data() const { return bytes.data(); }
  bool operator==(const Block&) const = default;
};

bool bit_of(const Block& block, unsigned i) {
  return ((std::to_integer<unsigned>(block.bytes[i / 8]) >> (i % 8)) & 1u) != 0;
}
void set_bit(Block& block, unsigned i) {
  block.bytes[i / 8] |= static_cast<std::byte>(1u << (i % 8));
}

/// What the model reads out of a block: its items in slot order, and the stored fields.
struct Decoded {
  std::vector<unsigned> values;
  unsigned threshold = 0;
  unsigned c1 = 0, c2 = 0;
};

/// Walks the header bit by bit: a 1 is the next item of the current list, a 0 ends the list.
/// Fails the test (and returns what it has) if the header is not 100 zeros and at most 43 ones
/// followed by zeros.
Decoded decode(const Block& block) {
  Decoded d;
  unsigned list = 0, bit = 0;
  for (; bit < kHeaderBits && list < kLists; ++bit) {
    if (bit_of(block, bit)) {
      const auto slot = static_cast<unsigned>(d.values.size());
      EXPECT_LT(slot, kSlots) << "more ones in the header than slots";
      if (slot >= kSlots) return d;
      d.values.push_back(256 * list +
                         std::to_integer<unsigned>(block.bytes[kFirstRemainder + slot]));
    } else {
      ++list;
    }
  }
  EXPECT_EQ(list, kLists) << "the header ends before list 99 is closed";
  for (; bit < kHeaderBits; ++bit) EXPECT_FALSE(bit_of(block, bit)) << "stray header bit " << bit;
  unsigned field = 0;
  for (unsigned j = 0; j < kThresholdFieldBits; ++j) {
    field |= (bit_of(block, kThresholdFirstBit + j) ? 1u : 0u) << j;
  }
  d.threshold = kNoThreshold - field;
  d.c1 = std::to_integer<unsigned>(block.bytes[kCountByte1]);
  d.c2 = std::to_integer<unsigned>(block.bytes[kCountByte2]);
  return d;
}

/// The one block that holds `sorted` (ascending) with threshold t: the canonical form.
Block encode(const std::vector<unsigned>& sorted, unsigned t) {
  Block block;
  unsigned bit = 0;
  std::size_t i = 0;
  for (unsigned list = 0; list < kLists; ++list) {
    for (; i < sorted.size() && sorted[i] / 256 == list; ++i) {
      set_bit(block, bit++);
      block.bytes[kFirstRemainder + i] = static_cast<std::byte>(sorted[i] % 256);
    }
    ++bit;  // the 0 that ends the list
  }
  const unsigned field = kNoThreshold - t;
  for (unsigned j = 0; j < kThresholdFieldBits; ++j) {
    if ((field >> j) & 1u) set_bit(block, kThresholdFirstBit + j);
  }
  const auto in_lists_below = [&](unsigned end) {
    return static_cast<unsigned>(
        std::count_if(sorted.begin(), sorted.end(), [&](unsigned v) { return v / 256 < end; }));
  };
  block.bytes[kCountByte1] = static_cast<std::byte>(in_lists_below(33));
  block.bytes[kCountByte2] = static_cast<std::byte>(in_lists_below(66));
  return block;
}

using cuckoo::test::for_each_runnable_level;

unsigned multiplicity(const std::vector<unsigned>& sorted, unsigned v) {
  const auto range = std::equal_range(sorted.begin(), sorted.end(), v);
  return static_cast<unsigned>(range.second - range.first);
}

/// Every read of the block agrees with the model (sorted values, threshold t).
void expect_block_matches(const Block& block, const std::vector<unsigned>& model, unsigned t,
                          cuckoo::detail::SplitMix64& rng, const std::string& where) {
  const Decoded d = decode(block);
  ASSERT_EQ(d.values, model) << where;
  ASSERT_EQ(d.threshold, t) << where;
  ASSERT_EQ(pocket::threshold(block.data()), t) << where;
  // The canonical form: the bytes are a function of the multiset and t alone.
  ASSERT_EQ(block, encode(model, t)) << "bytes are not the canonical ones, " << where;

  const auto n = static_cast<unsigned>(model.size());
  ASSERT_EQ(pocket::size(block.data()), n) << where;
  for (unsigned s = 0; s < n; ++s) ASSERT_EQ(pocket::value_at(block.data(), s), model[s]) << where;

  const auto in_lists_below = [&](unsigned end) {
    return static_cast<unsigned>(
        std::count_if(model.begin(), model.end(), [&](unsigned v) { return v / 256 < end; }));
  };
  const pocket::Tail tail = pocket::load_tail(block.data());
  ASSERT_EQ(tail.counts[0], in_lists_below(33)) << "c1, " << where;
  ASSERT_EQ(tail.counts[1], in_lists_below(66)) << "c2, " << where;
  ASSERT_EQ(d.c1, tail.counts[0]) << where;
  ASSERT_EQ(d.c2, tail.counts[1]) << where;

  // Present values, their neighbours (same list, next remainder; same remainder, next list) and
  // random values: the neighbours are where an off-by-one in a span would show.
  std::vector<unsigned> probes(model.begin(), model.end());
  for (unsigned v : model) {
    probes.push_back((v + 1) % kValueCount);
    probes.push_back((v + kValueCount - 1) % kValueCount);
    probes.push_back((v + 256) % kValueCount);
    probes.push_back((v + kValueCount - 256) % kValueCount);
  }
  for (int i = 0; i < 16; ++i) probes.push_back(static_cast<unsigned>(rng() % kValueCount));
  probes.push_back(0);
  probes.push_back(kValueCount - 1);
  for_each_runnable_level([&](auto level) {
    constexpr Isa L = decltype(level)::value;
    for (unsigned v : probes) {
      const unsigned expected = multiplicity(model, v);
      ASSERT_EQ(pocket::count<L>(block.data(), v), expected)
          << "count of " << v << " at " << cuckoo::isa_name(L) << ", " << where;
      ASSERT_EQ(pocket::contains<L>(block.data(), v), expected != 0)
          << "contains " << v << " at " << cuckoo::isa_name(L) << ", " << where;
    }
  });
}

/// How a sequence picks the values it adds.
enum class Spread {
  kUniform,           // any of the 25,600 values
  kFewListsOneGroup,  // three lists of one group, any remainder: lists of ~14, a group of 43
  kOneListFewRests,   // one list, three remainders: many equal items in one long list
  kGroupBoundaries,   // lists 0, 32, 33, 65, 66, 99 and remainders 0, 255: the edges
  kCrowdedGroupZero,  // three quarters in group 0: group 1's code starts past bit 63
};

const char* name_of(Spread s) {
  switch (s) {
    case Spread::kUniform:
      return "uniform";
    case Spread::kFewListsOneGroup:
      return "few lists in one group";
    case Spread::kOneListFewRests:
      return "one list, few remainders";
    case Spread::kGroupBoundaries:
      return "group boundaries";
    default:
      return "crowded group 0";
  }
}

class ValueSource {
 public:
  ValueSource(Spread spread, cuckoo::detail::SplitMix64& rng) : spread_(spread), rng_(rng) {
    const auto group = static_cast<unsigned>(rng_() % 3);
    for (unsigned& q : lists_) q = 33 * group + static_cast<unsigned>(rng_() % 33);
    for (unsigned& r : rests_) r = static_cast<unsigned>(rng_() % 256);
  }

  unsigned next() {
    const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng_() % n); };
    const auto any_rest = [&] { return static_cast<unsigned>(rng_() % 256); };
    switch (spread_) {
      case Spread::kUniform:
        return static_cast<unsigned>(rng_() % kValueCount);
      case Spread::kFewListsOneGroup:
        return 256 * lists_[pick(3)] + any_rest();
      case Spread::kOneListFewRests:
        return 256 * lists_[0] + rests_[pick(3)];
      case Spread::kGroupBoundaries: {
        static constexpr unsigned kEdges[] = {0, 32, 33, 65, 66, 99};
        static constexpr unsigned kEdgeRests[] = {0, 255};
        const unsigned r = rng_() % 3 == 0 ? any_rest() : kEdgeRests[pick(2)];
        return 256 * kEdges[pick(6)] + r;
      }
      default: {
        const unsigned q = rng_() % 4 != 0 ? static_cast<unsigned>(rng_() % 33)
                                           : 33 + static_cast<unsigned>(rng_() % 67);
        return 256 * q + any_rest();
      }
    }
  }

 private:
  Spread spread_;
  cuckoo::detail::SplitMix64& rng_;
  unsigned lists_[3] = {};
  unsigned rests_[3] = {};
};

/// Longest list and fullest group of a model: proof that a sequence reached the slow paths.
struct Crowding {
  unsigned longest_list = 0, fullest_group = 0, fullest_group0 = 0;
};
void note_crowding(const std::vector<unsigned>& model, Crowding& seen) {
  unsigned per_list[kLists] = {};
  unsigned per_group[3] = {};
  for (unsigned v : model) {
    ++per_list[v / 256];
    ++per_group[v / 256 < 33 ? 0 : v / 256 < 66 ? 1 : 2];
  }
  for (unsigned c : per_list) seen.longest_list = std::max(seen.longest_list, c);
  for (unsigned c : per_group) seen.fullest_group = std::max(seen.fullest_group, c);
  seen.fullest_group0 = std::max(seen.fullest_group0, per_group[0]);
}

/// Removes one copy of v from `block` at every level this CPU runs, each from the same bytes: all
/// must agree on the answer and on the bytes written (a failed remove writes nothing). Returns
/// the answer; `block` holds the result.
bool remove_at_every_level(Block& block, unsigned v, const std::string& where) {
  const Block before = block;
  bool answer = pocket::remove_exact(block.data(), v);
  for_each_runnable_level([&](auto level) {
    constexpr Isa L = decltype(level)::value;
    Block copy = before;
    EXPECT_EQ(pocket::remove<L>(copy.data(), v), answer)
        << "remove of " << v << " at " << cuckoo::isa_name(L) << ", " << where;
    EXPECT_EQ(copy, block) << "remove of " << v << " at " << cuckoo::isa_name(L)
                           << " wrote other bytes than the exact path, " << where;
  });
  return answer;
}

/// Adds v to `block` (which has room) at every level this CPU runs, each from the same bytes: all
/// must write the bytes the exact path writes.
void add_at_every_level(Block& block, unsigned v, const std::string& where) {
  const Block before = block;
  {
    const pocket::Tail t = pocket::load_tail(block.data());
    pocket::insert_item(block.data(), t, pocket::list_of(v),
                        pocket::add_slot_exact(block.data(), t, v), pocket::remainder_of(v));
  }
  for_each_runnable_level([&](auto level) {
    constexpr Isa L = decltype(level)::value;
    Block copy = before;
    pocket::add<L>(copy.data(), v);
    EXPECT_EQ(copy, block) << "add of " << v << " at " << cuckoo::isa_name(L)
                           << " wrote other bytes than the exact path, " << where;
    copy = before;
    EXPECT_TRUE(pocket::try_add<L>(copy.data(), v)) << v << " at " << cuckoo::isa_name(L);
    EXPECT_EQ(copy, block) << "try_add of " << v << " at " << cuckoo::isa_name(L) << ", " << where;
  });
}

/// Fills to 43 and drains to 0 a few times, with a random mix of adds and removes in each phase,
/// checking the block after every step; `seen` records how crowded the block got.
void run_sequence(Spread spread, std::uint64_t seed, int steps, Crowding& seen) {
  cuckoo::detail::SplitMix64 rng(seed);
  ValueSource source(spread, rng);
  Block block;
  // A random threshold (or none): adds and removes must carry it along untouched.
  unsigned t = rng() % 2 == 0 ? kNoThreshold : static_cast<unsigned>(rng() % 401);
  pocket::set_threshold(block.data(), t);
  std::vector<unsigned> model;
  bool filling = true;
  for (int step = 0; step < steps; ++step) {
    const std::string where = std::string(name_of(spread)) + ", seed " + std::to_string(seed) +
                              ", step " + std::to_string(step);
    if (model.size() == kSlots) filling = false;
    if (model.empty()) filling = true;
    // Four adds in five while filling, one in five while draining.
    const bool add = model.empty() || (model.size() < kSlots && rng() % 5 < (filling ? 4u : 1u));
    if (add) {
      const unsigned v = source.next();
      add_at_every_level(block, v, where);
      if (::testing::Test::HasFailure()) return;
      model.insert(std::upper_bound(model.begin(), model.end(), v), v);
    } else {
      const unsigned v = model[rng() % model.size()];
      ASSERT_TRUE(remove_at_every_level(block, v, where)) << where;
      if (::testing::Test::HasFailure()) return;
      model.erase(std::lower_bound(model.begin(), model.end(), v));
    }
    if (step % 97 == 0) {
      // A new threshold now and then; the items must not notice.
      t = static_cast<unsigned>(rng() % 512);
      pocket::set_threshold(block.data(), t);
    }
    expect_block_matches(block, model, t, rng, where);
    if (::testing::Test::HasFatalFailure()) return;
    note_crowding(model, seen);

    // Removing a value the block does not hold fails and writes nothing.
    for (int tries = 0; tries < 4; ++tries) {
      const unsigned absent =
          tries < 2 ? source.next() : static_cast<unsigned>(rng() % kValueCount);
      if (multiplicity(model, absent) != 0) continue;
      const Block unchanged = block;
      ASSERT_FALSE(remove_at_every_level(block, absent, where)) << absent << ", " << where;
      ASSERT_EQ(block, unchanged) << "remove of absent " << absent << " wrote, " << where;
    }
    // A full block refuses an add and writes nothing, at every level.
    if (model.size() == kSlots) {
      const Block unchanged = block;
      for_each_runnable_level([&](auto level) {
        constexpr Isa L = decltype(level)::value;
        ASSERT_FALSE(pocket::try_add<L>(block.data(), source.next())) << where;
        ASSERT_EQ(block, unchanged) << "try_add to a full block wrote, " << where;
      });
      if (::testing::Test::HasFatalFailure()) return;
    }
    // Adding a value and removing it again gives back every byte.
    if (model.size() < kSlots) {
      const unsigned v = rng() % 2 == 0 ? source.next() : model.empty() ? 0u : model[0];
      const Block unchanged = block;
      add_at_every_level(block, v, where);
      ASSERT_TRUE(remove_at_every_level(block, v, where)) << v << ", " << where;
      ASSERT_EQ(block, unchanged) << "add then remove of " << v << " left a trace, " << where;
    }
  }
}

TEST(BlockedBlock, AZeroedBlockIsEmptyWithNoThreshold) {
  const Block block;
  const Decoded d = decode(block);
  EXPECT_TRUE(d.values.empty());
  EXPECT_EQ(d.threshold, kNoThreshold);
  EXPECT_EQ(pocket::threshold(block.data()), pocket::kNoOverflow);
  EXPECT_EQ(pocket::kNoOverflow, kNoThreshold);
  EXPECT_EQ(pocket::size(block.data()), 0u);
  // No value is in it, at any level; and every value's unit is below "no threshold", so a lookup
  // in a zeroed block never goes on to a second block.
  for_each_runnable_level([&](auto level) {
    constexpr Isa L = decltype(level)::value;
    for (unsigned v = 0; v < kValueCount; ++v) {
      ASSERT_FALSE(pocket::contains<L>(block.data(), v)) << v << " at " << cuckoo::isa_name(L);
      ASSERT_EQ(pocket::count<L>(block.data(), v), 0u) << v;
      ASSERT_LT(pocket::threshold_unit(v), pocket::threshold(block.data())) << v;
      ASSERT_FALSE(pocket::may_be_in_second(block.data(), v)) << v;
    }
  });
}

TEST(BlockedBlock, TheLibraryLayoutConstantsAreTheDocumentedOnes) {
  // The model above restates the layout; these tie it to the library's names.
  EXPECT_EQ(pocket::kSlots, kSlots);
  EXPECT_EQ(pocket::kLists, kLists);
  EXPECT_EQ(pocket::kHeaderBits, kHeaderBits);
  EXPECT_EQ(pocket::kThresholdBit, kThresholdFirstBit);
  EXPECT_EQ(pocket::kCountByte, kCountByte1);
  EXPECT_EQ(pocket::kFirstRemainderByte, kFirstRemainder);
  EXPECT_EQ(pocket::kValues, kValueCount);
  for (unsigned v : {0u, 63u, 64u, 255u, 256u, 25599u}) {
    EXPECT_EQ(pocket::list_of(v), v / 256);
    EXPECT_EQ(pocket::remainder_of(v), v % 256);
    EXPECT_EQ(pocket::threshold_unit(v), v / 64);
  }
}

TEST(BlockedBlock, SetThresholdRoundTripsAndLeavesTheItemsAlone) {
  cuckoo::detail::SplitMix64 rng(11);
  for (int round = 0; round < 8; ++round) {
    Block block;
    std::vector<unsigned> model;
    const unsigned n = round == 0 ? 0 : round == 1 ? kSlots : static_cast<unsigned>(rng() % 44);
    for (unsigned i = 0; i < n; ++i) {
      const auto v = static_cast<unsigned>(rng() % kValueCount);
      pocket::add<Isa::kPortable>(block.data(), v);
      model.insert(std::upper_bound(model.begin(), model.end(), v), v);
    }
    for (unsigned t = 0; t <= kNoThreshold; ++t) {
      const Block before = block;
      pocket::set_threshold(block.data(), t);
      ASSERT_EQ(pocket::threshold(block.data()), t);
      // A lookup goes on to the second block exactly for values whose unit is at or above t.
      for (unsigned unit = 0; unit < kValueCount / 64; ++unit) {
        ASSERT_EQ(pocket::may_be_in_second(block.data(), 64 * unit + 63), unit >= t)
            << "unit " << unit << ", t = " << t;
      }
      ASSERT_EQ(decode(block).values, model) << "t = " << t;
      // Only bits 143..151 may differ: bit 7 of byte 17 and byte 18.
      for (std::size_t i = 0; i < 64; ++i) {
        const unsigned mask = i == 17 ? 0x7Fu : i == 18 ? 0x00u : 0xFFu;
        ASSERT_EQ(std::to_integer<unsigned>(block.bytes[i]) & mask,
                  std::to_integer<unsigned>(before.bytes[i]) & mask)
            << "byte " << i << ", t = " << t;
      }
      ASSERT_EQ(block, encode(model, t)) << "t = " << t;
    }
  }
}

TEST(BlockedBlock, UniformAddsAndRemovesMatchTheDecodedModel) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    Crowding seen;
    run_sequence(Spread::kUniform, seed, 1500, seen);
    if (HasFatalFailure()) return;
  }
}

TEST(BlockedBlock, CrowdedListsAndGroupsMatchTheDecodedModel) {
  // Each spread must reach the slow path it is there for: a list longer than 8 (past the portable
  // lookup's one 8-byte read), a group of more than 29 items (a group code longer than the 64 bits
  // the fast lookup reads), or group 0 over 30 items (group 1's code starting past bit 63).
  struct Case {
    Spread spread;
    bool long_list, full_group, full_group0;
  };
  for (const Case& c : {Case{Spread::kFewListsOneGroup, true, true, false},
                        Case{Spread::kOneListFewRests, true, true, false},
                        Case{Spread::kGroupBoundaries, true, false, false},
                        Case{Spread::kCrowdedGroupZero, false, false, true}}) {
    Crowding most;
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      run_sequence(c.spread, 100 * seed + static_cast<unsigned>(c.spread), 1500, most);
      if (HasFatalFailure()) return;
    }
    if (c.long_list) {
      EXPECT_GT(most.longest_list, 8u) << name_of(c.spread);
    }
    if (c.full_group) {
      EXPECT_GT(most.fullest_group, 29u) << name_of(c.spread);
    }
    if (c.full_group0) {
      EXPECT_GT(most.fullest_group0, 30u) << name_of(c.spread);
    }
  }
}

TEST(BlockedBlock, GroupZeroOverThirtyItemsWithItemsInGroupOne) {
  // The fast lookup reads group 1's code from header bits 33 + c1 on, which starts past bit 63
  // once group 0 holds more than 30 items: fill group 0 with 31..43 items and put the rest in
  // lists 33..65, then look up every list of group 1.
  cuckoo::detail::SplitMix64 rng(5);
  for (unsigned in_group0 = 28; in_group0 <= kSlots; ++in_group0) {
    Block block;
    std::vector<unsigned> model;
    for (unsigned i = 0; i < kSlots; ++i) {
      const unsigned q = i < in_group0 ? static_cast<unsigned>(rng() % 33)
                                       : 33 + static_cast<unsigned>(rng() % 33);
      const unsigned v = 256 * q + static_cast<unsigned>(rng() % 256);
      pocket::add<Isa::kPortable>(block.data(), v);
      model.insert(std::upper_bound(model.begin(), model.end(), v), v);
    }
    expect_block_matches(block, model, kNoThreshold, rng,
                         std::to_string(in_group0) + " items in group 0");
    if (HasFatalFailure()) return;
    for_each_runnable_level([&](auto level) {
      constexpr Isa L = decltype(level)::value;
      for (unsigned v = 33 * 256; v < 66 * 256; ++v) {
        ASSERT_EQ(pocket::contains<L>(block.data(), v), multiplicity(model, v) != 0)
            << v << " at " << cuckoo::isa_name(L) << ", " << in_group0 << " in group 0";
      }
    });
  }
}

}  // namespace
