// cuckoo/concurrent/atomic_packed_table.hpp — PackedTable's bit layout, read and written only
// through atomic operations on aligned 64-bit words, so that many threads may use it at once.
//
// Layout. Exactly PackedTable's (table/packed_table.hpp): entry j of bucket i at bits
// [(i·b + j)·f, (i·b + j + 1)·f) of one little-endian bit string. The bytes are the same, so a
// table converts to and from a PackedTable (and so a Filter, and the file format) by copying.
// The storage is a whole number of 64-bit words plus one, which covers PackedTable's 8 tail bytes.
//
// Why words, not PackedTable's unaligned 8-byte loads and stores: a packed bucket shares bytes
// with its neighbours, and PackedTable writes a bucket by loading 8 bytes, changing some bits and
// storing the 8 bytes back; two threads doing that to neighbouring buckets at once would undo each
// other's change, and C++ gives no atomicity to an unaligned write (nor could ThreadSanitizer
// check a plain one). Here the table is written only as aligned 64-bit words through
// std::atomic_ref (and read so, but for lookups: below), and writers are kept off each other's
// words: buckets are owned in groups of 2^group_shift() consecutive buckets, the fewest whose bits
// fill whole words (b·f = 48: 4 buckets in 3 words; b·f = 64: 1 bucket in 1 word; never more than
// 32 buckets), and a group's words hold no other group's bits. A writer that holds a group (its
// stripe, striped_versions.hpp) changes an entry with a plain atomic load and store of each word
// the entry touches; no locked read-modify-write is needed, and none is paid for on x86.
//
// A bucket (or a group of lanes, see below) is read as a 64-bit window at any bit offset s of
// word w: (W[w] >> s) | (W[w'] << (64 − s)), where w' = w + 1 if the window runs past word w and
// w' = w otherwise. Taking w' = w when the bucket fits in word w keeps the read to the lines the
// bucket occupies (a second word on the next line would be a second cache miss for 1 bucket in 8);
// the bits it then shifts in lie above the bucket and are masked off. The choice of w' is a
// select on the address, not a branch, so an unpredictable offset pattern costs nothing.
//
// Lookups (contains_pair) read a bucket that fits one 8-byte window from its first byte (b·f ≤ 57,
// or b·f ≤ 64 on a byte boundary: f = 12, b = 4 among them) with ONE load instead: 8 bytes from
// that byte, unaligned, as PackedTable does, through GCC's __atomic_load_n (an atomic access to
// the compiler and to ThreadSanitizer, which checks it against the writers' aligned word stores;
// UBSan does not object to its alignment). x86 makes such a load single-copy atomic only when it
// stays inside one cache line, so it may tear like the two-word window; lookups validate every
// read, which discards torn ones. Why: in a single-key loop on a 192 MiB table every load that
// waits on a lookup's lines costs far more than its cycle (one load per bucket instead of two,
// same hash and compare, no validation: 67 -> 43 ns per key; README, Performance, Concurrency).
// Writers of such buckets (try_place, remove, has_free) find their slot from the same one load.
//
// Where the vector compare serves (b ≤ 4, AVX2), those 8 bytes go straight into a vector
// register: one `vpbroadcastq` from memory, written as inline assembly. An atomic load cannot be
// folded into the instruction that uses it, so through __atomic_load_n the same read took a
// load, a move to the vector unit and a broadcast: three instructions instead of one per bucket,
// and in a single-key loop that waits on memory the instructions a key holds in flight set its
// cost (README, Concurrency). The assembly is outside the C++ memory model; its ordering is the
// processor's (x86 keeps loads in order) and, for the compiler, compiler-only fences around the
// two reads, so the seqlock argument of striped_versions.hpp holds as for the atomic loads. A
// single-key lookup (contains_pair_between) puts its two loads of the validation word in the same
// statement as the bucket reads instead, and the validation's test with them (the second load is
// the operand of a `cmp`, whose result leaves as a flag): a fence, like an acquire load, makes the
// compiler reload everything the caller's loop held in registers (the table's address, the
// filter's addressing) for every key, and each bucket read then waited for a reload.
// Sanitizer builds take __atomic_load_n (CUCKOO_VECTOR_BUCKET_READS), so ThreadSanitizer checks
// these reads and AddressSanitizer their bounds; the tests run both forms.
//
// Compare. As in PackedTable: groups of g lanes (g the largest power of two ≤ b with g·f ≤ 64;
// the whole bucket for f ≤ 16 at b = 4) are tested with the SWAR zero-lane test, both buckets of a
// lookup before either result is used.
//
// A torn read is possible: an entry that straddles two words is changed by two stores, and a reader
// may see one without the other. Callers validate every read of a bucket that others may write
// (striped_versions.hpp) and discard torn ones.
//
// Template parameters: as PackedTable's. kSlots ∈ {2, 4, 8}; FixedBits the width when known at
// compile time (2..32) or 0 to take it from the constructor.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

#include "cuckoo/concurrent/striped_versions.hpp"
#include "cuckoo/detail/aligned_buffer.hpp"
#include "cuckoo/detail/endian.hpp"
#include "cuckoo/table/packed_table.hpp"

// Whether lookups of whole-word buckets read them into vector registers by inline assembly
// (see the top). Sanitizer builds read through __atomic_load_n instead, which the sanitizers see
// and check; -DCUCKOO_VECTOR_BUCKET_READS=0 chooses that everywhere.
#ifndef CUCKOO_VECTOR_BUCKET_READS
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CUCKOO_VECTOR_BUCKET_READS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define CUCKOO_VECTOR_BUCKET_READS 0
#endif
#endif
#ifndef CUCKOO_VECTOR_BUCKET_READS
#define CUCKOO_VECTOR_BUCKET_READS CUCKOO_HAS_X86_VECTOR_PATHS
#endif
#endif

// The activity word's validation in the lookups' assembly statements (operands %[word], %[kept]
// and %[keep], kQuietImmediate): its load before the buckets' reads, and after them the test that
// it had no writer inside and has not moved (StripedVersions::quiet), which leaves its answer in
// the zero flag; the second load is the `cmp`'s operand.
#define CUCKOO_ASM_WORD_BEFORE "mov {%[word], %[kept]|%[kept], %[word]}\n\t"
#define CUCKOO_ASM_WORD_QUIET \
  "and {%[keep], %[kept]|%[kept], %[keep]}\n\tcmp {%[word], %[kept]|%[kept], %[word]}"
// The same test in an `asm goto`, jumping to its label `moved` when the word was not quiet.
#define CUCKOO_ASM_WORD_QUIET_OR_MOVED CUCKOO_ASM_WORD_QUIET "\n\tjne %l[moved]"

namespace cuckoo::concurrent {

template <unsigned kSlots, unsigned FixedBits = 0, Isa IsaLevel = Isa::kPortable>
class AtomicPackedTable {
  static_assert(kSlots == 2 || kSlots == 4 || kSlots == 8, "bucket size must be 2, 4 or 8");
  static_assert(FixedBits == 0 || (FixedBits >= 2 && FixedBits <= 32),
                "fingerprint width must be 2..32");

 public:
  using packed_table_type = PackedTable<kSlots, FixedBits>;
  static constexpr unsigned kBucketSize = kSlots;
  static constexpr unsigned kFixedBits = FixedBits;
  static constexpr unsigned kMinBits = 2;
  static constexpr unsigned kMaxBits = 32;
  static constexpr bool kSemiSorted = false;
  /// The level of the whole-word buckets' compare: kAvx2 compares them with AVX2 (callers run it
  /// only on a CPU that has it: ConcurrentFilter picks it by active_isa()); a build with AVX2
  /// enabled (-march=native) does so at every level. Nothing else depends on it.
  static constexpr Isa kIsa = IsaLevel;

  /// Bytes of the table in PackedTable's (and the file's) form.
  static constexpr std::size_t bytes_for(std::uint64_t bucket_count, unsigned bits) noexcept {
    return packed_table_type::bytes_for(bucket_count, bits);
  }

  AtomicPackedTable(std::uint64_t bucket_count, unsigned bits)
      : bucket_count_(bucket_count),
        bits_(packed_table_type::check_bits(bits)),
        packed_bytes_(bytes_for(bucket_count, bits)),
        buffer_((packed_bytes_ + 7) / 8 * 8 + sizeof(std::uint64_t)) {
    group_ = kSlots;
    while (group_ > 1 && group_ * bits > 64) group_ /= 2;
    ones_ = 0;
    for (unsigned lane = 0; lane < group_; ++lane) ones_ |= std::uint64_t{1} << (lane * bits);
    highs_ = ones_ << (bits - 1);
    group_mask_ = low_mask(group_ * bits);
    group_shift_ = group_shift_for(bits);
  }

  /// log2 of the buckets a writer owns together: the fewest consecutive buckets whose bits fill
  /// whole 64-bit words, 64 / gcd(b·f, 64), a power of two (at most 32, as b·f is even).
  static constexpr unsigned group_shift_for(unsigned bits) noexcept {
    const unsigned bucket_bits = kSlots * bits;
    return static_cast<unsigned>(std::countr_zero(64u)) -
           std::min(static_cast<unsigned>(std::countr_zero(bucket_bits)), 6u);
  }
  unsigned group_shift() const noexcept {
    if constexpr (kFixedBits != 0) {
      return group_shift_for(kFixedBits);
    } else {
      return group_shift_;
    }
  }

  std::uint64_t bucket_count() const noexcept { return bucket_count_; }
  unsigned fingerprint_bits() const noexcept { return kFixedBits != 0 ? kFixedBits : bits_; }
  /// The word storage (PackedTable's bytes rounded up to a word, plus one word).
  std::size_t memory_bytes() const noexcept { return buffer_.size(); }
  /// Size of the table in PackedTable's (and the file's) form.
  std::size_t packed_bytes() const noexcept { return packed_bytes_; }

  /// Copies PackedTable bytes in. Only before other threads can see the table.
  void assign(std::span<const std::byte> packed) noexcept {
    std::memcpy(buffer_.data(), packed.data(), std::min(packed.size(), packed_bytes_));
  }
  /// Copies the table out in PackedTable's form. The caller keeps writers out (every stripe held);
  /// concurrent readers only read, so a plain copy does not race with them.
  void copy_to(std::span<std::byte> packed) const noexcept {
    std::memcpy(packed.data(), buffer_.data(), std::min(packed.size(), packed_bytes_));
  }
  /// Empties the table word by word (atomic stores: lookups may be reading). Every stripe held.
  void clear() noexcept {
    const std::size_t n = buffer_.size() / sizeof(std::uint64_t);
    for (std::size_t w = 0; w < n; ++w) word(w).store(0, std::memory_order_release);
  }

  // ---- Reads (validate them when writers may be active) -----------------------------------

  std::uint32_t read(std::uint64_t bucket, unsigned slot) const noexcept {
    const std::uint64_t bit = (bucket * kSlots + slot) * fingerprint_bits();
    return static_cast<std::uint32_t>(window(bit, fingerprint_bits()) & entry_mask());
  }

  /// All entries of `bucket`, in slot order.
  std::array<std::uint32_t, kSlots> entries(std::uint64_t bucket) const noexcept {
    std::array<std::uint32_t, kSlots> out{};
    const unsigned f = fingerprint_bits();
    for (unsigned lane = 0; lane < kSlots; lane += group()) {
      const std::uint64_t lanes = group_word(bucket, lane);
      for (unsigned k = 0; k < group(); ++k) {
        out[lane + k] = static_cast<std::uint32_t>(lanes >> (k * f) & entry_mask());
      }
    }
    return out;
  }

  /// Buckets that start on a byte and fit one 8-byte load (f known at compile time): a bucket's
  /// first byte is one multiplication away, its lanes need no shift, and the SWAR constants are
  /// compile-time ones (members would be reloaded after each acquire load).
  static constexpr bool kWholeWordBuckets =
      kFixedBits != 0 && (kSlots * kFixedBits) % 8 == 0 && kSlots * kFixedBits <= 64;

  /// What a batch lookup reads of the table, held by value in the caller's frame. After each
  /// acquire load the compiler must assume that another thread changed anything reachable from
  /// the table, so a loop over the table itself reloads the buffer's address for every key (and
  /// its filter's members with it); a copy whose address never escapes stays in a register. For
  /// whole-word buckets that address is all a lookup reads; other shapes read through the table.
  class LookupReader {
   public:
    explicit LookupReader(const AtomicPackedTable& table) noexcept
        : table_(&table), base_(table.buffer_.data()) {}
    CUCKOO_HOT bool contains_pair(std::uint64_t b1, std::uint64_t b2,
                                  std::uint32_t value) const noexcept {
      if constexpr (kWholeWordBuckets) {
        return whole_word_pair(base_, b1, b2, value);
      } else {
        return table_->contains_pair(b1, b2, value);
      }
    }
    CUCKOO_HOT unsigned count_pair(std::uint64_t b1, std::uint64_t b2,
                                   std::uint32_t value) const noexcept {
      if constexpr (kWholeWordBuckets) {
        return whole_word_count_pair(base_, b1, b2, value);
      } else {
        return table_->count_pair(b1, b2, value);
      }
    }
    CUCKOO_HOT void prefetch_for_lookup(std::uint64_t bucket) const noexcept {
      if constexpr (kWholeWordBuckets) {
        whole_word_prefetch(base_, bucket);
      } else {
        table_->prefetch_for_lookup(bucket);
      }
    }

   private:
    const AtomicPackedTable* table_;
    const std::byte* base_;
  };
  LookupReader lookup_reader() const noexcept { return LookupReader(*this); }

  /// True if `b1` or `b2` holds `value`: every load issued before any result is used.
  CUCKOO_HOT bool contains_pair(std::uint64_t b1, std::uint64_t b2,
                                std::uint32_t value) const noexcept {
    if constexpr (kWholeWordBuckets) return whole_word_pair(buffer_.data(), b1, b2, value);
    const std::uint64_t pattern = value * ones_;
    if (bucket_fits_one_load()) {
      const unsigned width = kSlots * fingerprint_bits();
      const std::uint64_t x1 = (load_bucket_window(b1 * width) & group_mask(width)) ^ pattern;
      CUCKOO_WIDEN_RACE_WINDOW();
      const std::uint64_t x2 = (load_bucket_window(b2 * width) & group_mask(width)) ^ pattern;
      return ((((x1 - ones_) & ~x1) | ((x2 - ones_) & ~x2)) & highs_) != 0;
    }
    if (group() == kSlots) {
      // Both buckets' word addresses first, from one read of the base pointer: after an atomic
      // load the compiler would otherwise reload it for the next.
      const std::uint64_t* base = words();
      const unsigned width = kSlots * fingerprint_bits();
      const WindowAt at1 = window_at(b1 * width, width);
      const WindowAt at2 = window_at(b2 * width, width);
      const std::uint64_t x1 = (load_window(base, at1) & group_mask(width)) ^ pattern;
      CUCKOO_WIDEN_RACE_WINDOW();
      const std::uint64_t x2 = (load_window(base, at2) & group_mask(width)) ^ pattern;
      return ((((x1 - ones_) & ~x1) | ((x2 - ones_) & ~x2)) & highs_) != 0;
    }
    std::uint64_t hits = 0;
    for (unsigned lane = 0; lane < kSlots; lane += group()) {
      const std::uint64_t x1 = group_word(b1, lane) ^ pattern;
      const std::uint64_t x2 = group_word(b2, lane) ^ pattern;
      hits |= ((x1 - ones_) & ~x1) | ((x2 - ones_) & ~x2);
    }
    return (hits & highs_) != 0;
  }

  /// How many entries of `b1` and `b2` together equal `value`, read as contains_pair reads them
  /// (one load per bucket that fits one) and counted by the exact zero-lane test.
  CUCKOO_HOT unsigned count_pair(std::uint64_t b1, std::uint64_t b2,
                                 std::uint32_t value) const noexcept {
    if constexpr (kWholeWordBuckets) return whole_word_count_pair(buffer_.data(), b1, b2, value);
    const std::uint64_t pattern = value * ones_;
    const std::uint64_t lows = highs_ - ones_;
    if (group() == kSlots) {
      const unsigned width = kSlots * fingerprint_bits();
      std::uint64_t x1, x2;
      if (bucket_fits_one_load()) {
        x1 = load_bucket_window(b1 * width);
        CUCKOO_WIDEN_RACE_WINDOW();
        x2 = load_bucket_window(b2 * width);
      } else {
        const std::uint64_t* base = words();
        const WindowAt at1 = window_at(b1 * width, width);
        const WindowAt at2 = window_at(b2 * width, width);
        x1 = load_window(base, at1);
        CUCKOO_WIDEN_RACE_WINDOW();
        x2 = load_window(base, at2);
      }
      x1 = (x1 & group_mask(width)) ^ pattern;
      x2 = (x2 & group_mask(width)) ^ pattern;
      return detail::pair_flag_count<kIsa>(packed_table_type::exact_zero_lanes(x1, lows, highs_),
                                           packed_table_type::exact_zero_lanes(x2, lows, highs_),
                                           ones_, fingerprint_bits(), kSlots);
    }
    unsigned n = 0;
    for (unsigned lane = 0; lane < kSlots; lane += group()) {
      const std::uint64_t x1 = group_word(b1, lane) ^ pattern;
      const std::uint64_t x2 = group_word(b2, lane) ^ pattern;
      n += detail::pair_flag_count<kIsa>(packed_table_type::exact_zero_lanes(x1, lows, highs_),
                                         packed_table_type::exact_zero_lanes(x2, lows, highs_),
                                         ones_, fingerprint_bits(), group());
    }
    return n;
  }
  /// count_pair between two loads of a validation word, as contains_pair_between.
  CUCKOO_HOT unsigned count_pair_between(const std::uint64_t* word, std::uint64_t b1,
                                         std::uint64_t b2, std::uint32_t value,
                                         bool& unchanged) const noexcept {
    if constexpr (kReadsBetweenByAssembly && !kWidenedRaceWindows) {
      return this->whole_word_count_between(word, whole_bucket_at(b1), whole_bucket_at(b2), value,
                                            unchanged);
    }
    const std::uint64_t before =
        std::atomic_ref<const std::uint64_t>(*word).load(std::memory_order_acquire);
    const unsigned n = count_pair(b1, b2, value);
    unchanged = StripedVersions::quiet(
        before, std::atomic_ref<const std::uint64_t>(*word).load(std::memory_order_relaxed));
    return n;
  }

  /// contains_pair between two loads of a validation word (StripedVersions::activity_word):
  /// `unchanged` is StripedVersions::quiet of its values ahead of both bucket reads and behind
  /// them, tested where the word is read so that it can be one `cmp`.
  CUCKOO_HOT bool contains_pair_between(const std::uint64_t* word, std::uint64_t b1,
                                        std::uint64_t b2, std::uint32_t value,
                                        bool& unchanged) const noexcept {
    if constexpr (kReadsBetweenByAssembly) {
      // this->: declared in x86 builds only, and looked up only where it is called.
      return this->any_hit_avx2_between(word, whole_bucket_at(b1), whole_bucket_at(b2), value,
                                        unchanged);
    }
    const std::uint64_t before =
        std::atomic_ref<const std::uint64_t>(*word).load(std::memory_order_acquire);
    const bool hit = contains_pair(b1, b2, value);
    unchanged = StripedVersions::quiet(
        before, std::atomic_ref<const std::uint64_t>(*word).load(std::memory_order_relaxed));
    return hit;
  }

  /// contains_pair_between, and when `unchanged` would be false, disturbed()'s answer instead:
  /// the caller's fallback, entered by a branch inside the read's assembly where the table reads
  /// by assembly (any_hit_avx2_quiet_or), so that the validation is four instructions.
  template <class Disturbed>
  CUCKOO_HOT bool contains_pair_quiet_or(const std::uint64_t* word, std::uint64_t b1,
                                         std::uint64_t b2, std::uint32_t value,
                                         Disturbed&& disturbed) const noexcept {
    if constexpr (kReadsBetweenByAssembly && !kWidenedRaceWindows) {
      if constexpr (kAvx512PairRead) {
        return this->any_hit_avx512_quiet_or(word, whole_bucket_at(b1), whole_bucket_at(b2), value,
                                             disturbed);
      } else {
        return this->any_hit_avx2_quiet_or(word, whole_bucket_at(b1), whole_bucket_at(b2), value,
                                           disturbed);
      }
    } else {
      bool unchanged;
      const bool hit = contains_pair_between(word, b1, b2, value, unchanged);
      if (unchanged) [[likely]]
        return hit;
      return disturbed();
    }
  }

  /// The lowest slot of `bucket` holding `value` (0 finds an empty slot), or -1.
  int find(std::uint64_t bucket, std::uint32_t value) const noexcept {
    const auto all = entries(bucket);
    for (unsigned slot = 0; slot < kSlots; ++slot) {
      if (all[slot] == value) return static_cast<int>(slot);
    }
    return -1;
  }

  bool has_free(std::uint64_t bucket) const noexcept {
    if constexpr (kWholeWordBuckets) return whole_bucket_matches(bucket, 0) != 0;
    for (unsigned lane = 0; lane < kSlots; lane += group()) {
      const std::uint64_t x = group_word(bucket, lane);
      if (((x - ones_) & ~x & highs_) != 0) return true;
    }
    return false;
  }

  /// How many entries of `bucket` equal `value` (a whole-word bucket from one load).
  unsigned count(std::uint64_t bucket, std::uint32_t value) const noexcept {
    if constexpr (kWholeWordBuckets) return whole_bucket_count(buffer_.data(), bucket, value);
    unsigned n = 0;
    for (const std::uint32_t entry : entries(bucket)) n += entry == value;
    return n;
  }

  // ---- Writes (the caller holds the bucket's stripe) -----------------------------------------

  /// Changes slot `slot` of `bucket` from `from` (what it holds) to `to`: one load and store per
  /// word the entry touches, leaving every other bit as it is.
  void write(std::uint64_t bucket, unsigned slot, std::uint32_t from, std::uint32_t to) noexcept {
    flip_entry((bucket * kSlots + slot) * fingerprint_bits(), from ^ to, [] {});
  }

  /// Puts `value` into the lowest empty slot of `bucket`, exactly as find(bucket, 0) then write
  /// would; false if it is full. The lowest lane the SWAR zero test flags is a true match, and its
  /// top bit gives the entry's bit position without a slot index (no division by f).
  bool try_place(std::uint64_t bucket, std::uint32_t value) noexcept {
    return flip_lowest(bucket, 0, value, [] {});
  }
  /// try_place that calls announce() before it writes an entry with two stores (one that
  /// straddles two words), the only kind of placement a lookup could see half of; an entry inside
  /// one word is placed by one store (see StripedVersions::AddingGuard).
  template <class Announce>
  bool try_place(std::uint64_t bucket, std::uint32_t value, Announce&& announce) noexcept {
    return flip_lowest(bucket, 0, value, announce);
  }

  /// Clears the lowest entry of `bucket` equal to `value` (non-zero); false if none is.
  bool remove(std::uint64_t bucket, std::uint32_t value) noexcept {
    return flip_lowest(bucket, value, value, [] {});
  }

  // ---- Prefetch ------------------------------------------------------------------------------

  /// The line(s) of `bucket`, into L1 (for an operation that writes it).
  CUCKOO_HOT void prefetch(std::uint64_t bucket) const noexcept { prefetch_bucket<3>(bucket); }
  /// The same into L2 only, for lookups (see BasicFilter::kPipelineDepth).
  CUCKOO_HOT void prefetch_for_lookup(std::uint64_t bucket) const noexcept {
    if constexpr (kWholeWordBuckets) {
      whole_word_prefetch(buffer_.data(), bucket);
      return;
    }
    if (bucket_fits_one_load()) {
      // The lines of the 8 bytes contains_pair reads, which can reach past the bucket's last
      // word (unprefetched, that read made f = 12, b = 4 batches 1.36x slower, before that shape
      // became whole-word).
      const std::byte* first = buffer_.data() + (bucket * kSlots * fingerprint_bits() >> 3);
      prefetch_lines<2>(first, first + sizeof(std::uint64_t) - 1);
      return;
    }
    prefetch_bucket<2>(bucket);
  }

 private:
  static constexpr std::uint64_t low_mask(unsigned bits) noexcept {
    return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  }
  std::uint64_t entry_mask() const noexcept { return low_mask(fingerprint_bits()); }
  unsigned group() const noexcept {
    if constexpr (kFixedBits != 0) {
      unsigned g = kSlots;
      while (g > 1 && g * kFixedBits > 64) g /= 2;
      return g;
    } else {
      return group_;
    }
  }

  std::atomic_ref<std::uint64_t> word(std::size_t w) const noexcept {
    return std::atomic_ref<std::uint64_t>(
        *std::launder(reinterpret_cast<std::uint64_t*>(buffer_data() + w * sizeof(std::uint64_t))));
  }
  std::byte* buffer_data() const noexcept { return const_cast<std::byte*>(buffer_.data()); }

  /// Where a window of `width` bits from bit `bit` lies: its first word, the word its high part
  /// comes from (the same word when the window fits in it), and the bit offset.
  struct WindowAt {
    std::size_t first, second;
    unsigned shift;
  };
  CUCKOO_HOT static WindowAt window_at(std::uint64_t bit, unsigned width) noexcept {
    const auto first = static_cast<std::size_t>(bit >> 6);
    const auto shift = static_cast<unsigned>(bit & 63);
    return {first, first + (shift + width > 64 ? 1 : 0), shift};
  }
  CUCKOO_HOT static std::uint64_t load_window(const std::uint64_t* base, WindowAt at) noexcept {
    const std::uint64_t lo = detail::little_endian(
        std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(base[at.first]))
            .load(std::memory_order_acquire));
    const std::uint64_t hi = detail::little_endian(
        std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(base[at.second]))
            .load(std::memory_order_acquire));
    return (lo >> at.shift) | ((hi << 1) << (63 - at.shift));
  }
  /// Whether every bucket lies in the 8 bytes from its first byte (see the top): b·f ≤ 57, or
  /// b·f ≤ 64 with every bucket on a byte boundary.
  bool bucket_fits_one_load() const noexcept {
    const auto fits = [](unsigned width) { return width <= 57 || (width <= 64 && width % 8 == 0); };
    if constexpr (kFixedBits != 0) {
      return fits(kSlots * kFixedBits);
    } else {
      return fits(kSlots * bits_);
    }
  }
#if CUCKOO_HAS_X86_VECTOR_PATHS
#ifdef __AVX2__
  static constexpr bool kBuildHasAvx2 = true;
#else
  static constexpr bool kBuildHasAvx2 = false;
#endif
  /// Whether two whole-word buckets are compared by AVX2: its four 64-bit elements hold at most
  /// four lanes each, and the ISA level (or the build) must have it.
  static constexpr bool kAvx2PairCompare = kSlots <= 4 && (kIsa >= Isa::kAvx2 || kBuildHasAvx2);
  /// A bucket's 8 bytes, which may start at any byte and may alias the table's bytes.
  typedef std::uint64_t UnalignedWord __attribute__((aligned(1), may_alias));
  /// Whether either of two whole-word buckets holds `value`, by PackedTable's AVX2 compare.
  CUCKOO_AVX2_FN static bool any_hit_avx2(std::uint64_t w1, std::uint64_t w2,
                                          std::uint32_t value) noexcept {
    return any_hit_broadcast(_mm256_set1_epi64x(static_cast<long long>(w1)),
                             _mm256_set1_epi64x(static_cast<long long>(w2)), value);
  }
  /// The lane compare of a whole-word bucket pair (PackedTable's, at the AVX2 level).
  using LaneCompare = PackedTable<kSlots, kFixedBits, Isa::kAvx2>;
  /// The same of the two words already broadcast to every element.
  CUCKOO_AVX2_FN static bool any_hit_broadcast(__m256i x1, __m256i x2,
                                               std::uint32_t value) noexcept {
    const auto hits = LaneCompare::broadcast_pair_hits(x1, x2, value);
    const __m256i any = _mm256_or_si256(hits.first, hits.second);
    return _mm256_testz_si256(any, any) == 0;
  }
#if CUCKOO_VECTOR_BUCKET_READS
  /// any_hit_avx2 of the buckets whose bytes start at `at1` and `at2`, each read by one
  /// vpbroadcastq from memory (see the top). The compiler-only fences keep both reads between
  /// the caller's two loads of its validation word; the processor keeps loads in order (x86-TSO).
  CUCKOO_AVX2_FN static bool any_hit_avx2_at(const std::byte* at1, const std::byte* at2,
                                             std::uint32_t value) noexcept {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    const __m256i x1 = broadcast_word_at(at1);
    CUCKOO_WIDEN_RACE_WINDOW();
    const __m256i x2 = broadcast_word_at(at2);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return any_hit_broadcast(x1, x2, value);
  }
  /// any_hit_avx2_at between two loads of `word`: the word, both buckets, the word again, in one
  /// assembly statement. It keeps the four loads in order for the compiler without the fences
  /// of any_hit_avx2_at, which make the caller's loop reload the filter's members (the table's
  /// address among them, so each bucket read waited for a reload) for every key; the processor
  /// keeps them in order (x86-TSO). The second load of the word is the operand of the `cmp` that
  /// tests it, and the result leaves as a flag: the validation is three instructions (a load, an
  /// `and`, a `cmp` from memory) and the caller's branch, where with both words loaded into
  /// registers and tested in C++ it took five. A caller's loop of single-key lookups on a 192 MiB
  /// table took 0.88-0.89x the time in runs where this VM's memory was slow and the same time in
  /// the others (README, Concurrency). Mutation-check builds split it in two around the race
  /// window.
  CUCKOO_AVX2_FN static bool any_hit_avx2_between(const std::uint64_t* word, const std::byte* at1,
                                                  const std::byte* at2, std::uint32_t value,
                                                  bool& unchanged) noexcept {
    const auto& bucket1 = *reinterpret_cast<const UnalignedWord*>(at1);
    const auto& bucket2 = *reinterpret_cast<const UnalignedWord*>(at2);
    __m256i x1, x2;
    if constexpr (!kWidenedRaceWindows) {
      std::uint64_t kept;
      asm volatile(
          CUCKOO_ASM_WORD_BEFORE
          "vpbroadcastq {%[b1], %[x1]|%[x1], %[b1]}\n\t"
          "vpbroadcastq {%[b2], %[x2]|%[x2], %[b2]}\n\t" CUCKOO_ASM_WORD_QUIET
          : [kept] "=&r"(kept), [x1] "=&x"(x1), [x2] "=&x"(x2), "=@ccz"(unchanged)
          : [word] "m"(*word), [b1] "m"(bucket1), [b2] "m"(bucket2), [keep] "e"(kQuietImmediate));
    } else {
      // Two volatile statements, which the compiler keeps in order, and the window between them.
      std::uint64_t before, after;
      asm volatile(
          "mov {%[word], %[before]|%[before], %[word]}\n\t"
          "vpbroadcastq {%[b1], %[x1]|%[x1], %[b1]}"
          : [before] "=&r"(before), [x1] "=x"(x1)
          : [word] "m"(*word), [b1] "m"(bucket1));
      CUCKOO_WIDEN_RACE_WINDOW();
      asm volatile(
          "vpbroadcastq {%[b2], %[x2]|%[x2], %[b2]}\n\t"
          "mov {%[word], %[after]|%[after], %[word]}"
          : [x2] "=&x"(x2), [after] "=r"(after)
          : [word] "m"(*word), [b2] "m"(bucket2));
      unchanged = StripedVersions::quiet(before, after);
    }
    return any_hit_broadcast(x1, x2, value);
  }
  /// any_hit_avx2_between, with the validation's branch in the assembly (`asm goto`): where the
  /// flag left the statement as an output, the compiler set a register from it and tested that
  /// (two more instructions per key). disturbed() answers when the word moved.
  template <class Disturbed>
  CUCKOO_AVX2_FN static bool any_hit_avx2_quiet_or(const std::uint64_t* word, const std::byte* at1,
                                                   const std::byte* at2, std::uint32_t value,
                                                   Disturbed&& disturbed) noexcept {
    const auto& bucket1 = *reinterpret_cast<const UnalignedWord*>(at1);
    const auto& bucket2 = *reinterpret_cast<const UnalignedWord*>(at2);
    __m256i x1, x2;
    std::uint64_t kept;
    asm goto(CUCKOO_ASM_WORD_BEFORE
             "vpbroadcastq {%[b1], %[x1]|%[x1], %[b1]}\n\t"
             "vpbroadcastq {%[b2], %[x2]|%[x2], %[b2]}\n\t" CUCKOO_ASM_WORD_QUIET_OR_MOVED
             : [kept] "=&r"(kept), [x1] "=&x"(x1), [x2] "=&x"(x2)
             : [word] "m"(*word), [b1] "m"(bucket1), [b2] "m"(bucket2), [keep] "e"(kQuietImmediate)
             : "cc"
             : moved);
    return any_hit_broadcast(x1, x2, value);
  moved:
    [[unlikely]] return disturbed();
  }
  /// any_hit_avx2_quiet_or at the AVX-512 level, in fewer instructions: each bucket is loaded
  /// broadcast and XORed with the lanes' values by one `vpxorq` from memory, and a lane matches
  /// where the result has no bit under its mask (`vptestnmq`, the mask from memory, into a mask
  /// register; the two results tested by one `kortestb`). Six instructions after the loads
  /// against nine, and no vector constant held in a register, which the disturbed path's call
  /// would clobber (GCC reloaded such a constant on every key). A single-key lookup loop's speed
  /// is set by how many keys' instructions the core's window holds (README, Concurrency,
  /// "Lookups three instructions shorter").
  template <class Disturbed>
  CUCKOO_AVX512_FN static bool any_hit_avx512_quiet_or(const std::uint64_t* word,
                                                       const std::byte* at1, const std::byte* at2,
                                                       std::uint32_t value,
                                                       Disturbed&& disturbed) noexcept {
    const auto& bucket1 = *reinterpret_cast<const UnalignedWord*>(at1);
    const auto& bucket2 = *reinterpret_cast<const UnalignedWord*>(at2);
    const __m256i values = LaneCompare::lane_values(value);
    __m256i x1, x2;
    std::uint64_t kept;
    asm goto(CUCKOO_ASM_WORD_BEFORE
             "vpxorq {%[b1]%{1to4%}, %[values], %[x1]|%[x1], %[values], %[b1]%{1to4%}}\n\t"
             "vpxorq {%[b2]%{1to4%}, %[values], %[x2]|%[x2], %[values], "
             "%[b2]%{1to4%}}\n\t" CUCKOO_ASM_WORD_QUIET_OR_MOVED
             : [kept] "=&r"(kept), [x1] "=&v"(x1), [x2] "=&v"(x2)
             : [word] "m"(*word), [b1] "m"(bucket1), [b2] "m"(bucket2), [keep] "e"(kQuietImmediate),
               [values] "v"(values)
             : "cc"
             : moved);
    return any_lane_matches(x1, x2);
  moved:
    [[unlikely]] return disturbed();
  }
  /// any_hit_avx2_at at the AVX-512 level: each bucket read and XORed with the lanes' values by
  /// one `vpxorq` from memory (see any_hit_avx512_quiet_or), between the same compiler fences.
  CUCKOO_AVX512_FN static bool any_hit_avx512_at(const std::byte* at1, const std::byte* at2,
                                                 std::uint32_t value) noexcept {
    const __m256i values = LaneCompare::lane_values(value);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    const __m256i x1 = xor_broadcast_word_at(at1, values);
    CUCKOO_WIDEN_RACE_WINDOW();
    const __m256i x2 = xor_broadcast_word_at(at2, values);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return any_lane_matches(x1, x2);
  }
  /// The 8 bytes at `at` in every 64-bit element, XORed with `values`, by one instruction.
  CUCKOO_AVX512_FN static __m256i xor_broadcast_word_at(const std::byte* at,
                                                        __m256i values) noexcept {
    __m256i out;
    asm volatile("vpxorq {%1%{1to4%}, %2, %0|%0, %2, %1%{1to4%}}"
                 : "=v"(out)
                 : "m"(*reinterpret_cast<const UnalignedWord*>(at)), "v"(values));
    return out;
  }
  /// Whether some element of x1 or x2 (a bucket's word XORed with LaneCompare::lane_values) is
  /// zero under its lane's mask: a lane of either bucket holds the value.
  CUCKOO_AVX512_FN static bool any_lane_matches(__m256i x1, __m256i x2) noexcept {
    const __m256i masks = LaneCompare::lane_masks();
    return _kortestz_mask8_u8(_mm256_testn_epi64_mask(x1, masks),
                              _mm256_testn_epi64_mask(x2, masks)) == 0;
  }
  /// whole_word_count_pair of the buckets whose bytes start at `at1` and `at2`, read between two
  /// loads of `word` in one assembly statement, for the reason any_hit_avx2_between gives.
  CUCKOO_HOT static unsigned whole_word_count_between(const std::uint64_t* word,
                                                      const std::byte* at1, const std::byte* at2,
                                                      std::uint32_t value,
                                                      bool& unchanged) noexcept {
    std::uint64_t kept, w1, w2;
    asm volatile(
        CUCKOO_ASM_WORD_BEFORE
        "mov {%[b1], %[w1]|%[w1], %[b1]}\n\t"
        "mov {%[b2], %[w2]|%[w2], %[b2]}\n\t" CUCKOO_ASM_WORD_QUIET
        : [kept] "=&r"(kept), [w1] "=&r"(w1), [w2] "=&r"(w2), "=@ccz"(unchanged)
        : [word] "m"(*word), [b1] "m"(*reinterpret_cast<const UnalignedWord*>(at1)),
          [b2] "m"(*reinterpret_cast<const UnalignedWord*>(at2)), [keep] "e"(kQuietImmediate));
    return whole_word_count(w1, w2, value);
  }
  /// StripedVersions::kQuietBits as the signed 32-bit immediate that an x86-64 `and`
  /// sign-extends to it.
  static constexpr std::int64_t kQuietImmediate =
      static_cast<std::int64_t>(StripedVersions::kQuietBits);
  static_assert(kQuietImmediate >= INT32_MIN && kQuietImmediate <= INT32_MAX,
                "the quiet bits must be an and-immediate: a sign-extended 32-bit value");
  /// The 8 bytes at `at` (little-endian: x86) in every 64-bit element, by one instruction.
  CUCKOO_AVX2_FN static __m256i broadcast_word_at(const std::byte* at) noexcept {
    __m256i out;
    asm volatile("vpbroadcastq {%1, %0|%0, %1}"
                 : "=x"(out)
                 : "m"(*reinterpret_cast<const UnalignedWord*>(at)));
    return out;
  }
#endif
#endif
 public:
  /// Whether lookups read buckets by assembly (contains_pair_between by any_hit_avx2_between):
  /// contains_pair_quiet_or's disturbed() then runs in a caller whose loop keeps everything in
  /// registers, and BasicConcurrentFilter's second level takes no ordinary call there.
  /// kAvx512PairRead: whether they load each bucket by AVX-512VL's `vpxorq` with a broadcast from
  /// memory and test it into mask registers (any_hit_avx512_quiet_or, any_hit_avx512_at): only
  /// where the table's level, not the build, guarantees AVX-512VL and DQ (detect_cpu_isa checks
  /// both before the facade picks kAvx512).
#if CUCKOO_HAS_X86_VECTOR_PATHS && CUCKOO_VECTOR_BUCKET_READS
  static constexpr bool kReadsBetweenByAssembly = kWholeWordBuckets && kAvx2PairCompare;
  static constexpr bool kAvx512PairRead = kAvx2PairCompare && kIsa >= Isa::kAvx512;
#else
  static constexpr bool kReadsBetweenByAssembly = false;
  static constexpr bool kAvx512PairRead = false;
#endif

 private:
  static constexpr std::uint64_t kOnes = [] {
    std::uint64_t ones = 0;
    if constexpr (kWholeWordBuckets) {
      for (unsigned lane = 0; lane < kSlots; ++lane) ones |= std::uint64_t{1} << lane * kFixedBits;
    }
    return ones;
  }();
  static constexpr std::uint64_t kHighs = kOnes << (kFixedBits == 0 ? 0 : kFixedBits - 1);
  const std::byte* whole_bucket_at(std::uint64_t bucket) const noexcept {
    return whole_bucket_at(buffer_.data(), bucket);
  }
  static const std::byte* whole_bucket_at(const std::byte* base, std::uint64_t bucket) noexcept {
    return base + bucket * (kSlots * kFixedBits / 8);
  }
  /// contains_pair of whole-word buckets in the table at `base`.
  CUCKOO_HOT static bool whole_word_pair(const std::byte* base, std::uint64_t b1, std::uint64_t b2,
                                         std::uint32_t value) noexcept {
    // Both addresses before either load: after an acquire load the compiler reloads the base.
    const std::byte* const at1 = whole_bucket_at(base, b1);
    const std::byte* const at2 = whole_bucket_at(base, b2);
#if CUCKOO_HAS_X86_VECTOR_PATHS && CUCKOO_VECTOR_BUCKET_READS
    if constexpr (kAvx512PairRead) {
      return any_hit_avx512_at(at1, at2, value);
    } else if constexpr (kAvx2PairCompare) {
      return any_hit_avx2_at(at1, at2, value);
    }
#endif
    const std::uint64_t w1 = load_unaligned_word(at1);
    CUCKOO_WIDEN_RACE_WINDOW();
    const std::uint64_t w2 = load_unaligned_word(at2);
#if CUCKOO_HAS_X86_VECTOR_PATHS
    if constexpr (kAvx2PairCompare) {
      return any_hit_avx2(w1, w2, value);
    }
#endif
    // Bits above the bucket's lanes (the next bucket's) cannot reach the lanes' flags: the
    // subtraction borrows upwards only, and kHighs holds the bucket's lanes alone.
    const std::uint64_t pattern = value * kOnes;
    return (zero_lane_flags(w1 ^ pattern) | zero_lane_flags(w2 ^ pattern)) != 0;
  }
  /// How many lanes of the whole-word buckets w1 and w2 together equal `value`.
  CUCKOO_HOT static unsigned whole_word_count(std::uint64_t w1, std::uint64_t w2,
                                              std::uint32_t value) noexcept {
    constexpr std::uint64_t kLows = kHighs - kOnes;
    const std::uint64_t pattern = std::uint64_t{value} * kOnes;
    return detail::pair_flag_count<kIsa>(
        packed_table_type::exact_zero_lanes(w1 ^ pattern, kLows, kHighs),
        packed_table_type::exact_zero_lanes(w2 ^ pattern, kLows, kHighs), kOnes, kFixedBits,
        kSlots);
  }

  /// How many entries of the whole-word buckets b1 and b2 in the table at `base` equal `value`:
  /// both loads issued before either is used.
  CUCKOO_HOT static unsigned whole_word_count_pair(const std::byte* base, std::uint64_t b1,
                                                   std::uint64_t b2, std::uint32_t value) noexcept {
    const std::byte* const at1 = whole_bucket_at(base, b1);
    const std::byte* const at2 = whole_bucket_at(base, b2);
    const std::uint64_t w1 = load_unaligned_word(at1);
    CUCKOO_WIDEN_RACE_WINDOW();
    const std::uint64_t w2 = load_unaligned_word(at2);
    return whole_word_count(w1, w2, value);
  }
  /// How many lanes of one whole-word bucket equal `value`, from one load.
  static unsigned whole_bucket_count(const std::byte* base, std::uint64_t bucket,
                                     std::uint32_t value) noexcept {
    const std::uint64_t x =
        load_unaligned_word(whole_bucket_at(base, bucket)) ^ (std::uint64_t{value} * kOnes);
    return detail::popcount_at<kIsa>(
        packed_table_type::exact_zero_lanes(x, kHighs - kOnes, kHighs));
  }
  /// The SWAR zero test of a whole-word bucket's lanes in x (bit 0 = its first lane's): a flag at
  /// the top of each lane that may be zero; the lowest flag is a true zero lane.
  static constexpr std::uint64_t zero_lane_flags(std::uint64_t x) noexcept {
    return (x - kOnes) & ~x & kHighs;
  }
  /// zero_lane_flags of `bucket` xor `value` in every lane: its lanes equal to `value`, from one
  /// unaligned load of the bucket's 8 bytes (for writers: see flip_lowest).
  std::uint64_t whole_bucket_matches(std::uint64_t bucket, std::uint32_t value) const noexcept {
    return zero_lane_flags(load_unaligned_word(whole_bucket_at(bucket)) ^
                           (std::uint64_t{value} * kOnes));
  }
  /// The lines of the 8 bytes whole_word_pair reads of `bucket`.
  CUCKOO_HOT static void whole_word_prefetch(const std::byte* base, std::uint64_t bucket) noexcept {
    const std::byte* first = whole_bucket_at(base, bucket);
    if constexpr (kLoadNeverStraddles) {
      __builtin_prefetch(first, 0, 2);
    } else {
      prefetch_lines<2>(first, first + sizeof(std::uint64_t) - 1);
    }
  }
  /// The 8 bytes at `at` by one unaligned atomic load (see the top).
  CUCKOO_HOT static std::uint64_t load_unaligned_word(const std::byte* at) noexcept {
    return detail::little_endian(
        __atomic_load_n(reinterpret_cast<const std::uint64_t*>(at), __ATOMIC_ACQUIRE));
  }

  /// The 64 bits from bit `bit`, by one unaligned atomic load of the 8 bytes from its byte
  /// (the buffer's tail word keeps it inside the buffer for every bucket).
  CUCKOO_HOT std::uint64_t load_bucket_window(std::uint64_t bit) const noexcept {
    return load_unaligned_word(buffer_.data() + (bit >> 3)) >> (bit & 7);
  }
  const std::uint64_t* words() const noexcept {
    return std::launder(reinterpret_cast<const std::uint64_t*>(buffer_.data()));
  }

  /// `width` (≤ 64) bits from bit `bit` in the low bits of the result, plus higher bits that
  /// callers mask off (see the top: the second word is read only when the window reaches it).
  CUCKOO_HOT std::uint64_t window(std::uint64_t bit, unsigned width) const noexcept {
    const std::size_t w = static_cast<std::size_t>(bit >> 6);
    const unsigned s = static_cast<unsigned>(bit & 63);
    const std::size_t next = w + (s + width > 64 ? 1 : 0);
    const std::uint64_t lo = detail::little_endian(word(w).load(std::memory_order_acquire));
    const std::uint64_t hi = detail::little_endian(word(next).load(std::memory_order_acquire));
    return (lo >> s) | ((hi << 1) << (63 - s));
  }
  /// Lanes [lane, lane + group) of `bucket` in the low bits, masked.
  CUCKOO_HOT std::uint64_t group_word(std::uint64_t bucket, unsigned lane) const noexcept {
    const unsigned width = group() * fingerprint_bits();
    const std::uint64_t bit = (bucket * kSlots + lane) * fingerprint_bits();
    return window(bit, width) & group_mask(width);
  }
  std::uint64_t group_mask(unsigned width) const noexcept {
    if constexpr (kFixedBits != 0) {
      return low_mask(width);
    } else {
      return group_mask_;
    }
  }

  /// XORs `flip` into the f-bit entry at bit `bit`. The caller owns the entry's words (holds its
  /// group's stripe), so nobody else writes them: a load and a store, no read-modify-write.
  /// before_two_stores() runs first when the entry straddles two words.
  template <class BeforeTwoStores>
  void flip_entry(std::uint64_t bit, std::uint32_t flip,
                  BeforeTwoStores&& before_two_stores) noexcept {
    if (flip == 0) return;
    const std::size_t w = static_cast<std::size_t>(bit >> 6);
    const unsigned s = static_cast<unsigned>(bit & 63);
    const std::uint64_t bits = flip;
    const bool straddles = s + fingerprint_bits() > 64;
#ifndef CUCKOO_TEST_MUTATION_UNANNOUNCED_STRADDLERS
    if (straddles) before_two_stores();
#else
    (void)before_two_stores;  // mutation: lookups may see half of an unannounced entry
#endif
    xor_word(w, bits << s);
    if (straddles) {
      CUCKOO_WIDEN_RACE_WINDOW();
      xor_word(w + 1, bits >> (64 - s));
    }
  }
  void xor_word(std::size_t w, std::uint64_t bits) noexcept {
    const auto target = word(w);
    target.store(target.load(std::memory_order_relaxed) ^ detail::little_endian(bits),
                 std::memory_order_release);
  }

  /// XORs `flip` into the lowest entry of `bucket` equal to `value`; false if none is.
  template <class BeforeTwoStores>
  bool flip_lowest(std::uint64_t bucket, std::uint32_t value, std::uint32_t flip,
                   BeforeTwoStores&& before_two_stores) noexcept {
    if constexpr (kWholeWordBuckets) {
      // The bucket's 8 bytes by one unaligned load, as a lookup reads them, not the two aligned
      // words of window(): a single-key build to 95% of 192 MiB went from 1.51 and 1.38 to 1.40
      // and 1.22x Filter's time (README, Concurrency). Bits past the bucket may belong to another
      // stripe and change meanwhile; they are masked off (kHighs), and the bucket's own bits are
      // ours (we hold its stripe), so this read cannot tear where it matters.
      const std::uint64_t flags = whole_bucket_matches(bucket, value);
      if (flags == 0) return false;
      const auto top = static_cast<unsigned>(std::countr_zero(flags));
      flip_entry(bucket * kSlots * kFixedBits + top + 1 - kFixedBits, flip, before_two_stores);
      return true;
    }
    const unsigned f = fingerprint_bits();
    const std::uint64_t pattern = value * ones_;
    for (unsigned lane = 0; lane < kSlots; lane += group()) {
      const std::uint64_t x = group_word(bucket, lane) ^ pattern;
      const std::uint64_t flags = (x - ones_) & ~x & highs_;
      if (flags != 0) {
        const auto top = static_cast<unsigned>(std::countr_zero(flags));
        flip_entry((bucket * kSlots + lane) * f + top + 1 - f, flip, before_two_stores);
        return true;
      }
    }
    return false;
  }

  template <int kLocality>
  CUCKOO_HOT void prefetch_bucket(std::uint64_t bucket) const noexcept {
    const std::uint64_t bit = bucket * kSlots * fingerprint_bits();
    const std::byte* first = buffer_.data() + (bit >> 6) * sizeof(std::uint64_t);
    const std::byte* last =
        buffer_.data() + ((bit + kSlots * fingerprint_bits() - 1) >> 6) * sizeof(std::uint64_t);
    prefetch_lines<kLocality>(first, last);
  }
  /// The line of `first` and the line of `last`, both asked for even when they are one line: a
  /// branch on whether they differ is taken at random (1 bucket in 32 at f = 12, b = 4), and its
  /// mispredictions cost more than a redundant prefetch, as PackedTable::prefetch_load measured.
  template <int kLocality>
  CUCKOO_HOT static void prefetch_lines(const std::byte* first, const std::byte* last) noexcept {
    __builtin_prefetch(first, 0, kLocality);
    __builtin_prefetch(last, 0, kLocality);
  }
  /// Whether no lookup's 8-byte load can straddle a line, known at compile time: whole-word
  /// buckets of exactly 8 bytes (b = 4 with f = 16, b = 8 with f = 8, b = 2 with f = 32).
  static constexpr bool kLoadNeverStraddles =
      kWholeWordBuckets && kSlots * kFixedBits / 8 == sizeof(std::uint64_t);

  std::uint64_t bucket_count_;
  unsigned bits_;
  std::size_t packed_bytes_;
  unsigned group_ = 1;
  std::uint64_t ones_ = 1;
  std::uint64_t highs_ = 0;
  std::uint64_t group_mask_ = 0;
  unsigned group_shift_ = 0;
  detail::AlignedBuffer buffer_;  // 64-bit words, accessed only through std::atomic_ref
};

}  // namespace cuckoo::concurrent

// The validation's assembly text is this header's alone.
#undef CUCKOO_ASM_WORD_BEFORE
#undef CUCKOO_ASM_WORD_QUIET
#undef CUCKOO_ASM_WORD_QUIET_OR_MOVED
