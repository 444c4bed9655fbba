// cuckoo/filter.hpp — the cuckoo filter's algorithms (paper §3, Algorithms 1–3) over any table.
//
// A key is hashed once; addressing.hpp turns the hash into (i1, fp) and i2 = alt(i1, fp). Lookup
// reads both buckets (both loads are started before either is used). Insert places fp in whichever
// bucket has room, else walks: put fp in a random slot of a random candidate bucket, take the
// victim, move the victim to its own alternate bucket, and repeat at most max_kicks times.
//
// Failed inserts change nothing. The reference implementation keeps the last victim in a hidden
// slot (so later inserts see a "full" filter) or drops it (a false negative for an older item).
// Here every displacement of a walk is logged, and a walk that runs out of kicks is replayed
// backwards, restoring each moved fingerprint to the slot it came from; the filter is then
// bit-for-bit what it was before the call, and insert returns false.
//
// Template parameters:
//   Table   a bucketed fingerprint store with PackedTable's interface: read / write / find /
//           contains / count / prefetch per bucket, exchange / undo_exchange for kick walks,
//           kBucketSize, kSemiSorted, and construction from (bucket_count, fingerprint_bits).
//           A table may reorder a bucket's entries on write (semi-sorting does); the filter only
//           relies on a slot index until the next write to that bucket, and undoes a walk
//           through undo_exchange, which must restore the bucket's exact bits. The filter owns
//           one table.
//   Hash    a seeded 64-bit hasher (hash.hpp); XXH3 by default.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cuckoo/addressing.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/detail/rng.hpp"
#include "cuckoo/hash.hpp"
#include "cuckoo/sizing.hpp"

namespace cuckoo {

template <class Table, Hasher Hash = Xxh3Hasher>
class BasicFilter {
 public:
  using table_type = Table;
  using hasher_type = Hash;
  static constexpr unsigned kBucketSize = Table::kBucketSize;

  /// Sizes the filter from cfg (see sizing.hpp); throws std::invalid_argument on a bad Config.
  explicit BasicFilter(const Config& cfg = {})
      : BasicFilter(checked_layout(cfg), cfg.capacity, cfg.max_kicks, cfg.seed) {}

  /// Builds an empty filter of an exact layout (used when loading saved filters).
  BasicFilter(const Layout& layout, std::size_t capacity, unsigned max_kicks, std::uint64_t seed)
      : table_(layout.bucket_count, layout.fingerprint_bits),
        addressing_(layout.bucket_count, layout.fingerprint_bits),
        hasher_(seed),
        rng_(seed ^ kKickStreamTweak),
        seed_(seed),
        capacity_(capacity),
        max_kicks_(max_kicks),
        walk_(max_kicks) {}

  /// The same, over table storage the filter does not own (a memory-mapped file); only for tables
  /// that can view external storage. The storage must outlive the filter.
  template <class Storage>
  requires std::constructible_from<Table, std::uint64_t, unsigned, Storage> BasicFilter(
      const Layout& layout, std::size_t capacity, unsigned max_kicks, std::uint64_t seed,
      Storage storage)
      : table_(layout.bucket_count, layout.fingerprint_bits, storage),
        addressing_(layout.bucket_count, layout.fingerprint_bits),
        hasher_(seed),
        rng_(seed ^ kKickStreamTweak),
        seed_(seed),
        capacity_(capacity),
        max_kicks_(max_kicks),
        walk_(max_kicks) {}

  // ---- Single-key operations -----------------------------------------------------------------

  /// Adds one copy of key. Returns false, with the filter unchanged, when no room can be found.
  template <Key K>
  bool insert(const K& key) {
    return insert_hash(hash_key(hasher_, key));
  }
  /// True if key may be in the set; false means it certainly is not.
  template <Key K>
  bool contains(const K& key) const noexcept {
    return contains_hash(hash_key(hasher_, key));
  }
  /// Removes one copy of key's fingerprint; false if neither bucket holds it. Erasing a key that
  /// was never inserted may remove a colliding item's fingerprint: only erase what you inserted.
  template <Key K>
  bool erase(const K& key) noexcept {
    return erase_hash(hash_key(hasher_, key));
  }
  /// Fingerprints equal to key's in its two buckets: the copies inserted, plus any collisions.
  template <Key K>
  std::size_t count(const K& key) const noexcept {
    return count_hash(hash_key(hasher_, key));
  }

  // ---- The same, from a hash computed with hasher() ------------------------------------------

  bool insert_hash(std::uint64_t hash) {
    const Position pos = addressing_.position(hash);
    const std::uint64_t alt = addressing_.alternate(pos.bucket, pos.fingerprint);
    if (place(pos.bucket, pos.fingerprint) || place(alt, pos.fingerprint) ||
        kick_walk((rng_() & 1) != 0 ? alt : pos.bucket, pos.fingerprint)) {
      ++size_;
      return true;
    }
    return false;
  }

  bool contains_hash(std::uint64_t hash) const noexcept {
    const Position pos = addressing_.position(hash);
    const std::uint64_t alt = addressing_.alternate(pos.bucket, pos.fingerprint);
    table_.prefetch(alt);
    // Bitwise |, not ||: both buckets are read without a dependent branch between them.
    return table_.contains(pos.bucket, pos.fingerprint) | table_.contains(alt, pos.fingerprint);
  }

  bool erase_hash(std::uint64_t hash) noexcept {
    const Position pos = addressing_.position(hash);
    const std::uint64_t alt = addressing_.alternate(pos.bucket, pos.fingerprint);
    if (remove_from(pos.bucket, pos.fingerprint) || remove_from(alt, pos.fingerprint)) {
      --size_;
      return true;
    }
    return false;
  }

  std::size_t count_hash(std::uint64_t hash) const noexcept {
    const Position pos = addressing_.position(hash);
    const std::uint64_t alt = addressing_.alternate(pos.bucket, pos.fingerprint);
    return table_.count(pos.bucket, pos.fingerprint) + table_.count(alt, pos.fingerprint);
  }

  // ---- Batches: the same answers as the single-key calls, in order ---------------------------

  /// out[i] = contains(keys[i]); out.size() must be at least keys.size().
  template <Key K>
  void contains(std::span<const K> keys, std::span<bool> out) const noexcept {
    for (std::size_t i = 0; i < keys.size(); ++i) out[i] = contains(keys[i]);
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
  std::size_t memory_bytes() const noexcept { return table_.memory_bytes(); }
  std::uint64_t seed() const noexcept { return seed_; }
  unsigned max_kicks() const noexcept { return max_kicks_; }
  const Hash& hasher() const noexcept { return hasher_; }
  const Addressing& addressing() const noexcept { return addressing_; }
  const Table& table() const noexcept { return table_; }
  Layout layout() const noexcept {
    return {bucket_count(), fingerprint_bits(), kBucketSize, Table::kSemiSorted};
  }

  /// Empties the filter; the layout, seed and capacity stay.
  void clear() noexcept {
    table_.clear();
    size_ = 0;
  }

  /// For loaders: the table's storage and the item count it holds. The caller vouches for both.
  Table& mutable_table() noexcept { return table_; }
  void set_size_unchecked(std::size_t size) noexcept { size_ = size; }

 private:
  // Decorrelates the kick walk's random choices from the key hash, which uses the same seed.
  static constexpr std::uint64_t kKickStreamTweak = 0x5851F42D4C957F2Dull;

  struct Displacement {
    std::uint64_t bucket;
    unsigned slot;
    std::uint32_t placed;  // the fingerprint this step put into the bucket
  };

  static Layout checked_layout(const Config& cfg) {
    Layout layout = plan(cfg);
    if (layout.bucket_size != kBucketSize) {
      detail::invalid("this filter is compiled for bucket_size " + std::to_string(kBucketSize) +
                      ", got " + std::to_string(layout.bucket_size));
    }
    if (layout.semi_sort != Table::kSemiSorted) {
      detail::invalid(layout.semi_sort ? "semi_sort requested for a plain table"
                                       : "this table is semi-sorted; set semi_sort");
    }
    return layout;
  }

  bool place(std::uint64_t bucket, std::uint32_t fingerprint) noexcept {
    const int slot = table_.find(bucket, 0);
    if (slot < 0) return false;
    table_.write(bucket, static_cast<unsigned>(slot), fingerprint);
    return true;
  }

  bool remove_from(std::uint64_t bucket, std::uint32_t fingerprint) noexcept {
    const int slot = table_.find(bucket, fingerprint);
    if (slot < 0) return false;
    table_.write(bucket, static_cast<unsigned>(slot), 0);
    return true;
  }

  /// Random-walk displacement from `bucket`; on failure every move is undone in reverse order.
  bool kick_walk(std::uint64_t bucket, std::uint32_t fingerprint) noexcept {
    std::uint32_t carried = fingerprint;
    for (unsigned kick = 0; kick < max_kicks_; ++kick) {
      const auto slot = static_cast<unsigned>(rng_() & (kBucketSize - 1));
      const std::uint32_t victim = table_.exchange(bucket, slot, carried);
      walk_[kick] = {bucket, slot, carried};
      carried = victim;
      bucket = addressing_.alternate(bucket, carried);
      if (place(bucket, carried)) return true;
    }
    for (unsigned kick = max_kicks_; kick-- > 0;) {
      const Displacement& step = walk_[kick];
      table_.undo_exchange(step.bucket, step.slot, step.placed, carried);
      carried = step.placed;
    }
    return false;  // carried == fingerprint again: the table is as it was.
  }

  Table table_;
  Addressing addressing_;
  Hash hasher_;
  detail::SplitMix64 rng_;
  std::uint64_t seed_;
  std::size_t size_ = 0;
  std::size_t capacity_;
  unsigned max_kicks_;
  std::vector<Displacement> walk_;  // undo log of the current kick walk, sized once
};

}  // namespace cuckoo
