// cuckoo/table/packed_table.hpp — buckets of b fingerprints of f bits, bit-packed end to end.
//
// Layout. Entry j of bucket i occupies bits [(i·b + j)·f, (i·b + j + 1)·f) of one little-endian bit
// string; no bucket is padded, so the table costs exactly m·b·f bits plus 8 bytes of tail padding
// (every access is an unaligned 8-byte load, which the padding keeps inside the allocation). Any f
// from 2 to 32 works with any b in {2, 4, 8}: an entry starts at bit offset 0..7 of its first byte,
// so an entry of up to 32 bits always lies inside the 8 loaded bytes. 0 means "empty".
//
// Bucket compare. The entries of a bucket are compared in groups of g lanes that fit in one 57-bit
// window of a single load (g = the largest power of two ≤ b with g·f ≤ 57): for f = 12, b = 4 the
// whole bucket is one load. Where every bucket starts on a byte (b·f a multiple of 8, f fixed)
// the window is all 64 bits, so f = 16, b = 4 is one load too (it was two, and batched lookups
// on a 192 MiB filter took 2.0x the time). A group holds v iff x = group ⊕ (v · ones) has a zero
// lane, which the SWAR test (x − ones) & ~x & highs detects exactly: a borrow only starts at a zero
// lane, so the result is non-zero iff some lane is zero (lanes above the first zero may be flagged
// spuriously, which is why `find` confirms the lane before answering).
//
// Both buckets at once. contains_pair(b1, b2, v) is the lookup's whole compare: both bucket
// words are loaded before either is tested and the two SWAR results are OR-ed, with no branch in
// between. Where a bucket fits one load (b·f ≤ 57) and b ≤ 4, the AVX2 form (table level
// kIsa ≥ Isa::kAvx2) instead extracts every lane of both buckets with a variable shift per vector
// and compares them against v at once; where buckets start on a byte (b·f a multiple of 8, f
// fixed, as for f = 12, b = 4) the value is shifted to each lane instead, which leaves one AND and
// one compare per bucket waiting for the line, and erase_pair uses the same compare. An AVX-512
// form (one 8-lane register for both b = 4 buckets) exists too but measured slower, so
// contains_pair does not pick it; the kAvx512 level is the AVX2 form compiled with AVX-512VL
// available (the mask's broadcast folds into the load). The level is the Isa template parameter:
// by default what the translation unit's flags enable (kCompiledIsa), and the facade holds every
// level and picks the CPU's at run time (detail/isa.hpp). The portable SWAR path is always
// compiled and tested, and all forms must agree exactly (tests/unit/test_simd_compare,
// test_isa_dispatch).
//
// Cache lines. The buffer is 64-byte aligned. A bucket's compare loads the 8 bytes from its first
// byte; prefetch() fetches the lines of that load's first and last byte (the same line unless the
// load straddles two: 3 buckets in 32 for f = 12, b = 4; never for f = 16, b = 4, which then asks
// for one line), so a straddling bucket never stalls on its second line, without a branch whose
// mispredictions cost more than the redundant prefetch. prefetch() brings lines to L1, for inserts
// and erases, which write them; prefetch_for_lookup() only to L2, which lets more lookups be in
// flight. No padding is added: the bits-per-item guarantee stays exactly as above. (Padding a
// 48-bit bucket so none straddles costs 1/16 more memory for f = 12 and would save only the 3 in 32
// extra lines.)
//
// Updates from one load. try_place (insert), erase_pair (erase), has_free and entries (the insert
// search) each load a bucket once and work on the word: the lowest lane the SWAR test flags is a
// true match, so a lane is written or cleared in place without locating its slot index.
//
// Template parameters:
//   kSlots      entries per bucket, b ∈ {2, 4, 8}.
//   FixedBits   the fingerprint width f when known at compile time (2..32), letting the compiler
//               fold every shift and mask; 0 (the default) takes f at run time from the
//               constructor.
//   kIsaLevel   which compare contains_pair / erase_pair use (detail/isa.hpp). A level above
//               the build's flags is emitted with a target attribute: call it from code compiled
//               for that level (detail::IsaFilter does), or it runs out of line.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuckoo/detail/aligned_buffer.hpp"
#include "cuckoo/detail/endian.hpp"
#include "cuckoo/detail/isa.hpp"

#if CUCKOO_HAS_X86_VECTOR_PATHS
#include <immintrin.h>
#endif

namespace cuckoo {

template <unsigned kSlots, unsigned FixedBits = 0, Isa kIsaLevel = kCompiledIsa>
class PackedTable {
  static_assert(kSlots == 2 || kSlots == 4 || kSlots == 8, "bucket size must be 2, 4 or 8");
  static_assert(FixedBits == 0 || (FixedBits >= 2 && FixedBits <= 32),
                "fingerprint width must be 2..32");
  static_assert(CUCKOO_HAS_X86_VECTOR_PATHS || kIsaLevel == Isa::kPortable,
                "vector compares exist for x86-64 only");

 public:
  static constexpr unsigned kBucketSize = kSlots;
  static constexpr unsigned kFixedBits = FixedBits;
  static constexpr unsigned kMinBits = 2;
  static constexpr unsigned kMaxBits = 32;
  static constexpr bool kSemiSorted = false;
  /// The instruction-set level of the pair compares (detail/isa.hpp).
  static constexpr Isa kIsa = kIsaLevel;

  /// Bytes a table of `bucket_count` buckets of `bits`-bit entries occupies.
  static constexpr std::size_t bytes_for(std::uint64_t bucket_count, unsigned bits) noexcept {
    return static_cast<std::size_t>((bucket_count * kSlots * bits + 7) / 8 + kTailPadding);
  }

  PackedTable() : PackedTable(2, kFixedBits == 0 ? 8 : kFixedBits) {}
  PackedTable(std::uint64_t bucket_count, unsigned bits)
      : PackedTable(bucket_count, bits, detail::AlignedBuffer(bytes_for(bucket_count, bits))) {}
  /// A table over storage it does not own (a memory-mapped file), which must hold exactly
  /// bytes_for(bucket_count, bits) bytes and outlive the table.
  PackedTable(std::uint64_t bucket_count, unsigned bits, detail::ExternalStorage storage)
      : PackedTable(bucket_count, bits,
                    detail::AlignedBuffer(check_storage(storage, bucket_count, bits))) {}

 private:
  PackedTable(std::uint64_t bucket_count, unsigned bits, detail::AlignedBuffer&& buffer)
      : bucket_count_(bucket_count), bits_(check_bits(bits)), buffer_(std::move(buffer)) {
    group_ = kSlots;
    while (group_ > 1 && group_ * bits > window_bits()) group_ /= 2;
    ones_ = 0;
    for (unsigned lane = 0; lane < group_; ++lane) ones_ |= std::uint64_t{1} << (lane * bits);
    highs_ = ones_ << (bits - 1);
    group_mask_ = low_mask(group_ * bits);
  }

 public:
  /// `bits` if a table of this type can hold fingerprints that wide, else std::invalid_argument
  /// naming the problem (also for tables with the same layout, such as AtomicPackedTable).
  static unsigned check_bits(unsigned bits) {
    if (bits < kMinBits || bits > kMaxBits) {
      throw std::invalid_argument("fingerprint_bits must be in 2..32, got " + std::to_string(bits));
    }
    if (kFixedBits != 0 && bits != kFixedBits) {
      throw std::invalid_argument("this table is compiled for " + std::to_string(kFixedBits) +
                                  "-bit fingerprints, got " + std::to_string(bits));
    }
    return bits;
  }

  std::uint64_t bucket_count() const noexcept { return bucket_count_; }
  unsigned fingerprint_bits() const noexcept { return kFixedBits != 0 ? kFixedBits : bits_; }
  std::size_t memory_bytes() const noexcept { return buffer_.size(); }
  std::span<const std::byte> bytes() const noexcept { return {buffer_.data(), buffer_.size()}; }
  std::span<std::byte> bytes() noexcept { return {buffer_.data(), buffer_.size()}; }
  void clear() noexcept { buffer_.zero(); }

  std::uint32_t read(std::uint64_t bucket, unsigned slot) const noexcept {
    const std::uint64_t bit = (bucket * kSlots + slot) * fingerprint_bits();
    return static_cast<std::uint32_t>(load(bit >> 3) >> (bit & 7) & entry_mask());
  }

  void write(std::uint64_t bucket, unsigned slot, std::uint32_t value) noexcept {
    const std::uint64_t bit = (bucket * kSlots + slot) * fingerprint_bits();
    const unsigned shift = bit & 7;
    std::uint64_t word = load(bit >> 3);
    word = (word & ~(entry_mask() << shift)) | (std::uint64_t{value} << shift);
    word = detail::little_endian(word);
    std::memcpy(buffer_.data() + (bit >> 3), &word, sizeof word);
  }

  /// Puts `value` into `slot` and returns what was there (one step of a kick walk).
  std::uint32_t exchange(std::uint64_t bucket, unsigned slot, std::uint32_t value) noexcept {
    const std::uint32_t old = read(bucket, slot);
    write(bucket, slot, value);
    return old;
  }

  /// Reverses exchange(bucket, slot, placed) that returned `original`. Slots here never move, so
  /// the bucket's bits are restored exactly.
  void undo_exchange(std::uint64_t bucket, unsigned slot, std::uint32_t /*placed*/,
                     std::uint32_t original) noexcept {
    write(bucket, slot, original);
  }

  /// True if some entry of `bucket` equals `value`.
  bool contains(std::uint64_t bucket, std::uint32_t value) const noexcept {
    const std::uint64_t first = bucket * kSlots;
    for (unsigned lane = 0; lane < kSlots; lane += group()) {
      if (group_has(first + lane, value) != 0) return true;
    }
    return false;
  }

  /// The lowest slot of `bucket` holding `value` (0 finds an empty slot), or -1.
  int find(std::uint64_t bucket, std::uint32_t value) const noexcept {
    const std::uint64_t first = bucket * kSlots;
    for (unsigned lane = 0; lane < kSlots; lane += group()) {
      if (group_has(first + lane, value) == 0) continue;
      for (unsigned slot = lane; slot < lane + group(); ++slot) {
        if (read(bucket, slot) == value) return static_cast<int>(slot);
      }
    }
    return -1;
  }

  /// All entries of `bucket`, in slot order: one load per group of lanes, not one per entry.
  std::array<std::uint32_t, kSlots> entries(std::uint64_t bucket) const noexcept {
    std::array<std::uint32_t, kSlots> out{};
    if (group() == kSlots) {
      const std::uint64_t word = bucket_word(bucket);
      for (unsigned k = 0; k < kSlots; ++k) {
        out[k] = static_cast<std::uint32_t>(word >> (k * fingerprint_bits()) & entry_mask());
      }
      return out;
    }
    const std::uint64_t first = bucket * kSlots;
    for (unsigned lane = 0; lane < kSlots; lane += group()) {
      const std::uint64_t bit = (first + lane) * fingerprint_bits();
      const std::uint64_t word = load(bit >> 3) >> (bit & 7);
      for (unsigned k = 0; k < group(); ++k) {
        out[lane + k] = static_cast<std::uint32_t>(word >> (k * fingerprint_bits()) & entry_mask());
      }
    }
    return out;
  }

  /// Bit j is set iff slot j of `bucket` holds `value` (0: the empty slots), exactly. For a
  /// bucket that fits one load: one load and a zero-lane test that cannot borrow across lanes
  /// (each lane's low bits plus all-ones-but-the-top cannot carry out of the lane), unlike the
  /// cheaper test of find / contains, which may flag lanes above a true match. For value
  /// association (map/basic_approximate_map.hpp), which needs every matching slot.
  unsigned match_mask(std::uint64_t bucket, std::uint32_t value) const noexcept {
    unsigned mask = 0;
    if (group() == kSlots) {
      const std::uint64_t zero_lanes = exact_match_tops(bucket, value);
      for (unsigned j = 0; j < kSlots; ++j) {
        const unsigned top = j * fingerprint_bits() + fingerprint_bits() - 1;
        mask |= static_cast<unsigned>(zero_lanes >> top & 1) << j;
      }
      return mask;
    }
    const auto slots = entries(bucket);
    for (unsigned j = 0; j < kSlots; ++j) mask |= static_cast<unsigned>(slots[j] == value) << j;
    return mask;
  }

  /// Both buckets' match_mask in one: bit j is slot j of b1, bit b + j slot j of b2. Exact, as
  /// match_mask. Where contains_pair takes the aligned vector compare (f = 12, b = 4 among them),
  /// so does this: one compare per bucket and a movemask, instead of a zero-lane test and b bit
  /// extractions per bucket; a batch find (value association) spends its compare time here.
  CUCKOO_HOT unsigned match_mask_pair(std::uint64_t b1, std::uint64_t b2,
                                      std::uint32_t value) const noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS  // the vector forms are declared in x86 builds only
    if constexpr (vector_match_mask_pair()) return match_mask_pair_avx2_aligned(b1, b2, value);
#endif
    return match_mask_pair_portable(b1, b2, value);
  }

  /// The top bit (in `highs`) of every lane of x that is zero, and no other bit: the exact
  /// zero-lane test. A lane's low bits (`lows`: each lane's bits below its top) plus
  /// all-ones-but-the-top cannot carry out of the lane, so no lane is flagged because of the one
  /// below it, as the cheaper test of group_has may flag lanes above a true zero. For counts; the
  /// concurrent table shares it.
  static constexpr std::uint64_t exact_zero_lanes(std::uint64_t x, std::uint64_t lows,
                                                  std::uint64_t highs) noexcept {
    return ~(((x & lows) + lows) | x) & highs;
  }

  /// How many entries of b1 and b2 together equal `value`: the popcount of match_mask_pair where
  /// that is the vector compare, else both buckets' exact SWAR flags counted together, since SWAR
  /// counts are cheaper than two masks built slot by slot. BasicFilter's and
  /// BasicApproximateMap's count.
  CUCKOO_HOT unsigned count_pair(std::uint64_t b1, std::uint64_t b2,
                                 std::uint32_t value) const noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS
    if constexpr (vector_match_mask_pair()) {
      return detail::popcount_at<kIsa>(match_mask_pair_avx2_aligned(b1, b2, value));
    }
#endif
    if (group() == kSlots) {
      return detail::pair_flag_count<kIsa>(exact_match_tops(b1, value), exact_match_tops(b2, value),
                                           ones_, fingerprint_bits(), kSlots);
    }
    unsigned n = 0;
    for (unsigned lane = 0; lane < kSlots; lane += group()) {
      n += detail::pair_flag_count<kIsa>(group_exact_tops(b1 * kSlots + lane, value),
                                         group_exact_tops(b2 * kSlots + lane, value), ones_,
                                         fingerprint_bits(), group());
    }
    return n;
  }
  unsigned match_mask_pair_portable(std::uint64_t b1, std::uint64_t b2,
                                    std::uint32_t value) const noexcept {
    return match_mask(b1, value) | match_mask(b2, value) << kSlots;
  }

  /// Writes `value` into the lowest empty slot of `bucket`, exactly as find(bucket, 0) then write
  /// would; false if the bucket is full. For a bucket that fits one load, the slot is never
  /// located as an index: the lowest lane the SWAR zero test flags is a true empty lane, and the
  /// value is written there from the same load.
  CUCKOO_HOT bool try_place(std::uint64_t bucket, std::uint32_t value) noexcept {
    if (group() != kSlots) return replace_lowest(bucket, 0, value);
    const std::uint64_t byte = bucket_byte(bucket);
    const std::uint64_t word = load(byte);
    const std::uint64_t zero_lanes = lanes_equal(word, bucket_shift(bucket), 0);
    if (zero_lanes == 0) return false;
    const std::uint64_t top = zero_lanes & (std::uint64_t{0} - zero_lanes);
    store(byte, word | (top >> (fingerprint_bits() - 1)) * value);
    return true;
  }

  /// True if `bucket` has an empty slot (the SWAR zero test alone, without locating it).
  bool has_free(std::uint64_t bucket) const noexcept {
    if (group() == kSlots) {
      const std::uint64_t x = bucket_word(bucket);
      return ((x - ones_) & ~x & highs_) != 0;
    }
    const std::uint64_t first = bucket * kSlots;
    for (unsigned lane = 0; lane < kSlots; lane += group()) {
      if (group_has(first + lane, 0) != 0) return true;
    }
    return false;
  }

  /// How many entries of `bucket` equal `value`. One load where the bucket fits one: the loader
  /// counts a file's items with count(bucket, 0) over every bucket, and slot by slot that was most
  /// of a large filter's load (README, "Saving filters").
  unsigned count(std::uint64_t bucket, std::uint32_t value) const noexcept {
    if (group() == kSlots)
      return detail::pair_flag_count<kIsa>(exact_match_tops(bucket, value), 0, ones_,
                                           fingerprint_bits(), kSlots);
    unsigned n = 0;
    for (unsigned lane = 0; lane < kSlots; lane += group()) {
      n += detail::pair_flag_count<kIsa>(group_exact_tops(bucket * kSlots + lane, value), 0, ones_,
                                         fingerprint_bits(), group());
    }
    return n;
  }

  /// Starts loading `bucket` into L1, for an operation that will write it: the line of the first
  /// of the 8 bytes its compare loads, and the next line too when those bytes straddle it.
  CUCKOO_HOT void prefetch(std::uint64_t bucket) const noexcept {
    prefetch_load<3>(bucket);
  }
  /// The same for a lookup, into L2 only: a miss bound for L2 frees its L1 miss buffer sooner,
  /// so more lookups' lines can be in flight at once (see BasicFilter::kPipelineDepth).
  CUCKOO_HOT void prefetch_for_lookup(std::uint64_t bucket) const noexcept {
    prefetch_load<2>(bucket);
  }

  /// A batch lookup's view of the table: its base address, copied into the loop's own frame
  /// (BasicFilter::contains_pipelined), where the compiler keeps it in a register instead of
  /// reloading it from the table per key. Whole-word buckets are read through it alone; other
  /// shapes through the table.
  class LookupReader {
   public:
    explicit LookupReader(const PackedTable& table) noexcept
        : table_(&table), base_(table.buffer_.data()) {}
    CUCKOO_HOT bool contains_pair(std::uint64_t b1, std::uint64_t b2,
                                  std::uint32_t value) const noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS
      if constexpr (kIsa >= Isa::kAvx2 && kAlignedVectorCompare) {
        return aligned_pair_contains(load_from(base_ + b1 * kBucketBytes),
                                     load_from(base_ + b2 * kBucketBytes), value);
      }
#endif
      return table_->contains_pair(b1, b2, value);
    }
    CUCKOO_HOT unsigned count_pair(std::uint64_t b1, std::uint64_t b2,
                                   std::uint32_t value) const noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS
      if constexpr (vector_match_mask_pair()) {
        return detail::popcount_at<kIsa>(hit_mask(aligned_pair_hits(
            load_from(base_ + b1 * kBucketBytes), load_from(base_ + b2 * kBucketBytes), value)));
      }
#endif
      return table_->count_pair(b1, b2, value);
    }
    /// PackedTable::match_mask_pair, read from this reader's copy of the base (a batch find).
    CUCKOO_HOT unsigned match_mask_pair(std::uint64_t b1, std::uint64_t b2,
                                        std::uint32_t value) const noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS
      if constexpr (vector_match_mask_pair()) {
        return hit_mask(aligned_pair_hits(load_from(base_ + b1 * kBucketBytes),
                                          load_from(base_ + b2 * kBucketBytes), value));
      }
#endif
      return table_->match_mask_pair(b1, b2, value);
    }
    CUCKOO_HOT void prefetch_for_lookup(std::uint64_t bucket) const noexcept {
      if constexpr (kWholeWordBuckets) {
        prefetch_from<2>(base_ + bucket * kBucketBytes);
      } else {
        table_->prefetch_for_lookup(bucket);
      }
    }

   private:
    const PackedTable* table_;
    const std::byte* base_;
  };
  LookupReader lookup_reader() const noexcept {
    return LookupReader(*this);
  }

  /// True if `b1` or `b2` holds `value` (see "Both buckets at once" above).
  CUCKOO_HOT bool contains_pair(std::uint64_t b1, std::uint64_t b2,
                                std::uint32_t value) const noexcept {
    // AVX2 also under AVX-512: in perf_bench --compare the 8-lane AVX-512 form was 1.2-1.3x
    // slower than the portable one for b = 4 (building its shift vector costs more than it saves)
    // and AVX2 0.8-0.97x; AVX-512 stays compiled and tested for explicit use.
#if CUCKOO_HAS_X86_VECTOR_PATHS
    if constexpr (kIsa >= Isa::kAvx2) return contains_pair_avx2(b1, b2, value);
#endif
    return contains_pair_portable(b1, b2, value);
  }

  /// contains_pair with word tricks only; compiled everywhere.
  CUCKOO_HOT bool contains_pair_portable(std::uint64_t b1, std::uint64_t b2,
                                         std::uint32_t value) const noexcept {
    if (group() != kSlots) {
      const bool in_first = contains(b1, value), in_second = contains(b2, value);
      return in_first | in_second;  // no branch between the two reads
    }
    const std::uint64_t pattern = value * ones_;
    const std::uint64_t x1 = bucket_word(b1) ^ pattern;
    const std::uint64_t x2 = bucket_word(b2) ^ pattern;
    return ((((x1 - ones_) & ~x1) | ((x2 - ones_) & ~x2)) & highs_) != 0;
  }

  /// Clears the lowest entry equal to `value` (non-zero) in `b1`, else in `b2`, exactly as find
  /// then write(…, 0) on each bucket in turn would; false if neither holds it.
  ///
  /// Both buckets are loaded and tested before either is chosen, and the constants are moved to
  /// each bucket's bit offset (the shifts depend on the hash only) rather than the loaded words
  /// to the constants', so little work waits for the lines. Then one word is written back, picked
  /// by a branch. Measured on a 192 MiB filter at 95% load (perf_bench), single-key erase took
  /// 66 ns with the branch, 78 ns writing both words back so that no store address waits for the
  /// lines, and 80 ns choosing the bucket with a select (a store address that waits for them).
  CUCKOO_HOT bool erase_pair(std::uint64_t b1, std::uint64_t b2, std::uint32_t value) noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS
    if constexpr (kIsa >= Isa::kAvx2 && kAlignedVectorCompare) {
      return erase_pair_avx2_aligned(b1, b2, value);
    }
#endif
    if (group() != kSlots) {
      return replace_lowest(b1, value, 0) || replace_lowest(b2, value, 0);
    }
    const std::uint64_t byte1 = bucket_byte(b1), byte2 = bucket_byte(b2);
    const std::uint64_t w1 = load(byte1);
    const std::uint64_t w2 = load(byte2);
    // The lowest flagged lane of the SWAR test is always a true match (see "Bucket compare").
    const std::uint64_t m1 = lanes_equal(w1, bucket_shift(b1), value);
    const std::uint64_t m2 = lanes_equal(w2, bucket_shift(b2), value);
    if (m1 != 0) {
      store(byte1, w1 & ~lane_below(m1 & (std::uint64_t{0} - m1)));
      return true;
    }
    if (m2 != 0) {
      store(byte2, w2 & ~lane_below(m2 & (std::uint64_t{0} - m2)));
      return true;
    }
    return false;
  }

#if CUCKOO_HAS_X86_VECTOR_PATHS
  /// contains_pair with AVX2: each lane of both buckets shifted into its own 64-bit element.
  CUCKOO_AVX2_FN bool contains_pair_avx2(std::uint64_t b1, std::uint64_t b2,
                                         std::uint32_t value) const noexcept {
    if constexpr (kAlignedVectorCompare) return contains_pair_avx2_aligned(b1, b2, value);
    if (!vector_friendly()) return contains_pair_portable(b1, b2, value);
    const unsigned f = fingerprint_bits();
    const auto [w1, s1] = bucket_load(b1);
    const auto [w2, s2] = bucket_load(b2);
    const __m256i mask = _mm256_set1_epi64x(static_cast<long long>(entry_mask()));
    const __m256i v = _mm256_set1_epi64x(value);
    __m256i hit;
    if constexpr (kSlots == 2) {
      const __m256i words =
          _mm256_setr_epi64x(static_cast<long long>(w1), static_cast<long long>(w1),
                             static_cast<long long>(w2), static_cast<long long>(w2));
      const __m256i shifts = _mm256_setr_epi64x(s1, s1 + f, s2, s2 + f);
      hit = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_srlv_epi64(words, shifts), mask), v);
    } else {
      const __m256i lanes = _mm256_setr_epi64x(0, f, 2 * f, 3 * f);
      const __m256i x1 = _mm256_srlv_epi64(_mm256_set1_epi64x(static_cast<long long>(w1)),
                                           _mm256_add_epi64(lanes, _mm256_set1_epi64x(s1)));
      const __m256i x2 = _mm256_srlv_epi64(_mm256_set1_epi64x(static_cast<long long>(w2)),
                                           _mm256_add_epi64(lanes, _mm256_set1_epi64x(s2)));
      hit = _mm256_or_si256(_mm256_cmpeq_epi64(_mm256_and_si256(x1, mask), v),
                            _mm256_cmpeq_epi64(_mm256_and_si256(x2, mask), v));
    }
    return _mm256_testz_si256(hit, hit) == 0;
  }
#endif

#if CUCKOO_HAS_X86_VECTOR_PATHS
  // Buckets that start on a byte (kByteAligned) and fit one load, with b <= 4: the vector forms
  // of contains_pair and erase_pair. The loaded words need no shift, so the value is shifted up
  // to every lane instead of every lane down to the value. That work does not wait for the
  // lines; what does is one AND (its broadcast folded into the load where AVX-512VL is present)
  // and one compare per bucket (kAlignedVectorCompare).

  /// 64-bit elements, all ones where a lane equals `value`: b1's lanes are elements [0, b) and
  /// b2's elements [b, 2b) of the pair (first, second) read as one 8-element sequence.
  struct PairHits {
    __m256i first;
    __m256i second;
  };
  CUCKOO_AVX2_FN static PairHits aligned_pair_hits(std::uint64_t w1, std::uint64_t w2,
                                                   std::uint32_t value) noexcept {
    return broadcast_pair_hits(_mm256_set1_epi64x(static_cast<long long>(w1)),
                               _mm256_set1_epi64x(static_cast<long long>(w2)), value);
  }
  /// aligned_pair_hits of the buckets' words already broadcast to every element (x1, x2): for
  /// callers that load them straight into vector registers (AtomicPackedTable's lookups).
  CUCKOO_AVX2_FN static PairHits broadcast_pair_hits(__m256i x1, __m256i x2,
                                                     std::uint32_t value) noexcept {
    const __m256i masks = lane_masks();
    const __m256i values = lane_values(value);
    if constexpr (kSlots == 2) {
      const __m256i words = _mm256_blend_epi32(x1, x2, 0xF0);  // both buckets in one register
      return {_mm256_cmpeq_epi64(_mm256_and_si256(words, masks), values), _mm256_setzero_si256()};
    } else {
      return {_mm256_cmpeq_epi64(_mm256_and_si256(x1, masks), values),
              _mm256_cmpeq_epi64(_mm256_and_si256(x2, masks), values)};
    }
  }
  /// For a bucket's word broadcast to every element: element k keeps lane k's bits (b = 4; lane
  /// k mod 2 for b = 2), and lane_values(value) holds `value` at that lane's position.
  CUCKOO_AVX2_FN static __m256i lane_masks() noexcept {
    // Lane k's mask, computed unsigned: the top lane of a 64-bit bucket reaches the sign bit.
    constexpr auto lane = [](unsigned k) {
      return static_cast<long long>(low_mask(kFixedBits) << (k * kFixedBits));
    };
    if constexpr (kSlots == 2) {
      return _mm256_setr_epi64x(lane(0), lane(1), lane(0), lane(1));
    } else {
      return _mm256_setr_epi64x(lane(0), lane(1), lane(2), lane(3));
    }
  }
  CUCKOO_AVX2_FN static __m256i lane_values(std::uint32_t value) noexcept {
    constexpr auto f = static_cast<long long>(kFixedBits);
    const __m256i v = _mm256_set1_epi64x(value);
    if constexpr (kSlots == 2) {
      return _mm256_sllv_epi64(v, _mm256_setr_epi64x(0, f, 0, f));
    } else {
      return _mm256_sllv_epi64(v, _mm256_setr_epi64x(0, f, 2 * f, 3 * f));
    }
  }

  /// Single-key contains on a 192 MiB filter, f = 12, b = 4, side by side: 0.95x the time of the
  /// shift-the-words form with -march=native here, 0.98x with AVX2 alone (-march=x86-64-v3).
  CUCKOO_AVX2_FN bool contains_pair_avx2_aligned(std::uint64_t b1, std::uint64_t b2,
                                                 std::uint32_t value) const noexcept {
    return aligned_pair_contains(load(bucket_byte(b1)), load(bucket_byte(b2)), value);
  }
  /// The same from the two buckets' words.
  CUCKOO_AVX2_FN static bool aligned_pair_contains(std::uint64_t w1, std::uint64_t w2,
                                                   std::uint32_t value) noexcept {
    const PairHits h = aligned_pair_hits(w1, w2, value);
    const __m256i hit = _mm256_or_si256(h.first, h.second);
    return _mm256_testz_si256(hit, hit) == 0;
  }

  CUCKOO_AVX2_FN unsigned match_mask_pair_avx2_aligned(std::uint64_t b1, std::uint64_t b2,
                                                       std::uint32_t value) const noexcept {
    return hit_mask(aligned_pair_hits(load(bucket_byte(b1)), load(bucket_byte(b2)), value));
  }
  /// Bit e set where element e of the pair matched: b1's slots at bits [0, b), b2's at [b, 2b)
  /// (for b = 2 `second` is zero and `first` holds both buckets).
  CUCKOO_AVX2_FN static unsigned hit_mask(const PairHits& h) noexcept {
    return static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(h.first))) |
           static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(h.second))) << 4;
  }

  /// erase_pair from the vector compare: the lowest flagged element names the bucket and lane.
  /// The scalar SWAR test it replaces keeps the core's integer units busy while the lines are
  /// awaited; single-key erase in a side-by-side harness took 0.89x the time.
  CUCKOO_AVX2_FN bool erase_pair_avx2_aligned(std::uint64_t b1, std::uint64_t b2,
                                              std::uint32_t value) noexcept {
    const std::uint64_t byte1 = bucket_byte(b1), byte2 = bucket_byte(b2);
    const std::uint64_t w1 = load(byte1), w2 = load(byte2);
    const unsigned hits = hit_mask(aligned_pair_hits(w1, w2, value));
    if (hits == 0) return false;
    const auto element = static_cast<unsigned>(std::countr_zero(hits));
    // The mask is built inside each branch: built once before it, single-key erase measured 1.13x
    // the time (perf_bench, the two builds alternated).
    if (element < kSlots) {
      store(byte1, w1 & ~(entry_mask() << element * kFixedBits));
    } else {
      store(byte2, w2 & ~(entry_mask() << (element - kSlots) * kFixedBits));
    }
    return true;
  }
#endif

#if CUCKOO_HAS_X86_VECTOR_PATHS
  /// contains_pair with AVX-512: for b = 4 all eight lanes of both buckets in one register and one
  /// compare into a mask; b = 2 takes the AVX2 form, which already holds both buckets.
  CUCKOO_AVX512_FN bool contains_pair_avx512(std::uint64_t b1, std::uint64_t b2,
                                             std::uint32_t value) const noexcept {
    if constexpr (kSlots != 4) {
      return contains_pair_avx2(b1, b2, value);
    } else {
      if (!vector_friendly()) return contains_pair_portable(b1, b2, value);
      const unsigned f = fingerprint_bits();
      const auto [w1, s1] = bucket_load(b1);
      const auto [w2, s2] = bucket_load(b2);
      // GCC vector extensions rather than _mm512_srlv_epi64 / _mm512_inserti64x4: GCC 12's
      // versions of those trip -Wuninitialized in user builds (GCC bug 105593). The shift by a
      // vector compiles to one vpsrlvq.
      using V8 = std::uint64_t __attribute__((vector_size(64)));
      const V8 words = {w1, w1, w1, w1, w2, w2, w2, w2};
      const V8 shifts = {s1, s1 + f, s1 + 2 * f, s1 + 3 * f, s2, s2 + f, s2 + 2 * f, s2 + 3 * f};
      const V8 lanes = (words >> shifts) & entry_mask();
      const auto equal = reinterpret_cast<__m512i>(lanes == std::uint64_t{value});
      return _mm512_test_epi64_mask(equal, equal) != 0;
    }
  }
#endif

 private:
  /// Whether match_mask_pair is the vector compare (else two scalar masks).
  static constexpr bool vector_match_mask_pair() noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS
    return kIsa >= Isa::kAvx2 && kAlignedVectorCompare;
#else
    return false;
#endif
  }
  static constexpr unsigned kWindowBits = 57;  // 64 bits loaded minus up to 7 bits of offset
  static constexpr std::size_t kTailPadding = 8;

  static detail::ExternalStorage check_storage(detail::ExternalStorage storage,
                                               std::uint64_t bucket_count, unsigned bits) {
    if (storage.size != bytes_for(bucket_count, bits)) {
      throw std::invalid_argument("external table storage of " + std::to_string(storage.size) +
                                  " bytes, the layout needs " +
                                  std::to_string(bytes_for(bucket_count, bits)));
    }
    return storage;
  }
  static constexpr std::uint64_t low_mask(unsigned bits) noexcept {
    return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  }

  std::uint64_t entry_mask() const noexcept {
    return low_mask(fingerprint_bits());
  }
  unsigned group() const noexcept {
    if constexpr (kFixedBits != 0) {
      unsigned g = kSlots;
      while (g > 1 && g * kFixedBits > window_bits()) g /= 2;
      return g;
    } else {
      return group_;
    }
  }

  std::uint64_t load(std::uint64_t byte) const noexcept {
    return load_from(buffer_.data() + byte);
  }
  static std::uint64_t load_from(const std::byte* first) noexcept {
    std::uint64_t word;
    std::memcpy(&word, first, sizeof word);
    return detail::little_endian(word);
  }

  /// True when the vector compares apply: a whole bucket in one load, at most 4 lanes.
  bool vector_friendly() const noexcept {
    return kSlots <= 4 && group() == kSlots;
  }

  /// Whether no bucket's 8-byte load can straddle a line, known at compile time: byte-aligned
  /// buckets of at least 8 bytes whose size divides the line (b = 4 with f = 16, b = 8 with
  /// f = 8 or 16, b = 2 with f = 32).
  static constexpr bool kLoadNeverStraddles = [] {
    if constexpr (kFixedBits == 0) {
      return false;
    } else {
      constexpr unsigned bits = kSlots * kFixedBits;
      return bits % 8 == 0 && bits / 8 >= sizeof(std::uint64_t) &&
             detail::kCacheLine % (bits / 8) == 0;
    }
  }();

  /// Prefetches the line(s) of bucket_load(bucket): the line of its first byte and the line of
  /// its last loaded byte, which is the same line unless the load straddles (3 buckets in 32 for
  /// f = 12, b = 4). Both are asked for unconditionally: a branch on whether the load straddles is
  /// taken at random for 1 bucket in 10 and its mispredictions cost more than the redundant
  /// prefetch (batched lookups, f = 12, b = 4, best of 7: 8.0–8.2 against 9.7–11.8 ns per key in
  /// cache, 7.3–7.9 against 10.0–13.3 at 16 MiB; at 192 MiB within the noise, README
  /// "Performance").
  ///
  /// A bucket wider than one load (b = 8 with f ≥ 8, for one) is compared a group of lanes per
  /// load, and its last group's 8 bytes may reach a line that the first 8 do not: that line too
  /// (the loads span at most 36 bytes, so two lines). Without it, batched lookups of b = 8,
  /// f = 8 waited on a miss for about one bucket in eight: 59 ns per key against 14 for b = 4.
  template <int kLocality>
  CUCKOO_HOT void prefetch_load(std::uint64_t bucket) const noexcept {
    prefetch_from<kLocality>(buffer_.data() + bucket_byte(bucket));
    if (group() != kSlots) {
      const std::uint64_t last_group = (bucket * kSlots + kSlots - group()) * fingerprint_bits();
      __builtin_prefetch(buffer_.data() + (last_group >> 3) + sizeof(std::uint64_t) - 1, 0,
                         kLocality);
    }
  }
  /// The same from the first byte of the load.
  template <int kLocality>
  CUCKOO_HOT static void prefetch_from(const std::byte* first) noexcept {
    __builtin_prefetch(first, 0, kLocality);
    if constexpr (!kLoadNeverStraddles) {
      __builtin_prefetch(first + sizeof(std::uint64_t) - 1, 0, kLocality);
    }
  }

  /// The 8 bytes from `bucket`'s first byte, and the bucket's bit offset in them.
  struct BucketLoad {
    std::uint64_t word;
    unsigned shift;
  };
  CUCKOO_HOT BucketLoad bucket_load(std::uint64_t bucket) const noexcept {
    return {load(bucket_byte(bucket)), bucket_shift(bucket)};
  }
  /// The lanes of a bucket that fits one load, in the low b·f bits.
  CUCKOO_HOT std::uint64_t bucket_word(std::uint64_t bucket) const noexcept {
    const BucketLoad l = bucket_load(bucket);
    return l.word >> l.shift & group_mask_;
  }

  /// True when every bucket starts on a byte (b·f a multiple of 8, f known at compile time):
  /// then a bucket's first byte is one multiplication away and its bit offset is 0. (The compiler
  /// does not see that (i·48) >> 3 is i·6; in a single-key lookup, where every instruction per
  /// key costs keys in flight, the two saved per bucket measured 0.93x the time.)
  static constexpr bool kByteAligned = kFixedBits != 0 && (kSlots * kFixedBits) % 8 == 0;
  /// A byte-aligned bucket's size in bytes (0 for the others).
  static constexpr std::uint64_t kBucketBytes = kByteAligned ? kSlots * kFixedBits / 8 : 0;
  /// Byte-aligned buckets of at most 64 bits: each is one whole word of one load, with no shift.
  static constexpr bool kWholeWordBuckets = kByteAligned && kSlots * kFixedBits <= 64;
  /// Those of at most 4 lanes take the shifted-value vector compares (aligned_pair_hits) where
  /// AVX2 is compiled in.
  static constexpr bool kAlignedVectorCompare = kWholeWordBuckets && kSlots <= 4;
  /// The bits a group of lanes may span: 57 where a bucket can start up to 7 bits into its first
  /// byte, all 64 loaded for whole-word buckets. So f = 16, b = 4 (and f = 8, b = 8; f = 32,
  /// b = 2) compare a bucket from one load instead of two.
  static constexpr unsigned window_bits() noexcept {
    return kWholeWordBuckets ? 64 : kWindowBits;
  }

  CUCKOO_HOT std::uint64_t bucket_byte(std::uint64_t bucket) const noexcept {
    if constexpr (kByteAligned) {
      return bucket * kBucketBytes;
    } else {
      return (bucket * kSlots * fingerprint_bits()) >> 3;
    }
  }
  CUCKOO_HOT unsigned bucket_shift(std::uint64_t bucket) const noexcept {
    if constexpr (kByteAligned) {
      return 0;
    } else {
      return static_cast<unsigned>(bucket * kSlots * fingerprint_bits()) & 7;
    }
  }
  void store(std::uint64_t byte, std::uint64_t word) noexcept {
    word = detail::little_endian(word);
    std::memcpy(buffer_.data() + byte, &word, sizeof word);
  }
  /// The f-bit lane whose top bit is `top` (a single bit, or 0 for none).
  std::uint64_t lane_below(std::uint64_t top) const noexcept {
    return (top >> (fingerprint_bits() - 1)) * entry_mask();
  }

  /// The SWAR test on a bucket that fits one load, with the constants moved to the bucket's bit
  /// offset in `word` (the shifts then depend on the hash only, not on the loaded word): the top
  /// bit of every lane equal to `value` is set, plus possibly lanes above the lowest true match.
  CUCKOO_HOT std::uint64_t lanes_equal(std::uint64_t word, unsigned shift,
                                       std::uint32_t value) const noexcept {
    const std::uint64_t x = (word & (group_mask_ << shift)) ^ ((value * ones_) << shift);
    return (x - (ones_ << shift)) & ~x & (highs_ << shift);
  }

  /// Writes `to` over the lowest slot of `bucket` holding `from`; false if none does. The
  /// slot-by-slot form of try_place and erase_pair, for buckets wider than one load.
  bool replace_lowest(std::uint64_t bucket, std::uint32_t from, std::uint32_t to) noexcept {
    const int slot = find(bucket, from);
    if (slot < 0) return false;
    write(bucket, static_cast<unsigned>(slot), to);
    return true;
  }

  /// For a bucket that fits one load: the top bit of every lane holding `value`, and no other
  /// bit (exact_zero_lanes).
  std::uint64_t exact_match_tops(std::uint64_t bucket, std::uint32_t value) const noexcept {
    return exact_zero_lanes(bucket_word(bucket) ^ (value * ones_), highs_ - ones_, highs_);
  }

  /// exact_match_tops of the group of lanes starting at entry index `entry` (one load).
  std::uint64_t group_exact_tops(std::uint64_t entry, std::uint32_t value) const noexcept {
    const std::uint64_t bit = entry * fingerprint_bits();
    return exact_zero_lanes((load(bit >> 3) >> (bit & 7) & group_mask_) ^ (value * ones_),
                            highs_ - ones_, highs_);
  }

  /// Non-zero iff the group of lanes starting at entry index `entry` holds `value`.
  std::uint64_t group_has(std::uint64_t entry, std::uint32_t value) const noexcept {
    const std::uint64_t bit = entry * fingerprint_bits();
    const std::uint64_t lanes = load(bit >> 3) >> (bit & 7) & group_mask_;
    const std::uint64_t x = lanes ^ (value * ones_);
    return (x - ones_) & ~x & highs_;
  }

  std::uint64_t bucket_count_;
  unsigned bits_;
  unsigned group_ = 1;
  std::uint64_t ones_ = 1;
  std::uint64_t highs_ = 0;
  std::uint64_t group_mask_ = 0;
  detail::AlignedBuffer buffer_;
};

}  // namespace cuckoo
