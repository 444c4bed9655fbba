// cuckoo/map/basic_approximate_map.hpp — value association (paper §6): a cuckoo filter whose
// entries each carry a value, and whose lookups return the values of every matching fingerprint.
//
// Layout. The fingerprints are a PackedTable exactly as in a plain filter (table/packed_table.hpp),
// so a membership lookup reads the same two bucket lines and nothing else. The values live in a
// separate array parallel to the slots: the value of slot j of bucket i is element i·b + j. A
// displacement (breadth-first path or kick walk) moves a value with its fingerprint, and an erase
// zeroes both, so a map's bytes depend only on its history, never on stale values.
//
// What a lookup returns. find(k) reads k's two buckets and returns the value of every slot whose
// fingerprint equals k's: the values stored with k itself, plus the values of other keys whose
// fingerprint collides with k's in those buckets. A stored key is therefore always found
// (no false negatives, exactly as for membership), and the extra values follow the filter's
// false-match arithmetic: each of the 2b slots of the two buckets holds some other key's
// fingerprint with probability about α (the load), which matches with probability 1 / (2^f − 1),
// so the expected number of extra values per lookup is
//
//     E[extra] = 2·b·α / (2^f − 1)       (≈ 0.0023 for f = 12, b = 4, α = 0.95),
//
// for a stored key and an absent one alike; an absent key gets at least one value with
// probability 1 − (1 − 1/(2^f − 1))^(2bα), the filter's false-positive rate. Among several values
// the caller cannot tell which is its own; when that matters, store a value that can be checked
// (a shard id that the shard confirms, a run id whose run is then searched, as Chucky does).
//
// Lines per lookup. contains() reads the two fingerprint lines. find() reads those, then the
// value line of each matching slot: for a stored key almost always one more line, for an absent
// key almost always none. The batch find runs a two-stage pipeline: fingerprint lines are
// prefetched kPipelineDepth keys ahead, and once a key's fingerprints are compared its first
// matching slot's value line kValueDepth keys ahead (a rarer second match is read on demand).
// Its first stage, and the batch contains' and count's, is the filters' (detail::
// run_lookup_pipeline): integer keys hashed by XXH3 are staged eight at a time where the table's
// level or the build's flags have AVX-512 (batched find 0.83-0.85x the time, map_bench).
// A key's matches are one mask over both buckets' slots (PackedTable::match_mask_pair: one vector
// compare and a movemask per bucket where the table has the aligned vector compare), and stage 2
// hands stage 3 only the first matching slot and the match count, in one word; a key with
// several matches recomputes them from its probe. The first match is selected with arithmetic
// rather than a branch on where it is (first bucket or second: a coin toss for stored keys). A
// first version kept an array of slot indices, written with a store per slot, and ran 3x slower;
// two scalar match masks with a bit extracted per slot, and a select that GCC made a branch,
// cost 1.4x (map_bench, 10^8 keys: 28.1 → 20.5 ns per stored key, 22.9 → 15.5 per absent one).
//
// Memory per item: (f + 8·sizeof(V)) / α bits, i.e. the filter's f/α plus the value width at the
// same load; for f = 12, b = 4, 32-bit values at α = 0.955, 46.1 bits (5.8 bytes) per item.
//
// Template parameters:
//   Table  PackedTable<b> or PackedTable<b, f> (slots that never move inside a bucket, which the
//          parallel value array relies on; semi-sorted tables reorder and are not accepted).
//   V      a trivially copyable, default-constructible value type, stored by its object
//          representation (memcpy): a saved map reads back only on machines with the same
//          representation (all integer types on little-endian machines).
//   Hash   a seeded 64-bit hasher (hash.hpp); XXH3 by default.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuckoo/addressing.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/detail/aligned_buffer.hpp"
#include "cuckoo/detail/key_forwarding.hpp"
#include "cuckoo/detail/path_search.hpp"
#include "cuckoo/detail/prefetch_pipeline.hpp"
#include "cuckoo/detail/prober.hpp"
#include "cuckoo/detail/rng.hpp"
#include "cuckoo/detail/vector_probes.hpp"
#include "cuckoo/hash.hpp"
#include "cuckoo/sizing.hpp"

namespace cuckoo {

namespace detail {
/// The layout of an approximate map for `cfg` (plan()'s), refusing what a map cannot be: a
/// growable one (values would have to follow every doubling's rebuild) or a semi-sorted one (its
/// buckets reorder slots, and values need fixed slots).
inline Layout approximate_map_layout(const Config& cfg) {
  if (cfg.growable) invalid("an approximate map cannot be growable");
  if (cfg.semi_sort) invalid("an approximate map cannot be semi-sorted");
  if (cfg.blocked) invalid("an approximate map cannot be blocked (yet)");
  return plan(cfg);
}
}  // namespace detail

template <class Table, class V, Hasher Hash = Xxh3Hasher>
class BasicApproximateMap : public detail::KeyForwarding<BasicApproximateMap<Table, V, Hash>> {
  using KeyForwarding = detail::KeyForwarding<BasicApproximateMap>;

  static_assert(std::is_trivially_copyable_v<V> && std::is_default_constructible_v<V>,
                "map values must be trivially copyable and default-constructible");
  static_assert(!Table::kSemiSorted, "semi-sorted tables reorder slots; values need fixed slots");

 public:
  using table_type = Table;
  using value_type = V;
  using hasher_type = Hash;
  static constexpr unsigned kBucketSize = Table::kBucketSize;
  /// Keys ahead that a batch hashes a key and prefetches its fingerprint lines (into L2), as
  /// BasicFilter::kPipelineDepth.
  static constexpr std::size_t kPipelineDepth = 64;
  /// Keys ahead that a batch find compares fingerprints and prefetches the matching slots' value
  /// lines: most keys have at most one, so fewer are in flight than fingerprint lines.
  static constexpr std::size_t kValueDepth = 32;
  /// Keys ahead that a batch insert hashes a key and prefetches its lines (into L1, for writing),
  /// as BasicFilter::kWritePipelineDepth.
  static constexpr std::size_t kWritePipelineDepth = 16;
  /// Buckets the breadth-first insert search may visit, as BasicFilter::kBfsNodes.
  static constexpr std::size_t kBfsNodes = 176;
  static constexpr std::size_t kBfsChunkParents = 16 / kBucketSize;
  /// Most values a lookup can return: every slot of both buckets.
  static constexpr std::size_t kMaxMatches = 2 * kBucketSize;

  explicit BasicApproximateMap(const Config& cfg = {})
      : BasicApproximateMap(checked_layout(cfg), cfg.capacity, cfg.max_kicks, cfg.seed) {}

  /// An empty map of an exact layout (used when loading saved maps).
  BasicApproximateMap(const Layout& layout, std::size_t capacity, unsigned max_kicks,
                      std::uint64_t seed)
      : BasicApproximateMap(Table(layout.bucket_count, layout.fingerprint_bits),
                            detail::AlignedBuffer(values_bytes_for(layout.bucket_count)), layout,
                            capacity, max_kicks, seed) {}

  /// The same over storage it does not own (a mapped file): the table's bytes and the values'
  /// bytes, which must outlive the map.
  BasicApproximateMap(const Layout& layout, std::size_t capacity, unsigned max_kicks,
                      std::uint64_t seed, detail::ExternalStorage table,
                      detail::ExternalStorage values)
      : BasicApproximateMap(Table(layout.bucket_count, layout.fingerprint_bits, table),
                            detail::AlignedBuffer(checked_values(values, layout.bucket_count)),
                            layout, capacity, max_kicks, seed) {}

  /// Bytes of value storage for a table of `bucket_count` buckets.
  static constexpr std::size_t values_bytes_for(std::uint64_t bucket_count) noexcept {
    return static_cast<std::size_t>(bucket_count * kBucketSize * sizeof(V));
  }

  // ---- Single-key operations -----------------------------------------------------------------

  /// Stores (key, value). Returns false, with fingerprints and values unchanged, when no room can
  /// be found. The same pair may be stored more than once (up to 2b entries per fingerprint).
  template <Key K>
  bool insert(const K& key, const V& value) {
    return insert_hash(hash_key(hasher_, key), value);
  }
  /// Writes the values of every entry matching key's fingerprint to out (the first out.size() of
  /// them) and returns how many there are (0 .. 2b); never allocates.
  template <Key K>
  std::size_t find(const K& key, std::span<V> out) const noexcept {
    return find_hash(hash_key(hasher_, key), out);
  }
  /// The values of every entry matching key's fingerprint.
  template <Key K>
  std::vector<V> find(const K& key) const {
    std::array<V, kMaxMatches> found;
    const std::size_t n = find(key, std::span<V>(found));
    return std::vector<V>(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(n));
  }
  /// Removes one entry whose fingerprint matches key's and whose value equals `value`
  /// (compared by object representation); false if there is none.
  template <Key K>
  bool erase(const K& key, const V& value) noexcept {
    return erase_hash(hash_key(hasher_, key), value);
  }
  // contains(key) and count(key) (entries matching key's fingerprint: the pairs stored with key,
  // plus any collisions) come from detail::KeyForwarding.
  using KeyForwarding::contains;
  using KeyForwarding::count;

  // ---- The same, from a hash computed with hasher() ------------------------------------------

  bool insert_hash(std::uint64_t hash, const V& value) {
    const Probe p = probe_of(hash);
    table_.prefetch(p.alt);
    return insert_probe(p, value);
  }

  std::size_t find_hash(std::uint64_t hash, std::span<V> out) const noexcept {
    const Matches m = matches_of(probe_of(hash));
    const std::size_t n = m.count();
    // The usual answers (no match, or one) without a branch on where the match is: a
    // mispredicted branch per lookup would stop the core overlapping one lookup's misses with
    // the next one's.
    if (n <= 1 && !out.empty()) {
      const V first = value_at(m.first_slot());
      if (n == 1) out[0] = first;
      return n;
    }
    std::size_t written = 0;
    m.for_each([&](std::uint64_t slot) {
      if (written < out.size()) out[written++] = value_at(slot);
    });
    return n;
  }

  bool contains_hash(std::uint64_t hash) const noexcept {
    const Probe p = probe_of(hash);
    return table_.contains_pair(p.bucket, p.alt, p.fingerprint);
  }

  std::size_t count_hash(std::uint64_t hash) const noexcept {
    const Probe p = probe_of(hash);
    return table_.count_pair(p.bucket, p.alt, p.fingerprint);
  }

  bool erase_hash(std::uint64_t hash, const V& value) noexcept {
    return erase_probe(probe_of(hash), value);
  }

  // ---- Batches --------------------------------------------------------------------------------

  /// out[i] = contains(keys[i]); out.size() must be at least keys.size().
  template <Key K>
  void contains(std::span<const K> keys, std::span<bool> out) const noexcept {
    lookup_pipeline(keys, [&](const auto& reader, std::size_t i, const Probe& p) CUCKOO_LAMBDA_HOT {
      out[i] = reader.contains_pair(p.bucket, p.alt, p.fingerprint);
    });
  }

  /// out[i] = count(keys[i]); out.size() must be at least keys.size().
  template <Key K>
  void count(std::span<const K> keys, std::span<std::size_t> out) const noexcept {
    lookup_pipeline(keys, [&](const auto& reader, std::size_t i, const Probe& p) CUCKOO_LAMBDA_HOT {
      out[i] = reader.count_pair(p.bucket, p.alt, p.fingerprint);
    });
  }

  /// Inserts (keys[i], values[i]) in order, stopping at the first pair that does not fit; returns
  /// how many were stored (as BasicFilter's batch insert). values.size() must be ≥ keys.size().
  /// Pipelined: kWritePipelineDepth keys ahead, a key is hashed and both its fingerprint lines
  /// and its first bucket's value line are prefetched for writing; the inserts themselves are
  /// the single-key ones, in order, so the bytes are theirs.
  template <Key K>
  std::size_t insert(std::span<const K> keys, std::span<const V> values) {
    return detail::run_prefetch_pipeline<kWritePipelineDepth>(
        keys.size(), [&](std::size_t i) { return fetch_for_write<false>(keys[i]); },
        [&](std::size_t i, const Probe& p) { return insert_probe(p, values[i]); });
  }

  /// Erases (keys[i], values[i]) in order, exactly as that many erase() calls would; a pair with
  /// no matching entry is skipped. Returns how many were removed. values.size() must be
  /// ≥ keys.size(). Pipelined as the batch insert, with both buckets' value lines prefetched.
  template <Key K>
  std::size_t erase(std::span<const K> keys, std::span<const V> values) noexcept {
    std::size_t removed = 0;
    detail::run_prefetch_pipeline<kWritePipelineDepth>(
        keys.size(), [&](std::size_t i) { return fetch_for_write<true>(keys[i]); },
        [&](std::size_t i, const Probe& p) {
          removed += erase_probe(p, values[i]) ? 1 : 0;
          return true;
        });
    return removed;
  }

  /// The values of every key, in order, as one list: key i's values are
  /// values[ends[i − 1] .. ends[i]) (ends[−1] = 0), exactly what find(keys[i]) returns. `values`
  /// is cleared first; ends.size() must be at least keys.size(). The pipeline prefetches the
  /// fingerprint lines kPipelineDepth keys ahead and the matching value lines kValueDepth ahead.
  template <Key K>
  void find(std::span<const K> keys, std::vector<V>& values, std::span<std::size_t> ends) const {
    const std::size_t n = keys.size();
    // Written through `used`, with room for a whole key's matches kept ahead, so that the usual
    // key (one match or none) stores its value and moves on without a branch on the answer.
    std::size_t used = 0;
    values.resize(n + kMaxMatches);
    const std::byte* const value_base = values_.data();  // in this frame, as lookup_pipeline's
    // Stage 2 keeps each key's probe (for a key with several matches) and its first matching
    // slot with the match count, in one word, until stage 3, kValueDepth keys later.
    Probe probes[kValueDepth];
    std::uint64_t first_and_count[kValueDepth];
    // Stage 3: key k reads its values (their lines were prefetched in stage 2).
    const auto read_values = [&](std::size_t k) CUCKOO_LAMBDA_HOT {
      const std::uint64_t fc = first_and_count[k & (kValueDepth - 1)];
      if (used + kMaxMatches > values.size()) values.resize(2 * values.size());
      const std::size_t matched = fc & kCountMask;
      if (matched <= 1) [[likely]] {
        values[used] = value_in(value_base, fc >> kCountBits);  // harmless when nothing matched
        used += matched;
      } else {
        matches_of(probes[k & (kValueDepth - 1)]).for_each([&](std::uint64_t slot) {
          values[used++] = value_in(value_base, slot);
        });
      }
      ends[k] = used;
    };
    // Stage 1, the pipeline's: key i hashed and its fingerprint lines prefetched kPipelineDepth
    // keys ahead. Stage 2, its step: key i compares fingerprints and prefetches its first
    // matching slot's value line (slot 0's when nothing matched, which stays in cache), chosen
    // without a branch; a rare second match is read on demand. Then stage 3 for i − kValueDepth.
    lookup_pipeline(keys, [&](const auto& reader, std::size_t i, const Probe& p) CUCKOO_LAMBDA_HOT {
      const Matches m{p.bucket, p.alt, reader.match_mask_pair(p.bucket, p.alt, p.fingerprint)};
      const std::uint64_t first = m.first_slot();
      prefetch_value<detail::Intent::kLookup>(value_base, first);
      if (i >= kValueDepth) read_values(i - kValueDepth);  // before its ring slot is reused
      probes[i & (kValueDepth - 1)] = p;
      first_and_count[i & (kValueDepth - 1)] = first << kCountBits | m.count();
    });
    for (std::size_t k = n < kValueDepth ? 0 : n - kValueDepth; k < n; ++k) read_values(k);
    values.resize(used);
  }

  // ---- Shape and state ------------------------------------------------------------------------

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::size_t capacity() const noexcept { return capacity_; }
  std::uint64_t bucket_count() const noexcept { return addressing_.bucket_count(); }
  std::uint64_t slot_count() const noexcept { return bucket_count() * kBucketSize; }
  double load_factor() const noexcept {
    return static_cast<double>(size_) / static_cast<double>(slot_count());
  }
  unsigned fingerprint_bits() const noexcept { return table_.fingerprint_bits(); }
  unsigned bucket_size() const noexcept { return kBucketSize; }
  static constexpr unsigned value_bytes() noexcept { return sizeof(V); }
  /// Fingerprints and values together.
  std::size_t memory_bytes() const noexcept { return table_.memory_bytes() + values_.size(); }
  std::size_t fingerprint_memory_bytes() const noexcept { return table_.memory_bytes(); }
  std::size_t value_memory_bytes() const noexcept { return values_.size(); }
  std::uint64_t seed() const noexcept { return seed_; }
  unsigned max_kicks() const noexcept { return max_kicks_; }
  const Hash& hasher() const noexcept { return hasher_; }
  const Table& table() const noexcept { return table_; }
  Layout layout() const noexcept {
    return {bucket_count(), fingerprint_bits(), kBucketSize, false};
  }
  /// The value array's bytes, slot order (for files).
  std::span<const std::byte> value_bytes_span() const noexcept {
    return {values_.data(), values_.size()};
  }

  void clear() noexcept {
    table_.clear();
    values_.zero();
    size_ = 0;
  }

  /// For loaders: the storage and the item count. The caller vouches for all three.
  Table& mutable_table() noexcept { return table_; }
  std::span<std::byte> mutable_value_bytes() noexcept { return {values_.data(), values_.size()}; }
  void set_size_unchecked(std::size_t size) noexcept { size_ = size; }

 private:
  // The same tweak as BasicFilter: a map and a filter built from one Config kick alike.
  static constexpr std::uint64_t kKickStreamTweak = 0x5851F42D4C957F2Dull;

  using Probe = detail::Probe;  // the filters' (detail/prober.hpp), which the batch stage fills
  /// Which slots of a key's two buckets hold its fingerprint: bit j of a mask is slot j.
  struct Matches {
    std::uint64_t first;
    std::uint64_t second;
    /// Bit j < b: slot j of `first`; bit b + j: slot j of `second` (PackedTable::match_mask_pair).
    unsigned mask;

    std::size_t count() const noexcept { return static_cast<std::size_t>(std::popcount(mask)); }
    /// The first matching slot (first bucket first, lowest slot first), or 0 when none matches.
    /// Arithmetic, not branches: which bucket holds a stored key is a coin toss, and written as a
    /// select GCC made it a branch (batched find of stored keys then took 1.18x the time, 2·10^7
    /// keys, map_bench).
    std::uint64_t first_slot() const noexcept {
      const auto bit = static_cast<unsigned>(std::countr_zero(mask | 1u << 2 * kBucketSize));
      const std::uint64_t in_second = std::uint64_t{0} - std::uint64_t{bit >= kBucketSize};
      const std::uint64_t any = std::uint64_t{0} - std::uint64_t{mask != 0};
      const std::uint64_t bucket = (first ^ ((first ^ second) & in_second)) & any;
      return bucket * kBucketSize + (bit & (kBucketSize - 1));  // none: bit = 2b, slot 0
    }
    /// Calls fn(i·b + j) for every matching slot, first bucket first, in slot order.
    template <class Fn>
    void for_each(Fn&& fn) const {
      for (unsigned m = mask; m != 0; m &= m - 1) {
        const auto bit = static_cast<unsigned>(std::countr_zero(m));
        fn((bit < kBucketSize ? first : second) * kBucketSize + (bit & (kBucketSize - 1)));
      }
    }
  };
  static constexpr std::uint64_t kNoSlot = ~std::uint64_t{0};
  // A batch find's stage 2 hands stage 3 the first matching slot and the match count in one word.
  static constexpr unsigned kCountBits = std::bit_width(2u * kBucketSize);
  static constexpr std::uint64_t kCountMask = (std::uint64_t{1} << kCountBits) - 1;
  struct Displacement {
    std::uint64_t bucket;
    unsigned slot;
    std::uint32_t placed;
  };

  BasicApproximateMap(Table&& table, detail::AlignedBuffer&& values, const Layout& layout,
                      std::size_t capacity, unsigned max_kicks, std::uint64_t seed)
      : table_(std::move(table)),
        values_(std::move(values)),
        addressing_(layout.bucket_count, layout.fingerprint_bits),
        hasher_(seed),
        rng_(seed ^ kKickStreamTweak),
        seed_(seed),
        capacity_(capacity),
        max_kicks_(max_kicks),
        walk_(max_kicks),
        bfs_(kBfsNodes) {}

  static Layout checked_layout(const Config& cfg) {
    const Layout layout = detail::approximate_map_layout(cfg);
    if (layout.bucket_size != kBucketSize) {
      detail::invalid("this map is compiled for bucket_size " + std::to_string(kBucketSize) +
                      ", got " + std::to_string(layout.bucket_size));
    }
    return layout;
  }

  static detail::ExternalStorage checked_values(detail::ExternalStorage storage,
                                                std::uint64_t bucket_count) {
    if (storage.size != values_bytes_for(bucket_count)) {
      throw std::invalid_argument("value storage of " + std::to_string(storage.size) +
                                  " bytes; the layout needs " +
                                  std::to_string(values_bytes_for(bucket_count)));
    }
    return storage;
  }

  static bool same_bytes(const V& a, const V& b) noexcept {
    return std::memcmp(&a, &b, sizeof(V)) == 0;
  }

  /// The value of `slot` in a value array at `base`: the map's, or a batch's copy of its address.
  CUCKOO_HOT static V value_in(const std::byte* base, std::uint64_t slot) noexcept {
    V v;
    std::memcpy(&v, base + slot * sizeof(V), sizeof(V));
    return v;
  }
  V value_at(std::uint64_t slot) const noexcept { return value_in(values_.data(), slot); }
  void set_value(std::uint64_t slot, const V& v) noexcept {
    std::memcpy(values_.data() + slot * sizeof(V), &v, sizeof(V));
  }

  CUCKOO_HOT Probe probe_of(std::uint64_t hash) const noexcept {
    const Position pos = addressing_.position(hash);
    return {pos.bucket, addressing_.alternate(pos.bucket, pos.fingerprint), pos.fingerprint};
  }

  /// A write batch's stage: both fingerprint lines and the first bucket's value line (where
  /// most entries sit) into L1 for writing; with kSecondValueLine, the second bucket's too.
  ///
  /// An erase wants both: stored entries sit in their second bucket at the rate of the highest
  /// load the map has had (29% after a fill to 95%), and the line saves those a dependent miss
  /// (a batch erase from 93.5% down to 55% load took 0.83-0.94x the time with it). An insert
  /// does not: most find room in the first bucket until late in a fill, and a fill to 93.5%
  /// took 0.96-1.01x the time with the line, as much as without (README, Value association).
  template <bool kSecondValueLine, Key K>
  Probe fetch_for_write(const K& key) const noexcept {
    const Probe p = probe_of(hash_key(hasher_, key));
    detail::prefetch_buckets<detail::Intent::kWrite>(table_, p.bucket, p.alt);
    prefetch_value<detail::Intent::kWrite>(values_.data(), p.bucket * kBucketSize);
    if constexpr (kSecondValueLine) {
      prefetch_value<detail::Intent::kWrite>(values_.data(), p.alt * kBucketSize);
    }
    return p;
  }

  /// The batch lookups' loop, as BasicFilter::lookup_pipeline: answer(reader, i, probe) for each
  /// key over copies of the table's LookupReader, the prober and the hasher in this frame
  /// (detail/prober.hpp), with integer keys hashed by XXH3 staged eight at a time at the AVX-512
  /// level (detail/vector_probes.hpp). The map keeps no offset table.
  template <Key K, class Answer>
  CUCKOO_HOT void lookup_pipeline(std::span<const K> keys, Answer answer) const noexcept {
    const auto reader = table_.lookup_reader();
    const detail::Prober<false> prober{addressing_, nullptr, false};
    const Hash hasher = hasher_;
    detail::run_lookup_pipeline<kPipelineDepth, detail::table_isa<Table>()>(
        keys, reader, prober, hasher,
        [&](std::size_t i, const Probe& p) CUCKOO_LAMBDA_HOT { answer(reader, i, p); });
  }

  CUCKOO_HOT Matches matches_of(const Probe& p) const noexcept {
    return {p.bucket, p.alt, table_.match_mask_pair(p.bucket, p.alt, p.fingerprint)};
  }

  /// The line of `slot`'s value in a value array at `base`: into L2 for a lookup, into L1 for
  /// writing.
  template <detail::Intent kIntent>
  CUCKOO_HOT static void prefetch_value(const std::byte* base, std::uint64_t slot) noexcept {
    if constexpr (kIntent == detail::Intent::kLookup) {
      __builtin_prefetch(base + slot * sizeof(V), 0, 2);
    } else {
      __builtin_prefetch(base + slot * sizeof(V), 1, 3);
    }
  }

  /// Puts (fingerprint, value) into the lowest empty slot of bucket; false if it is full.
  bool place(std::uint64_t bucket, std::uint32_t fingerprint, const V& value) noexcept {
    const int slot = table_.find(bucket, 0);
    if (slot < 0) return false;
    table_.write(bucket, static_cast<unsigned>(slot), fingerprint);
    set_value(bucket * kBucketSize + static_cast<unsigned>(slot), value);
    return true;
  }

  /// Removes the first entry of the probe's buckets whose fingerprint matches and whose value
  /// has value's bytes.
  bool erase_probe(const Probe& p, const V& value) noexcept {
    std::uint64_t found = kNoSlot;
    matches_of(p).for_each([&](std::uint64_t slot) {
      if (found == kNoSlot && same_bytes(value_at(slot), value)) found = slot;
    });
    if (found == kNoSlot) return false;
    table_.write(found / kBucketSize, static_cast<unsigned>(found % kBucketSize), 0);
    set_value(found, V{});
    --size_;
    return true;
  }

  bool insert_probe(const Probe& p, const V& value) {
    if (place(p.bucket, p.fingerprint, value) || place(p.alt, p.fingerprint, value) ||
        (max_kicks_ > 0 && bfs_insert(p, value)) ||
        kick_walk((rng_() & 1) != 0 ? p.alt : p.bucket, p.fingerprint, value)) {
      ++size_;
      return true;
    }
    return false;
  }

  /// The breadth-first displacement search shared with the filters (detail/path_search.hpp),
  /// then the moves along the path, last first, each value moving with its fingerprint.
  bool bfs_insert(const Probe& p, const V& value) noexcept {
    const std::ptrdiff_t found = detail::find_displacement_path<kBfsNodes, kBfsChunkParents>(
        table_,
        [this](std::uint64_t bucket, std::uint32_t fp) {
          return addressing_.alternate(bucket, fp);
        },
        p.bucket, p.alt, p.fingerprint, max_kicks_, bfs_.data());
    if (found < 0) return false;
    const auto n = static_cast<std::size_t>(found);
    const auto slot_of = [](const detail::BfsNode& parent, const detail::BfsNode& child) {
      return parent.bucket * kBucketSize + child.slot;
    };
    // The path's last bucket has room: its entry comes from the parent's slot.
    (void)place(bfs_[n].bucket, bfs_[n].moved, value_at(slot_of(bfs_[bfs_[n].parent], bfs_[n])));
    for (std::int32_t child = static_cast<std::int32_t>(n);;) {
      const detail::BfsNode& node = bfs_[child];
      const detail::BfsNode& parent = bfs_[node.parent];
      const std::uint64_t slot = slot_of(parent, node);
      if (parent.parent < 0) {
        table_.write(parent.bucket, node.slot, p.fingerprint);
        set_value(slot, value);
        return true;
      }
      // The parent's slot takes the entry moving in from the grandparent, value and all; the
      // parent's old entry was already copied one step down the path.
      table_.write(parent.bucket, node.slot, parent.moved);
      set_value(slot, value_at(slot_of(bfs_[parent.parent], parent)));
      child = node.parent;
    }
  }

  /// Random-walk displacement from `bucket`; on failure every move (fingerprint and value) is
  /// undone in reverse order.
  bool kick_walk(std::uint64_t bucket, std::uint32_t fingerprint, const V& value) noexcept {
    std::uint32_t carried = fingerprint;
    V carried_value = value;
    for (unsigned kick = 0; kick < max_kicks_; ++kick) {
      const auto slot = static_cast<unsigned>(rng_() & (kBucketSize - 1));
      const std::uint64_t index = bucket * kBucketSize + slot;
      const std::uint32_t victim = table_.exchange(bucket, slot, carried);
      const V victim_value = value_at(index);
      set_value(index, carried_value);
      walk_[kick] = {bucket, slot, carried};
      carried = victim;
      carried_value = victim_value;
      bucket = addressing_.alternate(bucket, carried);
      if (place(bucket, carried, carried_value)) return true;
    }
    for (unsigned kick = max_kicks_; kick-- > 0;) {
      const Displacement& step = walk_[kick];
      const std::uint64_t index = step.bucket * kBucketSize + step.slot;
      table_.undo_exchange(step.bucket, step.slot, step.placed, carried);
      const V placed_value = value_at(index);
      set_value(index, carried_value);
      carried = step.placed;
      carried_value = placed_value;
    }
    return false;  // carried == fingerprint again: fingerprints and values are as they were.
  }

  Table table_;
  detail::AlignedBuffer values_;
  Addressing addressing_;
  Hash hasher_;
  detail::SplitMix64 rng_;
  std::uint64_t seed_;
  std::size_t size_ = 0;
  std::size_t capacity_;
  unsigned max_kicks_;
  std::vector<Displacement> walk_;
  std::vector<detail::BfsNode> bfs_;
};

}  // namespace cuckoo
