// cuckoo/concurrent/basic_concurrent_filter.hpp — the cuckoo filter's algorithms (filter.hpp)
// made safe for any number of threads at once.
//
// Lookups are optimistic (MemC3), at two levels (striped_versions.hpp). First, validated by the
// writer-activity word: read it, read both buckets with atomic loads, read it again; if no writer
// was inside the filter and none entered meanwhile, the read is good. That word is one address
// for every key, so its loads cost a single-key lookup almost nothing, where the two stripes'
// counters (addresses that come from the hash) cost it about 20 ns. When writers are about, the
// lookup reads again validated by its two stripes' versions (read them, read both buckets, check
// them again), which only a writer of those stripes disturbs; after kOptimisticReads failed tries
// it reads under both stripes' locks if it can take them (still correct, just slower), and
// otherwise optimistically again after letting the writer run (a SoleWriter holds every stripe
// for its lifetime, and a lookup must not wait for it). A batch lookup
// validates kQuietChunk keys at a time by the activity word. A lookup writes nothing shared.
//
// Writers lock only the stripes of the buckets they change (a stripe covers whole bucket groups,
// atomic_packed_table.hpp), at most two at a time, in increasing order, and enter the
// writer-activity word (striped_versions.hpp), but for an insert into the key's own buckets of an
// entry inside one word: one store that only adds, which lookups need not validate against
// (StripedVersions::AddingGuard):
//   - insert into the key's first bucket, then into its second, each under its own stripe alone;
//     erase from the first bucket under its stripe, then from the second under its own, and
//     only when neither held the key, both again under both stripes (first bucket then second,
//     as BasicFilter), so that "not there" holds at one instant (erase_elsewhere);
//   - a displacement path (when both buckets are full) is found by the same chunked breadth-first
//     search as the single-thread filter, but without any lock, over relaxed reads that may be
//     stale. Its moves are then made from the free end back to the key (libcuckoo's scheme),
//     each under the two stripes it touches and only after checking that the entry to move is
//     still there and the target bucket still has room; the last move leaves the key's
//     fingerprint in the slot it frees, under the same locks. If a check fails (another thread got
//     there first), the moves already made stay (each left an item in its other bucket, so
//     nothing is lost) and the search starts again, at most kPathAttempts times.
//
// Every move copies before it erases: the fingerprint is written into the target bucket, then
// cleared from the source, both under the locks of both stripes. So at no instant is an item in
// neither bucket, and a reader that validates its versions sees either the state before the move
// or after it. A lookup therefore never misses a key whose insert returned before the lookup
// began and whose erase has not begun, whatever inserts, moves and erases run beside it.
//
// Fallback. When the search finds no path (the table is nearly full) or keeps losing races, the
// insert takes every stripe (lock_all) and runs the single-thread filter's last resort, the
// random kick walk with its undo log: the table is then the inserter's alone, lookups retry and
// then wait, and a walk that fails is undone bit for bit, so a failed insert changes nothing. This
// happens only for the last few percent of a fill, and it keeps the capacity guarantee of the
// single-thread filter (sizing.hpp): the same search, then the same walk.
//
// Moves made by a search that ends in a failed insert are real moves of real items (each to its
// other bucket), so the set of fingerprints held, and every answer, is unchanged by the failure.
//
// A sole writer (sole_writer(), concurrent::SoleWriter) runs the same algorithms with the stripes
// already held: each write marks its stripes kWriting and releases them with plain stores instead
// of a CAS, and an insert into the key's own buckets touches no stripe word (place_as_sole_writer),
// so a single-key build does no locked instruction and reads no line but its buckets' and the
// sole count's; that placement is inline in the caller, and the locked one (insert_under_locks)
// a call, whose waits would otherwise cost the sole writer's inlined insert its registers.
// Lookups meanwhile validate as against any writer; other writers wait. A filter's
// first writer thread gets the same without asking (biased writing, striped_versions.hpp): each
// insert_probe and erase_probe is a BiasedWrite, which runs it as a sole writer's while this
// thread holds the bias, until another thread wants a stripe and takes the bias away.
//
// Test-only mutations (never defined in a real build): CUCKOO_TEST_MUTATION_NO_VALIDATION makes
// lookups trust their first read, CUCKOO_TEST_MUTATION_SILENT_WRITERS makes writers leave the
// activity word alone (so the first-level validation passes reads that writers disturbed),
// CUCKOO_TEST_MUTATION_ERASE_BEFORE_COPY makes moves erase first,
// CUCKOO_TEST_MUTATION_UNANNOUNCED_STRADDLERS lets inserts write an entry that straddles two words
// without entering the activity word, CUCKOO_TEST_MUTATION_ERASE_WITHOUT_BOTH_STRIPES lets an
// erase answer "not there" from its two one-stripe tries, CUCKOO_TEST_MUTATION_UNMARKED_SOLE_WRITES
// lets a SoleWriter's writes leave kWriting clear (striped_versions.hpp). `make mutation-check`
// builds the concurrent tests with each and shows they fail.
//
// Template parameters:
//   Table   AtomicPackedTable<b, f> (any b ∈ {2, 4, 8}, any f): a table whose reads are relaxed
//           atomic loads and whose writes flip one entry's bits only.
//   Hash    a seeded 64-bit hasher (hash.hpp); XXH3 by default, as for BasicFilter, so that the
//           same key lands in the same buckets with the same fingerprint in both filters.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "cuckoo/addressing.hpp"
#include "cuckoo/concurrent/atomic_packed_table.hpp"
#include "cuckoo/concurrent/striped_versions.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/detail/key_forwarding.hpp"
#include "cuckoo/detail/path_search.hpp"
#include "cuckoo/detail/prefetch_pipeline.hpp"
#include "cuckoo/detail/preserving_call.hpp"
#include "cuckoo/detail/prober.hpp"
#include "cuckoo/detail/rng.hpp"
#include "cuckoo/detail/vector_probes.hpp"
#include "cuckoo/filter.hpp"
#include "cuckoo/hash.hpp"
#include "cuckoo/sizing.hpp"

namespace cuckoo {
namespace detail {
#ifdef CUCKOO_TEST_MUTATION_NO_VALIDATION
inline constexpr bool kConcurrentReadsValidated = false;  // mutation: unvalidated reads
#else
inline constexpr bool kConcurrentReadsValidated = true;
#endif
}  // namespace detail

template <class Table, Hasher Hash = Xxh3Hasher>
class BasicConcurrentFilter : public detail::KeyForwarding<BasicConcurrentFilter<Table, Hash>> {
  using KeyForwarding = detail::KeyForwarding<BasicConcurrentFilter>;

 public:
  using table_type = Table;
  using hasher_type = Hash;
  /// The single-thread filter with the same layout and hash (conversions go through its table).
  using filter_type = BasicFilter<typename Table::packed_table_type, Hash>;
  static constexpr unsigned kBucketSize = Table::kBucketSize;
  /// Optimistic reads of a lookup before it locks its two stripes instead.
  static constexpr unsigned kOptimisticReads = 64;
  static constexpr bool kValidateReads = detail::kConcurrentReadsValidated;
  /// Keys a batch lookup validates together.
  static constexpr std::size_t kQuietChunk = 32;
  /// Lock-free path searches an insert makes before it falls back to the exclusive kick walk.
  static constexpr unsigned kPathAttempts = 4;
  /// Pipeline depths of the batch calls: BasicFilter's (measured there).
  static constexpr std::size_t kPipelineDepth = filter_type::kPipelineDepth;
  static constexpr std::size_t kWritePipelineDepth = filter_type::kWritePipelineDepth;
  static constexpr double kSecondBucketPrefetchLoad = filter_type::kSecondBucketPrefetchLoad;
  static constexpr std::size_t kBfsNodes = filter_type::kBfsNodes;
  static constexpr std::size_t kBfsChunkParents = filter_type::kBfsChunkParents;

  /// Sizes the filter from cfg exactly as BasicFilter does; throws std::invalid_argument.
  explicit BasicConcurrentFilter(const Config& cfg = {})
      : BasicConcurrentFilter(checked_layout(cfg), cfg.capacity, cfg.max_kicks, cfg.seed) {}

  BasicConcurrentFilter(const Layout& layout, std::size_t capacity, unsigned max_kicks,
                        std::uint64_t seed)
      : table_(layout.bucket_count, layout.fingerprint_bits),
        stripes_(layout.bucket_count, table_.group_shift()),
        addressing_(layout.bucket_count, layout.fingerprint_bits),
        hasher_(seed),
        rng_(seed ^ kKickStreamTweak),
        seed_(seed),
        capacity_(capacity),
        max_kicks_(max_kicks),
        walk_(max_kicks),
        offsets_(offset_table(addressing_, layout.fingerprint_bits,
                              Table::bytes_for(layout.bucket_count, layout.fingerprint_bits))) {}

  /// A concurrent copy of a single-thread filter: the same table bits, size and parameters.
  explicit BasicConcurrentFilter(const filter_type& filter)
      : BasicConcurrentFilter(filter.layout(), filter.capacity(), filter.max_kicks(),
                              filter.seed()) {
    assign_unchecked(filter.table().bytes(), filter.size());
  }

  /// Sets the table from PackedTable bytes of the same layout, and the item count. Only before
  /// any other thread can see the filter (construction, loading).
  void assign_unchecked(std::span<const std::byte> packed, std::size_t items) noexcept {
    table_.assign(packed);
    stripes_.set_items(items);
  }

  /// Copies the table out in PackedTable's form (packed.size() == table().packed_bytes()) and
  /// returns the item count, both as of one instant: every stripe is held meanwhile, so writers
  /// wait for the copy and lookups retry.
  std::size_t copy_table_to(std::span<std::byte> packed) const noexcept {
    const concurrent::AllStripesGuard all(stripes_);
    table_.copy_to(packed);
    return stripes_.items();
  }

  /// A snapshot as a single-thread filter (see copy_table_to).
  filter_type snapshot() const {
    filter_type out(layout(), capacity_, max_kicks_, seed_);
    out.set_size_unchecked(copy_table_to(out.mutable_table().bytes()));
    return out;
  }

  // ---- Single-key operations (any thread) ----------------------------------------------------

  // detail::KeyForwarding: key -> its hash -> the *_hash call; contains and insert are declared
  // here instead.
  using KeyForwarding::count;
  using KeyForwarding::erase;
  /// Forced inline, like the whole lookup: a single-key lookup is limited by how many fit in the
  /// core's out-of-order window, and out of line it reloaded the filter's members and saved
  /// registers on every call (measured below, README "Concurrency").
  template <Key K>
  CUCKOO_HOT bool contains(const K& key) const noexcept {
    return contains_hash(hash_key(hasher_, key));
  }
  /// Forced inline, as contains and insert_hash: KeyForwarding's insert, a plain inline function
  /// around the forced insert_hash, was left out of line by GCC in the benchmark's build loop,
  /// and every insert paid the call's six register saves and restores, stores and loads (README,
  /// Concurrency, "A sole writer's insert without the locked path's code").
  template <Key K>
  CUCKOO_HOT bool insert(const K& key) {
    return insert_hash(hash_key(hasher_, key));
  }

  /// Forced inline, as contains: out of line, a single-key insert ran 16 more instructions (the
  /// call's register saves and reloads) and a build from empty to half of 192 MiB took 68 ns
  /// per key instead of 62 (README, Concurrency).
  CUCKOO_HOT bool insert_hash(std::uint64_t hash) {
    const Probe p = probe_of(hash);
    table_.prefetch(p.alt);
    return insert_probe</*prefetch_first=*/true>(p);
  }
  CUCKOO_HOT bool contains_hash(std::uint64_t hash) const noexcept {
    return contains_probe(probe_of(hash));
  }
  bool erase_hash(std::uint64_t hash) noexcept {
    const Probe p = probe_of(hash);
    table_.prefetch(p.alt);
    return erase_probe(p);
  }
  CUCKOO_HOT std::size_t count_hash(std::uint64_t hash) const noexcept {
    return count_probe(probe_of(hash));
  }

  // ---- Batches: BasicFilter's pipeline; each key's operation is the single-key one -----------

  /// out[i] = contains(keys[i]); out.size() must be at least keys.size(). See quiet_batch.
  template <Key K>
  void contains(std::span<const K> keys, std::span<bool> out) const noexcept {
    quiet_batch<&BasicConcurrentFilter::contains_hash>(
        keys, out, [](const auto& reader, const Probe& p) CUCKOO_LAMBDA_HOT {
          return reader.contains_pair(p.bucket, p.alt, p.fingerprint);
        });
  }
  /// out[i] = count(keys[i]); out.size() must be at least keys.size(). See quiet_batch.
  template <Key K>
  void count(std::span<const K> keys, std::span<std::size_t> out) const noexcept {
    quiet_batch<&BasicConcurrentFilter::count_hash>(
        keys, out, [](const auto& reader, const Probe& p) CUCKOO_LAMBDA_HOT {
          return std::size_t{reader.count_pair(p.bucket, p.alt, p.fingerprint)};
        });
  }
  /// Inserts keys in order and stops at the first that does not fit; returns how many went in
  /// (keys[r], if any, failed and changed nothing; later keys were not tried).
  template <Key K>
  std::size_t insert(std::span<const K> keys) {
    const concurrent::StripedVersions::WriteScope writing(stripes_);
    // Whether to prefetch second buckets follows the load, estimated once per batch.
    const std::size_t estimated_size = size();
    const std::size_t threshold = second_bucket_prefetch_size();
    return detail::run_prefetch_pipeline<kWritePipelineDepth>(
        keys.size(),
        [&](std::size_t i) {
          const Probe p = probe_of(hash_key(hasher_, keys[i]));
          table_.prefetch(p.bucket);
          if (estimated_size + i >= threshold) table_.prefetch(p.alt);
          return p;
        },
        [&](std::size_t, const Probe& p) { return insert_probe(p); });
  }
  /// Erases one copy of each key in order (keys not found are skipped); returns copies removed.
  template <Key K>
  std::size_t erase(std::span<const K> keys) noexcept {
    const concurrent::StripedVersions::WriteScope writing(stripes_);
    std::size_t removed = 0;
    write_pipeline<kWritePipelineDepth>(keys, [&](std::size_t, const Probe& p) {
      removed += erase_probe(p) ? 1 : 0;
      return true;
    });
    return removed;
  }

  // ---- Shape and state -----------------------------------------------------------------------

  /// Items held: exact when no writer is inside an operation (e.g. after the threads joined).
  std::size_t size() const noexcept { return stripes_.items(); }
  bool empty() const noexcept { return size() == 0; }
  std::size_t capacity() const noexcept { return capacity_; }
  std::uint64_t bucket_count() const noexcept { return addressing_.bucket_count(); }
  std::uint64_t slot_count() const noexcept { return bucket_count() * kBucketSize; }
  double load_factor() const noexcept {
    return static_cast<double>(size()) / static_cast<double>(slot_count());
  }
  unsigned fingerprint_bits() const noexcept { return table_.fingerprint_bits(); }
  unsigned bucket_size() const noexcept { return kBucketSize; }
  /// The table's words plus the stripes' version counters and item counts.
  std::size_t memory_bytes() const noexcept {
    return table_.memory_bytes() + stripes_.memory_bytes();
  }
  std::uint64_t seed() const noexcept { return seed_; }
  unsigned max_kicks() const noexcept { return max_kicks_; }
  const Hash& hasher() const noexcept { return hasher_; }
  const Addressing& addressing() const noexcept { return addressing_; }
  const Table& table() const noexcept { return table_; }
  const concurrent::StripedVersions& stripes() const noexcept { return stripes_; }
  Layout layout() const noexcept {
    return {bucket_count(), fingerprint_bits(), kBucketSize, false};
  }
  std::uint64_t alternate(std::uint64_t bucket, std::uint32_t fingerprint) const noexcept {
    return prober_().alternate(bucket, fingerprint);
  }

  /// Empties the filter (every stripe held while the table is cleared).
  void clear() noexcept {
    const concurrent::AllStripesGuard all(stripes_);
    table_.clear();
    stripes_.set_items(0);
  }

  /// Makes the calling thread this filter's only writer while the result lives: its inserts and
  /// erases then take no locked instruction, lookups of every thread go on, and other threads'
  /// writes wait (concurrent::SoleWriter, striped_versions.hpp).
  [[nodiscard]] concurrent::SoleWriter sole_writer() { return concurrent::SoleWriter(stripes_); }

  /// How many inserts fell back to the exclusive kick walk (for tests and benchmarks).
  std::size_t exclusive_inserts() const noexcept {
    return exclusive_inserts_.load(std::memory_order_relaxed);
  }

 private:
  static constexpr std::uint64_t kKickStreamTweak = 0x5851F42D4C957F2Dull;  // as BasicFilter's
  static constexpr unsigned kOffsetTableMaxBits = filter_type::kOffsetTableMaxBits;
  static constexpr std::size_t kOffsetTableMinBytes = filter_type::kOffsetTableMinBytes;
  static constexpr bool kMayKeepOffsets =
      Table::kFixedBits == 0 || Table::kFixedBits <= kOffsetTableMaxBits;

  enum class PathResult { kInserted, kNoPath, kRaced };

  using Probe = detail::Probe;
  using BfsNode = detail::BfsNode;
  struct Displacement {
    std::uint64_t bucket;
    unsigned slot;
    std::uint32_t placed;
  };

  static Layout checked_layout(const Config& cfg) {
    Layout layout = plan(cfg);
    if (layout.semi_sort) {
      detail::invalid("semi_sort: concurrent filters use plain tables only");
    }
    if (layout.bucket_size != kBucketSize) {
      detail::invalid("this filter is compiled for bucket_size " + std::to_string(kBucketSize) +
                      ", got " + std::to_string(layout.bucket_size));
    }
    return layout;
  }

  static std::vector<std::uint32_t> offset_table(const Addressing& addressing, unsigned bits,
                                                 std::size_t table_bytes) {
    if (!kMayKeepOffsets) return {};
    return detail::offset_table(addressing, bits, table_bytes, kOffsetTableMaxBits,
                                kOffsetTableMinBytes);
  }

  std::size_t second_bucket_prefetch_size() const noexcept {
    return static_cast<std::size_t>(kSecondBucketPrefetchLoad * static_cast<double>(slot_count()));
  }

  /// A key's probe from its hash: the addressing and the offset table, by value, so that a batch
  /// loop can hold them in registers (see the batch contains).
  using Prober = detail::Prober<kMayKeepOffsets>;
  Prober prober_() const noexcept { return {addressing_, offsets_.data(), !offsets_.empty()}; }
  Probe probe_of(std::uint64_t hash) const noexcept { return prober_()(hash); }

  std::size_t stripe_of(std::uint64_t bucket) const noexcept { return stripes_.stripe_of(bucket); }

  // ---- Reads --------------------------------------------------------------------------------

  /// The probe's two buckets read as of one instant: MemC3's optimistic read in two levels. First
  /// validated by the activity word alone (one line that every reader shares); when a writer was
  /// about, by the two stripes' versions (two more lines, picked by the key's hash), retried up to
  /// kOptimisticReads times in all (pair_retry); then under the stripes' locks.
  ///
  /// Written out as one straight try with the retries out of line: with the read as a lambda, GCC
  /// kept the probe on the stack (its address escaped to the locked fallback), and with the retry
  /// loop inline it hoisted the loop's state into spills. The table reads the activity word around
  /// the buckets itself (a QuietRead's loads), so that where it reads them by assembly no fence
  /// makes the caller's loop reload the filter. count_probe is the same read, counting.
  CUCKOO_HOT bool contains_probe(const Probe& p) const noexcept {
    if constexpr (!kValidateReads)  // mutation: unvalidated reads
      return table_.contains_pair(p.bucket, p.alt, p.fingerprint);
    return table_.contains_pair_quiet_or(stripes_.activity_word(), p.bucket, p.alt, p.fingerprint,
                                         [&] { return contains_disturbed(p); });
  }
  /// contains_probe's second level (pair_retry). Where the table reads by assembly, by a call
  /// that the caller's loop does not see (detail/preserving_call.hpp): an ordinary call here,
  /// however rare, made GCC reload the filter's members for every key of a caller's loop, and
  /// so did pair_retry's loop written inline (README, Concurrency, "A call the loop does not
  /// see").
  [[gnu::always_inline]] bool contains_disturbed(const Probe& p) const noexcept {
    if constexpr (Table::kReadsBetweenByAssembly && detail::kPreservingCallAvailable) {
      detail::PreservedCall call{&retried_contains, this, p.bucket, p.alt, p.fingerprint, 0};
      detail::call_preserving_registers<Table::kIsa >= Isa::kAvx512 || detail::kBuildHasAvx512>(
          call, *this);
      return call.result != 0;
    } else {
      return pair_retry<&Table::contains_pair>(p.bucket, p.alt, p.fingerprint);
    }
  }
  static std::uint64_t retried_contains(const void* filter, std::uint64_t b1, std::uint64_t b2,
                                        std::uint64_t fp) noexcept {
    return static_cast<const BasicConcurrentFilter*>(filter)->pair_retry<&Table::contains_pair>(
               b1, b2, static_cast<std::uint32_t>(fp))
               ? 1
               : 0;
  }
  CUCKOO_HOT std::size_t count_probe(const Probe& p) const noexcept {
    if constexpr (!kValidateReads)  // mutation: unvalidated reads
      return table_.count_pair(p.bucket, p.alt, p.fingerprint);
    bool quiet;
    const unsigned n =
        table_.count_pair_between(stripes_.activity_word(), p.bucket, p.alt, p.fingerprint, quiet);
    if (quiet) [[likely]]
      return n;
    return pair_retry<&Table::count_pair>(p.bucket, p.alt, p.fingerprint);
  }
  /// The batch lookups: out[i] = answer(reader, probe of keys[i]) through BasicFilter's pipeline,
  /// validated a chunk of kQuietChunk keys at a time by the writer-activity word (see
  /// contains_probe); the keys of a chunk that a writer may have touched are answered again, each
  /// by kAnswerOne, the single-key call (a member taking the key's hash). The loop reads the
  /// filter through copies in this frame (see Table::LookupReader): 10.2-11.7 ns per key, against
  /// 12.2-13.7 reading it through *this (README, "Concurrency"). The batch count validated each
  /// key by its stripes' versions before 2026-12-02, and read entries one by one: 0.45-0.53x the
  /// time now.
  template <auto kAnswerOne, Key K, class T, class Answer>
  CUCKOO_HOT void quiet_batch(std::span<const K> keys, std::span<T> out,
                              Answer answer) const noexcept {
    const typename Table::LookupReader reader = table_.lookup_reader();
    const Prober prober = prober_();
    const Hash hasher = hasher_;
    const std::size_t n = keys.size();
    concurrent::StripedVersions::QuietRead chunk(stripes_);
    std::size_t chunk_start = 0, chunk_end = std::min(n, kQuietChunk);
    chunk.begin();
    const auto step = [&](std::size_t i, const Probe& p) CUCKOO_LAMBDA_HOT {
      out[i] = answer(reader, p);
      if (i + 1 == chunk_end) {
        if (kValidateReads && !chunk.valid()) [[unlikely]]
          answer_again<kAnswerOne>(keys, out, chunk_start, chunk_end);
        chunk_start = chunk_end;
        chunk_end = std::min(n, chunk_end + kQuietChunk);
        chunk.begin();
      }
    };
    detail::run_lookup_pipeline<kPipelineDepth, detail::table_isa<Table>()>(keys, reader, prober,
                                                                            hasher, step);
  }
  template <auto kAnswerOne, Key K, class T>
  [[gnu::noinline]] void answer_again(std::span<const K> keys, std::span<T> out, std::size_t begin,
                                      std::size_t end) const noexcept {
    for (std::size_t i = begin; i < end; ++i)
      out[i] = (this->*kAnswerOne)(hash_key(hasher_, keys[i]));
  }
  /// The second level of contains_probe's and count_probe's read, after the activity word said a
  /// writer was about: (table_.*kRead)(b1, b2, fp) validated by the two stripes' versions, then
  /// under their locks when it can take them, and otherwise (a writer holds one: a SoleWriter may
  /// hold it for long) optimistically again after letting the writer run. A read under the locks
  /// changes nothing, so it does not enter the activity word.
  template <auto kRead>
  [[gnu::noinline]] auto pair_retry(std::uint64_t b1, std::uint64_t b2,
                                    std::uint32_t fp) const noexcept {
    const std::size_t s1 = stripe_of(b1), s2 = stripe_of(b2);
    concurrent::StripedVersions::PairRead read(stripes_, s1, s2);
    for (unsigned attempt = 1;; ++attempt) {
      if (attempt >= kOptimisticReads && stripes_.try_lock_pair(s1, s2)) {
        const auto answer = (table_.*kRead)(b1, b2, fp);
        stripes_.unlock_pair(s1, s2);
        return answer;
      }
      if (attempt > 1) concurrent::StripedVersions::wait_for_writer(attempt >= kOptimisticReads);
      read.begin();
      const auto answer = (table_.*kRead)(b1, b2, fp);
      if (read.valid()) return answer;
    }
  }

  // ---- Writes -------------------------------------------------------------------------------

  /// Removes from the first bucket holding only its stripe when it can (one lock, not two), then
  /// from the second holding only its stripe; only when neither held the key, both stripes, to
  /// answer "not there" at one instant. The first bucket's case inline in the caller, as
  /// insert_probe's.
  CUCKOO_HOT bool erase_probe(const Probe& p) noexcept {
    const concurrent::StripedVersions::BiasedWrite write(stripes_);
    return erase_from(p.bucket, p.fingerprint) || erase_elsewhere(p);
  }
  CUCKOO_HOT bool erase_from(std::uint64_t bucket, std::uint32_t fingerprint) noexcept {
    concurrent::StripeGuard locked(stripes_, stripe_of(bucket));
    if (!table_.remove(bucket, fingerprint)) return false;
    locked.add_items(-1);
    return true;
  }
  /// A removal takes effect at its store, so each bucket may be tried under its own stripe; but
  /// a key that a displacement path moved from the second bucket to the first between the two
  /// tries is in neither when tried, so "not there" is decided with both stripes held. (The
  /// second bucket alone, instead of both stripes straight away: one locked instruction and one
  /// search of the first bucket fewer for the keys that sit there.)
  [[gnu::noinline]] bool erase_elsewhere(const Probe& p) noexcept {
    CUCKOO_WIDEN_RACE_WINDOW();
    if (p.alt != p.bucket && erase_from(p.alt, p.fingerprint)) return true;
#ifdef CUCKOO_TEST_MUTATION_ERASE_WITHOUT_BOTH_STRIPES
    return false;  // mutation: "not there" from two tries at different instants
#endif
    concurrent::StripePairGuard locked(stripes_, stripe_of(p.bucket), stripe_of(p.alt));
    if (table_.remove(p.bucket, p.fingerprint) || table_.remove(p.alt, p.fingerprint)) {
      locked.add_items(-1);
      return true;
    }
    return false;
  }

  /// The common case inline in the caller, the rest out of line. A sole writer (a SoleWriter's
  /// thread, or the bias holder inside its BiasedWrite) places into the key's own buckets with
  /// plain stores, inline; everything else is a call: the locked placement (insert_under_locks)
  /// and the displacements (insert_displacing), taking the probe in registers. Inlined, the
  /// locked path's waits and calls, though never run by a sole writer, made the compiler keep
  /// the key, the probe and the shifted entry on the stack: a biased insert made twelve stores
  /// (six to the stack) against Filter's three, now seven (one), and a single-key build from
  /// empty to half of 192 MiB took 1.39-1.42x Filter's time, now 1.14-1.19x (README,
  /// Concurrency, "A sole writer's insert without the locked path's code").
  template <bool prefetch_first = false>
  CUCKOO_HOT bool insert_probe(const Probe& p) {
    const concurrent::StripedVersions::BiasedWrite write(stripes_);
    if (stripes_.sole_writer_here())
      return place_in_own_buckets_as_sole_writer(p) ||
             insert_displacing(p.bucket, p.alt, p.fingerprint);
    return insert_under_locks<prefetch_first>(p.bucket, p.alt, p.fingerprint);
  }
  /// insert_probe for a writer that is not the sole one: the key's own buckets under their
  /// stripes, then the displacements. `prefetch_first` (single-key inserts; a batch has asked
  /// already) asks for the first bucket's lines before the stripe's locked instruction, which
  /// waits for every earlier load but not for prefetches, so the lines arrive meanwhile
  /// (single-key builds 1.32 / 1.27 -> 1.26 / 1.16x Filter's in two runs). A sole writer reads
  /// the bucket at once and does not ask: for it the prefetch only cost (README, Concurrency).
  template <bool prefetch_first>
  [[gnu::noinline]] bool insert_under_locks(std::uint64_t bucket, std::uint64_t alt,
                                            std::uint32_t fingerprint) {
    const Probe p{bucket, alt, fingerprint};
    if constexpr (prefetch_first) table_.prefetch(p.bucket);
    return place_in_own_buckets_under_locks(p) || insert_displacing(p.bucket, p.alt, p.fingerprint);
  }
  /// The rest of an insert whose buckets are full: displacement paths, then the exclusive walk.
  [[gnu::noinline]] bool insert_displacing(std::uint64_t bucket, std::uint64_t alt,
                                           std::uint32_t fingerprint) {
    const Probe p{bucket, alt, fingerprint};
    if (max_kicks_ == 0) return false;
    for (unsigned attempt = 0; attempt < kPathAttempts; ++attempt) {
      const PathResult result = insert_by_path(p);
      if (result == PathResult::kInserted) return true;
      if (result == PathResult::kNoPath) break;
    }
    return insert_exclusive(p);
  }

  /// Places in the key's own buckets, as the sole writer or under locks (a path's last step).
  CUCKOO_HOT bool place_in_own_buckets(const Probe& p) noexcept {
    if (stripes_.sole_writer_here()) return place_in_own_buckets_as_sole_writer(p);
    return place_in_own_buckets_under_locks(p);
  }
  CUCKOO_HOT bool place_in_own_buckets_as_sole_writer(const Probe& p) noexcept {
    return place_as_sole_writer(p.bucket, p.fingerprint) ||
           place_as_sole_writer(p.alt, p.fingerprint);
  }
  /// Places in the first bucket, then in the second, each under its own stripe alone: an insert
  /// needs no instant at which both buckets are seen together (it takes effect at the store that
  /// places it), and one lock per bucket tried is one locked instruction fewer than holding both
  /// for the second try. It only adds entries, so it enters the writer-activity word only for an
  /// entry written by two stores (AddingGuard). (Peeking at the first bucket before its lock, to
  /// skip that lock when the bucket is full, measured slower: the lock's locked instruction then
  /// waits for the peek.)
  CUCKOO_HOT bool place_in_own_buckets_under_locks(const Probe& p) noexcept {
    return place_under_lock(p.bucket, p.fingerprint) || place_under_lock(p.alt, p.fingerprint);
  }
  CUCKOO_HOT bool place_under_lock(std::uint64_t bucket, std::uint32_t fingerprint) noexcept {
    const std::size_t stripe = stripe_of(bucket);
    concurrent::AddingGuard locked(stripes_, stripe, stripe);
    if (table_.try_place(bucket, fingerprint, [&] { locked.announce(); })) {
      locked.add_items(1);
      return true;
    }
    return false;
  }

  /// place_under_lock in the thread of a SoleWriter, which holds every stripe: no other writer
  /// can change the bucket, and a lookup needs no validation against a store that only adds
  /// (AddingGuard), so only an entry written by two stores marks its stripe; the count goes to
  /// the sole writers' share. No stripe word is touched for the commonest insert: with it marked
  /// and released as for any write, a single-key build from empty to 95% of 192 MiB took
  /// 1.35x Filter's time (README, Concurrency).
  CUCKOO_HOT bool place_as_sole_writer(std::uint64_t bucket, std::uint32_t fingerprint) noexcept {
    std::size_t marked = concurrent::kMaxStripes;
    if (!table_.try_place(bucket, fingerprint, [&] {
          marked = stripe_of(bucket);
          stripes_.mark_as_sole_writer(marked);
          stripes_.enter_write();  // a session entered once; a biased write enters here
        })) {
      return false;
    }
    if (marked != concurrent::kMaxStripes) [[unlikely]] {
      stripes_.leave_write();
      stripes_.release_as_sole_writer(marked);
    }
    stripes_.add_sole_items(1);
    return true;
  }

  /// BasicFilter's path search without locks (detail/path_search.hpp), then the moves under locks
  /// (see the top).
  PathResult insert_by_path(const Probe& p) noexcept {
    std::array<BfsNode, kBfsNodes> bfs;
    const std::ptrdiff_t n = detail::find_displacement_path<kBfsNodes, kBfsChunkParents>(
        table_, [this](std::uint64_t bucket, std::uint32_t fp) { return alternate(bucket, fp); },
        p.bucket, p.alt, p.fingerprint, max_kicks_, bfs.data());
    if (n < 0) return PathResult::kNoPath;
    return move_along(bfs, static_cast<std::size_t>(n), p);
  }

  /// The path ending at node `n`, free end first: each move checked and made under the two
  /// stripes it touches, copy before erase, the last one leaving the key in the root bucket's
  /// slot it frees (move_entry's `replacement`).
  PathResult move_along(const std::array<BfsNode, kBfsNodes>& bfs, std::size_t n,
                        const Probe& p) noexcept {
    auto child = static_cast<std::int32_t>(n);
    if (bfs[child].parent < 0) {  // the search found room in a root bucket itself
      return place_in_own_buckets(p) ? PathResult::kInserted : PathResult::kRaced;
    }
    for (;; child = bfs[child].parent) {
      const BfsNode& node = bfs[child];
      const BfsNode& parent = bfs[node.parent];
      const bool last = parent.parent < 0;  // this move frees the slot the key takes
      if (!move_entry(parent.bucket, node.slot, node.moved, node.bucket,
                      last ? p.fingerprint : 0)) {
        return PathResult::kRaced;
      }
      if (last) return PathResult::kInserted;
    }
  }

  /// Moves `value` from slot `slot` of `from` to an empty slot of `to` (= alt(from, value)), if
  /// the slot still holds it and `to` still has room, and leaves `replacement` in the slot (0:
  /// none). The last move of a path hands the freed slot to the key being inserted under the
  /// same locks, as BasicFilter's path writes it: a separate placement afterwards took the first
  /// bucket's stripe again, and the second's too when the freed slot was there.
  bool move_entry(std::uint64_t from, unsigned slot, std::uint32_t value, std::uint64_t to,
                  std::uint32_t replacement) noexcept {
    concurrent::StripePairGuard locked(stripes_, stripe_of(from), stripe_of(to));
    if (table_.read(from, slot) != value) return false;
#ifdef CUCKOO_TEST_MUTATION_ERASE_BEFORE_COPY
    if (!table_.has_free(to)) return false;  // mutation: the item is briefly in neither bucket
    table_.write(from, slot, value, 0);
    CUCKOO_WIDEN_RACE_WINDOW();
    if (!table_.try_place(to, value)) return false;
    if (replacement != 0) {
      table_.write(from, slot, 0, replacement);
      locked.add_items(1);
    }
    return true;
#endif
    if (!table_.try_place(to, value)) return false;  // copy ...
    CUCKOO_WIDEN_RACE_WINDOW();
    table_.write(from, slot, value, replacement);  // ... before erase
    if (replacement != 0) locked.add_items(1);
    return true;
  }

  /// The last resort with every stripe held: the single-thread filter's own order (both
  /// buckets, then the random walk with its undo log), so a failure changes nothing.
  [[gnu::noinline]] bool insert_exclusive(const Probe& p) noexcept {
    const concurrent::AllStripesGuard all(stripes_);  // also guards walk_ and rng_
    exclusive_inserts_.fetch_add(1, std::memory_order_relaxed);
    if (table_.try_place(p.bucket, p.fingerprint) || table_.try_place(p.alt, p.fingerprint) ||
        kick_walk((rng_() & 1) != 0 ? p.alt : p.bucket, p.fingerprint)) {
      stripes_.add_items(stripe_of(p.bucket), 1);
      return true;
    }
    return false;
  }

  bool kick_walk(std::uint64_t bucket, std::uint32_t fingerprint) noexcept {
    std::uint32_t carried = fingerprint;
    for (unsigned kick = 0; kick < max_kicks_; ++kick) {
      const auto slot = static_cast<unsigned>(rng_() & (kBucketSize - 1));
      const std::uint32_t victim = table_.read(bucket, slot);
      table_.write(bucket, slot, victim, carried);
      walk_[kick] = {bucket, slot, carried};
      CUCKOO_WIDEN_RACE_WINDOW();
      carried = victim;
      bucket = alternate(bucket, carried);
      if (table_.try_place(bucket, carried)) return true;
    }
    for (unsigned kick = max_kicks_; kick-- > 0;) {
      const Displacement& step = walk_[kick];
      table_.write(step.bucket, step.slot, step.placed, carried);
      carried = step.placed;
    }
    return false;
  }

  /// detail::run_prefetch_pipeline over keys, as BasicFilter's write_pipeline (the batch erase's).
  template <std::size_t Depth, Key K, class Step>
  void write_pipeline(std::span<const K> keys, Step&& step) const {
    detail::run_prefetch_pipeline<Depth>(
        keys.size(),
        [&](std::size_t i) {
          const Probe p = probe_of(hash_key(hasher_, keys[i]));
          detail::prefetch_buckets<detail::Intent::kWrite>(table_, p.bucket, p.alt);
          return p;
        },
        step);
  }

  mutable Table table_;  // mutable: reads and writes are atomic operations on its words
  concurrent::StripedVersions stripes_;
  Addressing addressing_;
  Hash hasher_;
  detail::SplitMix64 rng_;  // kick walks only, with every stripe held
  std::uint64_t seed_;
  std::size_t capacity_;
  unsigned max_kicks_;
  std::vector<Displacement> walk_;  // undo log of the exclusive kick walk, every stripe held
  std::atomic<std::size_t> exclusive_inserts_{0};
  std::vector<std::uint32_t> offsets_;
};

}  // namespace cuckoo
