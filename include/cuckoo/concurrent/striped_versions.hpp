// cuckoo/concurrent/striped_versions.hpp — per-stripe version counters that are also the stripes'
// writer locks (the optimistic scheme of MemC3, Fan, Andersen, Kaminsky, NSDI 2013).
//
// Bucket i belongs to stripe i mod S (S a power of two, at most kMaxStripes). A stripe's counter
// is even while nobody writes its buckets and odd while a writer holds it:
//
//   writer:  CAS v → v + 1 (v even; acquire), change the buckets with release RMWs, store v + 2
//            (release).
//   reader:  v = load (acquire); give up if odd; read the buckets with acquire loads; the read is
//            good iff the counter still equals v.
//
// This is the seqlock of Boehm's "Can seqlocks get along with programming language memory
// models?" (MSPC 2012) in its fence-free form: a reader whose acquire load saw a writer's release
// RMW of a bucket word synchronizes with it, so it also sees the writer's earlier CAS to the odd
// counter when it reloads the counter, and its check fails; and the acquire loads keep the
// counter's reload from moving above the bucket reads. (The form with relaxed data accesses and
// standalone fences is equivalent, but ThreadSanitizer does not model fences, and GCC refuses
// them under -fsanitize=thread.) On x86 every one of these is a plain load or store, or a locked
// instruction the writer needs anyway. A lookup therefore never writes shared memory and never
// waits for a lock unless a writer touched one of its two stripes during the read.
//
// Deadlock freedom: a thread holds at most two stripes at a time and takes them in increasing
// index order, or all of them in increasing order (lock_all); no other lock is ever held while a
// stripe is waited for.
//
// Why 4096 stripes of 4 bytes: 16 KiB of counters stay in L1/L2 beside a lookup's two bucket
// lines (a lookup reads two counters), and with two threads two writers meet on a stripe about
// once in 4096 operations. Counters are packed, not padded to a line each: padding would cost
// 256 KiB, out of the caches a lookup needs for its own lines.
//
// The lock members are const: they change the counters, which are shared state behind the
// object, and lookups (const) take them in their fallback.
//
// Item counts are kept in kCountShards counters, one cache line each, that writers change with a
// relaxed fetch_add while holding a stripe; size() sums them, exact once writers have stopped.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace cuckoo::concurrent {

inline constexpr std::size_t kMaxStripes = 4096;
inline constexpr std::size_t kCountShards = 64;

/// Spin-wait hint: lets the sibling hyper-thread run and saves power while waiting.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

/// Test-only: builds with CUCKOO_TEST_RACE_WINDOW=N spin N pauses at the points where a race
/// could show (between a move's copy and erase, between the two halves of a straddling entry's
/// write, between a lookup's two buckets, after each step of a kick walk), so that the
/// mutation check (`make mutation-check`) can see a broken protocol fail. Nothing otherwise.
#ifdef CUCKOO_TEST_RACE_WINDOW
#define CUCKOO_WIDEN_RACE_WINDOW()                                                    \
  do {                                                                                \
    for (int cuckoo_spin = 0; cuckoo_spin < (CUCKOO_TEST_RACE_WINDOW); ++cuckoo_spin) \
      ::cuckoo::concurrent::cpu_relax();                                              \
  } while (false)
#else
#define CUCKOO_WIDEN_RACE_WINDOW() \
  do {                             \
  } while (false)
#endif

class StripedVersions {
 public:
  /// Enough stripes for `bucket_count` buckets: min(kMaxStripes, bit_ceil(bucket_count)).
  explicit StripedVersions(std::uint64_t bucket_count)
      : mask_(std::min<std::uint64_t>(kMaxStripes,
                                      std::bit_ceil(std::max<std::uint64_t>(bucket_count, 2))) -
              1),
        versions_(new std::uint32_t[mask_ + 1]()),
        counts_(new CountShard[kCountShards]()) {}

  std::size_t stripe_count() const noexcept { return static_cast<std::size_t>(mask_ + 1); }
  std::size_t stripe_of(std::uint64_t bucket) const noexcept {
    return static_cast<std::size_t>(bucket & mask_);
  }
  std::size_t memory_bytes() const noexcept {
    return stripe_count() * sizeof(std::uint32_t) + kCountShards * sizeof(CountShard);
  }

  // ---- Readers --------------------------------------------------------------------------------

  /// The stripe's version before an optimistic read (odd: a writer is inside; the read will fail).
  std::uint32_t read_begin(std::size_t stripe) const noexcept {
    return version(stripe).load(std::memory_order_acquire);
  }
  /// After the bucket reads (acquire loads): true if the stripe was even at read_begin and nobody
  /// wrote it since.
  bool read_valid(std::size_t stripe, std::uint32_t begun) const noexcept {
    return (begun & 1) == 0 && version(stripe).load(std::memory_order_relaxed) == begun;
  }

  // ---- Writers --------------------------------------------------------------------------------

  void lock(std::size_t stripe) const noexcept {
    auto v = version(stripe);
    for (;;) {
      std::uint32_t seen = v.load(std::memory_order_relaxed);
      if ((seen & 1) == 0 && v.compare_exchange_weak(seen, seen + 1, std::memory_order_acquire,
                                                     std::memory_order_relaxed)) {
        return;
      }
      wait_a_little();
    }
  }
  void unlock(std::size_t stripe) const noexcept {
    auto v = version(stripe);
    v.store(v.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  /// Both stripes, lower index first; one lock when they coincide.
  void lock_pair(std::size_t a, std::size_t b) const noexcept {
    if (a == b) return lock(a);
    lock(std::min(a, b));
    lock(std::max(a, b));
  }
  void unlock_pair(std::size_t a, std::size_t b) const noexcept {
    unlock(a);
    if (a != b) unlock(b);
  }
  /// Every stripe, in increasing order: the table is then the caller's alone.
  void lock_all() const noexcept {
    for (std::size_t s = 0; s < stripe_count(); ++s) lock(s);
  }
  void unlock_all() const noexcept {
    for (std::size_t s = stripe_count(); s-- > 0;) unlock(s);
  }

  // ---- Item count -----------------------------------------------------------------------------

  /// Adds `delta` to the item count; the caller holds `stripe`.
  void add_items(std::size_t stripe, std::int64_t delta) const noexcept {
    counts_[stripe & (kCountShards - 1)].items.fetch_add(delta, std::memory_order_relaxed);
  }
  /// The sum of the shards: exact when no writer is inside, otherwise a value the count passed
  /// through or will pass through once the writers in progress finish.
  std::size_t items() const noexcept {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < kCountShards; ++i) {
      total += counts_[i].items.load(std::memory_order_relaxed);
    }
    return total < 0 ? 0 : static_cast<std::size_t>(total);
  }
  /// Sets the count (construction and clear, with every stripe held or before publication).
  void set_items(std::size_t n) const noexcept {
    for (std::size_t i = 0; i < kCountShards; ++i) {
      counts_[i].items.store(i == 0 ? static_cast<std::int64_t>(n) : 0, std::memory_order_relaxed);
    }
  }

 private:
  struct alignas(64) CountShard {
    std::atomic<std::int64_t> items{0};
  };

  std::atomic_ref<std::uint32_t> version(std::size_t stripe) const noexcept {
    return std::atomic_ref<std::uint32_t>(versions_[stripe]);
  }
  static void wait_a_little() noexcept {
    // A writer holds a stripe for a few hundred nanoseconds; spin that long, then let the holder
    // run (it may be descheduled on this very core).
    for (int i = 0; i < 16; ++i) cpu_relax();
    std::this_thread::yield();
  }

  std::uint64_t mask_;
  std::unique_ptr<std::uint32_t[]> versions_;  // accessed only through std::atomic_ref
  std::unique_ptr<CountShard[]> counts_;
};

/// Holds two stripes for a scope.
class StripePairGuard {
 public:
  StripePairGuard(const StripedVersions& versions, std::size_t a, std::size_t b) noexcept
      : versions_(versions), a_(a), b_(b) {
    versions_.lock_pair(a_, b_);
  }
  StripePairGuard(const StripePairGuard&) = delete;
  StripePairGuard& operator=(const StripePairGuard&) = delete;
  ~StripePairGuard() { versions_.unlock_pair(a_, b_); }

 private:
  const StripedVersions& versions_;
  std::size_t a_, b_;
};

/// Holds every stripe for a scope.
class AllStripesGuard {
 public:
  explicit AllStripesGuard(const StripedVersions& versions) noexcept : versions_(versions) {
    versions_.lock_all();
  }
  AllStripesGuard(const AllStripesGuard&) = delete;
  AllStripesGuard& operator=(const AllStripesGuard&) = delete;
  ~AllStripesGuard() { versions_.unlock_all(); }

 private:
  const StripedVersions& versions_;
};

}  // namespace cuckoo::concurrent
