// cuckoo/growable/growable_filter.hpp — a cuckoo filter that doubles when it is full, without the
// original keys, with the false-positive rate held near its target and two buckets per lookup.
//
// The idea (InfiniFilter, Dayan et al. SIGMOD 2023; the Taffy cuckoo filter, Apple 2021): when the
// table doubles, every stored fingerprint gives one of its bits to the bucket index, and entries
// inserted later get longer fingerprints, so the old, shortened entries are a shrinking share of
// the table and the sum of everyone's false matches stays bounded.
//
// Addressing. The table has two sides of M = m0·2^g buckets each after g doublings (m0 from the
// starting capacity, any size). A key's 64-bit hash h gives a base bucket B = (h_hi32 · m0) >> 32
// and a bit string w = mix(h) (a bijection of h), read from its most significant bit down. Its
// first bucket is on side 0 at B·2^g + (the top g bits of w), so the children of a first bucket i
// are 2i and 2i + 1; the next bits of w are its fingerprint, and the first fingerprint bit names
// the child when the table doubles.
//
// Slots. A slot of W bits holds an entry whose fingerprint has ℓ ≤ W − 1 bits: the ℓ bits at the
// top, then a 1 (the marker), then zeros; an empty slot is 0. A doubling shifts each entry left by
// one (its top bit goes to the index; the marker climbs), and the wider slots of the next
// generation append zeros. A lookup compares a slot v against the key's next W bits kv only above
// v's marker: they agree there exactly when (v ^ kv) < 2·low, with low = v & −v the marker.
//
// The bare first generation. Until the first doubling every entry has the same length, so the
// marker says nothing; a filter built now (growth::Schedule::kBareFirst) stores generation 0 bare,
// all W_0 bits of fingerprint, and a lookup compares slot and key for equality. The key whose
// W_0 bits are all zero would be the empty slot: it is stored (and looked up) as 1, which, read as
// a marked entry of W_0 + 1 bits, is W_0 − 1 zero bits, so it still matches every key it matched
// (the key ending in 1 shares it; that costs one false-match bit for 2^−(W_0−1) of the keys). The
// first doubling reads each bare v as the marked entry 2v + 1 (1 as 2) of W_0 + 1 bits and moves
// it as it moves every marked entry. Files saved before (kCeiling) keep their marked generation 0.
//
// Second bucket (partial-key cuckoo hashing, paper §3.1, on two sides as in the Taffy filter).
// Its tag t is the first k fingerprint bits of the entry now (they slide down w as the table
// grows, so the entries of one bucket keep 2^k different second buckets at every size):
//
//     second = side 1, ((B + H(t)) mod m0)·2^g + (top g bits of w) ⊕ (low g bits of X(t)),
//
// with the same entry stored there. The side tells an entry whether it sits in its first or its
// second bucket, so either can be computed from the other (H and X come from a table of 2^k).
// An entry that has fewer than k bits left cannot know its tag: it is pinned to its first bucket
// (displacement never picks it), and those are the entries older than about L_0 − k doublings,
// a few per cent of the table.
//
// Doubling. Every entry is taken back to its first bucket, moves to the child its leading bit
// names, and is placed in the new table as an insert would place it (first the child, then the
// second bucket under the new tag, then displacement). The table is rebuilt in one pass with no
// key; a doubling that cannot place everything (or get memory) leaves the filter as it was.
//
// Fingerprint lengths and the false-positive rate. Let f = ceil(log2(2b/ε)), the fixed filter's
// width for target ε. Slots after g doublings are W_g = f + 2 + ω_g bits, with the widening
// ω_g = floor(log2(16(g + 1)/15)): floor(log2(g + 1)), but one more at g = 14, 29 and 30 (why
// under "Memory"). An entry inserted in generation j ≥ 1 compares L_j = W_j − 1 = f + 1 + ω_j
// bits (the marker takes one), generation 0's bare entries L_0 = W_0 = f + 2, and every entry
// loses one bit per doubling. Just before the next doubling of generation g, with the table at
// load α, generation 0 holds a share 2^−g of the items at L_0 − g bits and generation j ≥ 1 a
// share 2^−(g−j+1) at L_j − (g − j) bits, so a negative lookup, which sees 2bα entries, matches
//
//     FPR(g) ≈ 2bα·2^−L_0 + Σ_{j=1..g} bα·2^−L_j = (2bα·2^−f)·(1/4 + (1/4)·Σ_{j=1..g} 2^−ω_j)
//
// Each octave of generations (j + 1 = 2^k .. 2^(k+1) − 1) adds at most 1 to the sum (a part of
// one at most its part), and 2bα·2^−f ≤ ε, so FPR ≤ ε·(1 + octaves)/4: held under ε for the
// first 14 doublings (16384×, three octaves), and then it gives way slowly — 1.031·2bα·2^−f at
// 17 doublings (10^5×; 0.977ε for ε = 0.001, b = 4 at α = 0.97), at most 1.25ε at 31.
// expected_fpr() sums the same terms over the entries actually stored; the tests hold measured
// rates to it.
//
// Memory. The table holds b·m0·2^g slots of W_g bits: the fixed filter's f plus one bit of
// precision and one of length (the marker; generation 0 spends both on precision), plus the
// widening ω_g < log2(1 + g) + 0.1. Just before a doubling at load α a table spends W_g/α bits
// per item, within issue 14's bound f/α_fixed + 2 + log2(1 + g) once α ≥ W_g/(that bound): at
// most 0.965 for b = 4 (α_fixed = 0.935, f ≥ 11, any g ≤ 31; 0.961 for f = 13), which the next
// paragraph makes the load it doubles at. The early bit at g = 14 (19 bits for f = 13 where
// floor(log2(g + 1)) gives 18) costs 1/0.96 bits per item in that one generation, within the
// bound, and keeps the rate at 17 doublings 2.3% under ε instead of 0.8%.
//
// When it doubles. A b = 4 table fills to 0.966-0.978 before a search fails, but the last few
// per cent cost most: from 0.95 on most inserts find both buckets full, and their searches fail
// and end in random walks (from 95% to the failure, 4% of a generation's keys, took a third of
// its time). So an insert whose two buckets are full doubles the table at once when the table
// holds grow_at_ items: the least at which its bytes per item are within the bound above, but no
// fewer than 0.95 of the slots (growth::early_growth_size). For b = 4 that is 0.95-0.965 (f ≥ 11,
// g ≤ 31), for b = 8 0.95-0.987; b = 2 tables (which fail near 0.9), and tables whose search fails
// first, double when it fails. Doubling early costs memory only up to the bound and
// lowers the rate (it scales with α); if the doubling cannot happen (a memory limit, the last
// doubling), the insert searches as below grow_at_, so a filter that cannot grow still fills.
// Why a bare generation 0 and these widths, not the first schedule (growth::Schedule::kCeiling,
// files saved before 2026-12-04: W_g = f + 2 + ceil(log2(g + 1)), every generation marked,
// FPR ≤ ε·(1/2 + octaves/8)): its widths run up to a bit past the bound after every doubling
// where g + 1 is not a power of two, and no whole-bit schedule with a marked generation 0 keeps
// both bounds past 10 doublings at the loads b = 4 reaches (docs/growth_schedules.py). A bare
// generation 0 halves its share of the rate (1/2 → 1/4), which pays for the narrower widths'
// faster-growing sum through 17 doublings.
//
// Entries that run out of bits. An entry of generation 0 has no bits left after L_0 doublings; at
// the next it is copied into both children (it cannot know which one its key names), each copy
// pinned and matching its subtree's keys. Such copies are a 2^−L_0 share of the table. Erasing a
// key whose entry has been copied removes the copy in its own buckets; the others stay as
// false-positive-only residue.
//
// Deletes remove, of the entries in a key's two buckets that match it, the one with the longest
// fingerprint (InfiniFilter's rule). If entries X (ℓ_X bits) and Y (ℓ_Y ≥ ℓ_X) both match a key,
// they agree with it, and so with each other, on their first ℓ_X bits: removing Y leaves X, which
// matches every key Y matched. So an erase of an inserted key never causes a false negative.
//
// Limits, documented and checked: at most 31 doublings, slots of at most 32 bits, a memory limit
// set with set_memory_limit(), and at most 2b copies of one key (a pair of full buckets of the
// same fingerprint cannot be split by doubling). Past any of them insert() returns false and
// changes nothing. The base width f is at least 11: a target ε that derives a narrower one is
// served at f = 11, so that the tag has k = 6 bits or more (see kMinBaseBits).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cuckoo/config.hpp"
#include "cuckoo/detail/endian.hpp"
#include "cuckoo/detail/key_forwarding.hpp"
#include "cuckoo/detail/path_search.hpp"
#include "cuckoo/detail/prefetch_pipeline.hpp"
#include "cuckoo/detail/rng.hpp"
#include "cuckoo/detail/vector_probes.hpp"
#include "cuckoo/hash.hpp"
#include "cuckoo/sizing.hpp"
#include "cuckoo/table/packed_table.hpp"

#if CUCKOO_HAS_X86_VECTOR_PATHS
#include <immintrin.h>
#endif

namespace cuckoo {

namespace growth {
/// Most doublings a growable filter makes (its bucket index then has 31 bits of w).
inline constexpr unsigned kMaxDoublings = 31;
/// Widest slot: the packed table's widest entry.
inline constexpr unsigned kMaxSlotBits = 32;
/// Bits of w that choose a key's alternate (2^k alternates per bucket, as an f = 8 filter has).
inline constexpr unsigned kTagBits = 8;
/// Narrowest base width f: a growable filter of a larger target ε uses f = 11 (so L_0 = 12 and
/// k = 6). Narrower tags leave too few alternates: at k = 4 a b = 2 table filled to only 0.73
/// after 8 doublings, against 0.89 at k = 6.
inline constexpr unsigned kMinBaseBits = 11;
/// Entries the stash holds at most. It is empty in nearly every filter; lookups check it only
/// when it is not.
inline constexpr std::size_t kStashSlots = 16;

/// How slot widths grow with the doublings, and whether generation 0 carries a marker. Files
/// record it (io/format.hpp); filters built now use kBareFirst, files saved before it kCeiling.
enum class Schedule : std::uint32_t {
  /// W_g = f + 2 + ceil(log2(g + 1)), every entry marked (L_g = W_g − 1): the first schedule.
  kCeiling = 0,
  /// W_g = f + 2 + floor(log2(16(g + 1)/15)); generation 0 is stored bare, without a marker,
  /// while it is alone in the table (L_0 = W_0 = f + 2), later generations marked
  /// (L_g = W_g − 1). See the header essay, "Fingerprint lengths" and "Memory".
  kBareFirst = 1,
};
inline constexpr Schedule kNewestSchedule = Schedule::kBareFirst;

constexpr unsigned ceil_log2(unsigned x) noexcept {
  return x <= 1 ? 0 : static_cast<unsigned>(std::bit_width(x - 1));
}
constexpr unsigned floor_log2(unsigned x) noexcept {
  return x == 0 ? 0 : static_cast<unsigned>(std::bit_width(x)) - 1;
}
/// Bits the slots widen by after g doublings: ceil(log2(g + 1)), or floor(log2(16(g + 1)/15)),
/// which is floor(log2(g + 1)) but one more from g + 1 = 15/16 of a power of two on (g = 14, 29,
/// 30). Integers only: the widths are part of the file format.
constexpr unsigned widening(unsigned generation, Schedule schedule) noexcept {
  return schedule == Schedule::kCeiling ? ceil_log2(generation + 1)
                                        : floor_log2(16 * (generation + 1) / 15);
}
/// Whether generation g's table holds its entries bare (generation 0 of a kBareFirst filter).
constexpr bool bare(unsigned generation, Schedule schedule) noexcept {
  return schedule == Schedule::kBareFirst && generation == 0;
}
/// Slot width after g doublings: W_g = f + 2 + widening.
constexpr unsigned slot_bits(unsigned base_bits, unsigned generation, Schedule schedule) noexcept {
  return base_bits + 2 + widening(generation, schedule);
}
/// Bits an entry inserted in generation g compares: L_g = W_g − 1 (the marker), or W_0 for a
/// bare generation 0.
constexpr unsigned compared_bits(unsigned base_bits, unsigned generation,
                                 Schedule schedule) noexcept {
  return slot_bits(base_bits, generation, schedule) - (bare(generation, schedule) ? 0 : 1);
}
/// The bound of the header essay at full load (α = 1): 2b·2^−L_0 + Σ_{j=1..g} b·2^−L_j.
inline double fpr_bound(unsigned bucket_size, unsigned base_bits, unsigned generation,
                        Schedule schedule) noexcept {
  const auto term = [&](unsigned j) {
    return std::ldexp(1.0, -static_cast<int>(compared_bits(base_bits, j, schedule)));
  };
  double sum = 2.0 * bucket_size * term(0);
  for (unsigned j = 1; j <= generation; ++j) sum += bucket_size * term(j);
  return sum;
}
/// Issue 14's memory bound for the table of generation g, in bits per item just before it
/// doubles: the fixed filter's f / α_fixed (its design load for large tables) + 2 + log2(1 + g).
inline double bits_per_item_bound(unsigned bucket_size, unsigned base_bits,
                                  unsigned generation) noexcept {
  const double fixed =
      base_bits / design_load(bucket_size, base_bits, std::numeric_limits<double>::infinity());
  return fixed + 2 + std::log2(1.0 + generation);
}
/// Lowest load at which a table doubles before an insert's search has failed (see the header
/// essay, "When it doubles"). Below it the inserts' searches are short, so doubling earlier would
/// spend memory for little time.
inline constexpr double kEarliestGrowthLoad = 0.95;
/// The item count from which an insert whose two buckets are full doubles the table instead of
/// searching: the first at which the table's bytes per item are within bits_per_item_bound, but
/// not below kEarliestGrowthLoad; SIZE_MAX where that count would be past the slots (the table
/// then doubles only when a search fails, as b = 2 tables and files of Schedule::kCeiling do).
inline std::size_t early_growth_size(std::size_t table_bytes, std::uint64_t slots,
                                     unsigned bucket_size, unsigned base_bits,
                                     unsigned generation) noexcept {
  const double within_bound = std::ceil(8.0 * static_cast<double>(table_bytes) /
                                        bits_per_item_bound(bucket_size, base_bits, generation));
  const double at =
      std::max(within_bound, std::ceil(kEarliestGrowthLoad * static_cast<double>(slots)));
  return at < static_cast<double>(slots) ? static_cast<std::size_t>(at)
                                         : std::numeric_limits<std::size_t>::max();
}
/// murmur3's 64-bit finalizer: a bijection, so w keeps all 64 bits of the hash's entropy.
constexpr std::uint64_t mix(std::uint64_t h) noexcept {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 33);
}
/// Where tag t's entries go on the second side: base_offset H(t) in [0, m0), the starting
/// bucket's shift on that side, and flip X(t), whose low g bits flip the extension bits. A pure
/// function of (t, m0): the filter keeps it in a table of 2^k for its scalar paths, and the
/// eight-key batch stage computes it in lanes (alternation_of_tags, below).
struct TagAlternation {
  std::uint64_t base_offset;  // H(t), in [0, m0)
  std::uint64_t flip;         // X(t); its low g bits flip the extension bits
};
inline constexpr std::uint64_t kAlternationSalt = 0x243F6A8885A308D3ull;
constexpr TagAlternation alternation_of_tag(std::uint64_t tag,
                                            std::uint64_t base_buckets) noexcept {
  const std::uint64_t mixed = mix(tag ^ kAlternationSalt);
  return {((mixed >> 32) * base_buckets) >> 32, mix(mixed)};
}
#if CUCKOO_HAS_X86_VECTOR_PATHS
// The same two functions in eight 64-bit lanes, for the AVX-512 batch stage (a template over the
// word type would be compiled without the target and warn of the vector ABI, -Wpsabi).
// tests/unit/test_growable_vector_probes.cpp holds the lanes to the scalar answers.
CUCKOO_VECTOR_PROBES_FN detail::VectorLanes mix_lanes(detail::VectorLanes h) noexcept {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 33);
}
struct TagAlternationLanes {
  detail::VectorLanes base_offset;
  detail::VectorLanes flip;
};
CUCKOO_VECTOR_PROBES_FN TagAlternationLanes
alternation_of_tags(detail::VectorLanes tags, std::uint64_t base_buckets) noexcept {
  const detail::VectorLanes mixed = mix_lanes(tags ^ kAlternationSalt);
  return {((mixed >> 32) * base_buckets) >> 32, mix_lanes(mixed)};
}
#endif
}  // namespace growth

/// The shape of a growable filter's table, as a file stores it: the base width f, the buckets per
/// side of the starting table (m0) and the doublings since.
struct GrowableGeometry {
  unsigned base_bits = 13;
  std::uint64_t base_buckets = 1;
  unsigned doublings = 0;
  growth::Schedule schedule = growth::kNewestSchedule;
};

/// An entry held outside the table: its first bucket and its slot value.
struct StashedEntry {
  std::uint64_t first = 0;
  std::uint32_t value = 0;
};

/// A growable cuckoo filter with kSlots entries per bucket (2, 4 or 8). Not thread-safe.
///
/// `Hash` is any Hasher; the filter keeps its seed, so equal Configs give equal filters.
/// `kIsaLevel` (detail/isa.hpp) chooses the lookup's compare: at kAvx2, b = 4 filters with slots
/// of at most 30 bits compare both buckets in vector lanes (pair_matches_avx2), at kAvx512 in one
/// register (LaneView::pair_matches), every other shape and level slot by slot; at kAvx512 batch
/// lookups of 8-byte integer keys also stage eight keys at once (LaneView::stage). By default
/// what the translation unit's flags enable; the facade holds the AVX-512, AVX2 and portable b = 4
/// filters and picks the CPU's at run time. Every level holds the same bytes and gives the same
/// answers (tests/unit/test_isa_dispatch.cpp).
template <unsigned kSlots, Hasher Hash = Xxh3Hasher, Isa kIsaLevel = kCompiledIsa>
class BasicGrowableFilter
    : public detail::KeyForwarding<BasicGrowableFilter<kSlots, Hash, kIsaLevel>> {
  using KeyForwarding = detail::KeyForwarding<BasicGrowableFilter>;
  static_assert(kSlots == 2 || kSlots == 4 || kSlots == 8, "bucket size must be 2, 4 or 8");
  static_assert(CUCKOO_HAS_X86_VECTOR_PATHS || kIsaLevel == Isa::kPortable,
                "vector compares exist for x86-64 only");

 public:
  using table_type = PackedTable<kSlots, 0, kIsaLevel>;
  static constexpr unsigned kBucketSize = kSlots;

  /// Starts at cfg.capacity and holds cfg.target_fpr (or the rate of cfg.fingerprint_bits) as it
  /// grows. Throws std::invalid_argument on a Config that cannot work, or one with semi_sort.
  explicit BasicGrowableFilter(const Config& cfg = {})
      : BasicGrowableFilter(checked_layout(cfg), cfg) {}

  /// An empty filter of an exact geometry, for loaders; the geometry must have been checked (see
  /// io/format.hpp). `initial_capacity` is the starting capacity.
  BasicGrowableFilter(const GrowableGeometry& geometry, std::size_t initial_capacity,
                      unsigned max_kicks, std::uint64_t seed)
      : BasicGrowableFilter(geometry, initial_capacity, max_kicks, seed,
                            table_type(geometry.base_buckets << (geometry.doublings + 1),
                                       growth::slot_bits(geometry.base_bits, geometry.doublings,
                                                         geometry.schedule))) {}
  /// The same over table storage it does not own (a memory-mapped file), which must outlive it.
  BasicGrowableFilter(const GrowableGeometry& geometry, std::size_t initial_capacity,
                      unsigned max_kicks, std::uint64_t seed, detail::ExternalStorage storage)
      : BasicGrowableFilter(
            geometry, initial_capacity, max_kicks, seed,
            table_type(geometry.base_buckets << (geometry.doublings + 1),
                       growth::slot_bits(geometry.base_bits, geometry.doublings, geometry.schedule),
                       storage)) {}

  // ---- Single-key operations -----------------------------------------------------------------

  // detail::KeyForwarding: key -> its hash -> the *_hash call. insert doubles the table when it is
  // full and fails, with the set unchanged, only past a documented limit (see the header) or when
  // memory cannot be had; erase removes the longest matching entry of key's two buckets.
  using KeyForwarding::contains;
  using KeyForwarding::count;
  using KeyForwarding::erase;
  using KeyForwarding::insert;

  bool insert_hash(std::uint64_t hash) {
    Probe p = probe_of(hash);
    // The second bucket's line is fetched while the first is tried (as BasicFilter does), so an
    // insert that needs it waits for one miss, not two in a row.
    prefetch_bucket<3>(p.second);
    // place() with its two common cases written here, where they inline into the caller's loop
    // (a new entry is never pinned): 3*10^7 inserts from capacity 1000, three alternating rounds,
    // 210-225 ns per insert against 231-246 through the out-of-line place().
    const std::uint32_t v = entry_of(p.key);
    if (table_.try_place(p.first, v) || table_.try_place(p.second, v)) return ++size_, true;
    return insert_displacing(p, v, hash);
  }

  bool contains_hash(std::uint64_t hash) const noexcept { return contains_probe(probe_of(hash)); }

  bool erase_hash(std::uint64_t hash) noexcept {
    const Probe p = probe_of(hash);
    std::uint64_t best_bucket = 0;
    unsigned best_slot = kSlots;
    std::uint32_t best_low = 0;
    for (const std::uint64_t bucket : {p.first, p.second}) {
      const auto entries = slots_of(bucket);
      for (unsigned s = 0; s < kSlots; ++s) {
        const std::uint32_t low = entries[s] & (0u - entries[s]);
        if (matches(entries[s], p.key) && (best_slot == kSlots || low < best_low)) {
          best_bucket = bucket, best_slot = s, best_low = low;
        }
      }
    }
    std::size_t best_stashed = stash_.size();
    for (std::size_t i = 0; i < stash_.size(); ++i) {
      const std::uint32_t v = stash_[i].value, low = v & (0u - v);
      if (stash_[i].first == p.first && matches(v, p.key) &&
          ((best_slot == kSlots && best_stashed == stash_.size()) || low < best_low)) {
        best_stashed = i, best_low = low;
      }
    }
    if (best_stashed != stash_.size()) {
      stash_.erase(stash_.begin() + static_cast<std::ptrdiff_t>(best_stashed));
    } else if (best_slot != kSlots) {
      table_.write(best_bucket, best_slot, 0);
    } else {
      return false;
    }
    --size_;
    return true;
  }

  std::size_t count_hash(std::uint64_t hash) const noexcept { return count_probe(probe_of(hash)); }

  // ---- Batches: the same answers as the single-key calls, in order ---------------------------

  /// out[i] = contains(keys[i]); out.size() must be at least keys.size(). A software pipeline, as
  /// BasicFilter's: key i is hashed and its buckets prefetched kLookupDepth keys before it is
  /// probed, so that its misses overlap those of the keys in between.
  /// The compare's form (bare or marked) is chosen once per batch, not per key.
  template <Key K>
  void contains(std::span<const K> keys, std::span<bool> out) const noexcept {
    if (bare_) [[unlikely]] {
      contains_pipelined<true>(keys, out);
    } else {
      contains_pipelined<false>(keys, out);
    }
  }

  /// out[i] = count(keys[i]); out.size() must be at least keys.size(). The same pipeline.
  template <Key K>
  void count(std::span<const K> keys, std::span<std::size_t> out) const noexcept {
    run_lookups(keys, reach_,
                [&](const auto&, std::size_t i, const Probe& p) { out[i] = count_probe(p); });
  }

  /// Inserts keys in order and stops at the first that does not fit; returns how many went in.
  /// Key i is hashed and its two buckets prefetched kWriteDepth keys before it is inserted, so
  /// that its misses overlap the inserts in between. The insert itself starts again from the
  /// hash: a doubling in between changes where the key goes, and then the prefetch was wasted.
  template <Key K>
  std::size_t insert(std::span<const K> keys) {
    return for_each_prefetched(keys, [this](std::uint64_t hash) { return insert_hash(hash); });
  }
  /// Erases each key once; returns how many were found.
  template <Key K>
  std::size_t erase(std::span<const K> keys) noexcept {
    std::size_t found = 0;
    for_each_prefetched(keys, [&](std::uint64_t hash) {
      found += erase_hash(hash);
      return true;
    });
    return found;
  }

  // ---- Shape and state -----------------------------------------------------------------------

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  /// Items the current table is sized for: the starting capacity times 2^doublings.
  std::size_t capacity() const noexcept { return initial_capacity_ << generation_; }
  std::size_t initial_capacity() const noexcept { return initial_capacity_; }
  /// Buckets on both sides.
  std::uint64_t bucket_count() const noexcept { return 2 * side_buckets_; }
  /// Buckets of the starting table (both sides).
  std::uint64_t initial_bucket_count() const noexcept { return 2 * base_buckets_; }
  std::uint64_t slot_count() const noexcept { return bucket_count() * kSlots; }
  double load_factor() const noexcept {
    return static_cast<double>(size_) / static_cast<double>(slot_count());
  }
  unsigned bucket_size() const noexcept { return kSlots; }
  std::size_t memory_bytes() const noexcept {
    return table_.memory_bytes() + stash_.capacity() * sizeof(Stashed);
  }
  /// Times the table has doubled.
  unsigned doublings() const noexcept { return generation_; }
  /// The fixed filter's width f for the target rate; the widths below derive from it.
  unsigned base_fingerprint_bits() const noexcept { return base_bits_; }
  /// Bits an entry inserted now compares (L_g).
  unsigned fingerprint_bits() const noexcept {
    return growth::compared_bits(base_bits_, generation_, schedule_);
  }
  /// Bits the oldest entries still compare (0 once generation 0 has run out).
  unsigned shortest_fingerprint_bits() const noexcept {
    const unsigned first = growth::compared_bits(base_bits_, 0, schedule_);
    return generation_ >= first ? 0 : first - generation_;
  }
  /// How the widths grow (growth::Schedule): kBareFirst for filters built now, kCeiling for files
  /// saved before it.
  growth::Schedule schedule() const noexcept { return schedule_; }
  /// Width of a slot now (W_g = L_g + 1, or L_0 while generation 0 is bare).
  unsigned slot_bits() const noexcept { return slot_bits_; }
  /// Fingerprint bits that choose a second bucket (k); entries with fewer left are pinned.
  unsigned tag_bits() const noexcept { return tag_bits_; }
  std::uint64_t seed() const noexcept { return seed_; }
  /// The seeded key hasher: hash_key(hasher(), key) is what the *_hash calls take.
  const Hash& hasher() const noexcept { return hasher_; }
  unsigned max_kicks() const noexcept { return max_kicks_; }
  const table_type& table() const noexcept { return table_; }
  GrowableGeometry geometry() const noexcept {
    return {base_bits_, base_buckets_, generation_, schedule_};
  }
  /// The table's layout now: both sides' buckets, the base width f, b.
  Layout layout() const noexcept { return {bucket_count(), base_bits_, kSlots, false}; }
  /// The stash's entries, for savers.
  std::span<const StashedEntry> stash() const noexcept { return stash_; }
  /// Restarts the kick walk's random choices from `state` (see BasicFilter::reseed_kick_walk).
  void reseed_kick_walk(std::uint64_t state) noexcept { rng_ = detail::SplitMix64(state); }

  // For loaders (cuckoo/io/serialize.hpp): the table's storage, the item count and the stash as a
  // file holds them. The stash must have at most kStashSlots entries with first buckets on side 0.
  table_type& mutable_table() noexcept { return table_; }
  void set_size_unchecked(std::size_t size) noexcept { size_ = size; }
  void set_stash_unchecked(std::span<const StashedEntry> entries) {
    stash_.assign(entries.begin(), entries.end());
  }
  static constexpr std::size_t kStashSlots = growth::kStashSlots;

  /// Caps the table's size in bytes (0: no cap). A doubling past it does not happen, and the
  /// insert that needed it returns false with the set unchanged.
  void set_memory_limit(std::size_t bytes) noexcept { memory_limit_ = bytes; }
  std::size_t memory_limit() const noexcept { return memory_limit_; }

  /// The false-positive rate the header's arithmetic predicts for the entries stored now: a random
  /// absent key has one bucket on each side, and an entry of ℓ bits there matches it with
  /// probability 2^−ℓ. Reads the whole table.
  double expected_fpr() const noexcept {
    double sum = 0;
    for (std::uint64_t bucket = 0; bucket < bucket_count(); ++bucket) {
      for (const std::uint32_t v : table_.entries(bucket)) {
        if (v != 0) sum += std::ldexp(1.0, -static_cast<int>(length_of(v)));
      }
    }
    for (const Stashed& e : stash_) sum += std::ldexp(1.0, -static_cast<int>(length_of(e.value)));
    return sum / static_cast<double>(side_buckets_);
  }

  /// Empties the filter; the grown table is kept.
  void clear() noexcept {
    table_.clear();
    stash_.clear();
    size_ = 0;
  }

  /// Entries held outside the table (see the header: at most kStashSlots).
  std::size_t stash_size() const noexcept { return stash_.size(); }

 private:
  /// Entries a doubling takes from the old table, prefetching their children's lines, before it
  /// places the first of them.
  static constexpr std::size_t kMovesAhead = 32;
  /// Keys a batch lookup hashes and prefetches ahead of the one it probes (a power of two).
  static constexpr std::size_t kLookupDepth = 32;
  /// The same for batch inserts and erases (the fixed filter's kWritePipelineDepth).
  static constexpr std::size_t kWriteDepth = 16;

  /// Calls apply(hash) for each key in order, key i's buckets prefetched (into L1, for writing)
  /// kWriteDepth keys before; stops when apply returns false. Returns how many returned true.
  template <Key K, class Apply>
  std::size_t for_each_prefetched(std::span<const K> keys, Apply apply) {
    return detail::run_prefetch_pipeline<kWriteDepth>(
        keys.size(),
        [&](std::size_t i) {
          const std::uint64_t hash = hash_key(hasher_, keys[i]);
          const Probe p = probe_of(hash);
          prefetch_bucket<3>(p.first);
          prefetch_bucket<3>(p.second);
          return hash;
        },
        [&](std::size_t, std::uint64_t hash) { return apply(hash); });
  }
  /// Doublings an entry of generation 0 stays movable: k = L_0 − 6, at most kTagBits, so pinned
  /// entries are at most about 2^−6 of the table (more would lower the load it reaches, b = 2
  /// first).
  static constexpr unsigned kUnpinnedDoublings = 6;
  /// Buckets the breadth-first insert search visits at most (the fixed filter's figure).
  static constexpr std::size_t kSearchNodes = 176;
  struct Probe {
    std::uint64_t first, second;
    std::uint32_t key;  // the key's next slot_bits_ bits of w, as a slot compares them
  };
  using Alternation = growth::TagAlternation;
  using Stashed = StashedEntry;
  struct Displacement {
    std::uint64_t bucket;
    unsigned slot;
    std::uint32_t victim;  // the entry the walk took out of (bucket, slot)
  };

  static Layout checked_layout(const Config& cfg) {
    if (cfg.semi_sort) detail::invalid("growable filters do not support semi_sort");
    Layout layout = plan(cfg);
    layout.fingerprint_bits = std::max(layout.fingerprint_bits, growth::kMinBaseBits);
    if (growth::slot_bits(layout.fingerprint_bits, 0, growth::kNewestSchedule) >
        growth::kMaxSlotBits) {
      detail::invalid("a growable filter needs f + 2 bits per slot; f = " +
                      std::to_string(layout.fingerprint_bits) + " leaves no room in 32");
    }
    if (layout.bucket_size != kSlots) {
      detail::invalid("bucket_size does not match this filter type");
    }
    return layout;
  }

  BasicGrowableFilter(const Layout& layout, const Config& cfg)
      : BasicGrowableFilter(
            {layout.fingerprint_bits, layout.bucket_count / 2, 0, growth::kNewestSchedule},
            cfg.capacity, cfg.max_kicks, cfg.seed) {}

  BasicGrowableFilter(const GrowableGeometry& geometry, std::size_t initial_capacity,
                      unsigned max_kicks, std::uint64_t seed, table_type&& table)
      : base_bits_(geometry.base_bits),
        base_buckets_(geometry.base_buckets),
        side_buckets_(base_buckets_),
        schedule_(geometry.schedule),
        slot_bits_(growth::slot_bits(base_bits_, 0, schedule_)),
        table_(std::move(table)),
        hasher_(seed),
        rng_(seed ^ 0x6A09E667F3BCC908ull),
        seed_(seed),
        initial_capacity_(initial_capacity),
        max_kicks_(max_kicks),
        walk_(max_kicks) {
    const unsigned first = growth::compared_bits(base_bits_, 0, schedule_);
    tag_bits_ = std::min(growth::kTagBits, first - kUnpinnedDoublings);
    alternations_.resize(std::size_t{1} << tag_bits_);
    for (std::uint64_t tag = 0; tag < alternations_.size(); ++tag) {
      alternations_[tag] = growth::alternation_of_tag(tag, base_buckets_);
    }
    set_generation(geometry.doublings);
  }

  void set_generation(unsigned generation) noexcept {
    generation_ = generation;
    side_buckets_ = base_buckets_ << generation;
    slot_bits_ = growth::slot_bits(base_bits_, generation, schedule_);
    bare_ = growth::bare(generation, schedule_);
    extension_mask_ = (std::uint64_t{1} << generation) - 1;
    extension_shift_ = generation == 0 ? 0 : 64 - generation;
    // A bare generation 0 has every entry at full length: none is pinned.
    pinned_below_ = bare_ ? ~0u : std::uint32_t{1} << (slot_bits_ - 1 - tag_bits_);
    slot_mask_ = slot_bits_ == 32 ? ~0u : (1u << slot_bits_) - 1;
    reach_ = reach(slot_bits_);
    grow_at_ = growth::early_growth_size(table_type::bytes_for(bucket_count(), slot_bits_),
                                         slot_count(), kSlots, base_bits_, generation);
    for (unsigned k = 0; k < 2 * kSlots; ++k) {
      slot_starts_[k] = (k % kSlots) * slot_bits_ + (k / kSlots) * 512;
    }
  }

  const Alternation& alternation_of(std::uint32_t v) const noexcept {
    return alternations_[v >> (slot_bits_ - tag_bits_)];
  }

  /// The second bucket of an entry whose first bucket is `first` (v must not be pinned).
  std::uint64_t second_of(std::uint64_t first, std::uint32_t v) const noexcept {
    const Alternation& a = alternation_of(v);
    std::uint64_t base = (first >> generation_) + a.base_offset;
    if (base >= base_buckets_) base -= base_buckets_;
    return side_buckets_ + ((base << generation_) | ((first ^ a.flip) & extension_mask_));
  }
  /// The first bucket of an entry stored in its second bucket `second`.
  std::uint64_t first_of(std::uint64_t second, std::uint32_t v) const noexcept {
    return first_of(second, v, generation_);
  }
  /// The same in the geometry of generation g (the doubling reads the old table with it).
  std::uint64_t first_of(std::uint64_t second, std::uint32_t v, unsigned g) const noexcept {
    const Alternation& a =
        alternations_[v >> (growth::slot_bits(base_bits_, g, schedule_) - tag_bits_)];
    const std::uint64_t local = second - (base_buckets_ << g);
    std::uint64_t base = local >> g;
    base = base >= a.base_offset ? base - a.base_offset : base + base_buckets_ - a.base_offset;
    return (base << g) | ((local ^ a.flip) & ((std::uint64_t{1} << g) - 1));
  }
  std::uint64_t partner(std::uint64_t bucket, std::uint32_t v) const noexcept {
    return bucket < side_buckets_ ? second_of(bucket, v) : first_of(bucket, v);
  }
  /// Fewer than k bits left: the entry cannot know its tag and stays in its first bucket.
  bool pinned(std::uint32_t v) const noexcept { return (v & (0u - v)) > pinned_below_; }

  /// A lookup batch's stage: the key's probe, both buckets prefetched into L2.
  template <Key K>
  Probe fetch_for_lookup(const K& key) const noexcept {
    const Probe p = probe_of(hash_key(hasher_, key));
    prefetch_bucket<2>(p.first);
    prefetch_bucket<2>(p.second);
    return p;
  }

  std::size_t count_probe(const Probe& p) const noexcept {
    return count_in(p.first, p.key) + count_in(p.second, p.key) + stash_count(p);
  }

  Probe probe_of(std::uint64_t hash) const noexcept {
    const std::uint64_t base = ((hash >> 32) * base_buckets_) >> 32;
    const std::uint64_t w = growth::mix(hash);
    Probe p;
    p.first = (base << generation_) | ((w >> extension_shift_) & extension_mask_);
    p.key = static_cast<std::uint32_t>((w << generation_) >> (64 - slot_bits_));
    p.second = second_of(p.first, p.key | 1u);
    return p;
  }

  /// A bare entry is never 0 (the empty slot): the key whose W_0 bits are 0 is stored and
  /// compared as 1, which as a marked entry is W_0 − 1 zero bits (see the header essay). Done in
  /// the bare paths only, so that marked lookups, every generation after the first, pay nothing.
  static std::uint32_t bare_key(std::uint32_t kv) noexcept { return std::max(kv, 1u); }
  /// The entry an insert stores for the key bits kv: its marker appended, or bare.
  std::uint32_t entry_of(std::uint32_t kv) const noexcept { return bare_ ? bare_key(kv) : kv | 1u; }
  /// Marked: v matches the key bits kv above v's marker. The bits of v ^ kv above the marker are
  /// all zero exactly when v ^ kv < 2·marker; an empty slot has no marker (2·0 = 0) and matches
  /// nothing. One compare, no branch. Bare: equality with the key made nonzero.
  template <bool kBare>
  static bool matches_as(std::uint32_t v, std::uint32_t kv) noexcept {
    if constexpr (kBare) {
      return v == bare_key(kv);
    } else {
      const std::uint64_t low = v & (0u - v);
      return std::uint64_t{v ^ kv} < 2 * low;
    }
  }
  bool matches(std::uint32_t v, std::uint32_t kv) const noexcept {
    return bare_ ? matches_as<true>(v, kv) : matches_as<false>(v, kv);
  }
  /// Fingerprint bits of a non-empty slot: those above its marker; a bare entry's all, but for
  /// 1, which stands for W_0 − 1 zero bits.
  unsigned length_of(std::uint32_t v) const noexcept {
    if (bare_) return v == 1 ? slot_bits_ - 1 : slot_bits_;
    return slot_bits_ - 1 - static_cast<unsigned>(std::countr_zero(v));
  }

  /// Slot k of `bucket`, from one 8-byte load at its first byte (W ≤ 32 and a shift ≤ 7 fit;
  /// the table's 8 bytes of tail padding cover the last slot). Slot by slot in registers: reading
  /// the bucket as one 76-bit window and shifting it lane by lane cost twice the instructions.
  std::uint32_t slot_at(std::uint64_t bit) const noexcept {
    std::uint64_t word;
    std::memcpy(&word, table_.bytes().data() + (bit >> 3), sizeof word);
    return static_cast<std::uint32_t>(detail::little_endian(word) >> (bit & 7)) & slot_mask_;
  }
  std::array<std::uint32_t, kSlots> slots_of(std::uint64_t bucket) const noexcept {
    std::array<std::uint32_t, kSlots> out;
    const std::uint64_t first = bucket * kSlots * slot_bits_;
    for (unsigned k = 0; k < kSlots; ++k) out[k] = slot_at(first + k * slot_bits_);
    return out;
  }
  template <bool kBare>
  bool bucket_matches(std::uint64_t bucket, std::uint32_t kv) const noexcept {
    const std::uint64_t first = bucket * kSlots * slot_bits_;
    unsigned hit = 0;
    for (unsigned k = 0; k < kSlots; ++k) {
      hit |= matches_as<kBare>(slot_at(first + k * slot_bits_), kv);
    }
    return hit != 0;
  }
  std::size_t count_in(std::uint64_t bucket, std::uint32_t kv) const noexcept {
    std::size_t n = 0;
    for (const std::uint32_t v : slots_of(bucket)) n += matches(v, kv);
    return n;
  }
  /// Prefetches the lines a lookup's compare or an update reads from `bucket`: the bytes from
  /// its first to reach_ past it, which lie in at most two lines. Both are prefetched without a
  /// branch (often the same line twice). Lookups prefetch into L2 (kLocality 2), updates and the
  /// insert search into L1 (3). Measured at 10^8 keys, batched lookups (35-45 ns per key with the
  /// first line only) took 20 ns this way, 25 ns when the second prefetch was taken only where
  /// the window crossed a line, 24 ns when the compare read only the bucket's own bytes with the
  /// second prefetch at its last byte, 26-27 ns when the 16-byte window was moved back inside the
  /// line where the bucket lies (reading only the bucket's own lines, 1 + 10/64 per bucket against
  /// 1 + 15/64) with the bucket's first and last bytes prefetched. Tried again on 2026-12-05
  /// (the window moved back by min(bytes past the line, 16 - the bucket's longest span), two
  /// cmovs per bucket, in both compares): at 10^8 keys batched 11.8 -> 13.3 ns and single-key
  /// 70 -> 96 ns, and the same with the move computed but always 0. The compare's load address
  /// must come from the bucket's bit position alone; the extra line costs less.
  /// Forced inline: GCC 12's mod/ref analysis takes a function whose only effect is a prefetch
  /// for one without effects and deletes its calls (see grow_and_place).
  template <int kLocality>
  CUCKOO_HOT void prefetch_bucket(std::uint64_t bucket) const noexcept {
    const std::byte* first = table_.bytes().data() + (bucket * kSlots * slot_bits_ >> 3);
    __builtin_prefetch(first, 0, kLocality);
    __builtin_prefetch(first + reach_, 0, kLocality);
  }
  /// The bytes from a bucket's first that hold all of its slots, as the AVX-512 compare reads them
  /// in batches: one 8-byte load, an 8- and a 4-byte load, or one 16-byte load. A bucket starts
  /// at bit i·bW, so at a bit offset (i·bW) mod 8 within its first byte: at most 8 minus the
  /// lowest set bit of bW mod 8 (b = 4: 4 for odd W, 0 for even). Why not always 16 bytes: a
  /// bucket's window then crosses into the next line in 15 of 64 positions where its bits cross
  /// in about 10 (W = 19); at 10^8 keys (W = 19) batched lookups took 11.4-11.5 ns with the
  /// 12-byte window against 11.6-11.8 with 16 (README, "Filters that grow").
  static constexpr unsigned window_bytes(unsigned slot_bits) noexcept {
    const unsigned step = (kSlots * slot_bits) & 7;
    const unsigned bits = (step == 0 ? 0 : 8 - (step & (0u - step))) + kSlots * slot_bits;
    return bits <= 64 ? 8 : bits <= 96 ? 12 : 16;
  }
  /// The last byte, counted from a bucket's first, that a compare or an update reads: 15 for the
  /// vector compare's two words, and the last slot's 8-byte load at the worst bit offset for the
  /// scalar compare and the table's updates (which load a group of slots at most as far).
  static unsigned reach(unsigned slot_bits) noexcept {
    const unsigned scalar = ((7 + (kSlots - 1) * slot_bits) >> 3) + 7;
    if (kVectorCompare && slot_bits <= kVectorSlotBits) return std::max(15u, scalar);
    return scalar;
  }
  template <bool kBare, Key K>
  void contains_pipelined(std::span<const K> keys, std::span<bool> out) const noexcept {
    bool* const answers = out.data();
#if CUCKOO_HAS_X86_VECTOR_PATHS
    // The common case decided once per batch: every slot fits the one-register compare and the
    // stash is empty, so a key's answer is that compare alone, through the batch's LaneView, which
    // reads (and prefetches) only the window of bytes that the slots' width needs.
    if constexpr (kVectorCompare512) {
      if (slot_bits_ <= kVectorSlotBits && stash_.empty()) {
        switch (window_bytes(slot_bits_)) {
          case 8:
            return contains_in_lanes<kBare, 8>(keys, answers);
          case 12:
            return contains_in_lanes<kBare, 12>(keys, answers);
          default:
            return contains_in_lanes<kBare, 16>(keys, answers);
        }
      }
    }
#endif
    run_lookups(keys, reach_,
                [this, answers](const auto&, std::size_t i, const Probe& p)
                    CUCKOO_LAMBDA_HOT { answers[i] = contains_probe_as<kBare>(p); });
  }
#if CUCKOO_HAS_X86_VECTOR_PATHS
  template <bool kBare, unsigned kWindow, Key K>
  CUCKOO_HOT void contains_in_lanes(std::span<const K> keys, bool* answers) const noexcept {
    run_lookups(keys, kWindow - 1,
                [answers](const auto& view, std::size_t i, const Probe& p) CUCKOO_LAMBDA_HOT {
                  answers[i] = view.template pair_matches<kBare, kWindow>(p);
                });
  }
#endif
  /// A lookup batch's pipeline: step(view, i, probe) for every key in order, key i's buckets
  /// prefetched kLookupDepth keys before, from each bucket's first byte to `reach` bytes past it.
  /// 8-byte integer keys hashed by XXH3 are staged eight at a time where the level has AVX-512,
  /// through a LaneView in this frame that `view` is (other keys one at a time, `view` then the
  /// filter itself, prefetching to reach_).
  template <Key K, class Step>
  CUCKOO_HOT void run_lookups(std::span<const K> keys, [[maybe_unused]] unsigned reach,
                              Step&& step) const noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS
    if constexpr (detail::kVectorProbes<kIsaLevel, Hash, K>) {
      const K* const in = keys.data();
      const LaneView view = lane_view(reach);
      detail::run_grouped_lookup_pipeline<kLookupDepth>(
          keys.size(),
          [&](std::size_t i, detail::ProbeGroup& group)
              CUCKOO_LAMBDA_HOT { view.stage(in + i, group); },
          [&](const detail::Probe& p) CUCKOO_LAMBDA_HOT {
            view.prefetch(p.bucket);
            view.prefetch(p.alt);
          },
          [&](std::size_t i) CUCKOO_LAMBDA_HOT {
            const Probe p = fetch_for_lookup(in[i]);
            return detail::Probe{p.first, p.second, p.key};
          },
          [&](std::size_t i, const detail::Probe& p) CUCKOO_LAMBDA_HOT {
            step(view, i, Probe{p.bucket, p.alt, p.fingerprint});
          });
      return;
    }
#endif
    detail::run_prefetch_pipeline<kLookupDepth>(
        keys.size(), [&](std::size_t i) { return fetch_for_lookup(keys[i]); },
        [&](std::size_t i, const Probe& p) {
          step(*this, i, p);
          return true;
        });
  }
#if CUCKOO_HAS_X86_VECTOR_PATHS
  /// What the eight-key stage and the one-register compare read of the filter, copied out of it.
  /// A batch holds one in its own frame: GCC then keeps these in registers across the stores of
  /// the answers (bool stores, which may alias the filter and made it reload them from *this for
  /// every key), as BasicFilter's batches do (detail/prober.hpp). A single-key lookup makes one
  /// per call, which compiles to the same loads of the members it uses.
  struct LaneView {
    using Lanes = detail::VectorLanes;
    std::uint64_t bitflip;  // the hasher's Xxh3Hasher::integer_bitflip()
    std::uint64_t base_buckets, side_buckets, extension_mask;
    std::uint64_t generation, extension_shift, slot_bits, tag_bits;
    const std::byte* bytes;  // the table's
    std::uint64_t slot_mask, reach;
    Lanes slot_starts;  // the filter's slot_starts_

    /// probe_of for eight 8-byte integer keys at once, hashed by XXH3: every step of probe_of and
    /// second_of is a 64-bit lane operation, the alternation table's read included: computed as
    /// the table was (growth::alternation_of_tags) rather than gathered, 5% faster batches at
    /// 10^8 keys (README, "Filters that grow").
    /// Why: a batch lookup's time in cache was its instructions, and the stage of one key took
    /// about 120 of the 170 per key (hash, mix, the two buckets, the alternation); see the README,
    /// "Filters that grow", for what it measured. Exactly probe_of's probes:
    /// tests/unit/test_growable_vector_probes.cpp.
    CUCKOO_VECTOR_PROBES_FN void stage(const void* keys, detail::ProbeGroup& out) const noexcept {
      const Lanes h = detail::vector_xxh3_avx512(keys, bitflip);
      const Lanes base = ((h >> 32) * base_buckets) >> 32;
      const Lanes w = growth::mix_lanes(h);
      const std::uint64_t g = generation;
      const Lanes first = (base << g) | ((w >> extension_shift) & extension_mask);
      const Lanes key = (w << g) >> (64 - slot_bits);
      // second_of(first, key | 1), its alternation computed from the entry's tag, not read.
      const auto alternation =
          growth::alternation_of_tags((key | 1u) >> (slot_bits - tag_bits), base_buckets);
      Lanes other = (first >> g) + alternation.base_offset;
      other -= reinterpret_cast<Lanes>(other >= base_buckets) & base_buckets;
      const Lanes second =
          side_buckets + ((other << g) | ((first ^ alternation.flip) & extension_mask));
      std::memcpy(out.bucket, &first, sizeof first);
      std::memcpy(out.alt, &second, sizeof second);
      std::memcpy(out.fingerprint, &key, sizeof key);
    }
    /// prefetch_bucket<2>, a lookup's.
    CUCKOO_HOT void prefetch(std::uint64_t bucket) const noexcept {
      const std::byte* first = bytes + (bucket * kSlots * slot_bits >> 3);
      __builtin_prefetch(first, 0, 2);
      __builtin_prefetch(first + reach, 0, 2);
    }
    /// The kWindow bytes from `at` (8, 12 or 16), zero above them.
    template <unsigned kWindow>
    CUCKOO_AVX512_FN static __m128i window(const std::byte* at) noexcept {
      if constexpr (kWindow == 16) {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
      } else {
        std::uint64_t low;
        std::memcpy(&low, at, sizeof low);
        const __m128i words = _mm_cvtsi64_si128(static_cast<long long>(low));
        if constexpr (kWindow == 8) return words;
        std::uint32_t high;
        std::memcpy(&high, at + 8, sizeof high);
        return _mm_insert_epi32(words, static_cast<int>(high), 2);
      }
    }
    /// Whether p.key matches a slot of either bucket (see `matches`), for b = 4 and slots of at
    /// most 30 bits, both buckets in one 512-bit register: lanes 0-3 the first bucket's slots and
    /// 4-7 the second's. Each bucket's kWindow bytes from its first byte (window_bytes: all its
    /// slots' bits) sit in the low quarter of a register of their own; lane k's slot starts at bit
    /// at[k] of them (k < 4) or of the second (k >= 4, counted from bit 512), and lies within the
    /// 64 bits from the 32-bit word at[k] / 32 (it starts at most 31 bits into that word and is at
    /// most 30 long). So one two-source permute of 32-bit words gives each lane that word and the
    /// next, and one shift cuts the slot out. Where the slot lies in the bucket's last word the
    /// next is past its window (zero, undefined, or the other bucket's): it lands above the slot
    /// and the mask clears it. Measured against the form before (a permute of 64-bit words for the
    /// slot's word, another for the next, a shift pair): in cache 7.65 -> 6.9 ns per batched key,
    /// at 10^8 keys the same (README, "Filters that grow"). Single-key lookups read 16 bytes.
    template <bool kBare, unsigned kWindow = 16>
    CUCKOO_AVX512_FN bool pair_matches(const Probe& p) const noexcept {
      static_assert(kWindow == 8 || kWindow == 12 || kWindow == 16);
      // Intrinsics, and GCC's vector extension where an intrinsic would pass an "undefined"
      // operand (see detail::VectorLanes).
      const std::uint64_t bit1 = p.first * kSlots * slot_bits;
      const std::uint64_t bit2 = p.second * kSlots * slot_bits;
      // Not a masked 64-byte load: that fetched the next line too, and batches took 4x as long.
      const __m512i first = _mm512_castsi128_si512(window<kWindow>(bytes + (bit1 >> 3)));
      const __m512i second = _mm512_castsi128_si512(window<kWindow>(bytes + (bit2 >> 3)));
      const Lanes at = slot_starts + reinterpret_cast<Lanes>(_mm512_mask_set1_epi64(
                                         _mm512_set1_epi64(static_cast<long long>(bit1 & 7)), 0xF0,
                                         static_cast<long long>(bit2 & 7)));
      const Lanes word = at >> 5;
      const Lanes words = (word | (word << 32)) + (std::uint64_t{1} << 32);  // at / 32, then + 1
      const auto pair = reinterpret_cast<Lanes>(
          _mm512_permutex2var_epi32(first, reinterpret_cast<__m512i>(words), second));
      const auto v = reinterpret_cast<__m512i>((pair >> (at & 31)) & slot_mask);
      if constexpr (kBare) {
        return _mm512_cmpeq_epi64_mask(v, _mm512_set1_epi64(bare_key(p.key))) != 0;
      } else {
        // v ^ key < 2 * lowest set bit of v (see `matches`).
        const __m512i lowest = _mm512_and_si512(v, _mm512_sub_epi64(_mm512_setzero_si512(), v));
        return _mm512_cmplt_epu64_mask(_mm512_xor_si512(v, _mm512_set1_epi64(p.key)),
                                       _mm512_add_epi64(lowest, lowest)) != 0;
      }
    }
  };
  CUCKOO_VECTOR_PROBES_FN LaneView lane_view(unsigned reach = 15) const noexcept {
    LaneView view;
    view.bitflip = hasher_.integer_bitflip();
    view.base_buckets = base_buckets_;
    view.side_buckets = side_buckets_;
    view.extension_mask = extension_mask_;
    view.generation = generation_;
    view.extension_shift = extension_shift_;
    view.slot_bits = slot_bits_;
    view.tag_bits = tag_bits_;
    view.bytes = table_.bytes().data();
    view.slot_mask = slot_mask_;
    view.reach = reach;
    std::memcpy(&view.slot_starts, slot_starts_.data(), sizeof view.slot_starts);
    return view;
  }
  /// LaneView::pair_matches over the filter's members.
  template <bool kBare, unsigned kWindow = 16>
  CUCKOO_AVX512_FN bool pair_matches(const Probe& p) const noexcept {
    return lane_view().template pair_matches<kBare, kWindow>(p);
  }
#endif
  /// The bare generation 0 (one table, the smallest) takes a branch of its own, predicted the same
  /// way for every lookup until the first doubling (and taken once per batch); one compare for
  /// both forms would need a mask and an OR per bucket in every generation.
  bool contains_probe(const Probe& p) const noexcept {
    return bare_ ? contains_probe_as<true>(p) : contains_probe_as<false>(p);
  }
  template <bool kBare>
  bool contains_probe_as(const Probe& p) const noexcept {
    // Both buckets, without a branch between them: their loads overlap.
    // The only branch is on the stash being empty, which is predictable; a branch on the answer
    // (an ||) was mispredicted on every mixed stream and cost a quarter of the lookup.
    bool hit = false;
    bool compared = false;
#if CUCKOO_HAS_X86_VECTOR_PATHS
    if constexpr (kVectorCompare512) {
      if (slot_bits_ <= kVectorSlotBits) hit = pair_matches<kBare>(p), compared = true;
    } else if constexpr (kVectorCompare) {
      if (slot_bits_ <= kVectorSlotBits) hit = pair_matches_avx2<kBare>(p), compared = true;
    }
#endif
    if (!compared) {
      const bool in_first = bucket_matches<kBare>(p.first, p.key);
      const bool in_second = bucket_matches<kBare>(p.second, p.key);
      hit = in_first | in_second;  // no branch between the two reads
    }
    if (!stash_.empty()) [[unlikely]]
      hit |= stash_count(p) != 0;
    return hit;
  }
  /// Whether lookups may take the vector compare (b = 4, level kAvx2 or above), for slots of at
  /// most kVectorSlotBits: 7 bits of offset and 4 slots fit the 128 bits from a bucket's first
  /// byte.
  static constexpr bool kVectorCompare = kSlots == 4 && kIsaLevel >= Isa::kAvx2;
  static constexpr unsigned kVectorSlotBits = 30;
  /// At the AVX-512 level the two buckets share one register (LaneView::pair_matches).
  static constexpr bool kVectorCompare512 = kSlots == 4 && kIsaLevel >= Isa::kAvx512;
#if CUCKOO_HAS_X86_VECTOR_PATHS
  // The lookup's compare in vector lanes, for b = 4 and slots of at most 30 bits, so that a
  // bucket lies in the 16 bytes from its first byte. Why: in a single-key loop every instruction
  // that waits for a lookup's lines holds the core's window, and the scalar compare spends about
  // eight per slot (load, shift, mask, lowest bit, xor, compare, or) on eight slots; here the four
  // slots of a bucket are cut out of its two 8-byte words at once (the shift counts depend on the
  // hash only) and matched as `matches` does, lane by lane. Measured in a single-key loop over a
  // 120 MB growable table at 95%: 122 -> 65 ns per key (README, "Filters that grow"). Exactly the
  // scalar answer: tests/unit/test_growable_vector.cpp compares it with count() (scalar) in a
  // build with AVX2.
  template <bool kBare>
  CUCKOO_AVX2_FN bool pair_matches_avx2(const Probe& p) const noexcept {
    const long long w = slot_bits_;
    const std::uint64_t bit1 = p.first * kSlots * slot_bits_;
    const std::uint64_t bit2 = p.second * kSlots * slot_bits_;
    const __m256i slots = _mm256_setr_epi64x(0, w, 2 * w, 3 * w);
    const __m256i at1 =
        _mm256_add_epi64(slots, _mm256_set1_epi64x(static_cast<long long>(bit1 & 7)));
    const __m256i at2 =
        _mm256_add_epi64(slots, _mm256_set1_epi64x(static_cast<long long>(bit2 & 7)));
    const std::byte* bytes = table_.bytes().data();
    const __m256i key = _mm256_set1_epi64x(kBare ? bare_key(p.key) : p.key);
    const __m256i hit = _mm256_or_si256(lanes_match<kBare>(bytes + (bit1 >> 3), at1, key),
                                        lanes_match<kBare>(bytes + (bit2 >> 3), at2, key));
    return _mm256_testz_si256(hit, hit) == 0;
  }
  /// All ones in lane k where the slot at bit at[k] from `from` matches `key` (see `matches`).
  /// Reads 16 bytes from `from`: a bucket's, within the table's 8 bytes of tail padding.
  template <bool kBare>
  CUCKOO_AVX2_FN __m256i lanes_match(const std::byte* from, __m256i at,
                                     __m256i key) const noexcept {
    std::uint64_t lo, hi;
    std::memcpy(&lo, from, sizeof lo);
    std::memcpy(&hi, from + 8, sizeof hi);
    const __m256i low_word = _mm256_set1_epi64x(static_cast<long long>(detail::little_endian(lo)));
    const __m256i high_word = _mm256_set1_epi64x(static_cast<long long>(detail::little_endian(hi)));
    // (high:low) >> at, lane by lane: a variable shift by 64 or more (or "negative") gives 0.
    const __m256i c64 = _mm256_set1_epi64x(64);
    const __m256i v = _mm256_and_si256(
        _mm256_or_si256(_mm256_or_si256(_mm256_srlv_epi64(low_word, at),
                                        _mm256_sllv_epi64(high_word, _mm256_sub_epi64(c64, at))),
                        _mm256_srlv_epi64(high_word, _mm256_sub_epi64(at, c64))),
        _mm256_set1_epi64x(slot_mask_));
    // A bare slot matches a key equal to it (the key made nonzero: bare_key).
    if constexpr (kBare) return _mm256_cmpeq_epi64(v, key);
    // v ^ key < 2 * lowest set bit of v (values below 2^33: the signed compare is exact).
    const __m256i lowest = _mm256_and_si256(v, _mm256_sub_epi64(_mm256_setzero_si256(), v));
    return _mm256_cmpgt_epi64(_mm256_add_epi64(lowest, lowest), _mm256_xor_si256(v, key));
  }
#endif
  [[gnu::noinline, gnu::cold]] std::size_t stash_count(const Probe& p) const noexcept {
    std::size_t n = 0;
    for (const Stashed& e : stash_) n += e.first == p.first && matches(e.value, p.key);
    return n;
  }
  /// place(), or the stash when no walk finds room.
  bool place_or_stash(std::uint64_t first, std::uint32_t v) {
    if (place(first, v)) return true;
    if (stash_.size() == kStashSlots) return false;
    stash_.push_back({first, v});
    return true;
  }
  /// Entries of the key's two buckets that match it, of any length.
  std::size_t matching_entries(const Probe& p) const noexcept {
    return count_in(p.first, p.key) + count_in(p.second, p.key);
  }

  /// An insert whose two buckets are full. From grow_at_ items on the table doubles first (see
  /// "When it doubles" in the header); below it, or when that doubling cannot happen, a
  /// displacement search; a doubling last, when the search fails below grow_at_.
  [[gnu::noinline]] bool insert_displacing(const Probe& p, std::uint32_t v, std::uint64_t hash) {
    // Entries matching the key follow it into the same children: doubling cannot split them.
    const bool early = size_ >= grow_at_ && matching_entries(p) < 2 * kSlots;
    if (early && grow_and_place(hash)) return ++size_, true;
    if (displace(p.first, p.second, v)) return ++size_, true;
    if (early || matching_entries(p) == 2 * kSlots || !grow_and_place(hash)) return false;
    return ++size_, true;
  }

  /// Places entry v whose first bucket is `first`, as an insert does: its first bucket, its second
  /// (unless pinned), then a displacement walk from each. False, with the table unchanged, if it
  /// finds none.
  bool place(std::uint64_t first, std::uint32_t v) noexcept {
    if (table_.try_place(first, v)) return true;
    if (pinned(v)) return kick_walk(first, v);
    const std::uint64_t second = second_of(first, v);
    if (table_.try_place(second, v)) return true;
    return displace(first, second, v);
  }
  /// place() once both buckets of an unpinned entry v are full: a breadth-first search for a
  /// displacement path, then random walks from each bucket.
  [[gnu::noinline]] bool displace(std::uint64_t first, std::uint64_t second,
                                  std::uint32_t v) noexcept {
    if (max_kicks_ > 0 && bfs_place(first, second, v)) return true;
    // A first bucket of pinned entries is a dead end for a walk that starts there.
    return kick_walk(first, v) || kick_walk(second, v);
  }

  /// The table as the breadth-first search sees it: pinned entries look like empty slots, which
  /// the search never moves.
  struct SearchView {
    static constexpr unsigned kBucketSize = kSlots;
    const BasicGrowableFilter* filter;
    std::array<std::uint32_t, kSlots> entries(std::uint64_t bucket) const noexcept {
      auto slots = filter->slots_of(bucket);
      for (auto& v : slots) v = filter->pinned(v) ? 0 : v;
      return slots;
    }
    CUCKOO_HOT void prefetch(std::uint64_t bucket) const noexcept {
      filter->prefetch_bucket<3>(bucket);
    }
    bool has_free(std::uint64_t bucket) const noexcept { return filter->table_.has_free(bucket); }
  };

  /// The fixed filter's breadth-first path search (detail/path_search.hpp): a short path from one
  /// of v's buckets to a free slot, moved along from its free end. An entry keeps its value on
  /// either side, so a move is a copy of the value.
  bool bfs_place(std::uint64_t first, std::uint64_t second, std::uint32_t v) noexcept {
    const std::ptrdiff_t end = detail::find_displacement_path<kSearchNodes, 16 / kSlots>(
        SearchView{this},
        [this](std::uint64_t bucket, std::uint32_t moved) { return partner(bucket, moved); }, first,
        second, v, max_kicks_, search_.data());
    if (end < 0) return false;
    auto n = static_cast<std::size_t>(end);
    (void)table_.try_place(search_[n].bucket, search_[n].moved);
    for (;;) {
      const detail::BfsNode& node = search_[n];
      const detail::BfsNode& parent = search_[static_cast<std::size_t>(node.parent)];
      table_.write(parent.bucket, node.slot, parent.parent < 0 ? v : parent.moved);
      if (parent.parent < 0) return true;
      n = static_cast<std::size_t>(node.parent);
    }
  }

  /// Random-walk displacement that puts `value` into `bucket`; never moves a pinned entry. A walk
  /// that reaches a bucket of pinned entries steps back and picks another victim. On failure
  /// every slot it changed gets its old entry back, in reverse order.
  bool kick_walk(std::uint64_t bucket, std::uint32_t value) noexcept {
    std::uint32_t carried = value;
    unsigned depth = 0;
    for (unsigned step = 0; step < max_kicks_; ++step) {
      const auto entries = slots_of(bucket);
      auto slot = static_cast<unsigned>(rng_() & (kSlots - 1));
      unsigned tries = 0;
      while (tries < kSlots && pinned(entries[slot])) slot = (slot + 1) & (kSlots - 1), ++tries;
      if (tries == kSlots) {  // nothing here can move: take back the last move
        if (depth == 0) break;
        const Displacement& last = walk_[--depth];
        carried = table_.exchange(last.bucket, last.slot, last.victim);
        bucket = last.bucket;
        continue;
      }
      const std::uint32_t victim = table_.exchange(bucket, slot, carried);
      walk_[depth++] = {bucket, slot, victim};
      bucket = partner(bucket, victim);
      carried = victim;
      if (table_.try_place(bucket, carried)) return true;
    }
    while (depth-- > 0) table_.write(walk_[depth].bucket, walk_[depth].slot, walk_[depth].victim);
    return false;
  }

  /// Doubles the table, then places the key of `hash`. Every entry goes back to its first bucket,
  /// on to the child its leading bit names (both children when it has no bits left), and into the
  /// new table as an insert places it. On any failure, the key's placement included, the filter
  /// is left exactly as it was: a refused insert never leaves a doubled table behind.
  bool grow_and_place(std::uint64_t hash) {
    const unsigned next_generation = generation_ + 1;
    if (next_generation > growth::kMaxDoublings) return false;
    const unsigned next_bits = growth::slot_bits(base_bits_, next_generation, schedule_);
    if (next_bits > growth::kMaxSlotBits) return false;
    const std::uint64_t next_buckets = 2 * bucket_count();
    if (memory_limit_ != 0 && table_type::bytes_for(next_buckets, next_bits) > memory_limit_) {
      return false;
    }
    table_type next;
    try {
      next = table_type(next_buckets, next_bits);
    } catch (const std::bad_alloc&) {
      return false;
    }
    table_type previous = std::move(table_);
    table_ = std::move(next);
    std::vector<Stashed> previous_stash = std::move(stash_);
    stash_ = {};
    // A bare entry of generation 0 moves as the marked entry it stands for: its bits, then the
    // marker (1 stands for W_0 − 1 zero bits: the marked 2), in slots one bit wider.
    const bool was_bare = bare_;
    const unsigned old_bits = slot_bits_ + (was_bare ? 1 : 0);
    const std::uint64_t old_side = side_buckets_;
    set_generation(next_generation);
    const auto restore = [&] {
      table_ = std::move(previous);
      stash_ = std::move(previous_stash);
      set_generation(next_generation - 1);
      return false;
    };
    // An old entry v (first bucket `first`) as it goes into the new table: its child, which its
    // leading bit names, and its value there, which is 0 only for an entry with no bits left (v
    // is its marker alone).
    const auto moved = [&](std::uint64_t first, std::uint32_t v) {
      const std::uint64_t marked = was_bare ? (v == 1 ? 2 : (std::uint64_t{v} << 1) | 1) : v;
      const std::uint64_t old_mask = (std::uint64_t{1} << old_bits) - 1;
      const std::uint64_t child = 2 * first + (marked >> (old_bits - 1));
      return StashedEntry{
          child, static_cast<std::uint32_t>(((marked << 1) & old_mask) << (next_bits - old_bits))};
    };
    // Places a moved entry; one with no bits left goes into both children as a copy.
    const auto place_moved = [&](const StashedEntry& e) {
      if (e.value == 0) {
        const std::uint32_t copy = std::uint32_t{1} << (next_bits - 1);
        const std::uint64_t left = e.first & ~std::uint64_t{1};
        return place_or_stash(left, copy) && place_or_stash(left + 1, copy);
      }
      return place_or_stash(e.first, e.value);
    };
    // first_of(…, g − 1) reads the old table; the new geometry places. Side 0 first: its entries
    // land in their children in address order; side 1's land at random, and a child that the
    // side-0 entries already filled sends its entry on to the entry's second bucket, at random
    // again. So the entries go through a rolling pipeline in their order: an entry's child line is
    // prefetched kMovesAhead entries before it is placed, and kMovesAhead / 2 entries before, if
    // that child has no free slot left then, its second bucket's line too. The table is the one
    // that placing them one at a time gives; the pipeline only prefetches.
    std::array<StashedEntry, kMovesAhead> pending;  // moved entries: (child, new value)
    std::size_t taken = 0, placed = 0;
    for (unsigned side = 0; side < 2; ++side) {
      for (std::uint64_t local = 0; local < old_side; ++local) {
        const std::uint64_t bucket = side * old_side + local;
        for (const std::uint32_t v : previous.entries(bucket)) {
          if (v == 0) continue;
          if (taken - placed == kMovesAhead &&
              !place_moved(pending[placed++ & (kMovesAhead - 1)])) {
            return restore();
          }
          const std::uint64_t first = side == 0 ? bucket : first_of(bucket, v, next_generation - 1);
          const StashedEntry m = moved(first, v);
          prefetch_bucket<3>(m.first);
          pending[taken++ & (kMovesAhead - 1)] = m;
          if (taken - placed > kMovesAhead / 2) {
            // Written out, not as a lambda: GCC 12 (-fipa-modref) found that lambda free of
            // effects and deleted its call, and with it the prefetch (none in the disassembly).
            const StashedEntry& e = pending[(taken - 1 - kMovesAhead / 2) & (kMovesAhead - 1)];
            if (e.value != 0 && !table_.has_free(e.first)) {
              prefetch_bucket<3>(second_of(e.first, e.value));
            }
          }
        }
      }
    }
    while (placed < taken) {
      if (!place_moved(pending[placed++ & (kMovesAhead - 1)])) return restore();
    }
    for (const Stashed& e : previous_stash) {
      if (!place_moved(moved(e.first, e.value))) return restore();
    }
    // Right after a doubling a walk fails only when more than 2b entries share the key's bucket
    // pair (its first bucket and tag), or its first bucket holds b pinned entries: the stash.
    const Probe p = probe_of(hash);
    if (!place_or_stash(p.first, entry_of(p.key))) return restore();
    return true;
  }

  unsigned base_bits_;
  std::uint64_t base_buckets_;  // m0: buckets per side in generation 0
  std::uint64_t side_buckets_;  // M = m0·2^g
  growth::Schedule schedule_;
  unsigned slot_bits_;
  table_type table_;
  Hash hasher_;
  detail::SplitMix64 rng_;
  std::uint64_t seed_;
  std::size_t size_ = 0;
  std::size_t initial_capacity_;
  unsigned max_kicks_;
  std::vector<Displacement> walk_;
  std::vector<detail::BfsNode> search_ = std::vector<detail::BfsNode>(kSearchNodes);
  std::vector<Alternation> alternations_;
  unsigned tag_bits_ = 0;
  unsigned generation_ = 0;
  bool bare_ = false;  // growth::bare(generation_, schedule_)
  std::uint64_t extension_mask_ = 0;
  unsigned extension_shift_ = 0;
  std::uint32_t pinned_below_ = 0;
  std::uint32_t slot_mask_ = 0;
  unsigned reach_ = 0;  // see prefetch_bucket
  /// Where lane k's slot starts in LaneView::pair_matches's two buckets, but for the bit offsets.
  alignas(64) std::array<std::uint64_t, 2 * kSlots> slot_starts_{};
  std::size_t memory_limit_ = 0;
  std::size_t grow_at_ = 0;  // growth::early_growth_size for the current table
  std::vector<Stashed> stash_;
};

}  // namespace cuckoo
