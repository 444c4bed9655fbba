// cuckoo/blocked/blocked_filter.hpp — a cuckoo filter whose lookups read one cache line.
//
// The plain filter reads two buckets per lookup, two random cache lines on a large table; the
// blocked Bloom filter reads one and so answers about twice as fast, but cannot delete. Here the
// buckets are 64-byte blocks (pocket_block.hpp) and a key reads its second block only when its own
// block has given away items like it.
//
// Addressing. One 64-bit hash: the high 32 bits pick the key's block i1 among m (multiply-shift,
// m even, any size); the low 32 bits pick its value v = 256·q + r in [0, 25600) the same way: list
// q of 100, remainder r of 256. The block stores v as r in list q, so a key matches a stored item
// only if it has the same block, list and remainder. Its other block is i2 = alt(i1, v) =
// (H(v) − i1) mod m with H(v) odd, the plain filter's involution (addressing.hpp): an item can move
// between its two blocks knowing only where it is and its value.
//
// The threshold rule. Each block keeps T (16 bits, initially above every value) with the invariant
//
//     every item whose first block is B and whose value is below T_B is stored in B.
//
// So a lookup reads list q of i1, and reads i2 only when it missed and v ≥ T_i1. An insert places
// v in i1 when there is room; when i1 is full and v ≥ T_i1, in i2 when it has room; otherwise a
// block that must take an item it has no room for gives away its largest item (slots are sorted,
// it is the last one) to that item's other block and lowers its T to that item's value, keeping
// the invariant (a block cannot tell its own keys' items from guests, so it lowers T for both; a
// guest just goes back to its first block). The first block of a new key may give away the new
// item itself when it is the largest. The moves form a kick walk as in the plain filter: after the
// first four steps the item given away is one of the three largest, chosen at random, so two full
// blocks cannot pass the same item back and forth; every step is logged and a walk that runs out
// of kicks is undone, so a failed insert changes nothing. Thresholds never rise: an erase cannot
// know whether a guest of another block still depends on them.
//
// The arithmetic (tests/unit/test_blocked_*.cpp and bench/blocked_bench.cpp check it).
//   Memory: 512 bits per block; sized for kDesignItemsPerBlock = 42.2 items (96.6% of the 44
//   slots), 12.05 bits per item at capacity and 12.68 at 95% of it (the plain f = 12 filter: 12.8).
//   False positives: a negative lookup matches each item of its list with probability 1/256; a
//   list holds λ = n/100 items on average, so ε ≈ (1 + s)·n/25600 for n items per block and a
//   fraction s of negative lookups reading a second block: 0.158% ·(1 + s) at 40.4 items per
//   block (95% of capacity), 0.166% ·(1 + s) at capacity; the plain f = 12 filter at 95%: 0.186%.
//   One line: a block receives Poisson(n) first-block items; the excess over 44 (and the guests
//   that push it) is given away, and T falls to about the (excess + 1)-th largest value, so about
//   excess/load of the block's keys read a second line. Measured at 95% of capacity on 2^22
//   blocks: bench/blocked_bench.cpp and the README give the figures.
//
// Template parameters:
//   L     the ISA level of the header selects (BMI2's PDEP from kAvx2 on, else portable).
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
#include "cuckoo/blocked/pocket_block.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/detail/aligned_buffer.hpp"
#include "cuckoo/detail/isa.hpp"
#include "cuckoo/detail/rng.hpp"
#include "cuckoo/hash.hpp"
#include "cuckoo/sizing.hpp"

namespace cuckoo {

template <Isa L = kCompiledIsa, Hasher Hash = Xxh3Hasher>
class BasicBlockedFilter {
 public:
  using hasher_type = Hash;
  static constexpr Isa kIsa = L;
  static constexpr unsigned kSlotsPerBlock = detail::pocket::kSlots;
  static constexpr std::size_t kBlockBytes = detail::pocket::kBlockBytes;
  /// Items per block the filter is sized for (see the essay above).
  static constexpr double kDesignItemsPerBlock = 42.2;
  /// Batch lookups hash and prefetch this many keys ahead (as BasicFilter::kPipelineDepth).
  static constexpr std::size_t kPipelineDepth = 64;
  static constexpr std::size_t kWritePipelineDepth = 16;
  /// A batch lookup that must read a key's second block prefetches it and answers the key this
  /// many keys later, so the rare second read does not stall the pipeline.
  static constexpr std::size_t kSecondReadDelay = 16;

  /// Blocks for `capacity` items: even, at least 2.
  static std::uint64_t blocks_for(std::size_t capacity) {
    const double blocks = std::ceil(static_cast<double>(capacity) / kDesignItemsPerBlock);
    if (!(blocks <= static_cast<double>(kMaxBucketCount))) {
      detail::invalid("capacity " + std::to_string(capacity) + " needs more than 2^32 blocks");
    }
    auto count = static_cast<std::uint64_t>(blocks);
    count += count & 1;
    return count < 2 ? 2 : count;
  }

  /// Sized from cfg.capacity; uses its max_kicks and seed. Throws std::invalid_argument on a bad
  /// Config.
  explicit BasicBlockedFilter(const Config& cfg = {})
      : BasicBlockedFilter(blocks_for(checked_capacity(cfg)), cfg.capacity, cfg.max_kicks,
                           cfg.seed) {}

  /// An empty filter of exactly `block_count` blocks (even, 2..2^32).
  BasicBlockedFilter(std::uint64_t block_count, std::size_t capacity, unsigned max_kicks,
                     std::uint64_t seed)
      : blocks_(checked_blocks(block_count) * kBlockBytes),
        addressing_(block_count, 1),
        hasher_(seed),
        rng_(seed ^ kKickStreamTweak),
        seed_(seed),
        capacity_(capacity),
        max_kicks_(max_kicks),
        walk_(max_kicks) {}

  // ---- Single-key operations -----------------------------------------------------------------

  template <Key K>
  bool insert(const K& key) {
    return insert_hash(hash_key(hasher_, key));
  }
  template <Key K>
  bool contains(const K& key) const noexcept {
    return contains_hash(hash_key(hasher_, key));
  }
  /// Removes one copy of key's value from its blocks; only erase what you inserted.
  template <Key K>
  bool erase(const K& key) noexcept {
    return erase_hash(hash_key(hasher_, key));
  }
  template <Key K>
  std::size_t count(const K& key) const noexcept {
    return count_hash(hash_key(hasher_, key));
  }

  bool insert_hash(std::uint64_t hash) { return insert_probe(probe_of(hash)); }

  bool contains_hash(std::uint64_t hash) const noexcept {
    const Probe p = probe_of(hash);
    const std::byte* first = block(p.block);
    const bool hit = detail::pocket::contains<L>(first, p.value);
    if (!hit && detail::pocket::threshold_unit(p.value) >= detail::pocket::threshold(first))
        [[unlikely]] {
      return detail::pocket::contains<L>(block(alternate(p)), p.value);
    }
    return hit;
  }

  bool erase_hash(std::uint64_t hash) noexcept { return erase_probe(probe_of(hash)); }

  std::size_t count_hash(std::uint64_t hash) const noexcept {
    const Probe p = probe_of(hash);
    const std::byte* first = block(p.block);
    std::size_t n = detail::pocket::count<L>(first, p.value);
    if (detail::pocket::threshold_unit(p.value) >= detail::pocket::threshold(first))
      n += detail::pocket::count<L>(block(alternate(p)), p.value);
    return n;
  }

  /// Cache lines contains_hash(hash) reads: 1, or 2 when it must look in the second block.
  unsigned lines_read(std::uint64_t hash) const noexcept {
    const Probe p = probe_of(hash);
    const std::byte* first = block(p.block);
    return !detail::pocket::contains<L>(first, p.value) &&
                   detail::pocket::threshold_unit(p.value) >= detail::pocket::threshold(first)
               ? 2
               : 1;
  }

  // ---- Batches: the answers of the single-key calls, in order --------------------------------

  template <Key K>
  void contains(std::span<const K> keys, std::span<bool> out) const noexcept {
    contains_pipelined<kPipelineDepth>(keys, out);
  }

  template <std::size_t Depth, Key K>
  void contains_pipelined(std::span<const K> keys, std::span<bool> out) const noexcept {
    static_assert(Depth > 0 && (Depth & (Depth - 1)) == 0, "pipeline depth: a power of two");
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
    const std::size_t n = keys.size();
    Probe ring[Depth];
    const auto stage = [&](std::size_t i) {
      const Probe p = probe_of(hash_key(hasher_, keys[i]));
      __builtin_prefetch(block(p.block), 0, 2);
      ring[i & (Depth - 1)] = p;
    };
    for (std::size_t i = 0; i < n && i < Depth; ++i) stage(i);
    for (std::size_t i = 0; i < n; ++i) {
      const Probe p = ring[i & (Depth - 1)];
      if (i + Depth < n) stage(i + Depth);
      const std::byte* first = block(p.block);
      const bool hit = detail::pocket::contains<L>(first, p.value);
      out[i] = hit;
      if (!hit && detail::pocket::threshold_unit(p.value) >= detail::pocket::threshold(first))
          [[unlikely]] {
        const std::uint64_t second = alternate(p);
        __builtin_prefetch(block(second), 0, 2);
        deferred[tail++ & (kDeferred - 1)] = {i, second, p.value};
      }
      if (head != tail && deferred[head & (kDeferred - 1)].index + kSecondReadDelay <= i)
        resolve(deferred[head++ & (kDeferred - 1)]);
    }
    while (head != tail) resolve(deferred[head++ & (kDeferred - 1)]);
  }

  /// Inserts keys in order and stops at the first that does not fit; returns how many went in
  /// (the failed one changed nothing, the ones after it were not tried).
  template <Key K>
  std::size_t insert(std::span<const K> keys) {
    std::size_t done = 0;
    run_write_pipeline(keys, [&](const Probe& p) {
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
    run_write_pipeline(keys, [&](const Probe& p) {
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
  std::size_t memory_bytes() const noexcept { return blocks_.size(); }
  std::uint64_t seed() const noexcept { return seed_; }
  unsigned max_kicks() const noexcept { return max_kicks_; }
  const Hash& hasher() const noexcept { return hasher_; }
  /// The raw blocks, kBlockBytes each (for tests and files).
  std::span<const std::byte> bytes() const noexcept { return {blocks_.data(), blocks_.size()}; }

  void clear() noexcept {
    blocks_.zero();  // a zeroed block is an empty one with no threshold
    size_ = 0;
  }

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
  static std::size_t checked_blocks(std::uint64_t count) {
    if (count < 2 || (count & 1) != 0 || count > kMaxBucketCount)
      detail::invalid("block count must be even and in 2..2^32, got " + std::to_string(count));
    return static_cast<std::size_t>(count);
  }

  Probe probe_of(std::uint64_t hash) const noexcept {
    const std::uint64_t b = ((hash >> 32) * addressing_.bucket_count()) >> 32;
    const auto value =
        static_cast<unsigned>(((hash & 0xFFFF'FFFFu) * detail::pocket::kValues) >> 32);
    return {b, value};
  }
  std::uint64_t alternate(std::uint64_t b, unsigned value) const noexcept {
    return addressing_.alternate(b, value);
  }
  std::uint64_t alternate(const Probe& p) const noexcept { return alternate(p.block, p.value); }

  const std::byte* block(std::uint64_t b) const noexcept {
    return blocks_.data() + b * kBlockBytes;
  }
  std::byte* block(std::uint64_t b) noexcept { return blocks_.data() + b * kBlockBytes; }

  static bool has_room(const std::byte* b) noexcept {
    return detail::pocket::size(b) < kSlotsPerBlock;
  }

  bool insert_probe(const Probe& p) {
    std::byte* first = block(p.block);
    if (has_room(first)) {
      detail::pocket::add(first, p.value);
    } else if (std::byte* second = block(alternate(p));
               detail::pocket::threshold_unit(p.value) >= detail::pocket::threshold(first) &&
               has_room(second)) {
      detail::pocket::add(second, p.value);
    } else if (!kick_walk(p)) {
      return false;
    }
    ++size_;
    return true;
  }

  bool erase_probe(const Probe& p) noexcept {
    std::byte* first = block(p.block);
    if (detail::pocket::remove(first, p.value) ||
        (detail::pocket::threshold_unit(p.value) >= detail::pocket::threshold(first) &&
         detail::pocket::remove(block(alternate(p)), p.value))) {
      --size_;
      return true;
    }
    return false;
  }

  /// Places p.value when its first block is full (and its second too, or not allowed), moving items
  /// along their other blocks; undoes every step when max_kicks run out.
  ///
  /// Where the walk starts: a block gives away its largest item and lowers its t to that item's
  /// unit, so every key of the block from that unit up reads two lines. When the new item may live
  /// in either block, the walk starts in the one whose t would fall less (often not at all: a
  /// block whose t is already at or below its largest item pays nothing).
  bool kick_walk(const Probe& p) noexcept {
    namespace pocket = detail::pocket;
    unsigned steps = 0;
    std::uint64_t at = p.block;
    unsigned carried = p.value;
    if (max_kicks_ > 0) {
      const std::byte* first = block(p.block);
      const unsigned t1 = pocket::threshold(first);
      if (pocket::threshold_unit(p.value) >= t1) {
        const std::uint64_t other = alternate(p);
        const std::byte* second = block(other);
        const unsigned t2 = pocket::threshold(second);
        const auto fall = [](unsigned t, unsigned largest) {
          const unsigned unit = pocket::threshold_unit(largest);
          return t > unit ? t - unit : 0;
        };
        const unsigned largest1 = std::max(pocket::value_at(first, kSlotsPerBlock - 1), p.value);
        const unsigned largest2 = pocket::value_at(second, kSlotsPerBlock - 1);
        if (fall(t2, largest2) < fall(t1, largest1)) at = other;
      }
    }
    for (unsigned kick = 0; kick < max_kicks_; ++kick) {
      std::byte* b = block(at);
      const unsigned n = pocket::size(b);
      if (n < kSlotsPerBlock) {
        pocket::add(b, carried);
        walk_[steps++] = {at, static_cast<std::uint16_t>(carried), 0, 0, true, false};
        return true;
      }
      const unsigned choices = kick < kGreedyKicks ? 1 : std::min(n, 1 + kick / kKicksPerChoice);
      unsigned rank = static_cast<unsigned>(rng_() % choices);
      if (kick < kGreedyKicks) {
        // One step ahead: of the kLookahead largest, the largest whose other block has room.
        for (unsigned r = 0; r < kLookahead && r < n; ++r) {
          const unsigned candidate = pocket::value_at(b, n - 1 - r);
          if (kick == 0 && at == p.block && carried >= candidate) break;
          if (has_room(block(alternate(at, candidate)))) {
            rank = r;
            break;
          }
        }
      }
      const unsigned victim = pocket::value_at(b, n - 1 - rank);
      const unsigned old_threshold = pocket::threshold(b);
      if (kick == 0 && at == p.block && carried >= victim) {
        // The new item is the largest: its first block gives it away and keeps everything else.
        pocket::set_threshold(b, std::min(old_threshold, pocket::threshold_unit(carried)));
        walk_[steps++] = {at, 0, 0, static_cast<std::uint16_t>(old_threshold), false, false};
      } else {
        (void)pocket::remove(b, victim);
        pocket::add(b, carried);
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
      if (step.has_added) (void)pocket::remove(b, step.added);
      if (step.has_removed) pocket::add(b, step.removed);
      pocket::set_threshold(b, step.old_threshold);
    }
    return false;
  }

  template <Key K, class Step>
  void run_write_pipeline(std::span<const K> keys, Step&& step) {
    constexpr std::size_t Depth = kWritePipelineDepth;
    const std::size_t n = keys.size();
    Probe ring[Depth];
    const auto stage = [&](std::size_t i) {
      const Probe p = probe_of(hash_key(hasher_, keys[i]));
      __builtin_prefetch(block(p.block), 1, 3);
      ring[i & (Depth - 1)] = p;
    };
    for (std::size_t i = 0; i < n && i < Depth; ++i) stage(i);
    for (std::size_t i = 0; i < n; ++i) {
      const Probe p = ring[i & (Depth - 1)];
      if (i + Depth < n) stage(i + Depth);
      if (!step(p)) return;
    }
  }

  detail::AlignedBuffer blocks_;
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
