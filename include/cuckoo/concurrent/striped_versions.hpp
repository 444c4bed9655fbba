// cuckoo/concurrent/striped_versions.hpp — per-stripe version counters that are also the stripes'
// writer locks (the optimistic scheme of MemC3, Fan, Andersen, Kaminsky, NSDI 2013).
//
// Buckets are taken in groups of G = 2^group_shift consecutive buckets, the fewest whose bits
// fill whole 64-bit words (AtomicPackedTable::kGroupShift), and group g belongs to stripe g mod S
// (S a power of two, at most kMaxStripes). A writer holding a stripe therefore owns every bit of
// every word its buckets touch, and changes them with plain atomic stores, not locked
// read-modify-writes. A stripe's word has two flags below its counter: kHeld, the writers' lock,
// and kWriting, set while its buckets are being changed, the only one readers look at:
//
//   writer:  CAS v → v | kHeld | kWriting (kHeld clear; acquire), change the buckets with release
//            stores, store v + 4 with both flags clear (release).
//   reader:  v = load (acquire); give up if kWriting; read the buckets with acquire loads; the
//            read is good iff the word still equals v.
//
// The two flags are apart so that a thread can hold kHeld of every stripe for a while without
// stopping lookups: a SoleWriter (below) is the filter's only writer for its lifetime, and then
// marks a write with plain stores (kWriting set, relaxed; the buckets; kWriting clear, release)
// instead of a locked instruction per write, which is a full barrier: it stops a single-key
// insert's cache miss from overlapping the next key's. An insert into the key's own buckets, which
// only adds an entry, then touches no stripe word at all: the stripe word's line, picked by the
// hash from 32 KiB that the table's stream evicts from L1, cost a single-key build more than the
// locked instruction did (README, Concurrency, "One writer without locks").
//
// This is the seqlock of Boehm's "Can seqlocks get along with programming language memory
// models?" (MSPC 2012) in its fence-free form: a reader whose acquire load saw a writer's release
// store to a bucket word synchronizes with it, so it also sees the writer's earlier setting of
// kWriting when it reloads the word, and its check fails; and the acquire loads keep the
// counter's reload from moving above the bucket reads. (The form with relaxed data accesses and
// standalone fences is equivalent, but ThreadSanitizer does not model fences, and GCC refuses
// them under -fsanitize=thread.) On x86 every one of these is a plain load or store but the CAS. A
// lookup therefore never writes shared memory and never waits for a lock unless a writer touched
// one of its two stripes during the read.
//
// The writer-activity word. The counters' loads are cheap in cycles but not in a single-key loop
// on a large table: there every load whose address comes from the key's hash holds a place in
// the core's window while the bucket lines are awaited, and re-reading two counters cost a lookup
// about 20 ns of 64 (README, "Concurrency"), while the same loads from one fixed address cost
// nothing measurable. So lookups first validate by one word for the whole filter: writers inside
// in its low bits, writes completed above them. Every writer adds 1 when it enters (after taking
// its stripes, before its first store) and kWriteDone − 1 when it leaves (after its last store,
// release), so the word only grows. A reader loads it (acquire) before its bucket reads and again
// after them; the read is good iff no writer was inside at the first load and the word did not
// change. The argument is the seqlock's: a bucket load that saw a writer's release store
// synchronizes with it, so the reload sees that writer's entry (or later), and the word differs.
// With no writers about (a filter that is only read, or between bursts of writes) lookups never
// touch the counters; when writers are about the word keeps changing, and lookups fall back to
// their two stripes' counters, which only a writer of those stripes disturbs. Writers pay two
// locked additions to one shared line per operation, but for the commonest: an insert into the
// key's own buckets of an entry that lies inside one word is a single store that only adds, which
// a lookup needs no validation against (AddingGuard says why), so it leaves the word alone.
//
// Biased writing. A filter written by one thread (a bulk load, the one writer thread of a
// service whose other threads only look up) pays a locked instruction per write for a lock it
// never contends for, and the locked instruction, a full barrier, keeps each insert's cache miss
// from overlapping the next key's. So the first write of a filter makes its thread the filter's
// bias holder: it takes kHeld of every stripe, as a SoleWriter does, and keeps them between its
// writes; each of its writes (BiasedWrite) then runs as a SoleWriter's, with plain stores. The
// holder marks each write by a plain store to `inside` and then loads the bias state, with only a
// compiler barrier between. A thread that wants a stripe and finds it held while the bias is held
// revokes it: it sets the state to kRevoking, runs membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
// (a full barrier on every CPU running this process: userspace RCU's and folly's asymmetric
// fence), loads `inside`, waits until it is 0, and releases the stripes. Store-then-load on each
// side with a full barrier between (the holder's compiler barrier becomes one when the
// membarrier's interrupt reaches its CPU, or its context switch does) is Dekker's pattern: either
// the holder's load sees kRevoking, and that write goes under locks, or the revoker's load sees
// the holder inside, and waits for the write to end (one write: a biased write never waits). A
// filter whose bias another thread's write or SoleWriter took keeps locks for good (it has two
// writers); one whose bias went for a clear or a snapshot (another thread's, lent until it ends,
// or the holder's own, a SoleWriter's too: wait_for_holder lets go instead of waiting for itself)
// may be taken again by the next write. Taking the bias never waits: a stripe held by anyone
// means another writer is about, and the filter stays with locks. Lookups never take it and never
// wait for it (they validate as against any writer); where membarrier is missing (or
// CUCKOO_CONCURRENT_NO_BIAS is defined) no filter is biased.
//
// Deadlock freedom: a thread holds at most two stripes at a time and takes them in increasing
// index order, or all of them in increasing order (lock_all, SoleWriter); no other lock is ever
// held while a stripe is waited for. A bias holder holds every stripe between its writes, but
// others take the bias away instead of waiting for it, and it lets go before it waits for one
// itself. Lookups that fall back to locks only try them (try_lock_pair) and read optimistically
// again when they are held, so a SoleWriter never blocks a lookup.
//
// Why 4096 stripes of 8 bytes: 32 KiB of stripe words stay in L1/L2 beside a lookup's two bucket
// lines (a lookup that falls back to them reads two), and with two threads two writers meet on a
// stripe about once in 4096 operations. Words are packed, not padded to a line each: padding would
// cost 256 KiB, out of the caches a lookup needs for its own lines.
//
// The lock members are const: they change the counters, which are shared state behind the
// object, and lookups (const) take them in their fallback.
//
// The item count is kept per stripe, in the high half of the stripe's word (the counter is the low
// half): a writer that holds a stripe adds to its share in the store that releases it, so an
// insert makes no memory access for the count of its own. With the shares in an array of their
// own, each insert loaded and stored a second random line, and a single-key build from empty to
// 42% of 184 MiB took 90-105 ns per key against 49 for Filter (README, Concurrency). size() sums
// the shares, exact once writers have stopped. A reader compares whole words: the count changes
// only under the lock, with the counter.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#ifndef CUCKOO_CONCURRENT_HOT
#define CUCKOO_CONCURRENT_HOT [[gnu::always_inline]] inline
#endif

namespace cuckoo::concurrent {

inline constexpr std::size_t kMaxStripes = 4096;

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
#ifdef CUCKOO_TEST_RACE_WINDOW
inline constexpr bool kWidenedRaceWindows = true;
#else
inline constexpr bool kWidenedRaceWindows = false;
#endif

class StripedVersions {
 public:
  /// Stripes for `bucket_count` buckets taken in groups of 2^group_shift consecutive buckets
  /// (a group is the unit a writer owns: see AtomicPackedTable::kGroupShift): min(kMaxStripes,
  /// bit_ceil(groups)) stripes, group g in stripe g mod S.
  StripedVersions(std::uint64_t bucket_count, unsigned group_shift)
      : group_shift_(group_shift),
        mask_(std::min<std::uint64_t>(kMaxStripes, std::bit_ceil(std::max<std::uint64_t>(
                                                       (bucket_count >> group_shift) + 1, 2))) -
              1),
        words_(new std::uint64_t[mask_ + 1]()) {}

  std::size_t stripe_count() const noexcept { return static_cast<std::size_t>(mask_ + 1); }
  std::size_t stripe_of(std::uint64_t bucket) const noexcept {
    return static_cast<std::size_t>((bucket >> group_shift_) & mask_);
  }
  std::size_t memory_bytes() const noexcept {
    return stripe_count() * sizeof(std::uint64_t) + sizeof(Activity) + sizeof(SoleSession) +
           sizeof(Bias);
  }

  // ---- Readers --------------------------------------------------------------------------------

  /// An optimistic read of two stripes: begin() before the bucket reads, valid() after. Holds the
  /// two counters' addresses, so the loop of a lookup loads nothing else to find them.
  class PairRead {
   public:
    PairRead(const StripedVersions& versions, std::size_t s1, std::size_t s2) noexcept
        : c1_(versions.words_.get() + s1), c2_(versions.words_.get() + s2) {}
    CUCKOO_CONCURRENT_HOT void begin() noexcept {
      v1_ = std::atomic_ref<std::uint64_t>(*c1_).load(std::memory_order_acquire);
      v2_ = std::atomic_ref<std::uint64_t>(*c2_).load(std::memory_order_acquire);
    }
    /// After the bucket reads (acquire loads): true if neither stripe was being written at begin()
    /// and nobody wrote either since; one branch for both.
    CUCKOO_CONCURRENT_HOT bool valid() const noexcept {
      const std::uint64_t now1 =
          std::atomic_ref<std::uint64_t>(*c1_).load(std::memory_order_relaxed);
      const std::uint64_t now2 =
          std::atomic_ref<std::uint64_t>(*c2_).load(std::memory_order_relaxed);
      return (((v1_ | v2_) & kWriting) | (now1 ^ v1_) | (now2 ^ v2_)) == 0;
    }

   private:
    std::uint64_t* c1_;
    std::uint64_t* c2_;
    std::uint64_t v1_ = 1, v2_ = 1;
  };

  /// An optimistic read validated by the writer-activity word alone: begin() before the bucket
  /// reads, valid() after. valid() is true iff no writer was inside the filter at begin() and
  /// none entered since. Its two loads are of one address that does not depend on the key, so
  /// they cost a lookup almost nothing (see the top); when writers are about, valid() fails and
  /// the caller falls back to a PairRead of its two stripes.
  class QuietRead {
   public:
    explicit QuietRead(const StripedVersions& versions) noexcept
        : word_(&versions.activity_.word) {}
    CUCKOO_CONCURRENT_HOT void begin() noexcept {
      seen_ = std::atomic_ref<std::uint64_t>(*word_).load(std::memory_order_acquire);
    }
    CUCKOO_CONCURRENT_HOT bool valid() const noexcept {
      return quiet(seen_, std::atomic_ref<std::uint64_t>(*word_).load(std::memory_order_relaxed));
    }

   private:
    std::uint64_t* word_;
    std::uint64_t seen_ = 0;
  };

  /// The same read for a table that loads the word itself, around its bucket reads
  /// (AtomicPackedTable::contains_pair_between, which makes QuietRead's test itself).
  const std::uint64_t* activity_word() const noexcept { return &activity_.word; }
  /// The bits of the word above its writers-inside count (kWritersInside, below).
  static constexpr std::uint64_t kQuietBits = ~((std::uint64_t{1} << 24) - 1);
  /// Compares `after` with `before` with its writers-inside bits cleared: if any were set, the
  /// word was above the cleared value then and only grows, so the one comparison fails (short of
  /// 2^40 writes during the lookup). One compare-and-branch instead of a test of each.
  static constexpr bool quiet(std::uint64_t before, std::uint64_t after) noexcept {
    return after == (before & kQuietBits);
  }

  // ---- Writers --------------------------------------------------------------------------------

  /// Every writer brackets its changes with these (the guards below do): enter before its first
  /// store, leave after its last. Both do nothing in a thread inside a WriteScope of this filter,
  /// which entered once for all its writes.
  CUCKOO_CONCURRENT_HOT void enter_write() const noexcept {
    if (write_scope_ != this) add_to_activity(1, std::memory_order_relaxed);
  }
  CUCKOO_CONCURRENT_HOT void leave_write() const noexcept {
    if (write_scope_ != this) add_to_activity(kWriteDone - 1, std::memory_order_release);
  }

  /// Enters the activity word once for all the writes a thread makes in a scope (a batch insert
  /// or erase): with two threads writing, every entry and exit moves the word's line between the
  /// cores, which cost batch builds 1.46x their time. Lookups meanwhile validate by their stripes.
  class WriteScope {
   public:
    explicit WriteScope(const StripedVersions& versions) noexcept
        : versions_(versions), outer_(write_scope_) {
      if (outer_ == &versions_) return;
      versions_.add_to_activity(1, std::memory_order_relaxed);
      write_scope_ = &versions_;
    }
    WriteScope(const WriteScope&) = delete;
    WriteScope& operator=(const WriteScope&) = delete;
    ~WriteScope() {
      if (outer_ == &versions_) return;
      write_scope_ = outer_;
      versions_.add_to_activity(kWriteDone - 1, std::memory_order_release);
    }

   private:
    const StripedVersions& versions_;
    const StripedVersions* outer_;
  };

  /// Brackets one write (an insert or erase of one key, alone or in a batch) of a filter's
  /// writes: if this thread holds the filter's writer bias (see "Biased writing" at the top), the
  /// write runs as a SoleWriter's, with no locked instruction; otherwise as before, under locks.
  /// The first write of a filter with no bias takes it.
  class BiasedWrite {
   public:
    CUCKOO_CONCURRENT_HOT explicit BiasedWrite(const StripedVersions& versions) noexcept
        : versions_(versions), biased_(versions.enter_biased()) {}
    BiasedWrite(const BiasedWrite&) = delete;
    BiasedWrite& operator=(const BiasedWrite&) = delete;
    CUCKOO_CONCURRENT_HOT ~BiasedWrite() {
      if (biased_) versions_.leave_biased();
    }

   private:
    const StripedVersions& versions_;
    bool biased_;
  };

  /// Where a filter's writer bias stands (bias_state(); see "Biased writing" at the top).
  enum class BiasState : std::uint32_t {
    kNone = 0,      // no thread holds it; the next write takes it
    kTaking = 1,    // a thread is taking the stripes for it
    kHeld = 2,      // a thread holds every stripe for it
    kRevoking = 3,  // a thread is taking it away from its holder
    kRevoked = 4,   // taken away by another thread's write: writers contend, locks for good
    kDisabled = 5,  // never (CUCKOO_CONCURRENT_NO_BIAS, or no membarrier here)
    kLent = 6,      // taken away by another thread's clear or snapshot; kNone when it ends
  };
  BiasState bias_state() const noexcept {
    return static_cast<BiasState>(
        std::atomic_ref<std::uint32_t>(bias_.state).load(std::memory_order_acquire));
  }
  /// True if the calling thread holds the bias.
  bool bias_held_here() const noexcept {
    return bias_state() == BiasState::kHeld &&
           std::atomic_ref<const void*>(bias_.holder).load(std::memory_order_relaxed) ==
               thread_token();
  }

  /// Takes a stripe for a write (waits while another writer holds it; takes a bias away, for
  /// good unless `reopen_bias`: see revoke_bias). In the thread of this filter's SoleWriter,
  /// which holds every stripe already, only marks it kWriting, by a plain store.
  CUCKOO_CONCURRENT_HOT void lock(std::size_t stripe, bool reopen_bias = false) const noexcept {
    auto w = word(stripe);
    if (sole_writer_ == this) return mark_writing(w);
    while (!take(w)) wait_for_holder(reopen_bias);
  }
  /// lock() and unlock() in the thread of this filter's sole writer (sole_writer_here()), which
  /// holds every stripe: the plain stores alone, without the general calls' waits, whose calls
  /// and spins, inlined into a single-key insert, made the compiler keep the insert's values on
  /// the stack (README, Concurrency, "A sole writer's insert without the locked path's code").
  CUCKOO_CONCURRENT_HOT void mark_as_sole_writer(std::size_t stripe) const noexcept {
    mark_writing(word(stripe));
  }
  CUCKOO_CONCURRENT_HOT void release_as_sole_writer(std::size_t stripe) const noexcept {
    store_released(word(stripe), 0, kHeld);
  }
  /// lock() if no other writer holds the stripe now; false otherwise.
  CUCKOO_CONCURRENT_HOT bool try_lock(std::size_t stripe) const noexcept {
    auto w = word(stripe);
    if (sole_writer_ == this) {
      mark_writing(w);
      return true;
    }
    return take(w);
  }
  /// Releases a stripe the caller holds (to its SoleWriter, if this thread has one), adding
  /// `items` to its share of the item count in the same store.
  CUCKOO_CONCURRENT_HOT void unlock(std::size_t stripe, std::int64_t items = 0) const noexcept {
    store_released(word(stripe), items, sole_writer_ == this ? kHeld : 0);
  }
  /// Both stripes, lower index first; one lock when they coincide.
  CUCKOO_CONCURRENT_HOT void lock_pair(std::size_t a, std::size_t b) const noexcept {
    if (a == b) return lock(a);
    lock(std::min(a, b));
    lock(std::max(a, b));
  }
  /// lock_pair if no other writer holds either now; false (holding neither) otherwise.
  bool try_lock_pair(std::size_t a, std::size_t b) const noexcept {
    if (a == b) return try_lock(a);
    if (!try_lock(std::min(a, b))) return false;
    if (try_lock(std::max(a, b))) return true;
    unlock(std::min(a, b));
    return false;
  }
  /// Releases both, adding `items_a` to a's share.
  CUCKOO_CONCURRENT_HOT void unlock_pair(std::size_t a, std::size_t b,
                                         std::int64_t items_a = 0) const noexcept {
    unlock(a, items_a);
    if (a != b) unlock(b);
  }
  /// Every stripe, in increasing order: the table is then the caller's alone. A bias it takes
  /// away is left open (revoke_bias): a clear or a snapshot is not a second writer.
  void lock_all() const noexcept {
    // Lent from the start too, so that no write takes the bias meanwhile (it would find a stripe
    // held and give it up for good).
    std::uint32_t none = static_cast<std::uint32_t>(BiasState::kNone);
    std::atomic_ref<std::uint32_t>(bias_.state)
        .compare_exchange_strong(none, static_cast<std::uint32_t>(BiasState::kLent),
                                 std::memory_order_relaxed);
    for (std::size_t s = 0; s < stripe_count(); ++s) lock(s, /*reopen_bias=*/true);
  }
  void unlock_all() const noexcept {
    for (std::size_t s = stripe_count(); s-- > 0;) unlock(s);
    std::uint32_t lent = static_cast<std::uint32_t>(BiasState::kLent);
    std::atomic_ref<std::uint32_t>(bias_.state)
        .compare_exchange_strong(lent, static_cast<std::uint32_t>(BiasState::kNone),
                                 std::memory_order_release, std::memory_order_relaxed);
  }

  /// A stripe's word: the version counter in the low 32 bits (its two lowest the flags), the
  /// stripe's share of the item count (two's complement) in the high 32.
  static constexpr std::uint64_t kCounterBits = 0xFFFF'FFFFu;
  /// Set while the stripe's buckets are being changed: a reader's check fails.
  static constexpr std::uint64_t kWriting = 1;
  /// Set while a writer holds the stripe (for one write, or a SoleWriter for its lifetime).
  static constexpr std::uint64_t kHeld = 2;
  /// The word that releases a held word `held` (both flags set) and adds `items` to its share:
  /// both flags clear and the counter 4 on, within its 32 bits (it wraps there, not into the
  /// share).
  static constexpr std::uint64_t released(std::uint64_t held, std::int64_t items) noexcept {
    return ((held & ~kCounterBits) + (static_cast<std::uint64_t>(items) << 32)) |
           (((held | kWriting | kHeld) + 1) & kCounterBits);
  }
  /// A word's share of the item count, sign-extended from its 32 bits.
  static constexpr std::int64_t share_of(std::uint64_t word) noexcept {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(word >> 32));
  }

  /// True in the thread of this filter's SoleWriter.
  CUCKOO_CONCURRENT_HOT bool sole_writer_here() const noexcept { return sole_writer_ == this; }

  /// A lookup's pause between optimistic reads: a spin hint, or (`long_wait`, after many) a wait
  /// that lets the writer run.
  static void wait_for_writer(bool long_wait) noexcept {
    if (long_wait) return wait_a_little();
    cpu_relax();
  }

  // ---- Item count -----------------------------------------------------------------------------

  /// Adds `delta` to the share of a stripe the caller holds (kWriting set), as a plain load
  /// and store: the holder is the only writer. The guards instead add in the releasing store.
  void add_items(std::size_t stripe, std::int64_t delta) const noexcept {
    auto w = word(stripe);
    w.store(w.load(std::memory_order_relaxed) + (static_cast<std::uint64_t>(delta) << 32),
            std::memory_order_relaxed);
  }
  /// Adds `delta` to the count kept apart for sole writers' inserts into the key's own buckets,
  /// which touch no stripe word (a plain load and store: one sole writer at a time, and the
  /// stripes' release and acquire order one after the next).
  CUCKOO_CONCURRENT_HOT void add_sole_items(std::int64_t delta) const noexcept {
    std::atomic_ref<std::int64_t> n(sole_.items);
    n.store(n.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
  /// The sum of the stripes' shares and the sole writers' count: exact when no writer is inside,
  /// otherwise a value the count passed through or will pass through once the writers in
  /// progress finish.
  std::size_t items() const noexcept {
    std::int64_t total = std::atomic_ref<std::int64_t>(sole_.items).load(std::memory_order_relaxed);
    for (std::size_t s = 0; s < stripe_count(); ++s) {
      total += share_of(word(s).load(std::memory_order_relaxed));
    }
    return total < 0 ? 0 : static_cast<std::size_t>(total);
  }
  /// Sets the count (construction, loading and clear, with every stripe held or before
  /// publication), spread evenly so that every share fits its 32 bits: n up to 2^31 per stripe,
  /// 2^43 items with 4096 stripes, far past any table that fits in memory.
  void set_items(std::size_t n) const noexcept {
    std::atomic_ref<std::int64_t>(sole_.items).store(0, std::memory_order_relaxed);
    const std::size_t stripes = stripe_count(), each = n / stripes, rest = n % stripes;
    for (std::size_t s = 0; s < stripes; ++s) {
      auto w = word(s);
      const auto share = static_cast<std::uint64_t>(each + (s < rest ? 1 : 0));
      w.store((w.load(std::memory_order_relaxed) & kCounterBits) | (share << 32),
              std::memory_order_relaxed);
    }
  }

 private:
  std::atomic_ref<std::uint64_t> word(std::size_t stripe) const noexcept {
    return std::atomic_ref<std::uint64_t>(words_[stripe]);
  }
  /// One try at a stripe no writer holds: `flags` (both for a write, kHeld alone for a
  /// SoleWriter) set by a CAS (acquire).
  CUCKOO_CONCURRENT_HOT static bool take(std::atomic_ref<std::uint64_t> w,
                                         std::uint64_t flags = kHeld | kWriting) noexcept {
    std::uint64_t seen = w.load(std::memory_order_relaxed);
    return (seen & kHeld) == 0 &&
           w.compare_exchange_strong(seen, seen | flags, std::memory_order_acquire,
                                     std::memory_order_relaxed);
  }
  /// A writer's pause after failing to take a stripe. While another thread's SoleWriter holds
  /// every stripe (its session number odd), the wait may last as long as the session, so the
  /// thread sleeps on the number (a futex) until the session ends; otherwise the holder is a
  /// single write of a few hundred nanoseconds, and a short spin serves. No wakeup is lost: the
  /// sleep begins only if the number is still the odd one seen, and the session's end changes it
  /// before waking the sleepers.
  void wait_for_holder(bool reopen_bias = false) const noexcept {
    switch (bias_state()) {
      case BiasState::kHeld:
        return revoke_bias(reopen_bias);
      case BiasState::kTaking:
      case BiasState::kRevoking:
        return wait_a_little();
      default:
        break;
    }
    std::atomic_ref<std::uint32_t> session(sole_.session);
    const std::uint32_t seen = session.load(std::memory_order_relaxed);
    if ((seen & 1) != 0) return session.wait(seen, std::memory_order_relaxed);
    wait_a_little();
  }
  /// A SoleWriter's session begins (it holds every stripe) or ends (it has released them). An
  /// atomic addition, not a load and a store: one session's end (after its stripes are released)
  /// and the next one's beginning (once it has taken them all) can run at once, and a lost step
  /// would leave the number odd with no session, so that a waiter slept until some later session.
  void next_session() const noexcept {
    std::atomic_ref<std::uint32_t>(sole_.session).fetch_add(1, std::memory_order_relaxed);
  }
  // ---- Biased writing (see the top) ------------------------------------------------------------

  /// This thread's token: the address of one of its thread-locals, distinct between live threads.
  static const void* thread_token() noexcept { return &sole_writer_; }

  /// Test-only (CUCKOO_TEST_RACE_WINDOW): a window long enough for a revoker's membarrier, which
  /// takes microseconds (an interrupt to every CPU running the process), to fall inside it.
  static void widen_bias_window() noexcept {
    for (int i = 0; i < 100; ++i) CUCKOO_WIDEN_RACE_WINDOW();
  }

  /// BiasedWrite's entry: true (and this thread marked as the filter's sole writer) if this
  /// thread holds the bias and nobody is taking it away; it says so in `inside` first, and the
  /// revoker's membarrier makes that store and the state's load below act as a full barrier
  /// against the revoker's store of the state and load of `inside` (the asymmetric Dekker pair).
  CUCKOO_CONCURRENT_HOT bool enter_biased() const noexcept {
    if (sole_writer_ != nullptr) return false;  // a SoleWriter's session: its own rules
    if (std::atomic_ref<const void*>(bias_.holder).load(std::memory_order_relaxed) !=
        thread_token()) {
      if (std::atomic_ref<std::uint32_t>(bias_.state).load(std::memory_order_relaxed) ==
          static_cast<std::uint32_t>(BiasState::kNone)) [[unlikely]]
        return take_bias();
      return false;
    }
    return enter_as_holder();
  }
  CUCKOO_CONCURRENT_HOT bool enter_as_holder() const noexcept {
    std::atomic_ref<std::uint32_t> inside(bias_.inside);
    std::atomic_ref<std::uint32_t> state(bias_.state);
#ifndef CUCKOO_TEST_MUTATION_UNCHECKED_BIAS
    inside.store(1, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the membarrier makes it a full fence
    if (state.load(std::memory_order_relaxed) != static_cast<std::uint32_t>(BiasState::kHeld)) {
      inside.store(0, std::memory_order_release);
      return false;
    }
    widen_bias_window();  // the biased write is under way: a revoker must wait for it
#else
    // mutation: the state is checked before the holder says it is inside (the tests must fail)
    if (state.load(std::memory_order_relaxed) != static_cast<std::uint32_t>(BiasState::kHeld))
      return false;
    widen_bias_window();
    inside.store(1, std::memory_order_relaxed);
#endif
    sole_writer_ = this;
    return true;
  }
  CUCKOO_CONCURRENT_HOT void leave_biased() const noexcept {
    sole_writer_ = nullptr;
    std::atomic_ref<std::uint32_t>(bias_.inside).store(0, std::memory_order_release);
  }

  /// The first write of a filter with no bias: takes kHeld of every stripe, as a SoleWriter
  /// does, and holds them between its writes until another thread wants one (revoke_bias). Only
  /// one thread at a time can be taking it (the state's CAS), and it never waits: a stripe held
  /// by someone else means another writer is about, so it lets go of what it took and the filter
  /// stays with locks for good.
  [[gnu::noinline]] bool take_bias() const noexcept {
    std::atomic_ref<std::uint32_t> state(bias_.state);
    std::uint32_t expected = static_cast<std::uint32_t>(BiasState::kNone);
    if (!membarrier_ready()) {
      state.compare_exchange_strong(expected, static_cast<std::uint32_t>(BiasState::kDisabled),
                                    std::memory_order_relaxed);
      return false;
    }
    if (!state.compare_exchange_strong(expected, static_cast<std::uint32_t>(BiasState::kTaking),
                                       std::memory_order_acquire, std::memory_order_relaxed))
      return false;
    for (std::size_t s = 0; s < stripe_count(); ++s) {
      if (take(word(s), kHeld)) continue;
      release_held(s);
      state.store(static_cast<std::uint32_t>(BiasState::kRevoked), std::memory_order_release);
      return false;
    }
    std::atomic_ref<const void*>(bias_.holder).store(thread_token(), std::memory_order_relaxed);
    state.store(static_cast<std::uint32_t>(BiasState::kHeld), std::memory_order_release);
    return enter_as_holder();
  }
  /// Clears kHeld of stripes [0, n), which the caller holds with kWriting clear.
  void release_held(std::size_t n) const noexcept {
    for (std::size_t s = 0; s < n; ++s) {
      auto w = word(s);
      w.store(w.load(std::memory_order_relaxed) & ~kHeld, std::memory_order_release);
    }
  }

  /// A thread that found a stripe held while the bias is held takes the bias away: it marks it
  /// revoking, runs the membarrier (after which the holder's next write sees the mark), waits
  /// until the holder is not inside a write (one write: a biased write never waits), and releases
  /// every stripe for it. The holder itself, wanting a stripe outside a write (a clear, a
  /// snapshot, a SoleWriter), just lets go. Taken away by another thread's write or SoleWriter,
  /// the bias is gone for good (the filter has two writers, and passing the bias back and forth
  /// would cost both a membarrier or 4096 CASes per write); let go by its holder, or taken away
  /// for a whole-filter call (`reopen`: lock_all's clear or snapshot, say a periodic save beside
  /// the writer thread, or the holder's own), it is lent (writes meanwhile wait for the call
  /// without trying to take it, which would find the stripes held and give it up for good), and
  /// the next write after the call (unlock_all) may take it again.
  [[gnu::noinline]] void revoke_bias(bool reopen) const noexcept {
    std::atomic_ref<std::uint32_t> state(bias_.state);
    std::uint32_t expected = static_cast<std::uint32_t>(BiasState::kHeld);
    if (!state.compare_exchange_strong(expected, static_cast<std::uint32_t>(BiasState::kRevoking),
                                       std::memory_order_acquire, std::memory_order_relaxed))
      return;  // another thread is at it (or it just went); the caller tries its stripe again
    std::atomic_ref<const void*> holder(bias_.holder);
    const bool own = holder.load(std::memory_order_relaxed) == thread_token();
    if (!own) {
      full_barrier_everywhere();
      std::atomic_ref<std::uint32_t> inside(bias_.inside);
#ifndef CUCKOO_TEST_MUTATION_REVOKE_WITHOUT_WAIT
      while (inside.load(std::memory_order_acquire) != 0) wait_a_little();
#else
      (void)inside;  // mutation: the stripes go while the holder may be writing (tests must fail)
#endif
    }
    release_held(stripe_count());
    holder.store(nullptr, std::memory_order_relaxed);
    state.store(static_cast<std::uint32_t>(reopen ? BiasState::kLent
                                           : own  ? BiasState::kNone
                                                  : BiasState::kRevoked),
                std::memory_order_release);
  }

  /// Registers this process for expedited private membarriers once; false where there are none
  /// (not Linux, a kernel before 4.14, a seccomp filter that refuses it): then no filter is
  /// biased. CUCKOO_CONCURRENT_NO_BIAS turns biasing off at compile time (for comparisons).
  static bool membarrier_ready() noexcept {
#if defined(__linux__) && defined(SYS_membarrier) && !defined(CUCKOO_CONCURRENT_NO_BIAS)
    static const bool ready =
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    return ready;
#else
    return false;
#endif
  }
  /// A full memory barrier on every CPU running a thread of this process. Registered before any
  /// bias was taken (membarrier_ready), so it cannot fail for want of registration; the
  /// registration is the process's, kept by fork, and a failure would be a kernel defect:
  /// continuing would risk lost writes, so it ends the process.
  static void full_barrier_everywhere() noexcept {
#if defined(__linux__) && defined(SYS_membarrier) && !defined(CUCKOO_CONCURRENT_NO_BIAS)
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
      return;
#endif
    std::terminate();  // unreachable: no bias is taken without membarrier_ready()
  }

  /// Releases a held word, adding `items` to its share and keeping the bits `kept` (kHeld for a
  /// sole writer, which holds the stripe for longer than the write).
  CUCKOO_CONCURRENT_HOT static void store_released(std::atomic_ref<std::uint64_t> w,
                                                   std::int64_t items,
                                                   std::uint64_t kept) noexcept {
    w.store(released(w.load(std::memory_order_relaxed), items) | kept, std::memory_order_release);
  }
  /// The sole writer's lock: it holds the stripe already, and only its own stores change the word.
  CUCKOO_CONCURRENT_HOT static void mark_writing(std::atomic_ref<std::uint64_t> w) noexcept {
#ifndef CUCKOO_TEST_MUTATION_UNMARKED_SOLE_WRITES
    w.store(w.load(std::memory_order_relaxed) | kWriting, std::memory_order_relaxed);
#else
    (void)w;                   // mutation: readers see only the counter's step at the write's end
#endif
  }
  void add_to_activity(std::uint64_t delta, std::memory_order order) const noexcept {
#ifndef CUCKOO_TEST_MUTATION_SILENT_WRITERS
    std::atomic_ref<std::uint64_t>(activity_.word).fetch_add(delta, order);
#else
    (void)delta, (void)order;  // mutation: writers leave the word alone (the tests must fail)
#endif
  }

  static void wait_a_little() noexcept {
    // A writer holds a stripe for a few hundred nanoseconds; spin that long, then let the holder
    // run (it may be descheduled on this very core).
    for (int i = 0; i < 16; ++i) cpu_relax();
    std::this_thread::yield();
  }

  /// The writer-activity word: writers inside in the low 24 bits, writes completed above them.
  /// Each entry adds 1 and each exit adds kWriteDone − 1, so the word only grows (it would take
  /// 2^40 writes during one lookup to bring it back to a value the lookup saw). On a line pair of
  /// its own: writers change it, lookups of every thread read it. Held in the object, not behind a
  /// pointer: a lookup then finds it at a fixed offset from the filter, one load fewer per key.
  static constexpr std::uint64_t kWritersInside = ~kQuietBits;
  static constexpr std::uint64_t kWriteDone = std::uint64_t{1} << 24;
  /// The filter whose activity word this thread entered for a WriteScope, if any.
  static inline thread_local const StripedVersions* write_scope_ = nullptr;
  /// The filter of which this thread is the SoleWriter, if any.
  static inline thread_local const StripedVersions* sole_writer_ = nullptr;
  friend class SoleWriter;
  // 128 bytes, not 64: x86 cores fetch lines in aligned pairs (the adjacent-line prefetcher), so
  // writers' changes to the word would otherwise disturb the filter's read-only members beside it.
  struct alignas(128) Activity {
    std::uint64_t word = 0;  // accessed only through std::atomic_ref
  };

  /// The sole writers' share of the item count (add_sole_items), on a line pair of its own: it
  /// changes with every insert of a SoleWriter, and the members beside it are read by lookups.
  /// Beside it the session number, odd while a SoleWriter holds every stripe: writers that find a
  /// stripe held read it only then (wait_for_holder), and a session changes it twice.
  struct alignas(128) SoleSession {
    std::int64_t items = 0;     // accessed only through std::atomic_ref
    std::uint32_t session = 0;  // accessed only through std::atomic_ref
  };

  /// The writer bias: which thread holds it, where it stands (BiasState), and whether its holder
  /// is inside a write. On a line pair of its own: the holder writes `inside` twice per write,
  /// and reads the rest; other threads read it only when they find a stripe held.
  struct alignas(128) Bias {
    const void* holder = nullptr;  // accessed only through std::atomic_ref
    std::uint32_t state = 0;       // a BiasState; accessed only through std::atomic_ref
    std::uint32_t inside = 0;      // accessed only through std::atomic_ref
  };

  unsigned group_shift_;
  std::uint64_t mask_;
  mutable Activity activity_;  // its line pair holds nothing else (alignas(128), sizeof 128)
  mutable SoleSession sole_;
  mutable Bias bias_;
  static_assert(sizeof(Activity) == 128 && alignof(Activity) == 128);
  std::unique_ptr<std::uint64_t[]> words_;  // per stripe (word()); only through std::atomic_ref
};

/// Holds one stripe for a scope.
class StripeGuard {
 public:
  CUCKOO_CONCURRENT_HOT StripeGuard(const StripedVersions& versions, std::size_t stripe) noexcept
      : versions_(versions), stripe_(stripe) {
    versions_.lock(stripe_);
    versions_.enter_write();
  }
  StripeGuard(const StripeGuard&) = delete;
  StripeGuard& operator=(const StripeGuard&) = delete;
  CUCKOO_CONCURRENT_HOT ~StripeGuard() {
    versions_.leave_write();
    versions_.unlock(stripe_, items_);
  }
  /// Adds `delta` to the stripe's share of the item count when it is released.
  void add_items(std::int64_t delta) noexcept { items_ += delta; }

 private:
  const StripedVersions& versions_;
  std::size_t stripe_;
  std::int64_t items_ = 0;
};

/// Holds two stripes for a scope.
class StripePairGuard {
 public:
  StripePairGuard(const StripedVersions& versions, std::size_t a, std::size_t b) noexcept
      : versions_(versions), a_(a), b_(b) {
    versions_.lock_pair(a_, b_);
    versions_.enter_write();
  }
  StripePairGuard(const StripePairGuard&) = delete;
  StripePairGuard& operator=(const StripePairGuard&) = delete;
  ~StripePairGuard() {
    versions_.leave_write();
    versions_.unlock_pair(a_, b_, items_);
  }
  /// Adds `delta` to the first stripe's (a's) share of the item count when it is released.
  void add_items(std::int64_t delta) noexcept { items_ += delta; }

 private:
  const StripedVersions& versions_;
  std::size_t a_, b_;
  std::int64_t items_ = 0;
};

/// Holds one stripe, or two (a != b), for a write that only adds entries (an insert into the
/// key's own buckets), and enters the writer-activity word only if announce() is called: before
/// a change a lookup could see half of (an entry written by two stores). An entry inside one word
/// is added by one store, and a lookup that sees only such additions needs no validation against
/// them: each bucket word it reads is the word at one instant, entries only appear, so an entry
/// absent from a later read was absent at every earlier instant; a "no" is true at the first
/// read, a "yes" at the read that saw the entry, and a count of c passes through every value
/// between the counts at its first and last reads (linearizable, even against a model of the
/// fingerprints). Erases and moves still enter. Two locked additions fewer per insert, and with two
/// threads inserting, no line that moves between the cores on every insert (README, Concurrency).
class AddingGuard {
 public:
  CUCKOO_CONCURRENT_HOT AddingGuard(const StripedVersions& versions, std::size_t a,
                                    std::size_t b) noexcept
      : versions_(versions), a_(a), b_(b) {
    versions_.lock_pair(a_, b_);
  }
  AddingGuard(const AddingGuard&) = delete;
  AddingGuard& operator=(const AddingGuard&) = delete;
  CUCKOO_CONCURRENT_HOT ~AddingGuard() {
    if (entered_) versions_.leave_write();
    versions_.unlock_pair(a_, b_, items_);
  }
  void announce() noexcept {
    if (entered_) return;
    versions_.enter_write();
    entered_ = true;
  }
  /// Adds `delta` to the first stripe's (a's) share of the item count when it is released.
  void add_items(std::int64_t delta) noexcept { items_ += delta; }

 private:
  const StripedVersions& versions_;
  std::size_t a_, b_;
  std::int64_t items_ = 0;
  bool entered_ = false;
};

/// Holds every stripe for a scope.
class AllStripesGuard {
 public:
  explicit AllStripesGuard(const StripedVersions& versions) noexcept : versions_(versions) {
    versions_.lock_all();
    versions_.enter_write();
  }
  AllStripesGuard(const AllStripesGuard&) = delete;
  AllStripesGuard& operator=(const AllStripesGuard&) = delete;
  ~AllStripesGuard() {
    versions_.leave_write();
    versions_.unlock_all();
  }

 private:
  const StripedVersions& versions_;
};

/// Makes the calling thread the filter's only writer for the guard's lifetime: it takes kHeld of
/// every stripe (in increasing order, waiting for writers inside to finish) and enters the
/// writer-activity word once (a WriteScope). Meanwhile this thread's inserts and erases mark
/// their stripes kWriting and clear it with plain stores, and lock-free lookups of every thread
/// go on, validated by their stripes (the activity word shows a writer inside); other threads'
/// inserts, erases, clears and snapshots wait until the guard is destroyed, as for a lock, asleep
/// (wait_for_holder) rather than spinning, however long the session. For a
/// burst of writes from one thread (a bulk load, a writer thread that serves lookups beside it):
/// a locked instruction per write is a full barrier, which keeps each insert's cache miss from
/// overlapping the next one's.
///
/// Destroy it on the thread that made it. A second SoleWriter of the same filter on the same
/// thread is a no-op (the first keeps the filter); one of another filter while this thread is the
/// sole writer of one throws std::logic_error (its writes would wait for stripes this thread
/// holds).
class SoleWriter {
 public:
  explicit SoleWriter(const StripedVersions& versions)
      : versions_(versions),
        writing_(versions),
        outermost_(StripedVersions::sole_writer_ == nullptr) {
    if (StripedVersions::sole_writer_ == &versions_) return;
    if (!outermost_)
      throw std::logic_error("this thread is already the sole writer of another filter");
    for (std::size_t s = 0; s < versions_.stripe_count(); ++s) {
      while (!StripedVersions::take(versions_.word(s), StripedVersions::kHeld))
        versions_.wait_for_holder();
    }
    versions_.next_session();
    StripedVersions::sole_writer_ = &versions_;
  }
  SoleWriter(const SoleWriter&) = delete;
  SoleWriter& operator=(const SoleWriter&) = delete;
  ~SoleWriter() {
    if (!outermost_) return;
    StripedVersions::sole_writer_ = nullptr;
    versions_.release_held(versions_.stripe_count());
    versions_.next_session();
    std::atomic_ref<std::uint32_t>(versions_.sole_.session).notify_all();
  }

 private:
  const StripedVersions& versions_;
  StripedVersions::WriteScope writing_;
  bool outermost_;
};

}  // namespace cuckoo::concurrent
