// cuckoo/table/semisort_table.hpp — semi-sorted buckets (paper §5.2): four f-bit fingerprints in
// 4f − 4 bits, one bit per entry less than PackedTable<4, f>.
//
// Why it saves a bit. A lookup only asks whether a bucket holds a value, so a bucket is a multiset
// and the order of its entries is free information. Split each fingerprint (f ≥ 4 bits, 0 = empty)
// into its high nibble (the top 4 bits) and its low part (the other w = f − 4 bits). Keep the
// entries sorted; their four nibbles then form a non-decreasing 4-tuple over 0..15, and there are
// only C(16 + 4 − 1, 4) = 3876 such tuples, so the four nibbles (16 bits) fit in a 12-bit index
// (3876 < 2^12). The low parts are stored as they are, in the same sorted order.
//
// Layout. Bucket i occupies bits [i·(4f − 4), (i + 1)·(4f − 4)) of one little-endian bit string,
// buckets end to end with no padding, plus 8 bytes of tail padding (every access is an unaligned
// 8-byte load, which the padding keeps inside the allocation). Inside a bucket, from its first bit:
//
//     low_0 (w bits) | low_1 | low_2 | low_3 | tuple index (12 bits)
//
// For f = 4 there are no low parts and a bucket is its 12-bit index alone.
//
// Encoding (canonical, so equal multisets have equal bits — saved files and the undo of a failed
// insert rely on it). Entries are sorted by full value, ascending, so empty entries come first and
// the nibbles n_0 ≤ n_1 ≤ n_2 ≤ n_3 are sorted too. The tuple's index is its rank in the
// combinatorial number system (a ≤ b ≤ c ≤ d maps to the 4-subset {a, b+1, c+2, d+3} of 0..18):
//
//     index = C(n_0, 1) + C(n_1 + 1, 2) + C(n_2 + 2, 3) + C(n_3 + 3, 4)     ∈ [0, 3875],
//
// so an all-empty bucket is index 0 and an all-zero byte string is an empty table. Encoding sums
// four entries of a 64-entry table of binomials; decoding reads a table of packed nibble tuples
// (lane j in bits 4j..4j+3; 4096 entries of 2 bytes, 8 KiB, so it stays in L1). Both are built at
// compile time and shared by every table of every width.
//
// Lookup. A query v splits into nibble h and low part l. The four low parts are compared with l at
// once, as SWAR lanes of w bits in one 8-byte load (two loads of two lanes when 4w > 57, i.e.
// f > 18), with the exact zero-lane test: x = lanes ⊕ (l · ones) has lane j zero iff
// ~(((x & rest) + rest) | x) has lane j's top bit set, where rest = every lane bit but the top one
// (the sum cannot carry out of a lane, so no lane is flagged spuriously — needed, because a
// flagged lane is then trusted to name the slot); the flags are gathered into a 4-bit lane mask
// with one multiply (w ≥ 4) or lane by lane. Only when some low part matches is the index read
// (from the same load when f ≤ 15) and decoded, and the nibbles compared in the same way; the
// entry matches iff both halves do in the same lane. A query that matches no low part — almost
// every negative lookup once w ≥ 8 — costs one load, about a dozen ALU operations and no table
// access, about what PackedTable<4, f> costs.
//
// Measured alternatives (bench/semisort_bench.cpp, 10^7 items at 95%, a table far larger than
// the caches, where a lookup's cost is mostly how many of them the core keeps in flight): always
// decoding, branch-free, made negative lookups 1.4–1.6× plain; one branch for both buckets of a
// lookup (predictable for all-positive and all-negative streams) made positive ones 1.4–1.6×, as
// they then decode both buckets. Branching per bucket, as here, measured best: negative about
// 1.0×, positive about 1.3×.
//
// False matches. A stored fingerprint is a full f-bit value, so a query matches a stored entry
// with probability 1 / (2^f − 1) exactly as in PackedTable<4, f>, and a negative lookup at load α
// matches with probability 1 − (1 − 1/(2^f − 1))^(8α): the same false-positive rate for one bit
// less per entry. At equal memory (f + 1 here against f in the plain table) it halves (the
// paper's Table 3: 12.58 bits per item and 0.09% against 12.60 and 0.19%).
//
// Writes decode the bucket, change one entry, sort the four values and re-encode every field:
// slot indices move on every write, which BasicFilter tolerates (it uses a slot only until the
// next write to that bucket), and undo_exchange replaces by value.
//
// Template parameter:
//   FixedBits   the fingerprint width f when known at compile time (4..32), letting the compiler
//               fold every shift and mask; 0 (the default) takes f at run time from the
//               constructor.
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

namespace cuckoo {

namespace detail::semisort {

/// Sorted 4-tuples of 4-bit values: C(19, 4).
inline constexpr unsigned kTupleCount = 3876;
/// Bits of a tuple index.
inline constexpr unsigned kIndexBits = 12;

constexpr std::uint32_t binomial(unsigned n, unsigned k) noexcept {
  if (k > n) return 0;
  std::uint32_t result = 1;
  for (unsigned i = 1; i <= k; ++i) result = result * (n - k + i) / i;  // exact at every step
  return result;
}

/// kRankTerm[j][n] = C(n + j, j + 1): the contribution of nibble n at sorted position j.
inline constexpr auto kRankTerm = [] {
  std::array<std::array<std::uint16_t, 16>, 4> term{};
  for (unsigned j = 0; j < 4; ++j) {
    for (unsigned n = 0; n < 16; ++n)
      term[j][n] = static_cast<std::uint16_t>(binomial(n + j, j + 1));
  }
  return term;
}();

/// The index of a sorted nibble tuple (lane j in bits 4j..4j+3, lanes non-decreasing).
constexpr unsigned rank(std::uint32_t tuple) noexcept {
  return kRankTerm[0][tuple & 15] + kRankTerm[1][(tuple >> 4) & 15] +
         kRankTerm[2][(tuple >> 8) & 15] + kRankTerm[3][(tuple >> 12) & 15];
}

/// kDecode[index] = the sorted nibble tuple of that index, packed like rank's argument. The 220
/// indices past the last tuple cannot be produced by encoding; they decode to an empty bucket so
/// that bytes from outside (a damaged file) can never read past the table.
inline constexpr auto kDecode = [] {
  std::array<std::uint16_t, std::size_t{1} << kIndexBits> decode{};
  for (unsigned d = 0; d < 16; ++d) {
    for (unsigned c = 0; c <= d; ++c) {
      for (unsigned b = 0; b <= c; ++b) {
        for (unsigned a = 0; a <= b; ++a) {
          const std::uint32_t tuple = a | b << 4 | c << 8 | d << 12;
          decode[rank(tuple)] = static_cast<std::uint16_t>(tuple);
        }
      }
    }
  }
  return decode;
}();

/// A 4-bit mask of the lanes of a packed nibble tuple equal to `nibble`.
constexpr unsigned nibble_matches(std::uint32_t tuple, std::uint32_t nibble) noexcept {
  const std::uint32_t x = tuple ^ (nibble * 0x1111u);
  const std::uint32_t zero = ~(((x & 0x7777u) + 0x7777u) | x) & 0x8888u;
  // Gather the flags at bits 3, 7, 11, 15 into bits 0..3: the multiply's partial products land
  // on distinct bits, so nothing carries.
  return (((zero >> 3) * 0x1248u) >> 12) & 0xFu;
}

}  // namespace detail::semisort

template <unsigned FixedBits = 0>
class SemiSortedTable {
  static_assert(FixedBits == 0 || (FixedBits >= 4 && FixedBits <= 32),
                "semi-sorted fingerprint width must be 4..32");

 public:
  static constexpr unsigned kBucketSize = 4;
  static constexpr unsigned kFixedBits = FixedBits;
  static constexpr unsigned kMinBits = 4;
  static constexpr unsigned kMaxBits = 32;
  static constexpr bool kSemiSorted = true;

  /// Bits one bucket of `bits`-bit fingerprints occupies: 4·bits − 4.
  static constexpr std::uint64_t bucket_bits_for(unsigned bits) noexcept {
    return std::uint64_t{4} * bits - 4;
  }
  /// Bytes a table of `bucket_count` buckets of `bits`-bit fingerprints occupies.
  static constexpr std::size_t bytes_for(std::uint64_t bucket_count, unsigned bits) noexcept {
    return static_cast<std::size_t>((bucket_count * bucket_bits_for(bits) + 7) / 8 + kTailPadding);
  }

  SemiSortedTable() : SemiSortedTable(2, kFixedBits == 0 ? 8 : kFixedBits) {}
  SemiSortedTable(std::uint64_t bucket_count, unsigned bits)
      : bucket_count_(bucket_count),
        geometry_(make_geometry(check_bits(bits))),
        buffer_(bytes_for(bucket_count, bits)) {}
  /// A table over storage it does not own (a memory-mapped file), which must hold exactly
  /// bytes_for(bucket_count, bits) bytes and outlive the table.
  SemiSortedTable(std::uint64_t bucket_count, unsigned bits, detail::ExternalStorage storage)
      : bucket_count_(bucket_count),
        geometry_(make_geometry(check_bits(bits))),
        buffer_(check_storage(storage, bucket_count, bits)) {}

  std::uint64_t bucket_count() const noexcept { return bucket_count_; }
  unsigned fingerprint_bits() const noexcept { return geometry().bits; }
  std::size_t memory_bytes() const noexcept { return buffer_.size(); }
  std::span<const std::byte> bytes() const noexcept { return {buffer_.data(), buffer_.size()}; }
  std::span<std::byte> bytes() noexcept { return {buffer_.data(), buffer_.size()}; }
  void clear() noexcept { buffer_.zero(); }

  /// The entry at `slot` of `bucket` in the current (sorted) order.
  std::uint32_t read(std::uint64_t bucket, unsigned slot) const noexcept {
    const Geometry g = geometry();
    const std::uint64_t first = bucket * g.bucket_bits;
    const std::uint32_t tuple =
        detail::semisort::kDecode[read_field(first + 4 * g.low_bits, detail::semisort::kIndexBits)];
    return (((tuple >> (4 * slot)) & 15) << g.low_bits) |
           read_field(first + slot * g.low_bits, g.low_bits);
  }

  /// All entries of `bucket`, in slot order (one decode).
  std::array<std::uint32_t, 4> entries(std::uint64_t bucket) const noexcept {
    return decode(bucket);
  }

  /// True if `bucket` has an empty slot.
  bool has_free(std::uint64_t bucket) const noexcept { return find(bucket, 0) >= 0; }

  /// Replaces the entry at `slot` with `value`; the bucket is then re-sorted, so slots move.
  void write(std::uint64_t bucket, unsigned slot, std::uint32_t value) noexcept {
    Entries entries = decode(bucket);
    entries[slot] = value;
    encode(bucket, entries);
  }

  /// Puts `value` into `slot` and returns what was there (one step of a kick walk).
  std::uint32_t exchange(std::uint64_t bucket, unsigned slot, std::uint32_t value) noexcept {
    Entries entries = decode(bucket);
    const std::uint32_t old = entries[slot];
    entries[slot] = value;
    encode(bucket, entries);
    return old;
  }

  /// Reverses exchange(bucket, ·, placed) that returned `original`: the slot may have moved since,
  /// so one entry equal to `placed` becomes `original`. The encoding is canonical, so the bucket's
  /// bits are restored exactly.
  void undo_exchange(std::uint64_t bucket, unsigned /*slot*/, std::uint32_t placed,
                     std::uint32_t original) noexcept {
    Entries entries = decode(bucket);
    for (std::uint32_t& entry : entries) {
      if (entry == placed) {
        entry = original;
        break;
      }
    }
    encode(bucket, entries);
  }

  /// True if some entry of `bucket` equals `value`.
  bool contains(std::uint64_t bucket, std::uint32_t value) const noexcept {
    return matches(bucket, value) != 0;
  }

  /// The lowest slot of `bucket` holding `value` (0 finds an empty slot), or -1.
  int find(std::uint64_t bucket, std::uint32_t value) const noexcept {
    const unsigned lanes = matches(bucket, value);
    return lanes == 0 ? -1 : std::countr_zero(lanes);
  }

  /// How many entries of `bucket` equal `value`.
  unsigned count(std::uint64_t bucket, std::uint32_t value) const noexcept {
    return static_cast<unsigned>(std::popcount(matches(bucket, value)));
  }

  /// True if `b1` or `b2` holds `value`. Each bucket decodes on its own; bitwise |, not ||, so
  /// that both reads issue without a dependent branch between them.
  bool contains_pair(std::uint64_t b1, std::uint64_t b2, std::uint32_t value) const noexcept {
    const bool in_first = contains(b1, value), in_second = contains(b2, value);
    return in_first | in_second;
  }
  /// How many entries of `b1` and `b2` together equal `value`.
  unsigned count_pair(std::uint64_t b1, std::uint64_t b2, std::uint32_t value) const noexcept {
    return count(b1, value) + count(b2, value);
  }

  /// What a batch lookup reads through (PackedTable::LookupReader's interface). A decode needs
  /// the geometry as well as the base, so this one keeps only the table's address and forwards.
  class LookupReader {
   public:
    explicit LookupReader(const SemiSortedTable& table) noexcept : table_(&table) {}
    bool contains_pair(std::uint64_t b1, std::uint64_t b2, std::uint32_t value) const noexcept {
      return table_->contains_pair(b1, b2, value);
    }
    unsigned count_pair(std::uint64_t b1, std::uint64_t b2, std::uint32_t value) const noexcept {
      return table_->count_pair(b1, b2, value);
    }
    CUCKOO_HOT void prefetch_for_lookup(std::uint64_t bucket) const noexcept {
      table_->prefetch_for_lookup(bucket);
    }

   private:
    const SemiSortedTable* table_;
  };
  LookupReader lookup_reader() const noexcept { return LookupReader(*this); }

  /// True if every bucket is in canonical form: a tuple index below 3876 and its entries in
  /// ascending order. Always true for a table written through this interface; a loader can use it
  /// to vet bytes from outside.
  /// The loader's hook (io/serialize.hpp): bytes from a file must decode safely.
  bool valid_encoding() const noexcept { return is_canonical(); }

  bool is_canonical() const noexcept {
    const Geometry g = geometry();
    for (std::uint64_t bucket = 0; bucket < bucket_count_; ++bucket) {
      const std::uint64_t first = bucket * g.bucket_bits;
      if (read_field(first + 4 * g.low_bits, detail::semisort::kIndexBits) >=
          detail::semisort::kTupleCount) {
        return false;
      }
      const Entries entries = decode(bucket);
      if (entries[0] > entries[1] || entries[1] > entries[2] || entries[2] > entries[3]) {
        return false;
      }
    }
    return true;
  }

  /// Starts loading `bucket` into L1 (for an insert or erase, which write it): every line its
  /// loads touch (a bucket and its 8-byte loads span at most two). The prefetches are forced
  /// inline: GCC 12's mod/ref analysis takes a call whose only effect is a prefetch for one
  /// without effects and deletes it, which left the batches of SemiSortedTable<0> without a
  /// single prefetch.
  CUCKOO_HOT void prefetch(std::uint64_t bucket) const noexcept { prefetch_lines<3>(bucket); }
  /// The same for a lookup, into L2 only (see PackedTable::prefetch_for_lookup).
  CUCKOO_HOT void prefetch_for_lookup(std::uint64_t bucket) const noexcept {
    prefetch_lines<2>(bucket);
  }

 private:
  static constexpr unsigned kWindowBits = 57;  // 64 bits loaded minus up to 7 bits of offset
  static constexpr std::size_t kTailPadding = 8;

  using Entries = std::array<std::uint32_t, 4>;

  /// Everything derived from f, computed once (or at compile time for FixedBits).
  struct Geometry {
    unsigned bits = 0;         // f
    unsigned low_bits = 0;     // w = f − 4
    unsigned bucket_bits = 0;  // 4f − 4
    unsigned group = 4;        // low parts compared per load: 4, or 2 when 4w > kWindowBits
    std::uint64_t ones = 0;    // bit 0 of each lane of a group
    std::uint64_t highs = 0;   // top bit of each lane
    std::uint64_t rest = 0;    // the other bits of each lane
    std::uint64_t group_mask = 0;
    // Gathers a group's zero flags (bit w − 1 of each lane) into its low bits in one multiply:
    // lanes = (zero · gather_multiplier) >> gather_shift. The multiplier has a bit at P − j(w − 1)
    // for lane j, P = (group − 1)(w − 1), so lane j's flag lands on bit P + j + w − 1; the other
    // partial products land outside those bits, and for w ≥ 4 their carries cannot reach them
    // (checked for every width by the unit tests). 0 for w < 4, which gathers lane by lane.
    std::uint64_t gather_multiplier = 0;
    unsigned gather_shift = 0;
  };

  static constexpr std::uint64_t low_mask(unsigned bits) noexcept {
    return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  }

  static constexpr Geometry make_geometry(unsigned bits) noexcept {
    Geometry g;
    g.bits = bits;
    g.low_bits = bits - 4;
    g.bucket_bits = 4 * bits - 4;
    g.group = 4 * g.low_bits <= kWindowBits ? 4 : 2;
    if (g.low_bits != 0) {
      for (unsigned lane = 0; lane < g.group; ++lane)
        g.ones |= std::uint64_t{1} << (lane * g.low_bits);
      g.highs = g.ones << (g.low_bits - 1);
      g.group_mask = low_mask(g.group * g.low_bits);
      g.rest = g.group_mask & ~g.highs;
    }
    if (g.low_bits >= 4) {
      const unsigned top = (g.group - 1) * (g.low_bits - 1);
      for (unsigned lane = 0; lane < g.group; ++lane) {
        g.gather_multiplier |= std::uint64_t{1} << (top - lane * (g.low_bits - 1));
      }
      g.gather_shift = top + g.low_bits - 1;
    }
    return g;
  }

  static unsigned check_bits(unsigned bits) {
    if (bits < kMinBits || bits > kMaxBits) {
      throw std::invalid_argument(
          "fingerprint_bits must be in 4..32 for semi-sorted buckets, got " + std::to_string(bits));
    }
    if (kFixedBits != 0 && bits != kFixedBits) {
      throw std::invalid_argument("this table is compiled for " + std::to_string(kFixedBits) +
                                  "-bit fingerprints, got " + std::to_string(bits));
    }
    return bits;
  }

  Geometry geometry() const noexcept {
    if constexpr (kFixedBits != 0) {
      constexpr Geometry fixed = make_geometry(kFixedBits);
      return fixed;
    } else {
      return geometry_;
    }
  }

  std::uint64_t load(std::uint64_t byte) const noexcept {
    std::uint64_t word;
    std::memcpy(&word, buffer_.data() + byte, sizeof word);
    return detail::little_endian(word);
  }

  template <int kLocality>
  CUCKOO_HOT void prefetch_lines(std::uint64_t bucket) const noexcept {
    const std::uint64_t bits = geometry().bucket_bits;
    const std::uint64_t first = bucket * bits;
    const std::byte* begin = buffer_.data() + (first >> 3);
    // The last byte any load of this bucket reads: one 8-byte load while the bucket and its
    // offset fit 64 bits, else the load of its last field.
    const std::byte* last =
        (first & 7) + bits <= 64 ? begin + 7 : buffer_.data() + ((first + bits - 1) >> 3) + 7;
    __builtin_prefetch(begin, 0, kLocality);
    if (((reinterpret_cast<std::uintptr_t>(begin) ^ reinterpret_cast<std::uintptr_t>(last)) &
         ~std::uintptr_t{detail::kCacheLine - 1}) != 0) {
      __builtin_prefetch(last, 0, kLocality);
    }
  }

  /// The `width`-bit field (width ≤ 32) starting at table bit `bit`.
  std::uint32_t read_field(std::uint64_t bit, unsigned width) const noexcept {
    return static_cast<std::uint32_t>(load(bit >> 3) >> (bit & 7) & low_mask(width));
  }

  void write_field(std::uint64_t bit, unsigned width, std::uint32_t value) noexcept {
    if (width == 0) return;
    const unsigned shift = bit & 7;
    std::uint64_t word = load(bit >> 3);
    word = (word & ~(low_mask(width) << shift)) | (std::uint64_t{value} << shift);
    word = detail::little_endian(word);
    std::memcpy(buffer_.data() + (bit >> 3), &word, sizeof word);
  }

  /// A 4-bit mask of the lanes whose low part equals `low`; `head` is the bucket's first bits,
  /// already loaded and shifted down.
  unsigned low_matches(const Geometry& g, std::uint64_t first, std::uint64_t head,
                       std::uint32_t low) const noexcept {
    if (g.low_bits == 0) return 0xF;  // f = 4: every entry is its nibble
    unsigned lanes = 0;
    for (unsigned base = 0; base < 4; base += g.group) {
      const std::uint64_t bit = first + base * g.low_bits;
      const std::uint64_t word = (base == 0 ? head : load(bit >> 3) >> (bit & 7)) & g.group_mask;
      const std::uint64_t x = word ^ (low * g.ones);
      const std::uint64_t zero = ~(((x & g.rest) + g.rest) | x) & g.highs;
      if (g.gather_multiplier != 0) {
        const unsigned group_lanes = (1u << g.group) - 1;
        lanes |=
            (static_cast<unsigned>((zero * g.gather_multiplier) >> g.gather_shift) & group_lanes)
            << base;
      } else {
        for (unsigned lane = 0; lane < g.group; ++lane) {
          lanes |= static_cast<unsigned>(zero >> (lane * g.low_bits + g.low_bits - 1) & 1)
                   << (base + lane);
        }
      }
    }
    return lanes;
  }

  /// The packed nibble tuple of the bucket at table bit `first`, whose first bits are `head`.
  std::uint32_t tuple_at(const Geometry& g, std::uint64_t first,
                         std::uint64_t head) const noexcept {
    const std::uint64_t index_bit = 4 * g.low_bits;
    const std::uint32_t index =
        index_bit + detail::semisort::kIndexBits <= kWindowBits  // f ≤ 15: one load has it all
            ? static_cast<std::uint32_t>(head >> index_bit) & 0xFFFu
            : read_field(first + index_bit, detail::semisort::kIndexBits);
    return detail::semisort::kDecode[index];
  }

  /// A 4-bit mask of the slots of `bucket` equal to `value`, exact.
  unsigned matches(std::uint64_t bucket, std::uint32_t value) const noexcept {
    const Geometry g = geometry();
    const std::uint64_t first = bucket * g.bucket_bits;
    const std::uint64_t head = load(first >> 3) >> (first & 7);
    const unsigned low_lanes =
        low_matches(g, first, head, value & static_cast<std::uint32_t>(low_mask(g.low_bits)));
    if (low_lanes == 0) return 0;
    return low_lanes &
           detail::semisort::nibble_matches(tuple_at(g, first, head), value >> g.low_bits);
  }

  Entries decode(std::uint64_t bucket) const noexcept {
    const Geometry g = geometry();
    const std::uint64_t first = bucket * g.bucket_bits;
    const std::uint32_t tuple =
        detail::semisort::kDecode[read_field(first + 4 * g.low_bits, detail::semisort::kIndexBits)];
    Entries entries;
    for (unsigned slot = 0; slot < 4; ++slot) {
      entries[slot] = (((tuple >> (4 * slot)) & 15) << g.low_bits) |
                      read_field(first + slot * g.low_bits, g.low_bits);
    }
    return entries;
  }

  /// Sorts `entries` and stores them as the canonical encoding of bucket `bucket`.
  void encode(std::uint64_t bucket, Entries entries) noexcept {
    auto order = [&entries](unsigned i, unsigned j) {
      if (entries[j] < entries[i]) std::swap(entries[i], entries[j]);
    };
    order(0, 1), order(2, 3), order(0, 2), order(1, 3), order(1, 2);  // a sorting network
    const Geometry g = geometry();
    const std::uint64_t first = bucket * g.bucket_bits;
    const std::uint32_t low = static_cast<std::uint32_t>(low_mask(g.low_bits));
    std::uint32_t tuple = 0;
    for (unsigned slot = 0; slot < 4; ++slot) {
      tuple |= (entries[slot] >> g.low_bits) << (4 * slot);
      write_field(first + slot * g.low_bits, g.low_bits, entries[slot] & low);
    }
    write_field(first + 4 * g.low_bits, detail::semisort::kIndexBits,
                detail::semisort::rank(tuple));
  }

  std::uint64_t bucket_count_;
  Geometry geometry_;
  static detail::ExternalStorage check_storage(detail::ExternalStorage storage,
                                               std::uint64_t bucket_count, unsigned bits) {
    if (storage.size != bytes_for(bucket_count, bits)) {
      throw std::invalid_argument("external table storage of " + std::to_string(storage.size) +
                                  " bytes, the layout needs " +
                                  std::to_string(bytes_for(bucket_count, bits)));
    }
    return storage;
  }

  detail::AlignedBuffer buffer_;
};

}  // namespace cuckoo
