// cuckoo/sizing.hpp — from a Config to a table layout: fingerprint width and bucket count.
//
// Fingerprint width (paper Eq. 6): a negative lookup compares against at most 2b fingerprints, each
// matching with probability about 2^−f, so f = ceil(log2(2b / ε)) keeps the false-positive rate at
// or under ε.
//
// Bucket count. A (2, b) cuckoo table fills to a load α_max before a random kick walk of 500
// steps first fails: about 84%, 95% and 98% for b = 2, 4, 8 on large tables (paper §5.1), a little
// less when f is small and the table large (partial-key hashing then reaches only 2^f − 1
// alternate buckets from each bucket), and with a spread that grows like 1/sqrt(slots) for small
// tables. Measured here with 500 kicks (first-failure load, mean / minimum of 3–10 runs):
//
//     b = 2, f = 7:  2^16 slots .862/.861   2^21 .847/.844   2^23 .838/.832
//     b = 2, f ≥ 9:  2^21 slots .864/.860   2^23 .860/.858
//     b = 4, f = 7:  2^22 slots .947/.938   2^25 .945/.941
//     b = 4, f ≥ 8:  2^25 slots .949/.947 (f = 8) … .956/.955 (f ≥ 10)
//     b = 8, f = 7:  2^22 slots .982/.981   2^24 .979/.979
//     small tables:  mean .883 / .967 / .997 (b = 2 / 4 / 8), sd ≈ 0.38 / 0.20 / 0.075 /
//     sqrt(slots)
//
// The design load is the large-table floor for (b, f), or for small n five standard deviations
// below the small-table mean, whichever is lower:
//
//     α = min(α_large(b, f), α_small(b) − 5·sd(b)/sqrt(n)),    m = max(2, even(ceil(n / (b·α)))).
//
// So `capacity` distinct keys fit with overwhelming probability for f ≥ 7 (narrower fingerprints
// cannot reach these loads on large tables: a filter with f < 7 is sized the same way but may
// refuse inserts before `capacity`). From n = 10^4 on, α is the large-table floor, and memory is
// f/α bits per item of capacity plus rounding: at most f/0.94 + 1 for b = 4 and 8, f/0.80 + 1 for
// b = 2. The bucket count is rounded up to an even number (addressing.hpp needs it), never to a
// power of two. tests/unit/test_capacity.cpp and tests/stress/capacity_stress.cpp hold it to this.
//
// Semi-sorted buckets (semi_sort, b = 4 only; table/semisort_table.hpp). `fingerprint_bits` is
// still the fingerprint width f, the number that sets the false-positive rate; the table stores
// it in f − 1 bits per entry. So from a target ε the width is derived exactly as for the plain
// filter (Eq. 6; at least 4, the part the bucket index encodes), and the saved bit is taken as
// memory: the same ε in (f − 1)/α bits per item instead of f/α (paper Table 2: log2(1/ε) + 2
// against + 3). To spend the bit on accuracy instead, ask for one more bit: semi_sort with
// fingerprint_bits = f + 1 costs what the plain filter costs at f and halves its false-positive
// rate (paper Table 3). The bucket count is the plain filter's for the same (b, f): a semi-sorted
// bucket holds the same multiset as a plain one and the kick walk picks victims the same way, so
// it fills to the same loads.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cuckoo/config.hpp"

namespace cuckoo {

/// The shape of a table, as derived from a Config or read from a file.
struct Layout {
  std::uint64_t bucket_count = 2;
  unsigned fingerprint_bits = 12;
  unsigned bucket_size = 4;
  bool semi_sort = false;
  /// A blocked filter (blocked/blocked_filter.hpp): bucket_count is then its 64-byte blocks,
  /// bucket_size the 43 items a block holds and fingerprint_bits the 8-bit remainders.
  bool blocked = false;
};

namespace blocked_layout {
/// Items per block, remainder bits and blocks' design fill (blocked/blocked_filter.hpp).
inline constexpr unsigned kSlotsPerBlock = 43;
inline constexpr unsigned kRemainderBits = 8;
inline constexpr double kDesignItemsPerBlock = 42.2;
/// The false-positive rate a blocked filter keeps up to its capacity, for checking target_fpr:
/// its rate is set by its format, about 0.17% at 95% of capacity and 0.21% at capacity
/// (measured, README), so a target below this cannot be met and is refused.
inline constexpr double kFprBound = 0.0025;
}  // namespace blocked_layout

/// Narrowest fingerprint of a semi-sorted table: its top 4 bits are what the bucket index encodes.
inline constexpr unsigned kMinSemiSortedBits = 4;

/// Largest bucket count: the index is a 32-bit multiply-shift of the hash.
inline constexpr std::uint64_t kMaxBucketCount = std::uint64_t{1} << 32;

/// The load a table of bucket size b, width f and capacity n is sized for (see above).
inline double design_load(unsigned bucket_size, unsigned fingerprint_bits,
                          double capacity) noexcept {
  double large, small, spread;
  switch (bucket_size) {
    case 2:
      large = fingerprint_bits >= 9 ? 0.83 : 0.80, small = 0.88, spread = 5 * 0.38;
      break;
    case 4:
      large = fingerprint_bits >= 8 ? 0.935 : 0.92, small = 0.966, spread = 5 * 0.20;
      break;
    default:
      large = fingerprint_bits >= 8 ? 0.97 : 0.965, small = 0.997, spread = 5 * 0.075;
      break;
  }
  const double small_table = small - spread / std::sqrt(capacity);
  const double load = small_table < large ? small_table : large;
  return load > 0.25 ? load : 0.25;  // tiny n: m = 2 buckets already hold 2b keys
}

/// f = ceil(log2(2b / ε)), the smallest width meeting ε (paper Eq. 6).
inline unsigned fingerprint_bits_for(double target_fpr, unsigned bucket_size) {
  return static_cast<unsigned>(std::ceil(std::log2(2.0 * bucket_size / target_fpr) - 1e-9));
}

namespace detail {
[[noreturn]] inline void invalid(const std::string& what) {
  throw std::invalid_argument("cuckoo::Config: " + what);
}
}  // namespace detail

/// Blocks of a blocked filter for `capacity` items: even, at least 2, never a power of two by
/// rule; throws std::invalid_argument past 2^32 blocks.
inline std::uint64_t blocked_block_count(std::size_t capacity) {
  const double blocks =
      std::ceil(static_cast<double>(capacity) / blocked_layout::kDesignItemsPerBlock);
  if (!(blocks <= static_cast<double>(kMaxBucketCount))) {
    detail::invalid("capacity " + std::to_string(capacity) + " needs more than 2^32 blocks");
  }
  auto count = static_cast<std::uint64_t>(blocks);
  count += count & 1;
  return count < 2 ? 2 : count;
}

/// Checks a Config and derives its layout; throws std::invalid_argument naming the bad field.
inline Layout plan(const Config& cfg) {
  using detail::invalid;
  if (cfg.bucket_size != 2 && cfg.bucket_size != 4 && cfg.bucket_size != 8) {
    invalid("bucket_size must be 2, 4 or 8, got " + std::to_string(cfg.bucket_size));
  }
  if (cfg.capacity == 0) invalid("capacity must be at least 1");
  if (cfg.max_kicks > defaults::kMaxKicksLimit) {
    invalid("max_kicks must be at most " + std::to_string(defaults::kMaxKicksLimit) + ", got " +
            std::to_string(cfg.max_kicks));
  }
  if (cfg.blocked) {
    if (cfg.semi_sort || cfg.growable) {
      invalid(std::string("blocked cannot be combined with ") +
              (cfg.semi_sort ? "semi_sort" : "growable"));
    }
    if (cfg.fingerprint_bits != 0 && cfg.fingerprint_bits != blocked_layout::kRemainderBits) {
      invalid("a blocked filter stores 8-bit remainders; fingerprint_bits must be 0 or 8, got " +
              std::to_string(cfg.fingerprint_bits));
    }
    if (cfg.fingerprint_bits == 0 &&
        !(cfg.target_fpr >= blocked_layout::kFprBound && cfg.target_fpr < 1.0)) {
      invalid("a blocked filter's false-positive rate is fixed at about 0.2% (at most " +
              std::to_string(blocked_layout::kFprBound) + "); target_fpr must be in [" +
              std::to_string(blocked_layout::kFprBound) + ", 1), got " +
              std::to_string(cfg.target_fpr) + " (use the plain filter for lower rates)");
    }
    return {blocked_block_count(cfg.capacity), blocked_layout::kRemainderBits,
            blocked_layout::kSlotsPerBlock, false, true};
  }
  if (cfg.semi_sort && cfg.bucket_size != 4) {
    invalid("semi_sort needs bucket_size 4, got " + std::to_string(cfg.bucket_size));
  }
  // Semi-sorting splits each fingerprint into a 4-bit part it encodes and the rest it stores.
  const unsigned min_bits = cfg.semi_sort ? kMinSemiSortedBits : defaults::kMinFingerprintBits;
  Layout layout;
  layout.bucket_size = cfg.bucket_size;
  layout.semi_sort = cfg.semi_sort;
  if (cfg.fingerprint_bits != 0) {
    if (cfg.fingerprint_bits < min_bits || cfg.fingerprint_bits > defaults::kMaxFingerprintBits) {
      invalid("fingerprint_bits must be 0 (derive from target_fpr) or " + std::to_string(min_bits) +
              "..32" + (cfg.semi_sort ? " with semi_sort" : "") + ", got " +
              std::to_string(cfg.fingerprint_bits));
    }
    layout.fingerprint_bits = cfg.fingerprint_bits;
  } else {
    if (!(cfg.target_fpr > 0.0 && cfg.target_fpr < 1.0)) {
      invalid("target_fpr must be in (0, 1), got " + std::to_string(cfg.target_fpr));
    }
    unsigned bits = fingerprint_bits_for(cfg.target_fpr, cfg.bucket_size);
    if (bits < min_bits) bits = min_bits;
    if (bits > defaults::kMaxFingerprintBits) {
      invalid("target_fpr " + std::to_string(cfg.target_fpr) + " needs " + std::to_string(bits) +
              "-bit fingerprints; at most 32 are supported");
    }
    layout.fingerprint_bits = bits;
  }
  const double n = static_cast<double>(cfg.capacity);
  const double load = design_load(cfg.bucket_size, layout.fingerprint_bits, n);
  const double buckets = std::ceil(n / (cfg.bucket_size * load));
  if (!(buckets <= static_cast<double>(kMaxBucketCount))) {
    invalid("capacity " + std::to_string(cfg.capacity) + " needs more than 2^32 buckets");
  }
  auto count = static_cast<std::uint64_t>(buckets);
  count += count & 1;
  layout.bucket_count = count < 2 ? 2 : count;
  return layout;
}

}  // namespace cuckoo
