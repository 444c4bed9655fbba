// cuckoo/blocked/blocked_filter.hpp — a cuckoo filter whose lookups read one cache line.
//
// The plain filter reads two buckets per lookup, two random cache lines on a large table; the
// blocked Bloom filter reads one, but cannot delete. Here a key's items live in one 64-byte block
// (pocket_block.hpp: 100 lists, up to 43 items) and a key reads its second block only when its own
// block has given away items like it.
//
// Addressing. One 64-bit hash: the high 32 bits pick the key's block i1 among m (multiply-shift,
// m even, any size); the low 32 bits pick its value v = 256·q + r in [0, 25600) the same way: list
// q of 100, remainder r of 256. The block stores v as r in list q, so a key matches a stored item
// only if it has the same block, list and remainder. Its other block is i2 = alt(i1, v) =
// (H(v) − i1) mod m with H(v) odd, the plain filter's involution (addressing.hpp): an item can move
// between its two blocks knowing only where it is and its value.
//
// The threshold rule. Each block keeps t (9 bits, in units of 64 values, initially above every
// value) with the invariant
//
//     every item whose first block is B and whose unit v / 64 is below t_B is stored in B.
//
// So a lookup reads list q of i1, and reads i2 only when it missed and v / 64 ≥ t_i1. An insert
// places v in i1 when there is room; when i1 is full and v / 64 ≥ t_i1, in i2 when it has room;
// otherwise a block that must take an item it has no room for gives away its largest item (slots
// are sorted, it is the last one) to that item's other block and lowers its t to that item's unit,
// keeping the invariant (a block cannot tell its own keys' items from guests, so it lowers t for
// both; a guest just goes back to its first block). The first block of a new key may give away the
// new item itself when it is the largest. The moves form a kick walk as in the plain filter, with a
// one-step lookahead (of the five largest, the largest whose other block has room) and, after the
// first four steps, a random choice among more and more of the largest, so that two full blocks
// cannot pass the same item back and forth; every step is logged and a walk that runs out of kicks
// is undone, so a failed insert changes nothing. Thresholds never rise: an erase cannot know
// whether a guest of another block still depends on them.
//
// The arithmetic (tests/unit/test_blocked_*.cpp and bench/blocked_bench.cpp check it).
//   Memory: 512 bits per block, sized for kDesignItemsPerBlock = 42.2 items (98.1% of the 43
//   slots): 12.13 bits per item at capacity and 12.77 at 95% of it (the plain f = 12, b = 4
//   filter: 12.8 at its capacity, 13.5 at 95% of it). Inserts first fail at 99.8% of the slots.
//   False positives: a negative lookup matches each item of its list with probability 1/256, and
//   a list holds n/100 items for n items per block. A share s of negative lookups also reads a
//   second block, which holds the items given away by blocks like the first at about the same
//   density as their own, so ε ≈ (n/25600)·(1 + 2s): 0.158%·(1 + 2·0.045) = 0.17% at 95% of
//   capacity (40.1 items per block), measured 0.170%; the plain f = 12 filter at 95% of its
//   capacity: 8·0.89/4095 = 0.17%. At capacity 0.21%, at the first failed insert 0.28%.
//   One line: a block receives about Poisson(n) first-block items; the excess over 43, and the
//   guests that arrive later, are given away, and t falls to about the unit of the (excess + 1)-th
//   largest value, so about excess/n of the block's keys read a second line: s = 4.5% of
//   negative and 4.3% of positive lookups at 95% of capacity, 15% / 11% at capacity.
//
// Template parameters:
//   L     the ISA level of the lookups (PDEP and a vector compare of the line from kAvx2 on,
//         broadword arithmetic at kPortable); the bytes are the same at every level.
//   Hash  a seeded 64-bit hasher (hash.hpp); XXH3 by default.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cuckoo/addressing.hpp"
#include "cuckoo/blocked/blocked_table.hpp"
#include "cuckoo/blocked/pocket_block.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/detail/aligned_buffer.hpp"
#include "cuckoo/detail/isa.hpp"
#include "cuckoo/detail/key_forwarding.hpp"
#include "cuckoo/detail/prefetch_pipeline.hpp"
#include "cuckoo/detail/rng.hpp"
#include "cuckoo/hash.hpp"
#include "cuckoo/sizing.hpp"

namespace cuckoo {

template <Isa L = kCompiledIsa, Hasher Hash = Xxh3Hasher>
class BasicBlockedFilter : public detail::KeyForwarding<BasicBlockedFilter<L, Hash>> {
  using KeyForwarding = detail::KeyForwarding<BasicBlockedFilter>;

 public:
  using table_type = BlockedTable<L>;
  using hasher_type = Hash;
  static constexpr Isa kIsa = L;
  static constexpr unsigned kSlotsPerBlock = table_type::kSlotsPerBlock;
  static constexpr std::size_t kBlockBytes = table_type::kBlockBytes;
  /// Items per block the filter is sized for (see the essay above).
  static constexpr double kDesignItemsPerBlock = blocked_layout::kDesignItemsPerBlock;
  static_assert(blocked_layout::kSlotsPerBlock == kSlotsPerBlock &&
                blocked_layout::kRemainderBits == table_type::kRemainderBits);
  /// Batch lookups hash and prefetch this many keys ahead (as BasicFilter::kPipelineDepth).
  static constexpr std::size_t kPipelineDepth = 64;
  static constexpr std::size_t kWritePipelineDepth = 16;
  /// A batch lookup that must read a key's second block prefetches it and answers the key this
  /// many keys later, so the rare second read does not stall the pipeline.
  static constexpr std::size_t kSecondReadDelay = 16;

  /// Blocks for `capacity` items: even, at least 2 (sizing.hpp).
  static std::uint64_t blocks_for(std::size_t capacity) { return blocked_block_count(capacity); }

  /// Sized from cfg.capacity; uses its max_kicks and seed (its fingerprint settings do not apply:
  /// the facade, Config::blocked, checks target_fpr against the format's rate). Throws
  /// std::invalid_argument on a bad capacity or max_kicks.
  explicit BasicBlockedFilter(const Config& cfg = {})
      : BasicBlockedFilter(blocks_for(checked_capacity(cfg)), cfg.capacity, cfg.max_kicks,
                           cfg.seed) {}

  /// An empty filter of exactly `block_count` blocks (even, 2..2^32).
  BasicBlockedFilter(std::uint64_t block_count, std::size_t capacity, unsigned max_kicks,
                     std::uint64_t seed)
      : BasicBlockedFilter(table_type(block_count), capacity, max_kicks, seed) {}
  /// The same over table storage it does not own (a memory-mapped file, which must outlive it).
  BasicBlockedFilter(std::uint64_t block_count, std::size_t capacity, unsigned max_kicks,
                     std::uint64_t seed, detail::ExternalStorage storage)
      : BasicBlockedFilter(table_type(block_count, storage), capacity, max_kicks, seed) {}
  /// From a Layout (blocked, as plan() gives it), as the facade and the loaders build filters.
  BasicBlockedFilter(const Layout& layout, std::size_t capacity, unsigned max_kicks,
                     std::uint64_t seed)
      : BasicBlockedFilter(layout.bucket_count, capacity, max_kicks, seed) {}
  BasicBlockedFilter(const Layout& layout, std::size_t capacity, unsigned max_kicks,
                     std::uint64_t seed, detail::ExternalStorage storage)
      : BasicBlockedFilter(layout.bucket_count, capacity, max_kicks, seed, storage) {}

 private:
  BasicBlockedFilter(table_type&& table, std::size_t capacity, unsigned max_kicks,
                     std::uint64_t seed)
      : table_(std::move(table)),
        addressing_(table_.block_count(), 1),
        hasher_(seed),
        rng_(seed ^ kKickStreamTweak),
        seed_(seed),
        capacity_(capacity),
        max_kicks_(max_kicks),
        walk_(checked_kicks(max_kicks)) {}

 public:
  // ---- Single-key operations (detail::KeyForwarding: key -> its hash -> the *_hash call) -----

  using KeyForwarding::contains;
  using KeyForwarding::count;
  using KeyForwarding::erase;
  using KeyForwarding::insert;

  bool insert_hash(std::uint64_t hash) { return insert_probe(probe_of(hash)); }

  // Inline into the caller's loop, with the rare second block's lookup out of line: a call per
  // key, or both blocks' lookups inline, hold instructions in the core's window that the next
  // key's load waits behind (pocket_block.hpp's essay).
  CUCKOO_HOT bool contains_hash(std::uint64_t hash) const noexcept {
    const Probe p = probe_of(hash);
    const std::byte* first = block(p.block);
    const bool hit = detail::pocket::contains<L>(first, p.value);
    if (!hit && detail::pocket::may_be_in_second(first, p.value)) [[unlikely]] {
      return contains_in_second(p);
    }
    return hit;
  }

  bool erase_hash(std::uint64_t hash) noexcept { return erase_probe(probe_of(hash)); }

  std::size_t count_hash(std::uint64_t hash) const noexcept { return count_probe(probe_of(hash)); }

  /// Cache lines contains_hash(hash) reads: 1, or 2 when it must look in the second block.
  unsigned lines_read(std::uint64_t hash) const noexcept {
    const Probe p = probe_of(hash);
    const std::byte* first = block(p.block);
    return !detail::pocket::contains<L>(first, p.value) &&
                   detail::pocket::may_be_in_second(first, p.value)
               ? 2
               : 1;
  }

  // ---- Batches: the answers of the single-key calls, in order --------------------------------

  template <Key K>
  void contains(std::span<const K> keys, std::span<bool> out) const noexcept {
    contains_pipelined<kPipelineDepth>(keys, out);
  }

  /// out[i] = count(keys[i]); out.size() must be at least keys.size(). The first block is
  /// prefetched kPipelineDepth keys ahead; the second, where the block's threshold says an item
  /// may have gone, is read when the key's turn comes (count reads it present or absent).
  template <Key K>
  void count(std::span<const K> keys, std::span<std::size_t> out) const noexcept {
    run_pipeline<kPipelineDepth, Intent::kLookup>(keys, [&](std::size_t i, const Probe& p) {
      out[i] = count_probe(p);
      return true;
    });
  }

  template <std::size_t Depth, Key K>
  void contains_pipelined(std::span<const K> keys, std::span<bool> out) const noexcept {
    constexpr std::size_t kDeferred = 2 * kSecondReadDelay;  // ≥ delay + 1 pending at once
    struct Deferred {
      std::size_t index;
      std::uint64_t block;
      unsigned value;
    };
    Deferred deferred[kDeferred];
    std::size_t head = 0, tail = 0;
    const auto resolve = [&](const Deferred& d) {
      out[d.index] = detail::pocket::contains<L>(block(d.block), d.value);
    };
    run_pipeline<Depth, Intent::kLookup>(keys, [&](std::size_t i, const Probe& p) {
      const std::byte* first = block(p.block);
      const bool hit = detail::pocket::contains<L>(first, p.value);
      out[i] = hit;
      if (!hit && detail::pocket::may_be_in_second(first, p.value)) [[unlikely]] {
        const std::uint64_t second = alternate(p);
        __builtin_prefetch(block(second), 0, 2);
        deferred[tail++ & (kDeferred - 1)] = {i, second, p.value};
      }
      if (head != tail && deferred[head & (kDeferred - 1)].index + kSecondReadDelay <= i)
        resolve(deferred[head++ & (kDeferred - 1)]);
      return true;
    });
    while (head != tail) resolve(deferred[head++ & (kDeferred - 1)]);
  }

  /// Inserts keys in order and stops at the first that does not fit; returns how many went in
  /// (the failed one changed nothing, the ones after it were not tried).
  template <Key K>
  std::size_t insert(std::span<const K> keys) {
    std::size_t done = 0;
    run_pipeline<kWritePipelineDepth, Intent::kWrite>(keys, [&](std::size_t, const Probe& p) {
      if (!insert_probe(p)) return false;
      ++done;
      return true;
    });
    return done;
  }

  /// Erases one copy of each key in order; returns how many were removed.
  template <Key K>
  std::size_t erase(std::span<const K> keys) noexcept {
    std::size_t removed = 0;
    run_pipeline<kWritePipelineDepth, Intent::kWrite>(keys, [&](std::size_t, const Probe& p) {
      removed += erase_probe(p) ? 1 : 0;
      return true;
    });
    return removed;
  }

  // ---- Shape and state ------------------------------------------------------------------------

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::size_t capacity() const noexcept { return capacity_; }
  std::uint64_t block_count() const noexcept { return addressing_.bucket_count(); }
  std::uint64_t slot_count() const noexcept { return block_count() * kSlotsPerBlock; }
  double load_factor() const noexcept {
    return static_cast<double>(size_) / static_cast<double>(slot_count());
  }
  std::size_t memory_bytes() const noexcept { return table_.memory_bytes(); }
  /// As a Layout: blocks as buckets of 43 slots, 8-bit remainders as the fingerprint width.
  std::uint64_t bucket_count() const noexcept { return block_count(); }
  unsigned bucket_size() const noexcept { return kSlotsPerBlock; }
  unsigned fingerprint_bits() const noexcept { return table_type::kRemainderBits; }
  Layout layout() const noexcept {
    return {block_count(), fingerprint_bits(), kSlotsPerBlock, false, true};
  }
  std::uint64_t seed() const noexcept { return seed_; }
  unsigned max_kicks() const noexcept { return max_kicks_; }
  const Hash& hasher() const noexcept { return hasher_; }
  /// The raw blocks, kBlockBytes each (for tests and files).
  std::span<const std::byte> bytes() const noexcept { return table_.bytes(); }
  const table_type& table() const noexcept { return table_; }

  void clear() noexcept {
    table_.clear();  // a zeroed block is an empty one with no threshold
    size_ = 0;
  }

  /// The essay's model of the false-positive rate: (items per block / 25600) · (1 + 2s), s the
  /// share of values at or above their block's threshold (a miss there reads the second block,
  /// which holds the items given away at about the same density). One pass over the thresholds;
  /// measured rates agree within a few percent (tests/unit/test_blocked_filter.cpp has the exact
  /// rate).
  double expected_fpr() const noexcept {
    namespace pocket = detail::pocket;
    constexpr unsigned kUnits = pocket::kValues >> pocket::kThresholdUnitBits;
    std::uint64_t above = 0;
    for (std::uint64_t b = 0; b < block_count(); ++b)
      above += kUnits - std::min(pocket::threshold(block(b)), kUnits);
    const double blocks = static_cast<double>(block_count());
    const double second = static_cast<double>(above) / (blocks * kUnits);
    return static_cast<double>(size_) / (blocks * pocket::kValues) * (1 + 2 * second);
  }

  /// For loaders: the table's storage and the item count it holds. The caller vouches for both
  /// (see counted_size).
  table_type& mutable_table() noexcept { return table_; }
  void set_size_unchecked(std::size_t size) noexcept { size_ = size; }
  /// The items the blocks hold, counted (a loader compares it with size()).
  std::size_t counted_size() const noexcept { return table_.item_count(); }

  void reseed_kick_walk(std::uint64_t state) noexcept { rng_ = detail::SplitMix64(state); }

 private:
  static constexpr std::uint64_t kKickStreamTweak = 0x5851F42D4C957F2Dull;
  /// A kick walk gives away the largest item for its first kGreedyKicks steps, then one of the
  /// 1 + kick / kKicksPerChoice largest at random. Only the largest keeps T high; a walk that may
  /// only choose among a fixed few largest gets caught in cycles near full (first failure at 95.3%
  /// of the slots with the 3 largest, 99.8% with this rule, 2^16 blocks; at 95% of capacity the
  /// share of negative lookups that read two lines was 3.8% and 3.7%).
  static constexpr unsigned kGreedyKicks = 4;
  static constexpr unsigned kKicksPerChoice = 8;
  /// In its greedy steps a walk gives away, of the kLookahead largest items, the largest whose
  /// other block has room, if any: a little more of this block's keys then read two lines, but
  /// the item does not push another block over. Negative lookups reading two lines at 95% of
  /// capacity, 2^16 blocks: 4.9% without, 4.8% / 4.6% / 4.5% / 4.7% / 4.7% with 2 / 3 / 5 / 8 /
  /// 16 (and the fill to first failure 1.4x faster with 5).
  static constexpr unsigned kLookahead = 5;

  struct Probe {
    std::uint64_t block;
    unsigned value;
  };

  /// One step of a kick walk: what it put into and took out of a block, and the block's old T.
  struct Step {
    std::uint64_t block;
    std::uint16_t added, removed, old_threshold;
    bool has_added, has_removed;
  };

  static std::size_t checked_capacity(const Config& cfg) {
    if (cfg.capacity == 0) detail::invalid("capacity must be at least 1");
    if (cfg.max_kicks > defaults::kMaxKicksLimit) {
      detail::invalid("max_kicks must be at most " + std::to_string(defaults::kMaxKicksLimit) +
                      ", got " + std::to_string(cfg.max_kicks));
    }
    return cfg.capacity;
  }
  static unsigned checked_kicks(unsigned max_kicks) {
    if (max_kicks > defaults::kMaxKicksLimit) {
      detail::invalid("max_kicks must be at most " + std::to_string(defaults::kMaxKicksLimit) +
                      ", got " + std::to_string(max_kicks));
    }
    return max_kicks;
  }

  std::size_t count_probe(const Probe& p) const noexcept {
    const std::byte* first = block(p.block);
    std::size_t n = detail::pocket::count<L>(first, p.value);
    if (detail::pocket::may_be_in_second(first, p.value))
      n += detail::pocket::count<L>(block(alternate(p)), p.value);
    return n;
  }

  Probe probe_of(std::uint64_t hash) const noexcept {
    const std::uint64_t b = ((hash >> 32) * addressing_.bucket_count()) >> 32;
    const auto value =
        static_cast<unsigned>(((hash & 0xFFFF'FFFFu) * detail::pocket::kValues) >> 32);
    return {b, value};
  }

  /// contains_hash's look in the second block (about 5% of lookups).
  [[gnu::noinline]] bool contains_in_second(const Probe& p) const noexcept {
    return detail::pocket::contains<L>(block(alternate(p)), p.value);
  }

  std::uint64_t alternate(std::uint64_t b, unsigned value) const noexcept {
    return addressing_.alternate(b, value);
  }
  std::uint64_t alternate(const Probe& p) const noexcept { return alternate(p.block, p.value); }

  const std::byte* block(std::uint64_t b) const noexcept { return table_.block(b); }
  std::byte* block(std::uint64_t b) noexcept { return table_.block(b); }

  static bool has_room(const std::byte* b) noexcept {
    return detail::pocket::size<L>(b) < kSlotsPerBlock;
  }

  bool insert_probe(const Probe& p) {
    namespace pocket = detail::pocket;
    std::byte* first = block(p.block);
    if (!pocket::try_add<L>(first, p.value) &&
        !(pocket::may_be_in_second(first, p.value) &&
          pocket::try_add<L>(block(alternate(p)), p.value)) &&
        !kick_walk(p)) {
      return false;
    }
    ++size_;
    return true;
  }

  bool erase_probe(const Probe& p) noexcept {
    std::byte* first = block(p.block);
    if (detail::pocket::remove<L>(first, p.value) ||
        (detail::pocket::may_be_in_second(first, p.value) &&
         detail::pocket::remove<L>(block(alternate(p)), p.value))) {
      --size_;
      return true;
    }
    return false;
  }

  /// Places p.value when its first block is full (and its second too, or not allowed), moving items
  /// along their other blocks, starting from the first; undoes every step when max_kicks run out.
  /// (Starting instead in whichever block's t would fall less measured no difference in the share
  /// of two-line lookups, 4.94% either way at 95% of capacity on 2^16 blocks, and was dropped.)
  bool kick_walk(const Probe& p) noexcept {
    namespace pocket = detail::pocket;
    unsigned steps = 0;
    std::uint64_t at = p.block;
    unsigned carried = p.value;
    for (unsigned kick = 0; kick < max_kicks_; ++kick) {
      std::byte* b = block(at);
      if (pocket::try_add<L>(b, carried)) {
        walk_[steps++] = {at, static_cast<std::uint16_t>(carried), 0, 0, true, false};
        return true;
      }
      constexpr unsigned n = kSlotsPerBlock;  // full
      const unsigned choices = kick < kGreedyKicks ? 1 : std::min(n, 1 + kick / kKicksPerChoice);
      unsigned rank = static_cast<unsigned>(rng_() % choices);
      if (kick < kGreedyKicks) {
        // One step ahead: of the kLookahead largest, the largest whose other block has room.
        // The other blocks are fetched all at once before any is tested, not one miss after
        // another: batched inserts to 95% 33.4-35.1 against 24.1-32.5 M keys/s (three
        // alternating rounds; a first, noisier sitting had shown no difference).
        std::uint64_t others[kLookahead];
        unsigned candidates = 0;
        for (; candidates < kLookahead && candidates < n; ++candidates) {
          const unsigned candidate = pocket::value_at(b, n - 1 - candidates);
          if (kick == 0 && carried >= candidate) break;
          others[candidates] = alternate(at, candidate);
          __builtin_prefetch(block(others[candidates]), 1, 3);
        }
        for (unsigned r = 0; r < candidates; ++r) {
          if (has_room(block(others[r]))) {
            rank = r;
            break;
          }
        }
      }
      const unsigned victim = pocket::value_at(b, n - 1 - rank);
      const unsigned old_threshold = pocket::threshold(b);
      if (kick == 0 && carried >= victim) {
        // The new item is the largest: its first block gives it away and keeps everything else.
        pocket::set_threshold(b, std::min(old_threshold, pocket::threshold_unit(carried)));
        walk_[steps++] = {at, 0, 0, static_cast<std::uint16_t>(old_threshold), false, false};
      } else {
        pocket::remove_at<L>(b, pocket::list_of(victim), n - 1 - rank);  // where value_at read it
        pocket::add<L>(b, carried);
        pocket::set_threshold(b, std::min(old_threshold, pocket::threshold_unit(victim)));
        walk_[steps++] = {at,
                          static_cast<std::uint16_t>(carried),
                          static_cast<std::uint16_t>(victim),
                          static_cast<std::uint16_t>(old_threshold),
                          true,
                          true};
        carried = victim;
      }
      at = alternate(at, carried);
    }
    while (steps-- > 0) {
      const Step& step = walk_[steps];
      std::byte* b = block(step.block);
      if (step.has_added) (void)pocket::remove<L>(b, step.added);
      if (step.has_removed) pocket::add<L>(b, step.removed);
      pocket::set_threshold(b, step.old_threshold);
    }
    return false;
  }

  using Intent = detail::Intent;

  /// detail::run_prefetch_pipeline over keys, each hashed and its first block prefetched Depth
  /// keys ahead of step(i, probe).
  template <std::size_t Depth, Intent kIntent, Key K, class Step>
  void run_pipeline(std::span<const K> keys, Step&& step) const {
    detail::run_prefetch_pipeline<Depth>(
        keys.size(),
        [&](std::size_t i) {
          const Probe p = probe_of(hash_key(hasher_, keys[i]));
          if constexpr (kIntent == Intent::kLookup) {
            __builtin_prefetch(block(p.block), 0, 2);
          } else {
            __builtin_prefetch(block(p.block), 1, 3);
          }
          return p;
        },
        step);
  }

  table_type table_;
  Addressing addressing_;
  Hash hasher_;
  detail::SplitMix64 rng_;
  std::uint64_t seed_;
  std::size_t size_ = 0;
  std::size_t capacity_;
  unsigned max_kicks_;
  std::vector<Step> walk_;  // undo log of the current kick walk, sized once
};

}  // namespace cuckoo
