// The blocked cuckoo filter (cuckoo/blocked/blocked_filter.hpp) as a whole: no false negatives
// against an exact multiset at every ISA level, the same answers and bytes at every level, the
// capacity it promises, duplicates up to its two blocks, failed inserts that change nothing,
// batches that answer like single keys, a false-positive rate equal to the one computed exactly
// from the table, and the share of lookups that read a second cache line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuckoo/addressing.hpp"
#include "cuckoo/blocked/blocked_filter.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/detail/isa.hpp"
#include "cuckoo/detail/rng.hpp"
#include "support/isa_levels.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::Isa;
template <Isa L>
using Blocked = cuckoo::BasicBlockedFilter<L>;

constexpr unsigned kSlotsPerBlock = 43;
constexpr unsigned kRemainderValueCount = 25600;  // 100 lists × 256 remainders
/// Copies of one key a filter holds: both its blocks full of it.
constexpr std::size_t kCopies = 2 * kSlotsPerBlock;

using cuckoo::test::bytes_of;
using cuckoo::test::for_each_runnable_level;

std::string label(Isa level, std::size_t capacity, std::uint64_t seed) {
  return std::string(cuckoo::isa_name(level)) + " capacity=" + std::to_string(capacity) +
         " seed=" + std::to_string(seed);
}

// ---- No false negatives ------------------------------------------------------------------------

/// Inserts (fresh keys and copies of held ones) and erases interleaved at random, driven up to the
/// point where inserts fail and back down to half, checking every answer about the touched key and
/// every held key at checkpoints.
template <Isa L>
void interleaved_against_model(std::size_t capacity, std::uint64_t seed, std::size_t ops) {
  Blocked<L> filter{cuckoo::Config{.capacity = capacity, .max_kicks = 100, .seed = seed}};
  const std::string where = label(L, capacity, seed);
  cuckoo::test::MultisetModel model;
  std::vector<std::uint64_t> held;  // one entry per copy
  cuckoo::detail::SplitMix64 rng(seed * 0x9E37 + capacity);
  const auto verify = [&] {
    ASSERT_EQ(filter.size(), held.size()) << where;
    for (const auto& [key, copies] : model.items()) {
      ASSERT_TRUE(filter.contains(key)) << "false negative, " << where;
      ASSERT_GE(filter.count(key), copies) << where;
    }
  };
  bool filling = true;
  unsigned failures_in_a_row = 0;
  std::size_t failures = 0;
  for (std::size_t op = 0; op < ops; ++op) {
    // Fill until eight inserts in a row fail, then drain to half the slots, and again.
    if (filling && failures_in_a_row >= 8) filling = false;
    if (!filling && held.size() <= filter.slot_count() / 2) {
      filling = true;
      failures_in_a_row = 0;
    }
    const bool insert = held.empty() || rng() % 8 < (filling ? 6u : 2u);
    if (insert) {
      const std::uint64_t key =
          (!held.empty() && rng() % 4 == 0) ? held[rng() % held.size()] : rng();
      if (filter.insert(key)) {
        failures_in_a_row = 0;
        model.add(key);
        held.push_back(key);
        ASSERT_TRUE(filter.contains(key)) << "just inserted, " << where;
        ASSERT_GE(filter.count(key), model.copies(key)) << where;
      } else {
        ++failures;
        ++failures_in_a_row;
      }
    } else {
      const std::size_t at = rng() % held.size();
      const std::uint64_t key = held[at];
      ASSERT_TRUE(filter.erase(key)) << "erase of a held key failed, " << where;
      model.remove(key);
      held[at] = held.back();
      held.pop_back();
      if (model.copies(key) > 0) {
        ASSERT_TRUE(filter.contains(key)) << "lost a copy, " << where;
      }
    }
    ASSERT_EQ(filter.size(), held.size()) << where;
    if (op % (ops / 8) == 0) {
      verify();
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  verify();
  // The loop must have run the table into the wall, or the kick walks and their undo went untried.
  EXPECT_GT(failures, 0u) << where;
}

TEST(BlockedFilter, NoFalseNegativesThroughFillAndDrainAtEveryLevel) {
  // Every insert past the wall runs a whole walk (about 0.3 µs a kick) and a third of the
  // 1.3·capacity inserts of each round fail, so the walks are shorter on the larger tables.
  struct Run {
    std::size_t capacity;
    std::uint64_t seed;
    unsigned max_kicks;
  };
  for_each_runnable_level([](auto level) {
    constexpr Isa L = decltype(level)::value;
    for (const Run& run :
         {Run{1, 1, 100}, Run{1, 2, 0}, Run{100, 1, 100}, Run{100, 2, 500}, Run{100, 3, 1},
          Run{10'000, 1, 100}, Run{10'000, 2, 20}, Run{200'000, 1, 10}}) {
      Blocked<L> filter{
          cuckoo::Config{.capacity = run.capacity, .max_kicks = run.max_kicks, .seed = run.seed}};
      cuckoo::test::fill_and_drain_against_model(
          filter, run.capacity, run.seed * 7 + run.capacity,
          label(L, run.capacity, run.seed) + " max_kicks=" + std::to_string(run.max_kicks));
      if (::testing::Test::HasFatalFailure()) return;
    }
  });
}

TEST(BlockedFilter, NoFalseNegativesThroughInterleavedInsertsDuplicatesAndErases) {
  for_each_runnable_level([](auto level) {
    constexpr Isa L = decltype(level)::value;
    for (std::size_t capacity : {1ul, 100ul, 10'000ul, 200'000ul}) {
      const std::uint64_t seeds = capacity >= 200'000 ? 1 : 3;
      for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
        const std::size_t ops = std::max<std::size_t>(20'000, 4 * capacity);
        interleaved_against_model<L>(capacity, seed, ops);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  });
}

// ---- Every level gives the same answers and the same table ------------------------------------

/// Every answer a sequence of operations gets, and the table at a few points along the way.
struct Trace {
  std::vector<std::uint64_t> answers;
  std::vector<std::vector<std::byte>> tables;
  std::size_t failed_inserts = 0;
};

template <class Filter>
Trace run_trace(std::size_t capacity, std::uint64_t seed) {
  Filter filter{cuckoo::Config{.capacity = capacity, .max_kicks = 50, .seed = seed}};
  Trace trace;
  cuckoo::detail::SplitMix64 rng(seed + 12345);
  std::vector<std::uint64_t> held;
  std::vector<std::uint64_t> batch(256);
  auto batch_out = std::make_unique<bool[]>(batch.size());
  const std::size_t ops = 4 * filter.slot_count();
  for (std::size_t op = 0; op < ops; ++op) {
    // Into the wall in the first half (net 10 inserts in 16 ops over twice the slots), then a mix
    // that drains slowly.
    const unsigned roll = static_cast<unsigned>(rng() % 16);
    const bool first_half = op < ops / 2;
    if (held.empty() || roll < (first_half ? 12u : 4u)) {
      const std::uint64_t key =
          (!held.empty() && rng() % 8 == 0) ? held[rng() % held.size()] : rng();
      const bool ok = filter.insert(key);
      trace.answers.push_back(ok);
      if (ok) held.push_back(key);
      if (!ok) ++trace.failed_inserts;
    } else if (roll < (first_half ? 14u : 10u)) {
      const std::size_t at = rng() % held.size();
      trace.answers.push_back(filter.erase(held[at]));
      held[at] = held.back();
      held.pop_back();
    } else {
      // Lookups of a held key and of a random one: answers, counts and lines read.
      const std::uint64_t present = held[rng() % held.size()];
      const std::uint64_t other = rng();
      for (std::uint64_t key : {present, other}) {
        const std::uint64_t hash = cuckoo::hash_key(filter.hasher(), key);
        trace.answers.push_back(filter.contains(key));
        trace.answers.push_back(filter.count(key));
        trace.answers.push_back(filter.lines_read(hash));
      }
    }
    if (op % 997 == 0) {
      for (auto& key : batch)
        key = rng() % 2 == 0 && !held.empty() ? held[rng() % held.size()] : rng();
      filter.contains(std::span<const std::uint64_t>(batch),
                      std::span<bool>(batch_out.get(), batch.size()));
      for (std::size_t i = 0; i < batch.size(); ++i) trace.answers.push_back(batch_out[i]);
    }
    if (op % (ops / 4) == 0) trace.tables.push_back(bytes_of(filter));
  }
  trace.answers.push_back(filter.size());
  trace.tables.push_back(bytes_of(filter));
  return trace;
}

TEST(BlockedFilter, EveryLevelGivesTheSameAnswersAndTheSameBytes) {
  if (cuckoo::detail::detect_cpu_isa() == Isa::kPortable) {
    GTEST_SKIP() << "this CPU runs the portable level only: nothing to compare it with";
  }
  for (std::size_t capacity : {1ul, 1'000ul, 30'000ul}) {
    for (std::uint64_t seed : {1ul, 2ul}) {
      const Trace reference = run_trace<Blocked<Isa::kPortable>>(capacity, seed);
      // The walks and their undo must have run too: the sequence goes into the wall.
      EXPECT_GT(reference.failed_inserts, 0u) << capacity;
      for_each_runnable_level([&](auto level) {
        constexpr Isa L = decltype(level)::value;
        if constexpr (L != Isa::kPortable) {
          const Trace trace = run_trace<Blocked<L>>(capacity, seed);
          ASSERT_EQ(trace.answers.size(), reference.answers.size()) << label(L, capacity, seed);
          const auto diverged =
              std::mismatch(trace.answers.begin(), trace.answers.end(), reference.answers.begin());
          EXPECT_TRUE(diverged.first == trace.answers.end())
              << "answers diverge from the portable level at answer "
              << (diverged.first - trace.answers.begin()) << ", " << label(L, capacity, seed);
          EXPECT_TRUE(trace.tables == reference.tables)
              << "tables differ from the portable level, " << label(L, capacity, seed);
        }
      });
    }
  }
}

// ---- Capacity ----------------------------------------------------------------------------------

TEST(BlockedFilter, CapacityDistinctKeysAlwaysFit) {
  for (std::size_t capacity : {1ul, 10ul, 100ul, 1'000ul, 10'000ul, 100'000ul, 1'000'000ul}) {
    const std::uint64_t seeds = capacity >= 1'000'000 ? 2 : 4;
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
      cuckoo::BasicBlockedFilter<> filter{cuckoo::Config{.capacity = capacity, .seed = seed}};
      const auto keys = cuckoo::test::random_keys(capacity, 1000 * seed + capacity);
      for (std::size_t i = 0; i < keys.size(); ++i) {
        ASSERT_TRUE(filter.insert(keys[i]))
            << "key " << i << " of " << capacity << " did not fit, seed " << seed << ", load "
            << filter.load_factor();
      }
      EXPECT_EQ(filter.size(), capacity);
      for (std::uint64_t key : keys) ASSERT_TRUE(filter.contains(key));
    }
  }
}

// ---- Duplicates --------------------------------------------------------------------------------

TEST(BlockedFilter, OneKeyFitsTwiceABlockThenInsertFails) {
  // A key has two distinct blocks (alt never maps a block to itself when the count is even), and
  // its copies can go nowhere else: 2·43 = 86 copies fit and the 87th does not.
  for_each_runnable_level([](auto level) {
    constexpr Isa L = decltype(level)::value;
    for (std::size_t capacity : {1ul, 1'000ul, 100'000ul}) {
      for (std::uint64_t key :
           {std::uint64_t{0}, std::uint64_t{42}, std::uint64_t{0xDEADBEEFCAFE}}) {
        Blocked<L> filter{cuckoo::Config{.capacity = capacity}};
        const std::string where = label(L, capacity, 0) + " key=" + std::to_string(key);
        for (std::size_t i = 0; i < kCopies; ++i) {
          ASSERT_TRUE(filter.insert(key)) << "copy " << i << ", " << where;
        }
        const auto before = bytes_of(filter);
        EXPECT_FALSE(filter.insert(key)) << where;
        EXPECT_EQ(bytes_of(filter), before) << "the failed copy changed the table, " << where;
        EXPECT_EQ(filter.size(), kCopies) << where;
        EXPECT_EQ(filter.count(key), kCopies) << where;
        EXPECT_TRUE(filter.contains(key)) << where;
        for (std::size_t i = 0; i < kCopies; ++i) {
          ASSERT_TRUE(filter.erase(key)) << "erase " << i << ", " << where;
          if (i + 1 < kCopies) {
            ASSERT_TRUE(filter.contains(key)) << "after erase " << i;
          }
        }
        EXPECT_FALSE(filter.erase(key)) << where;
        EXPECT_FALSE(filter.contains(key)) << where;
        EXPECT_EQ(filter.count(key), 0u) << where;
        EXPECT_EQ(filter.size(), 0u) << where;
      }
    }
  });
}

// ---- A failed insert changes nothing -----------------------------------------------------------

/// A 64-block filter fed twice its slots in keys (one in eight a copy of a held key): every insert
/// that fails must leave bytes() and size() as they were, and every held key must stay found.
void check_failed_inserts_change_nothing(unsigned max_kicks, std::uint64_t seed) {
  constexpr std::uint64_t kBlocks = 64;
  Blocked<Isa::kPortable> filter(kBlocks, kBlocks * 42, max_kicks, seed);
  const std::string where =
      "max_kicks=" + std::to_string(max_kicks) + " seed=" + std::to_string(seed);
  cuckoo::detail::SplitMix64 rng(seed * 77 + max_kicks);
  std::vector<std::uint64_t> accepted;
  std::size_t failures = 0;
  auto before = bytes_of(filter);
  for (std::size_t i = 0; i < 2 * filter.slot_count(); ++i) {
    const std::uint64_t key =
        (!accepted.empty() && rng() % 8 == 0) ? accepted[rng() % accepted.size()] : rng();
    if (filter.insert(key)) {
      accepted.push_back(key);
      before = bytes_of(filter);
    } else {
      ++failures;
      ASSERT_EQ(bytes_of(filter), before) << "a failed insert changed the table, " << where;
      ASSERT_EQ(filter.size(), accepted.size()) << where;
    }
  }
  ASSERT_GT(failures, filter.slot_count() / 2) << "the filter never filled up, " << where;
  for (std::uint64_t key : accepted) ASSERT_TRUE(filter.contains(key)) << "lost a key, " << where;

  // Nothing is parked anywhere: room that erases free is taken by the next inserts (a walk may be
  // needed to reach it, so only with a real walk allowed).
  if (max_kicks < 20) return;
  const std::size_t freed = accepted.size() / 4;
  for (std::size_t i = 0; i < freed; ++i) ASSERT_TRUE(filter.erase(accepted[i])) << where;
  for (std::uint64_t key : cuckoo::test::random_keys(freed / 2, seed + 999)) {
    ASSERT_TRUE(filter.insert(key)) << where;
  }
  for (std::size_t i = freed; i < accepted.size(); ++i) ASSERT_TRUE(filter.contains(accepted[i]));
}

TEST(BlockedFilter, AFailedInsertLeavesBytesAndSizeUnchanged) {
  for (unsigned max_kicks : {500u, 20u, 1u}) {
    for (std::uint64_t seed : {1ul, 2ul, 3ul}) check_failed_inserts_change_nothing(max_kicks, seed);
  }
}

TEST(BlockedFilter, AFailedInsertWithoutKicksLeavesBytesAndSizeUnchanged) {
  for (std::uint64_t seed : {1ul, 2ul, 3ul}) check_failed_inserts_change_nothing(0, seed);
}

TEST(BlockedFilter, BatchInsertStopsAtTheFirstFailureLikeSingleInserts) {
  // Two filters built alike: one takes the keys in batches, the other one at a time. A batch must
  // return the index of its first key that failed and leave the table exactly as the single
  // inserts of the keys before it (and the failed one) do; the next batch starts after that key.
  // Short walks fail while other blocks still have room, so later batches still place keys: a
  // batch that went on past its failure would show. (With 500 kicks a 64-block table fills every
  // slot before its first failure, so there the check is only that a full table takes nothing.)
  for (unsigned max_kicks : {0u, 1u, 20u, 500u}) {
    for (std::uint64_t seed : {1ul, 2ul}) {
      Blocked<Isa::kPortable> batched(64, 64 * 42, max_kicks, seed);
      Blocked<Isa::kPortable> single(64, 64 * 42, max_kicks, seed);
      const std::string where =
          "max_kicks=" + std::to_string(max_kicks) + " seed=" + std::to_string(seed);
      const auto keys = cuckoo::test::random_keys(2 * batched.slot_count(), seed + 50);
      const std::span<const std::uint64_t> all(keys);
      std::size_t at = 0, failures = 0, placed_after_a_failure = 0;
      while (at < keys.size()) {
        const std::size_t done = batched.insert(all.subspan(at));
        std::size_t expected = 0;
        while (at + expected < keys.size() && single.insert(keys[at + expected])) ++expected;
        ASSERT_EQ(done, expected) << "batch from key " << at << ", " << where;
        ASSERT_EQ(batched.size(), single.size()) << where;
        ASSERT_EQ(bytes_of(batched), bytes_of(single)) << "batch from key " << at << ", " << where;
        if (failures > 0) placed_after_a_failure += done;
        if (at + done < keys.size()) ++failures;
        at += done + 1;
        if (batched.size() == batched.slot_count()) break;  // full: every later batch takes nothing
      }
      EXPECT_GT(failures, 0u) << where;
      if (max_kicks < 500) {
        EXPECT_GT(placed_after_a_failure, 0u) << where;
      }
    }
  }
}

// ---- Batches give the single-key answers --------------------------------------------------------

/// A 2^12-block filter loaded to 97% of its capacity, so that many keys read their second block.
template <Isa L>
Blocked<L> nearly_full_filter(std::vector<std::uint64_t>& held) {
  Blocked<L> filter{cuckoo::Config{.capacity = 172'851, .seed = 9}};
  EXPECT_EQ(filter.block_count(), 4096u);
  held = cuckoo::test::random_keys(filter.capacity() * 97 / 100, 4242);
  for (std::uint64_t key : held) EXPECT_TRUE(filter.insert(key));
  return filter;
}

TEST(BlockedFilter, BatchContainsAnswersLikeSingleKeys) {
  for_each_runnable_level([](auto level) {
    constexpr Isa L = decltype(level)::value;
    std::vector<std::uint64_t> held;
    const Blocked<L> filter = nearly_full_filter<L>(held);
    // Held and random keys interleaved at random.
    cuckoo::detail::SplitMix64 rng(31);
    std::vector<std::uint64_t> queries;
    for (std::size_t i = 0; i < 100'000; ++i) {
      queries.push_back(rng() % 2 == 0 ? held[rng() % held.size()] : rng());
    }
    std::vector<char> single(queries.size());
    std::size_t second_reads_hit = 0, second_reads_miss = 0;
    for (std::size_t i = 0; i < queries.size(); ++i) {
      single[i] = filter.contains(queries[i]);
      if (filter.lines_read(cuckoo::hash_key(filter.hasher(), queries[i])) == 2) {
        ++(single[i] ? second_reads_hit : second_reads_miss);
      }
    }
    // The deferred second reads must be exercised, with both answers.
    ASSERT_GT(second_reads_hit, 100u) << cuckoo::isa_name(L);
    ASSERT_GT(second_reads_miss, 100u) << cuckoo::isa_name(L);

    const auto check = [&](auto contains_batch, const char* name) {
      // Spans of every awkward length (empty, shorter and longer than a pipeline, around the
      // second-read delay) from several offsets, and the whole query list.
      for (std::size_t length : {0ul, 1ul, 2ul, 15ul, 16ul, 17ul, 33ul, 63ul, 64ul, 65ul, 129ul}) {
        for (std::size_t offset : {0ul, 5ul, 1000ul}) {
          const std::span<const std::uint64_t> keys(queries.data() + offset, length);
          auto out = std::make_unique<bool[]>(length + 1);
          out[length] = true;  // a sentinel: nothing is written past the end
          contains_batch(keys, std::span<bool>(out.get(), length));
          for (std::size_t i = 0; i < length; ++i) {
            ASSERT_EQ(out[i], single[offset + i] != 0)
                << name << " length " << length << " offset " << offset << " key " << i;
          }
          ASSERT_TRUE(out[length]) << name;
        }
      }
      auto out = std::make_unique<bool[]>(queries.size());
      contains_batch(std::span<const std::uint64_t>(queries),
                     std::span<bool>(out.get(), queries.size()));
      for (std::size_t i = 0; i < queries.size(); ++i) {
        ASSERT_EQ(out[i], single[i] != 0) << name << " key " << i << " at " << cuckoo::isa_name(L);
      }
    };
    check([&](auto keys, auto out) { filter.contains(keys, out); }, "contains");
    check([&](auto keys, auto out) { filter.template contains_pipelined<1>(keys, out); },
          "depth 1");
    check([&](auto keys, auto out) { filter.template contains_pipelined<8>(keys, out); },
          "depth 8");
    check([&](auto keys, auto out) { filter.template contains_pipelined<256>(keys, out); },
          "depth 256");
  });
}

TEST(BlockedFilter, BatchInsertAndEraseAnswerLikeSingleKeys) {
  for_each_runnable_level([](auto level) {
    constexpr Isa L = decltype(level)::value;
    std::vector<std::uint64_t> held;
    const Blocked<L> loaded = nearly_full_filter<L>(held);

    // Insert: fresh keys and copies of held ones, up to the capacity; the copies of the filter
    // carry the same kick-walk state, so the tables must come out byte for byte alike.
    {
      Blocked<L> batched = loaded, single = loaded;
      cuckoo::detail::SplitMix64 rng(77);
      std::vector<std::uint64_t> keys;
      const std::size_t room = loaded.capacity() - loaded.size();
      for (std::size_t i = 0; i < room; ++i)
        keys.push_back(rng() % 4 == 0 ? held[rng() % held.size()] : rng());
      const std::size_t done = batched.insert(std::span<const std::uint64_t>(keys));
      std::size_t expected = 0;
      while (expected < keys.size() && single.insert(keys[expected])) ++expected;
      EXPECT_EQ(done, expected) << cuckoo::isa_name(L);
      EXPECT_EQ(batched.size(), single.size());
      EXPECT_TRUE(bytes_of(batched) == bytes_of(single)) << "insert, " << cuckoo::isa_name(L);
    }
    // Erase: held keys (some twice: only the copies held can go), and keys never inserted, whose
    // erase removes an item only when it is a false positive — the same in both.
    {
      Blocked<L> batched = loaded, single = loaded;
      cuckoo::detail::SplitMix64 rng(78);
      std::vector<std::uint64_t> keys;
      for (std::size_t i = 0; i < held.size() / 2; ++i) {
        const unsigned roll = static_cast<unsigned>(rng() % 8);
        keys.push_back(roll == 0 ? rng() : held[rng() % held.size()]);
      }
      const std::size_t removed = batched.erase(std::span<const std::uint64_t>(keys));
      std::size_t expected = 0;
      for (std::uint64_t key : keys) expected += single.erase(key) ? 1 : 0;
      EXPECT_EQ(removed, expected) << cuckoo::isa_name(L);
      EXPECT_LT(removed, keys.size()) << "some erases must fail for the count to mean anything";
      EXPECT_EQ(batched.size(), single.size());
      EXPECT_TRUE(bytes_of(batched) == bytes_of(single)) << "erase, " << cuckoo::isa_name(L);
    }
  });
}

// ---- False positives and lines read, computed exactly from the table ---------------------------

/// Values a block holds (each once), by walking its header bits: a 1 is an item of the current
/// list, whose remainder is the next slot's byte; a 0 ends the list.
std::vector<unsigned> distinct_values(const std::byte* block) {
  std::vector<unsigned> values;
  unsigned list = 0, slot = 0;
  for (unsigned bit = 0; bit < 143 && list < 100; ++bit) {
    if ((std::to_integer<unsigned>(block[bit / 8]) >> (bit % 8)) & 1u) {
      const unsigned v = 256 * list + std::to_integer<unsigned>(block[21 + slot++]);
      if (values.empty() || values.back() != v) values.push_back(v);
    } else {
      ++list;
    }
  }
  return values;
}

/// How many of the 2^32 values x of a 32-bit half-hash land in bin b of n under (x·n) >> 32.
std::uint64_t bin_weight(std::uint64_t b, std::uint64_t n) {
  const auto first_at_or_after = [n](std::uint64_t bin) {
    return ((bin << 32) + n - 1) / n;  // ceil(bin · 2^32 / n)
  };
  return first_at_or_after(b + 1) - first_at_or_after(b);
}

/// What a uniformly random hash does against the table, summed exactly over every (block, value)
/// pair weighted by how many hashes reach it.
struct ExactRates {
  double false_positive;        // contains_hash is true
  double second_read;           // lines_read is 2
  std::size_t not_involutions;  // (b, v) with alt(alt(b, v), v) != b: must be none
};

template <class Filter>
ExactRates exact_rates(const Filter& filter) {
  const std::uint64_t m = filter.block_count();
  const cuckoo::Addressing addressing(m, 1);  // the filter's alt(b, v) (blocked_filter.hpp)
  const auto block = [&](std::uint64_t b) { return filter.bytes().data() + 64 * b; };
  std::vector<double> value_weight(kRemainderValueCount),
      weight_from(kRemainderValueCount + 1, 0.0);
  for (unsigned v = 0; v < kRemainderValueCount; ++v)
    value_weight[v] = static_cast<double>(bin_weight(v, kRemainderValueCount));
  for (unsigned v = kRemainderValueCount; v-- > 0;)
    weight_from[v] = weight_from[v + 1] + value_weight[v];
  std::vector<std::vector<unsigned>> values(m);
  std::vector<unsigned> threshold(m);
  for (std::uint64_t b = 0; b < m; ++b) {
    values[b] = distinct_values(block(b));
    threshold[b] = cuckoo::detail::pocket::threshold(block(b));
  }
  const auto holds = [&](std::uint64_t b, unsigned v) {
    return std::binary_search(values[b].begin(), values[b].end(), v);
  };
  double positive = 0, second = 0;
  std::size_t not_involutions = 0;
  for (std::uint64_t b = 0; b < m; ++b) {
    const double w = static_cast<double>(bin_weight(b, m));
    // Hashes to (b, v) with v in b match in the first block.
    for (unsigned v : values[b]) positive += w * value_weight[v];
    // Hashes to (b, v) read a second block when v is not in b and its unit is at or above t.
    const unsigned from = 64 * std::min(threshold[b], 400u);
    double miss_weight = weight_from[from];
    for (unsigned v : values[b]) {
      if (v >= from) miss_weight -= value_weight[v];
    }
    second += w * miss_weight;
  }
  // Second-block matches: (b1, v) with v in b2 = alt(b1, v), v not in b1, unit(v) ≥ t(b1). Each
  // such pair is found once from its b2, since alt(·, v) is an involution.
  for (std::uint64_t b2 = 0; b2 < m; ++b2) {
    for (unsigned v : values[b2]) {
      const std::uint64_t b1 = addressing.alternate(b2, v);
      if (addressing.alternate(b1, v) != b2) ++not_involutions;
      if (v / 64 >= threshold[b1] && !holds(b1, v)) {
        positive += static_cast<double>(bin_weight(b1, m)) * value_weight[v];
      }
    }
  }
  const double all = 18446744073709551616.0;  // 2^64 hashes
  return {positive / all, second / all, not_involutions};
}

/// A filter of 2^14 blocks filled to 95% of its capacity, shared by the tests below.
class BlockedFilterAt95Percent : public ::testing::Test {
 protected:
  using Filter = cuckoo::BasicBlockedFilter<>;
  static constexpr std::uint64_t kBlocks = 1u << 14;
  static constexpr double kQueries = 1u << 21;

  static void SetUpTestSuite() {
    // 16384 · 42.2 = 691,404.8: the largest capacity that asks for exactly 2^14 blocks.
    filter_ = std::make_unique<Filter>(cuckoo::Config{.capacity = 691'404, .seed = 2024});
    keys_ = cuckoo::test::random_keys(filter_->capacity() * 95 / 100, 95);
    for (std::uint64_t key : keys_) {
      if (!filter_->insert(key)) ++failed_inserts_;
    }
    exact_ = exact_rates(*filter_);
  }
  static void TearDownTestSuite() {
    filter_.reset();
    keys_ = {};
  }
  void SetUp() override {
    ASSERT_EQ(filter_->block_count(), kBlocks);
    ASSERT_EQ(failed_inserts_, 0u) << "95% of the capacity must fit";
  }

  /// Contains-hits and two-line reads over kQueries random hashes.
  struct Measured {
    double hits = 0, second_reads = 0;
  };
  static Measured measure_random_hashes() {
    Measured m;
    cuckoo::detail::SplitMix64 rng(0xF00D);
    for (double i = 0; i < kQueries; ++i) {
      const std::uint64_t hash = rng();
      m.hits += filter_->contains_hash(hash) ? 1 : 0;
      m.second_reads += filter_->lines_read(hash) == 2 ? 1 : 0;
    }
    return m;
  }

  static inline std::unique_ptr<Filter> filter_;
  static inline std::vector<std::uint64_t> keys_;
  static inline std::size_t failed_inserts_ = 0;
  static inline ExactRates exact_{};
};

TEST_F(BlockedFilterAt95Percent, FalsePositiveRateIsTheTablesExactRate) {
  // The second-block part of the sum finds each pair from its other block: alt must undo itself.
  ASSERT_EQ(exact_.not_involutions, 0u);
  const Measured m = measure_random_hashes();
  const double measured = m.hits / kQueries;
  std::printf("[ blocked  ] FPR at 95%%: measured %.5f%%, exact from the table %.5f%%\n",
              100 * measured, 100 * exact_.false_positive);
  RecordProperty("measured_fpr", std::to_string(measured));
  RecordProperty("exact_fpr", std::to_string(exact_.false_positive));
  EXPECT_LT(measured, cuckoo::test::binomial_upper(exact_.false_positive, kQueries));
  EXPECT_GT(measured, cuckoo::test::binomial_lower(exact_.false_positive, kQueries));
  // The same for the lines read: lines_read says 2 exactly when the table says a second block is
  // read.
  const double second = m.second_reads / kQueries;
  EXPECT_LT(second, cuckoo::test::binomial_upper(exact_.second_read, kQueries));
  EXPECT_GT(second, cuckoo::test::binomial_lower(exact_.second_read, kQueries));
}

TEST_F(BlockedFilterAt95Percent, FalsePositiveRateIsAtMostThePlainTwelveBitFilters) {
  // The plain filter with f = 12, b = 4 at 95% load: 1 − (1 − 1/4095)^(8·0.95) ≤ 8·0.95/4095.
  const double plain = 8 * 0.95 / 4095;
  const double measured = measure_random_hashes().hits / kQueries;
  EXPECT_LT(measured, cuckoo::test::binomial_upper(plain, kQueries));
  EXPECT_LT(exact_.false_positive, plain) << "the table's own rate";
}

TEST_F(BlockedFilterAt95Percent, AtLeast95PercentOfNegativeLookupsReadOneLine) {
  const double share = measure_random_hashes().second_reads / kQueries;
  std::printf("[ blocked  ] negative lookups reading two lines: %.3f%% (exact %.3f%%)\n",
              100 * share, 100 * exact_.second_read);
  RecordProperty("negative_two_line_share", std::to_string(share));
  EXPECT_LT(share, cuckoo::test::binomial_upper(0.05, kQueries));
}

TEST_F(BlockedFilterAt95Percent, AtLeast90PercentOfPositiveLookupsReadOneLine) {
  double two_lines = 0;
  for (std::uint64_t key : keys_) {
    ASSERT_TRUE(filter_->contains(key)) << "false negative";
    two_lines += filter_->lines_read(cuckoo::hash_key(filter_->hasher(), key)) == 2 ? 1 : 0;
  }
  const auto n = static_cast<double>(keys_.size());
  std::printf("[ blocked  ] positive lookups reading two lines: %.3f%%\n", 100 * two_lines / n);
  RecordProperty("positive_two_line_share", std::to_string(two_lines / n));
  EXPECT_LT(two_lines / n, cuckoo::test::binomial_upper(0.10, n));
}

// ---- Clear and bad arguments -------------------------------------------------------------------

TEST(BlockedFilter, ClearEmptiesTheFilterAndItWorksAgain) {
  cuckoo::BasicBlockedFilter<> filter{cuckoo::Config{.capacity = 50'000}};
  const auto keys = cuckoo::test::random_keys(50'000, 5);
  for (std::uint64_t key : keys) ASSERT_TRUE(filter.insert(key));
  filter.clear();
  EXPECT_EQ(filter.size(), 0u);
  EXPECT_TRUE(filter.empty());
  const auto bytes = filter.bytes();
  EXPECT_TRUE(
      std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; }));
  // An empty table matches nothing, and no lookup goes on to a second block.
  for (std::uint64_t key : keys) {
    ASSERT_FALSE(filter.contains(key));
    ASSERT_EQ(filter.lines_read(cuckoo::hash_key(filter.hasher(), key)), 1u);
  }
  for (std::uint64_t key : keys) ASSERT_TRUE(filter.insert(key)) << "after clear";
  EXPECT_EQ(filter.size(), keys.size());
  for (std::uint64_t key : keys) ASSERT_TRUE(filter.contains(key));
}

TEST(BlockedFilter, BadConfigsAndBlockCountsThrow) {
  using Filter = cuckoo::BasicBlockedFilter<>;
  EXPECT_THROW(Filter(cuckoo::Config{.capacity = 0}), std::invalid_argument);
  EXPECT_THROW(
      Filter(cuckoo::Config{.capacity = 100, .max_kicks = cuckoo::defaults::kMaxKicksLimit + 1}),
      std::invalid_argument);
  EXPECT_NO_THROW(
      Filter(cuckoo::Config{.capacity = 100, .max_kicks = cuckoo::defaults::kMaxKicksLimit}));
  for (std::uint64_t blocks : {0ull, 1ull, 3ull, 4097ull, (1ull << 32) + 2}) {
    EXPECT_THROW(Filter(blocks, 100, 500, 1), std::invalid_argument) << blocks << " blocks";
  }
  for (std::uint64_t blocks : {2ull, 4096ull}) {
    EXPECT_NO_THROW(Filter(blocks, 100, 500, 1)) << blocks << " blocks";
  }
}

}  // namespace
