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
// Batches (contains / insert / erase over a span of keys) give exactly the answers of the same
// single-key calls made in order, but run as a software pipeline: key i + Depth is hashed and its
// buckets prefetched while key i is probed. On a table much larger than the caches the cost of a
// key is set by how many of its cache lines are in flight at once and how many lines it touches
// at all, not by arithmetic; the choices below were each measured with bench/perf_bench.cpp on a
// 192 MiB table (README, "Performance"):
//   - lookups prefetch into L2 only, 64 keys ahead: an L2-bound miss frees its L1 miss buffer
//     sooner, so more lines are in flight (kPipelineDepth);
//   - a bucket is prefetched at the first and the last byte of its 8-byte load, without a branch
//     on whether they share a line: that branch, taken at random for 1 bucket in 10, cost more
//     than the redundant prefetch (Table::prefetch);
//   - inserts prefetch a key's second bucket only from kSecondBucketPrefetchLoad, below which
//     almost every key lands in its first bucket and the line would be wasted;
//   - buckets are tested and updated from one load (Table::try_place, has_free, entries,
//     erase_pair) rather than slot by slot: the insert search's entries / has_free and the
//     insert's try_place each made the build to 95% 1.08x faster;
//   - at the AVX-512 level, batch lookups of 64-bit integer keys compute eight keys' hashes and
//     buckets at once (detail/vector_probes.hpp): the stage is a third of a batched lookup's
//     instructions, and in lanes it is a tenth of that;
//   - single-key calls are limited by how many fit in the core's out-of-order window, so they
//     count instructions: filters of 1 MiB or more with f ≤ 12 read H(fp) from a table
//     (kOffsetTableMaxBits), and byte-aligned buckets are addressed by one multiplication.
//
// Insert near full. When both buckets are full, a breadth-first search over the displacement
// graph looks for a short path ending at a bucket with a free slot. Candidate buckets are
// prefetched kBfsChunkParents parents' worth at a time (16 buckets), so one round trip to memory
// tests sixteen candidates, where a random walk pays a round trip per step; and the search stops
// fetching at the round that finds room, rather than fetching a whole level of up to 128 buckets.
// Nothing moves until a whole path is found, so the search cannot leave the table half-changed.
// Only when it finds no path within kBfsNodes buckets does the random walk (with its undo log)
// run, so capacity is never worse than the paper's algorithm.
//
// Template parameters:
//   Table   a bucketed fingerprint store with PackedTable's interface: read / write / find /
//           contains / count / entries / has_free / prefetch / prefetch_for_lookup per bucket,
//           contains_pair / count_pair over a key's two buckets, a lookup_reader() whose reader
//           answers the same pair questions and prefetches for the batch lookups,
//           exchange / undo_exchange for kick walks, kBucketSize, kSemiSorted, and construction
//           from (bucket_count, fingerprint_bits). erase_pair and try_place are used where a
//           table has them (single-load forms), else composed from the above. A table may reorder a
//           bucket's entries on write (semi-sorting does); the filter only relies on a slot index
//           until the next write to that bucket, and undoes a walk through undo_exchange, which
//           must restore the bucket's exact bits. The filter owns one table.
//   Hash    a seeded 64-bit hasher (hash.hpp); XXH3 by default.
#pragma once

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cuckoo/addressing.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/detail/isa.hpp"
#include "cuckoo/detail/key_forwarding.hpp"
#include "cuckoo/detail/path_search.hpp"
#include "cuckoo/detail/prefetch_pipeline.hpp"
#include "cuckoo/detail/prober.hpp"
#include "cuckoo/detail/rng.hpp"
#include "cuckoo/detail/vector_probes.hpp"
#include "cuckoo/hash.hpp"
#include "cuckoo/sizing.hpp"

namespace cuckoo {

template <class Table, Hasher Hash = Xxh3Hasher>
class BasicFilter : public detail::KeyForwarding<BasicFilter<Table, Hash>> {
  using KeyForwarding = detail::KeyForwarding<BasicFilter>;

 public:
  using table_type = Table;
  using hasher_type = Hash;
  static constexpr unsigned kBucketSize = Table::kBucketSize;
  /// How many keys ahead a batch lookup hashes and prefetches (both buckets, into L2: see
  /// Table::prefetch_for_lookup). The core can keep only so many misses outstanding in L1; misses
  /// bound for L2 wait in a longer queue, and it takes about 64 keys of look-ahead to keep that
  /// queue full (bench/perf_bench.cpp --depths: on the 192 MiB table, 64 with L2 prefetches ran
  /// 0.86x the time of 16 with L1 prefetches).
  static constexpr std::size_t kPipelineDepth = 64;
  /// The same for batch inserts and erases, which write the lines they read and so prefetch into
  /// L1; deeper than 16 measured no faster.
  static constexpr std::size_t kWritePipelineDepth = 16;
  /// Load from which a batch insert prefetches a key's second bucket along with its first (see
  /// insert_pipelined). Measured on a 192 MiB table: 0.3 beat 0, 0.5 and never.
  static constexpr double kSecondBucketPrefetchLoad = 0.3;
  /// Buckets the breadth-first insert search may visit (b = 4: the two full buckets and three
  /// levels, 2 + 8 + 32 + 128).
  static constexpr std::size_t kBfsNodes = 176;
  /// Parents of a search level expanded (and their children prefetched) at a time: 16 / b, i.e.
  /// sixteen buckets of children per memory round trip (see bfs_insert). Build rates to 95% of
  /// 192 MiB, b = 4, one run: 4 children a round 11.3, 8: 11.6, 16: 11.7, whole levels: 10.9 M/s.
  static constexpr std::size_t kBfsChunkParents = 16 / kBucketSize;
  /// Filters with f up to this width whose table takes at least kOffsetTableMinBytes keep H(fp),
  /// the alternate bucket's offset, in a table of 2^f 32-bit entries (16 KiB for f = 12, about
  /// 1.6% of the smallest such table; not in memory_bytes()). A single-key call is limited by how
  /// many calls the core's window holds, so every instruction per key counts: the table replaces
  /// two dependent multiplications with one L1 load, and measured single-key contains at 0.91x
  /// and erase at 0.85x the time on a 192 MiB filter. Wider f would not stay in L1.
  static constexpr unsigned kOffsetTableMaxBits = 12;
  static constexpr std::size_t kOffsetTableMinBytes = std::size_t{1} << 20;

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
        walk_(max_kicks),
        bfs_(kBfsNodes),
        second_bucket_prefetch_size_(second_bucket_prefetch_size(layout.bucket_count)),
        offsets_(offset_table(addressing_, layout.fingerprint_bits, table_.memory_bytes())) {}

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
        walk_(max_kicks),
        bfs_(kBfsNodes),
        second_bucket_prefetch_size_(second_bucket_prefetch_size(layout.bucket_count)),
        offsets_(offset_table(addressing_, layout.fingerprint_bits, table_.memory_bytes())) {}

  // ---- Single-key operations (detail::KeyForwarding: key -> its hash -> the *_hash call) -----

  using KeyForwarding::contains;
  using KeyForwarding::count;
  using KeyForwarding::erase;
  using KeyForwarding::insert;

  // ---- The same, from a hash computed with hasher() ------------------------------------------

  bool insert_hash(std::uint64_t hash) {
    const Probe p = probe_of(hash);
    // Late in a fill the first bucket is usually full; start the second read now, not after.
    table_.prefetch(p.alt);
    return insert_probe(p);
  }

  bool contains_hash(std::uint64_t hash) const noexcept {
    return contains_probe(probe_of(hash));  // both buckets' loads issue together; no prefetch
  }

  bool erase_hash(std::uint64_t hash) noexcept {
    const Probe p = probe_of(hash);
    if constexpr (!kErasesPairs) table_.prefetch(p.alt);  // read only after a miss in the first
    return erase_probe(p);
  }

  std::size_t count_hash(std::uint64_t hash) const noexcept { return count_probe(probe_of(hash)); }

  // ---- Batches: the same answers as the single-key calls, in order ---------------------------

  /// out[i] = contains(keys[i]); out.size() must be at least keys.size().
  template <Key K>
  void contains(std::span<const K> keys, std::span<bool> out) const noexcept {
    contains_pipelined<kPipelineDepth>(keys, out);
  }

  /// out[i] = count(keys[i]); out.size() must be at least keys.size(). The lookup pipeline.
  template <Key K>
  void count(std::span<const K> keys, std::span<std::size_t> out) const noexcept {
    std::size_t* const answers = out.data();
    lookup_pipeline<kPipelineDepth>(
        keys, [answers](const auto& reader, std::size_t i, const Probe& p) CUCKOO_LAMBDA_HOT {
          answers[i] = reader.count_pair(p.bucket, p.alt, p.fingerprint);
        });
  }

  /// Inserts keys[0], keys[1], ... in order, exactly as that many insert() calls would, and stops
  /// at the first key that does not fit. Returns how many were inserted: r == keys.size() means
  /// all; otherwise keys[0..r) are in, keys[r] changed nothing (a failed insert is atomic), and
  /// keys after it were not tried. Duplicates inside the batch are inserted as separate copies.
  template <Key K>
  std::size_t insert(std::span<const K> keys) {
    return insert_pipelined<kWritePipelineDepth>(keys);
  }

  /// Erases one copy of each key in order, exactly as that many erase() calls would; a key with no
  /// matching fingerprint is skipped. Returns how many copies were removed.
  template <Key K>
  std::size_t erase(std::span<const K> keys) noexcept {
    std::size_t removed = 0;
    write_pipeline<kWritePipelineDepth>(keys, [&](std::size_t, const Probe& p) {
      removed += erase_probe(p) ? 1 : 0;
      return true;
    });
    return removed;
  }

  /// The batch lookup with an explicit pipeline depth (a power of two); for tuning.
  template <std::size_t Depth, Key K>
  void contains_pipelined(std::span<const K> keys, std::span<bool> out) const noexcept {
    bool* const answers = out.data();
    lookup_pipeline<Depth>(
        keys, [answers](const auto& reader, std::size_t i, const Probe& p) CUCKOO_LAMBDA_HOT {
          answers[i] = reader.contains_pair(p.bucket, p.alt, p.fingerprint);
        });
  }

  /// The batch insert with an explicit pipeline depth (a power of two); for tuning.
  ///
  /// Depth keys ahead, a key is hashed and its first bucket prefetched; its second bucket too
  /// once the filter is kSecondBucketPrefetchLoad full. Below that load nearly every key lands in
  /// its first bucket, and a line not fetched leaves one more of the core's few outstanding misses
  /// to another key (a quarter fewer lines per key early in a fill). Testing the first bucket
  /// before deciding would be exact, but that test waits for the line (measured slower at every
  /// load). Prefetching changes nothing, so the inserts are exactly the single-key inserts in
  /// order.
  template <std::size_t Depth, Key K>
  std::size_t insert_pipelined(std::span<const K> keys) {
    return detail::run_prefetch_pipeline<Depth>(
        keys.size(),
        [&](std::size_t i) {
          const Probe p = probe_of(hash_key(hasher_, keys[i]));
          table_.prefetch(p.bucket);
          if (size_ >= second_bucket_prefetch_size_) table_.prefetch(p.alt);
          return p;
        },
        [&](std::size_t, const Probe& p) { return insert_probe(p); });
  }

  // ---- Shape and state ------------------------------------------------------------------------

  /// alt(bucket, fp): the other bucket of a fingerprint stored in `bucket` (addressing.hpp), from
  /// the offset table when the filter keeps one (kOffsetTableMaxBits).
  std::uint64_t alternate(std::uint64_t bucket, std::uint32_t fingerprint) const noexcept {
    return prober_().alternate(bucket, fingerprint);
  }
  /// Whether this filter keeps the offset table (kOffsetTableMaxBits).
  bool keeps_offset_table() const noexcept { return !offsets_.empty(); }

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

  /// Restarts the kick walk's random choices from `state`. The walk's position is not saved with
  /// the table, so a reloaded filter continues differently from the original; callers that need
  /// every write to be a function of the table and the key alone (replicas that reload a
  /// snapshot) reseed before each write.
  void reseed_kick_walk(std::uint64_t state) noexcept { rng_ = detail::SplitMix64(state); }

  /// For loaders: the table's storage and the item count it holds. The caller vouches for both.
  Table& mutable_table() noexcept { return table_; }
  void set_size_unchecked(std::size_t size) noexcept { size_ = size; }

 private:
  // Decorrelates the kick walk's random choices from the key hash, which uses the same seed.
  static constexpr std::uint64_t kKickStreamTweak = 0x5851F42D4C957F2Dull;

  /// Tables that test both buckets for an erase from one load each (PackedTable::erase_pair).
  static constexpr bool kErasesPairs = requires(Table & t, std::uint64_t b, std::uint32_t v) {
    { t.erase_pair(b, b, v) } -> std::same_as<bool>;
  };

  using Probe = detail::Probe;

  using BfsNode = detail::BfsNode;

  /// Tables whose width is fixed above kOffsetTableMaxBits never keep offsets, and skip the test.
  static constexpr bool kMayKeepOffsets =
      Table::kFixedBits == 0 || Table::kFixedBits <= kOffsetTableMaxBits;

  using Prober = detail::Prober<kMayKeepOffsets>;
  Prober prober_() const noexcept { return {addressing_, offsets_.data(), !offsets_.empty()}; }
  Probe probe_of(std::uint64_t hash) const noexcept { return prober_()(hash); }

  bool contains_probe(const Probe& p) const noexcept {
    return table_.contains_pair(p.bucket, p.alt, p.fingerprint);
  }

  bool insert_probe(const Probe& p) {
    if (place(p.bucket, p.fingerprint) || place(p.alt, p.fingerprint) ||
        (max_kicks_ > 0 && bfs_insert(p)) ||
        kick_walk((rng_() & 1) != 0 ? p.alt : p.bucket, p.fingerprint)) {
      ++size_;
      return true;
    }
    return false;
  }

  std::size_t count_probe(const Probe& p) const noexcept {
    return table_.count_pair(p.bucket, p.alt, p.fingerprint);
  }

  bool erase_probe(const Probe& p) noexcept {
    bool removed;
    if constexpr (kErasesPairs) {
      removed = table_.erase_pair(p.bucket, p.alt, p.fingerprint);
    } else {
      removed = remove_from(p.bucket, p.fingerprint) || remove_from(p.alt, p.fingerprint);
    }
    if (removed) {
      --size_;
      return true;
    }
    return false;
  }

  /// The batch lookups' loop: answer(reader, i, probe) for each key, over a copy of the table's
  /// LookupReader, prober and hasher in this frame (see detail/prober.hpp): GCC's loop through
  /// *this reloaded the table's base, the output's address and the length per key; 0.91-0.94x
  /// the time in harness runs, about 1x with memory slower (README, "Performance"). Integer keys
  /// hashed by XXH3 at the AVX-512 level are staged eight at a time (detail/vector_probes.hpp).
  template <std::size_t Depth, Key K, class Answer>
  CUCKOO_HOT void lookup_pipeline(std::span<const K> keys, Answer answer) const noexcept {
    const auto reader = table_.lookup_reader();
    const Prober prober = prober_();
    const Hash hasher = hasher_;
    detail::run_lookup_pipeline<Depth, detail::table_isa<Table>()>(
        keys, reader, prober, hasher,
        [&](std::size_t i, const Probe& p) CUCKOO_LAMBDA_HOT { answer(reader, i, p); });
  }

  /// detail::run_prefetch_pipeline over keys, each hashed and both its buckets prefetched for
  /// writing Depth keys ahead of step(i, probe): the batch erase's (the lookups run through
  /// lookup_pipeline, the inserts through insert_pipelined).
  template <std::size_t Depth, Key K, class Step>
  std::size_t write_pipeline(std::span<const K> keys, Step&& step) const {
    return detail::run_prefetch_pipeline<Depth>(
        keys.size(),
        [&](std::size_t i) {
          const Probe p = probe_of(hash_key(hasher_, keys[i]));
          detail::prefetch_buckets<detail::Intent::kWrite>(table_, p.bucket, p.alt);
          return p;
        },
        step);
  }

  struct Displacement {
    std::uint64_t bucket;
    unsigned slot;
    std::uint32_t placed;  // the fingerprint this step put into the bucket
  };

  static std::vector<std::uint32_t> offset_table(const Addressing& addressing, unsigned bits,
                                                 std::size_t table_bytes) {
    if (!kMayKeepOffsets) return {};
    return detail::offset_table(addressing, bits, table_bytes, kOffsetTableMaxBits,
                                kOffsetTableMinBytes);
  }

  static std::size_t second_bucket_prefetch_size(std::uint64_t bucket_count) noexcept {
    return static_cast<std::size_t>(kSecondBucketPrefetchLoad *
                                    static_cast<double>(bucket_count * kBucketSize));
  }

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

  /// Puts fingerprint into the lowest empty slot of bucket; false if it is full.
  bool place(std::uint64_t bucket, std::uint32_t fingerprint) noexcept {
    if constexpr (requires(Table & t) {
                    { t.try_place(bucket, fingerprint) } -> std::same_as<bool>;
                  }) {
      return table_.try_place(bucket, fingerprint);
    } else {
      const int slot = table_.find(bucket, 0);
      if (slot < 0) return false;
      table_.write(bucket, static_cast<unsigned>(slot), fingerprint);
      return true;
    }
  }

  bool remove_from(std::uint64_t bucket, std::uint32_t fingerprint) noexcept {
    const int slot = table_.find(bucket, fingerprint);
    if (slot < 0) return false;
    table_.write(bucket, static_cast<unsigned>(slot), 0);
    return true;
  }

  /// Breadth-first search for a displacement path from the key's two (full) buckets to a bucket
  /// with a free slot (detail/path_search.hpp), then the moves along it, last first. Buckets on
  /// the path are distinct, so each is written once and every slot index read during the search
  /// is still valid when used (a table may reorder a bucket only on a write to it). Touches
  /// nothing unless a path exists.
  bool bfs_insert(const Probe& p) noexcept {
    const std::ptrdiff_t n = detail::find_displacement_path<kBfsNodes, kBfsChunkParents>(
        table_, [this](std::uint64_t bucket, std::uint32_t fp) { return alternate(bucket, fp); },
        p.bucket, p.alt, p.fingerprint, max_kicks_, bfs_.data());
    if (n < 0) return false;
    move_along(static_cast<std::size_t>(n), p.fingerprint);
    return true;
  }

  /// Executes the path ending at node `n` (whose bucket has a free slot), last move first.
  void move_along(std::size_t n, std::uint32_t fingerprint) noexcept {
    (void)place(bfs_[n].bucket, bfs_[n].moved);
    for (std::int32_t child = static_cast<std::int32_t>(n);;) {
      const BfsNode& node = bfs_[child];
      const BfsNode& parent = bfs_[node.parent];
      const std::uint32_t incoming = parent.parent < 0 ? fingerprint : parent.moved;
      table_.write(parent.bucket, node.slot, incoming);
      if (parent.parent < 0) return;
      child = node.parent;
    }
  }

  /// Random-walk displacement from `bucket`; on failure every move is undone in reverse order.
  bool kick_walk(std::uint64_t bucket, std::uint32_t fingerprint) noexcept {
    std::uint32_t carried = fingerprint;
    for (unsigned kick = 0; kick < max_kicks_; ++kick) {
      const auto slot = static_cast<unsigned>(rng_() & (kBucketSize - 1));
      const std::uint32_t victim = table_.exchange(bucket, slot, carried);
      walk_[kick] = {bucket, slot, carried};
      carried = victim;
      bucket = alternate(bucket, carried);
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
  std::vector<Displacement> walk_;           // undo log of the current kick walk, sized once
  std::vector<BfsNode> bfs_;                 // breadth-first insert search, sized once
  std::size_t second_bucket_prefetch_size_;  // size_ from which batch inserts prefetch both buckets
  std::vector<std::uint32_t> offsets_;  // H(fp) for every fp, or empty (see kOffsetTableMaxBits)
};

}  // namespace cuckoo
