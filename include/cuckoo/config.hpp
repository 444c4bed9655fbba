// cuckoo/config.hpp — the knobs of a cuckoo filter and their defaults, gathered in one place.
//
// Every default below is a documented constant. In particular the seed is fixed: two filters built
// from the same Config answer identically, which is what makes a filter possible to save, reload
// and compare across processes. Pass another seed when an adversary could choose keys that collide
// under the public default.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cuckoo {

namespace defaults {
/// How many items a default-configured filter must hold.
inline constexpr std::size_t kCapacity = 1'000'000;
/// Target false-positive rate used when fingerprint_bits == 0.
inline constexpr double kTargetFpr = 0.001;
/// Entries per bucket: 4 is the paper's space-optimal choice for 0.00001 < ε ≤ 0.002 (§5.1).
inline constexpr unsigned kBucketSize = 4;
/// Displacements tried before an insert gives up (the paper's value, §2.2).
inline constexpr unsigned kMaxKicks = 500;
/// Largest max_kicks accepted; the undo log of a kick walk is sized from it at construction.
inline constexpr unsigned kMaxKicksLimit = 1u << 20;
/// The hash seed: the first 64 bits of the fractional part of pi. Fixed so filters can be saved.
inline constexpr std::uint64_t kSeed = 0x243F6A8885A308D3ull;
/// Fingerprint widths the packed table supports, for every bucket size.
inline constexpr unsigned kMinFingerprintBits = 2;
inline constexpr unsigned kMaxFingerprintBits = 32;
}  // namespace defaults

/// Everything needed to build a filter. A plain aggregate: designated initialisers work.
///
///   cuckoo::Config cfg{.capacity = 10'000'000, .target_fpr = 1e-4};
///
/// A Config that cannot work (capacity 0, ε outside (0, 1), a width outside 2..32, a bucket size
/// other than 2, 4, 8, ...) makes the filter constructor throw std::invalid_argument naming the
/// field.
struct Config {
  /// Items the filter must be able to hold. The table is sized so that this many distinct keys fit
  /// with overwhelming probability (see sizing.hpp); it is not rounded to a power of two.
  std::size_t capacity = defaults::kCapacity;
  /// Target false-positive rate ε, used only when fingerprint_bits == 0: f = ceil(log2(2b / ε))
  /// (paper Eq. 6), for semi-sorted buckets too, which then store f in f − 1 bits per entry.
  double target_fpr = defaults::kTargetFpr;
  /// Explicit fingerprint width f in bits (2..32), or 0 to derive it from target_fpr.
  unsigned fingerprint_bits = 0;
  /// Entries per bucket b: 2, 4 or 8.
  unsigned bucket_size = defaults::kBucketSize;
  /// Maximum displacements in one insert's kick walk. 0 means: try the two buckets only.
  unsigned max_kicks = defaults::kMaxKicks;
  /// Seed of the key hash and of the kick walk's PRNG.
  std::uint64_t seed = defaults::kSeed;
  /// Semi-sorted buckets (paper §5.2): b must be 4 and f 4..32; each f-bit fingerprint costs
  /// f − 1 bits, at the same false-positive rate (see sizing.hpp for the equal-memory choice).
  bool semi_sort = false;
  /// A filter that doubles when it is full instead of refusing inserts, holding target_fpr at every
  /// size (growable/growable_filter.hpp). `capacity` is then where it starts; semi_sort is not
  /// supported, and f is at least 11.
  bool growable = false;
  /// A blocked filter (blocked/blocked_filter.hpp): 64-byte blocks of up to 43 items, so that a
  /// lookup reads one cache line (a second for about 5% of keys at 95% of capacity), at about
  /// 12.8 bits per item. Its false-positive rate is fixed by its format (about 0.2%): target_fpr
  /// must be at least 0.0025, fingerprint_bits 0 or 8; bucket_size is not used; not with
  /// semi_sort or growable.
  bool blocked = false;
};

}  // namespace cuckoo
