// cuckoo/amq/common.hpp — small pieces shared by the comparator filters.
//
// KeyForwarding<Derived> is the key-level half of every comparator's interface, written once: a
// comparator derives from it and declares only its operations on a hash.
//
// Range reduction without division: a 64-bit hash h is mapped into [0, n) by the high word of the
// 128-bit product h·n (Lemire's multiply-shift). Every output has ⌊2^64/n⌋ or ⌈2^64/n⌉ preimages,
// so the bias is below n/2^64, invisible at any table size. Sizing helpers (the textbook Bloom
// formulas, the optimal number of hash functions) run only at construction.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "cuckoo/detail/isa.hpp"
#include "cuckoo/detail/prefetch_pipeline.hpp"
#include "cuckoo/hash.hpp"

namespace cuckoo::amq::detail {

__extension__ using uint128 = unsigned __int128;

/// ⌊h · n / 2^64⌋: h uniform on 64 bits → uniform on [0, n).
inline constexpr std::uint64_t reduce64(std::uint64_t h, std::uint64_t n) noexcept {
  return static_cast<std::uint64_t>((static_cast<uint128>(h) * n) >> 64);
}

/// A 64-bit bijection with full avalanche (the Murmur3 / SplitMix64 finaliser); used where one
/// hash must yield a second, independent-looking value (it is a permutation, so no entropy is
/// lost).
inline constexpr std::uint64_t remix(std::uint64_t x) noexcept {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

CUCKOO_HOT void prefetch(const void* address) noexcept {
  __builtin_prefetch(address);
}

[[noreturn]] inline void invalid(const char* filter, const std::string& what) {
  throw std::invalid_argument(std::string("cuckoo::amq::") + filter + ": " + what);
}

inline void check_capacity(const char* filter, std::size_t capacity) {
  if (capacity == 0) invalid(filter, "capacity must be at least 1");
}

inline void check_fpr(const char* filter, double target_fpr) {
  if (!(target_fpr > 0.0 && target_fpr < 1.0)) {
    invalid(filter, "target_fpr must be in (0, 1), got " + std::to_string(target_fpr));
  }
}

/// Bytes of the largest whole number of 64-byte cache lines within `bytes` (storage is allocated
/// in cache lines, so this is what a budget can really buy).
inline constexpr std::size_t whole_cache_lines(std::size_t bytes) noexcept {
  return bytes / 64 * 64;
}

/// The textbook Bloom filter false-positive rate, (1 − (1 − 1/m)^(kn))^k, for m cells, k hashes
/// and n items.
inline double bloom_fpr(double cells, double hashes, double items) {
  if (items <= 0) return 0.0;
  const double empty = std::exp(hashes * items * std::log1p(-1.0 / cells));
  return std::pow(1.0 - empty, hashes);
}

/// The k in 1..max_k minimising bloom_fpr for m cells and n items (≈ (m/n)·ln 2).
inline unsigned optimal_hashes(double cells, double items, unsigned max_k) {
  unsigned best = 1;
  double best_fpr = bloom_fpr(cells, 1, items);
  for (unsigned k = 2; k <= max_k; ++k) {
    const double fpr = bloom_fpr(cells, k, items);
    if (fpr < best_fpr) best = k, best_fpr = fpr;
  }
  return best;
}

/// Cells a space-optimal Bloom filter needs for n items at ε: n·ln(1/ε)/ln²2 (with k real).
inline double bloom_cells_for(double items, double target_fpr) {
  const double ln2 = std::log(2.0);
  return std::ceil(items * -std::log(target_fpr) / (ln2 * ln2));
}

/// The fewest cells (to 0.1%, a multiple of `granule`) whose ε at the best integer k ≤ max_k meets
/// target_fpr: bloom_cells_for assumes a real k, and rounding k costs up to a few percent of ε.
inline double bloom_cells_meeting(double items, double target_fpr, unsigned max_k, double granule) {
  double cells = bloom_cells_for(items, target_fpr);
  for (;; cells *= 1.001) {
    const double rounded = std::ceil(cells / granule) * granule;
    if (bloom_fpr(rounded, optimal_hashes(rounded, items, max_k), items) <= target_fpr) {
      return rounded;
    }
  }
}

/// Kirsch–Mitzenmacher double hashing over m cells: g_i = h1 + i·h2 (mod m). h1 is the hash's
/// high half and h2 its low half, each range-reduced into [0, m) with the other half as low-order
/// bits, so both are uniform on [0, m) for any m; each further position is one add and one
/// conditional subtract.
class DoubleHashing {
 public:
  DoubleHashing(std::uint64_t hash, std::uint64_t cells) noexcept
      : position_(reduce64(hash, cells)),
        step_(reduce64(hash << 32 | hash >> 32, cells)),
        cells_(cells) {}
  std::uint64_t position() const noexcept { return position_; }
  void advance() noexcept {
    position_ += step_;  // both < m, so one subtraction brings the sum back into [0, m)
    if (position_ >= cells_) position_ -= cells_;
  }

 private:
  std::uint64_t position_;
  std::uint64_t step_;
  std::uint64_t cells_;
};

/// Batch lookup with the memory latency of key i + kAhead overlapped with the test of key i:
/// out[i] = test(hash(keys[i])), with prefetch(hash) issued kAhead keys early. Hashes are kept in a
/// fixed ring on the stack; nothing is allocated.
template <class Keys, class HashFn, class PrefetchFn, class TestFn>
inline void pipelined_batch(const Keys& keys, std::span<bool> out, HashFn hash, PrefetchFn fetch,
                            TestFn test) noexcept {
  constexpr std::size_t kAhead = 8;
  cuckoo::detail::run_prefetch_pipeline<kAhead>(
      keys.size(),
      [&](std::size_t i) {
        const std::uint64_t h = hash(keys[i]);
        fetch(h);
        return h;
      },
      [&](std::size_t i, std::uint64_t h) {
        out[i] = test(h);
        return true;
      });
}

/// A comparator that can delete: it declares erase_hash.
template <class F>
concept ErasesHashes = requires(F& filter, std::uint64_t hash) {
  { filter.erase_hash(hash) } -> std::same_as<bool>;
};

/// The members every comparator offers on keys, over the hash-level operations it declares. A
/// comparator C derives from KeyForwarding<C> (CRTP: the calls are resolved at compile time and
/// inline, no virtual call on the hot paths) and declares
///
///     bool insert_hash(std::uint64_t hash) noexcept;
///     bool contains_hash(std::uint64_t hash) const noexcept;
///     bool erase_hash(std::uint64_t hash) noexcept;              // if it can delete
///     void prefetch_hash(std::uint64_t hash) const noexcept;     // if its batches prefetch
///
/// and gets insert(key), contains(key), erase(key) (only where erase_hash exists, so
/// DeletableFilter follows from it), contains(keys, out) and seed(). Each key is hashed once with
/// the comparator's seeded XXH3-64 (hash_key), which this base holds. The batch lookup overlaps
/// the memory latency of later keys with the current test (pipelined_batch) where prefetch_hash
/// says what to fetch, and is a plain loop otherwise. prefetch_hash may be private if the
/// comparator befriends this base.
template <class Derived>
class KeyForwarding {
 public:
  template <Key K>
  bool insert(const K& key) noexcept {
    return self().insert_hash(hash_key(hasher_, key));
  }
  template <Key K>
  bool contains(const K& key) const noexcept {
    return self().contains_hash(hash_key(hasher_, key));
  }
  // Self, not Derived, in the constraint: it must be checked where erase is called, when the
  // comparator is complete. Clang 14 checked ErasesHashes<Derived> while this base was being
  // instantiated, found the comparator incomplete, and kept "no erase" for good.
  template <Key K, class Self = Derived>
  requires ErasesHashes<Self>
  bool erase(const K& key) noexcept { return self().erase_hash(hash_key(hasher_, key)); }
  /// out[i] = contains(keys[i]); out.size() must be at least keys.size().
  template <Key K>
  void contains(std::span<const K> keys, std::span<bool> out) const noexcept {
    // Not a concept: checked here, a private prefetch_hash counts (this base is a friend).
    if constexpr (requires(const Derived& filter, std::uint64_t hash) {
                    filter.prefetch_hash(hash);
                  }) {
      pipelined_batch(
          keys, out, [this](const K& key) { return hash_key(hasher_, key); },
          [this](std::uint64_t hash) { self().prefetch_hash(hash); },
          [this](std::uint64_t hash) { return self().contains_hash(hash); });
    } else {
      for (std::size_t i = 0; i < keys.size(); ++i) out[i] = contains(keys[i]);
    }
  }

  std::uint64_t seed() const noexcept { return hasher_.seed(); }

 protected:
  explicit KeyForwarding(std::uint64_t seed) noexcept : hasher_(seed) {}

 private:
  Derived& self() noexcept { return static_cast<Derived&>(*this); }
  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }

  Xxh3Hasher hasher_;
};

}  // namespace cuckoo::amq::detail
