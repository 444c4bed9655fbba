// cuckoo/amq/dleft_counting_bloom.hpp — the d-left counting Bloom filter (dl-CBF) of Bonomi,
// Mitzenmacher, Panigrahy, Singh and Varghese ("An improved construction for counting Bloom
// filters", ESA 2006), configured as in the paper's evaluation (§7): d = 4 subtables of B buckets,
// 4 cells per bucket.
//
// Layout. Each cell is an r-bit remainder and a 2-bit counter (0 = empty cell, 1..3 = copies, 3 =
// saturated). A bucket's four cells are packed into 4(r + 2) ≤ 64 bits, buckets laid end to end
// at ⌈4(r + 2)/8⌉ bytes each, and read or written with one unaligned 64-bit access (the table
// carries 8 bytes of padding for the last one). The paper's set-up uses 12-bit cells, the width of
// the cuckoo filter's entries (r = 10); with_memory uses it too.
//
// Hashing, and why deletion is safe. One XXH3-64 hash gives the key's *true fingerprint*
// F = (u, v): u ∈ [0, B) from the high 32 bits by multiply-shift, v the low r bits. Subtable t
// sees F through a permutation P_t of [0, B) × [0, 2^r), a two-round Feistel network in mixed
// radix:
//
//     v_t = v ⊕ G_t(u)                   (r bits: the remainder stored in subtable t)
//     b_t = (u + H_t(v_t)) mod B         (the candidate bucket in subtable t)
//
// Both rounds are invertible (u = b_t − H_t(v_t) mod B, then v = v_t ⊕ G_t(u)), so a cell holding
// v_t in bucket b_t of subtable t identifies F exactly: keys share a cell only if they share F,
// and then they share all four candidates too. Insert keeps the rule that F occupies at most one
// cell in the whole filter: if any of the four candidate buckets already holds F's remainder, that
// cell's counter is incremented; otherwise a new cell goes to the least-loaded candidate bucket,
// leftmost subtable on ties (Vöcking's d-left rule), and when all four are full the insert returns
// false with nothing changed. Erase finds the one cell of F and decrements it, so it can never
// remove a different fingerprint — the false deletions of naive d-left fingerprint tables, which
// Bonomi et al.'s permutations were introduced to prevent. A counter at 3 is saturated and never
// decremented (like the counting Bloom filter's), which costs accuracy, never a false negative.
// As with every fingerprint filter, erasing a key that was never inserted but collides with one
// that was removes that one's copy: only erase what you inserted.
//
// False positives. A query matches only the cell of its own true fingerprint, so
//
//     ε = D / (B · 2^r)  ≤  16α / 2^r,       α = n / (16B), D = distinct stored fingerprints ≤ n,
//
// the same as comparing against 16 cells of r bits. The load is limited by bucket overflow: with
// d = 4 and 4 cells the first failed insert comes at about 78% of the cells on the paper's
// 2^27-cell table. kDesignLoad is the load a table is sized for; capacity() = ⌊kDesignLoad · 16B⌋.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "cuckoo/amq/common.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/detail/aligned_buffer.hpp"
#include "cuckoo/detail/endian.hpp"

namespace cuckoo::amq {

/// insert, contains (one key or a batch), erase and seed() come from detail::KeyForwarding.
class DLeftCountingBloom : public detail::KeyForwarding<DLeftCountingBloom> {
 public:
  static constexpr unsigned kTables = 4;
  static constexpr unsigned kCellsPerBucket = 4;
  static constexpr unsigned kCounterBits = 2;
  static constexpr std::uint64_t kSaturated = 3;
  static constexpr unsigned kMaxRemainderBits = 64 / kCellsPerBucket - kCounterBits;  // 14
  /// The paper's cells: 12 bits, like the cuckoo filter's entries (§7.1).
  static constexpr unsigned kPaperRemainderBits = 10;
  /// The load tables are sized for (fraction of cells in use).
  static constexpr double kDesignLoad = 0.75;

  /// kTables subtables of `buckets_per_table` buckets (1..2^32), `remainder_bits` (1..14) per cell.
  DLeftCountingBloom(std::uint64_t buckets_per_table, unsigned remainder_bits,
                     std::uint64_t seed = defaults::kSeed)
      : KeyForwarding(seed),
        table_(checked_storage(buckets_per_table, remainder_bits)),
        buckets_per_table_(buckets_per_table),
        remainder_bits_(remainder_bits),
        cell_bits_(remainder_bits + kCounterBits),
        bucket_stride_((kCellsPerBucket * cell_bits_ + 7) / 8),
        remainder_mask_((std::uint64_t{1} << remainder_bits) - 1),
        cell_mask_((std::uint64_t{1} << cell_bits_) - 1),
        bucket_mask_(kCellsPerBucket * cell_bits_ == 64
                         ? ~std::uint64_t{0}
                         : (std::uint64_t{1} << (kCellsPerBucket * cell_bits_)) - 1) {}

  /// B = ⌈n / (16·kDesignLoad)⌉ buckets per subtable, r = ⌈log2(16·kDesignLoad / ε)⌉.
  static DLeftCountingBloom with_capacity(std::size_t capacity, double target_fpr,
                                          std::uint64_t seed = defaults::kSeed) {
    detail::check_capacity("DLeftCountingBloom", capacity);
    detail::check_fpr("DLeftCountingBloom", target_fpr);
    const double cells = static_cast<double>(kTables * kCellsPerBucket);
    const auto buckets = static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(capacity) / (cells * kDesignLoad)));
    const double bits = std::ceil(std::log2(cells * kDesignLoad / target_fpr) - 1e-9);
    if (bits > kMaxRemainderBits) {
      detail::invalid("DLeftCountingBloom",
                      "target_fpr " + std::to_string(target_fpr) + " needs " +
                          std::to_string(static_cast<int>(bits)) + "-bit remainders; at most " +
                          std::to_string(kMaxRemainderBits) + " fit a 64-bit bucket");
    }
    return DLeftCountingBloom(buckets, bits < 1 ? 1u : static_cast<unsigned>(bits), seed);
  }

  /// The paper's 12-bit cells (r = 10), as many buckets as fit in `bytes`. `capacity` is not
  /// needed to size this design; capacity() reports what the layout is built for.
  static DLeftCountingBloom with_memory(std::size_t bytes, std::size_t capacity,
                                        std::uint64_t seed = defaults::kSeed) {
    detail::check_capacity("DLeftCountingBloom", capacity);
    const std::size_t usable = detail::whole_cache_lines(bytes);
    const std::size_t stride = (kCellsPerBucket * (kPaperRemainderBits + kCounterBits) + 7) / 8;
    const std::size_t buckets = usable < kPadding ? 0 : (usable - kPadding) / (kTables * stride);
    if (buckets == 0) {
      detail::invalid("DLeftCountingBloom", "a budget of " + std::to_string(bytes) +
                                                " bytes is too small; the minimum is 64");
    }
    return DLeftCountingBloom(buckets, kPaperRemainderBits, seed);
  }

  /// Adds one copy; false, with nothing changed, when all four candidate buckets are full.
  bool insert_hash(std::uint64_t hash) noexcept {
    const Candidates c = candidates(hash);
    std::uint64_t words[kTables];
    for (unsigned t = 0; t < kTables; ++t) words[t] = read_bucket(c.bucket[t]);
    for (unsigned t = 0; t < kTables; ++t) {
      const int cell = find(words[t], c.remainder[t]);
      if (cell >= 0) {  // F is already stored: count the copy in its one cell
        const unsigned shift = static_cast<unsigned>(cell) * cell_bits_;
        if ((words[t] >> shift & kSaturated) != kSaturated) {
          write_bucket(c.bucket[t], words[t] + (std::uint64_t{1} << shift));
        }
        ++size_;
        return true;
      }
    }
    unsigned best = kTables;
    unsigned best_load = kCellsPerBucket;
    for (unsigned t = 0; t < kTables; ++t) {  // strict <: the leftmost of equally loaded buckets
      const unsigned load = occupied(words[t]);
      if (load < best_load) best = t, best_load = load;
    }
    if (best == kTables) return false;
    const unsigned shift = first_empty(words[best]) * cell_bits_;
    write_bucket(c.bucket[best], words[best] | ((c.remainder[best] << kCounterBits | 1) << shift));
    ++size_;
    return true;
  }

  bool contains_hash(std::uint64_t hash) const noexcept {
    const Candidates c = candidates(hash);
    for (unsigned t = 0; t < kTables; ++t) detail::prefetch(bucket_address(c.bucket[t]));
    bool found = false;
    for (unsigned t = 0; t < kTables; ++t)
      found |= find(read_bucket(c.bucket[t]), c.remainder[t]) >= 0;
    return found;
  }

  /// Removes one copy of the key's fingerprint; false if it is not there. Only erase what you
  /// inserted.
  bool erase_hash(std::uint64_t hash) noexcept {
    const Candidates c = candidates(hash);
    for (unsigned t = 0; t < kTables; ++t) {
      const std::uint64_t word = read_bucket(c.bucket[t]);
      const int cell = find(word, c.remainder[t]);
      if (cell < 0) continue;
      const unsigned shift = static_cast<unsigned>(cell) * cell_bits_;
      if ((word >> shift & kSaturated) != kSaturated) {
        // Counter 1 → 0 leaves the remainder bits behind; clear the whole cell so it reads empty.
        const std::uint64_t counter = (word >> shift & kSaturated) - 1;
        const std::uint64_t cleared = word & ~(cell_mask_ << shift);
        write_bucket(c.bucket[t], counter == 0 ? cleared : word - (std::uint64_t{1} << shift));
      }
      --size_;
      return true;
    }
    return false;
  }

  /// Items inserted minus items erased.
  std::size_t size() const noexcept { return size_; }
  /// ⌊kDesignLoad · cells⌋: the number of items this layout is built for.
  std::size_t capacity() const noexcept {
    return static_cast<std::size_t>(kDesignLoad * static_cast<double>(cell_count()));
  }
  std::size_t memory_bytes() const noexcept { return table_.size(); }
  std::uint64_t buckets_per_table() const noexcept { return buckets_per_table_; }
  std::uint64_t cell_count() const noexcept {
    return buckets_per_table_ * kTables * kCellsPerBucket;
  }
  unsigned remainder_bits() const noexcept { return remainder_bits_; }
  /// Fraction of cells in use (distinct fingerprints / cells; a diagnostic: O(cells)).
  double load_factor() const noexcept {
    std::uint64_t used = 0;
    for (std::uint64_t b = 0; b < buckets_per_table_ * kTables; ++b)
      used += occupied(read_bucket(b));
    return static_cast<double>(used) / static_cast<double>(cell_count());
  }
  /// ε = D / (B·2^r) with D ≤ size() distinct fingerprints: an upper bound at the current size.
  double expected_fpr() const noexcept {
    return static_cast<double>(size_) / (static_cast<double>(buckets_per_table_) *
                                         std::ldexp(1.0, static_cast<int>(remainder_bits_)));
  }

 private:
  friend KeyForwarding;

  static constexpr std::size_t kPadding = 8;  // so the last bucket can be read as 8 bytes

  struct Candidates {
    std::uint64_t bucket[kTables];     // global bucket index: t·B + b_t
    std::uint64_t remainder[kTables];  // v_t
  };

  // Per-subtable odd constants for the two Feistel rounds (digits of e and of sqrt(2), sqrt(3)).
  static constexpr std::uint64_t kRoundKeys[kTables] = {
      0x2B7E151628AED2A7ull, 0x6A09E667F3BCC909ull, 0xBB67AE8584CAA73Bull, 0x3C6EF372FE94F82Bull};

  Candidates candidates(std::uint64_t hash) const noexcept {
    Candidates c;
    const std::uint64_t u = ((hash >> 32) * buckets_per_table_) >> 32;
    const std::uint64_t v = hash & remainder_mask_;
    for (unsigned t = 0; t < kTables; ++t) {
      // Round 1, G_t(u): the top r bits of a multiplicative hash of u.
      const std::uint64_t vt = v ^ (((u + 1) * kRoundKeys[t]) >> (64 - remainder_bits_));
      // Round 2, H_t(v_t): v_t mixed to 32 bits, range-reduced into [0, B).
      const std::uint64_t offset =
          ((detail::remix(vt + kRoundKeys[t]) >> 32) * buckets_per_table_) >> 32;
      std::uint64_t b = u + offset;
      if (b >= buckets_per_table_) b -= buckets_per_table_;
      c.bucket[t] = t * buckets_per_table_ + b;
      c.remainder[t] = vt;
    }
    return c;
  }

  /// Batch lookups prefetch the next keys' four buckets while one is tested.
  CUCKOO_HOT void prefetch_hash(std::uint64_t hash) const noexcept {
    const Candidates c = candidates(hash);
    for (unsigned t = 0; t < kTables; ++t) detail::prefetch(bucket_address(c.bucket[t]));
  }

  const std::byte* bucket_address(std::uint64_t bucket) const noexcept {
    return table_.data() + bucket * bucket_stride_;
  }
  std::uint64_t read_bucket(std::uint64_t bucket) const noexcept {
    std::uint64_t word;
    std::memcpy(&word, bucket_address(bucket), sizeof word);
    return cuckoo::detail::little_endian(word) & bucket_mask_;
  }
  void write_bucket(std::uint64_t bucket, std::uint64_t value) noexcept {
    std::byte* const address = table_.data() + bucket * bucket_stride_;
    std::uint64_t word;
    std::memcpy(&word, address, sizeof word);
    word = cuckoo::detail::little_endian(word);  // keep the next bucket's bits above ours
    word = (word & ~bucket_mask_) | value;
    word = cuckoo::detail::little_endian(word);
    std::memcpy(address, &word, sizeof word);
  }

  /// The cell of `bucket` holding `remainder`, or −1. Empty cells (counter 0) never match.
  int find(std::uint64_t bucket, std::uint64_t remainder) const noexcept {
    for (unsigned cell = 0; cell < kCellsPerBucket; ++cell) {
      const std::uint64_t value = bucket >> (cell * cell_bits_) & cell_mask_;
      if ((value & kSaturated) != 0 && value >> kCounterBits == remainder) {
        return static_cast<int>(cell);
      }
    }
    return -1;
  }
  unsigned occupied(std::uint64_t bucket) const noexcept {
    unsigned used = 0;
    for (unsigned cell = 0; cell < kCellsPerBucket; ++cell) {
      used += (bucket >> (cell * cell_bits_) & kSaturated) != 0;
    }
    return used;
  }
  unsigned first_empty(std::uint64_t bucket) const noexcept {
    unsigned cell = 0;
    while ((bucket >> (cell * cell_bits_) & kSaturated) != 0) ++cell;
    return cell;
  }

  static std::size_t checked_storage(std::uint64_t buckets_per_table, unsigned remainder_bits) {
    if (buckets_per_table == 0 || buckets_per_table > (std::uint64_t{1} << 32)) {
      detail::invalid("DLeftCountingBloom", "buckets_per_table must be in 1..2^32, got " +
                                                std::to_string(buckets_per_table));
    }
    if (remainder_bits == 0 || remainder_bits > kMaxRemainderBits) {
      detail::invalid("DLeftCountingBloom", "remainder_bits must be in 1.." +
                                                std::to_string(kMaxRemainderBits) + ", got " +
                                                std::to_string(remainder_bits));
    }
    const std::size_t stride = (kCellsPerBucket * (remainder_bits + kCounterBits) + 7) / 8;
    const std::size_t bytes =
        static_cast<std::size_t>(buckets_per_table) * kTables * stride + kPadding;
    return (bytes + 63) / 64 * 64;
  }

  cuckoo::detail::AlignedBuffer table_;
  std::uint64_t buckets_per_table_;
  unsigned remainder_bits_;
  unsigned cell_bits_;
  std::size_t bucket_stride_;
  std::uint64_t remainder_mask_;
  std::uint64_t cell_mask_;
  std::uint64_t bucket_mask_;
  std::size_t size_ = 0;
};

}  // namespace cuckoo::amq
