// cuckoo/amq/bloom.hpp — the standard Bloom filter (BF), the paper's baseline (§2.1, §7).
//
// Layout. m bits in 64-bit words, in cache-line-aligned storage. Insert sets k bits, lookup tests
// them and stops at the first 0. No deletion: a cleared bit could belong to another key.
//
// Hashing. Each key is hashed once (XXH3-64, seeded). As in the paper (§7, after Kirsch and
// Mitzenmacher, "Less hashing, same performance"), the 64 bits are split into two 32-bit halves
// h1 (high) and h2 (low), and the k positions are g_i = h1 + i·h2 (mod m), i = 0..k−1. Each half is
// range-reduced into [0, m) by multiply-shift with the other half as its low-order bits
// (reduce64(h, m) and reduce64(rotl(h, 32), m)), so both are uniform on [0, m) even when m is not a
// power of two or exceeds 2^32; the k − 1 further positions then cost one add and one conditional
// subtract each. K–M show this keeps the asymptotic false-positive rate of k independent hashes.
//
// False positives. After n inserts a given bit is still 0 with probability (1 − 1/m)^(kn), so a
// key never inserted passes all k tests with probability
//
//     ε = (1 − (1 − 1/m)^(kn))^k  ≈  (1 − e^(−kn/m))^k,
//
// minimised at k = (m/n)·ln 2, where ε = 2^(−k) ≈ 0.6185^(m/n). The paper's set-up (§7.1): 13 bits
// per item, k = 9, ε ≈ 0.19%. Sizing for (n, ε) takes m = n·ln(1/ε)/ln²2 rounded up to a cache
// line. The double-hashing positions of one key are distinct unless i·h2 ≡ j·h2 (mod m), which
// needs gcd(h2, m) > m/k: negligible for the table sizes this library builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuckoo/amq/common.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/detail/aligned_buffer.hpp"

namespace cuckoo::amq {

/// insert, contains (one key or a batch) and seed() come from detail::KeyForwarding.
class Bloom : public detail::KeyForwarding<Bloom> {
 public:
  static constexpr unsigned kMaxHashes = 32;

  /// A filter of exactly `bit_count` bits and `hash_count` hashes, designed for `capacity` items.
  Bloom(std::uint64_t bit_count, unsigned hash_count, std::size_t capacity,
        std::uint64_t seed = defaults::kSeed)
      : KeyForwarding(seed),
        bits_(checked_storage(bit_count, hash_count)),
        bit_count_(bit_count),
        hash_count_(hash_count),
        capacity_(capacity) {}

  /// The fewest 64-byte lines (≈ n·ln(1/ε)/ln²2 bits) whose ε at the optimal integer k meets ε.
  static Bloom with_capacity(std::size_t capacity, double target_fpr,
                             std::uint64_t seed = defaults::kSeed) {
    detail::check_capacity("Bloom", capacity);
    detail::check_fpr("Bloom", target_fpr);
    const auto bits = static_cast<std::uint64_t>(
        detail::bloom_cells_meeting(static_cast<double>(capacity), target_fpr, kMaxHashes, 512));
    return Bloom(bits, optimal(bits, capacity), capacity, seed);
  }

  /// As many whole cache lines as `bytes` holds; k optimal for 8·bytes/capacity bits per item.
  static Bloom with_memory(std::size_t bytes, std::size_t capacity,
                           std::uint64_t seed = defaults::kSeed) {
    detail::check_capacity("Bloom", capacity);
    const std::uint64_t bits = budget_bits(bytes);
    return Bloom(bits, optimal(bits, capacity), capacity, seed);
  }

  /// As with_memory, with an explicit k (the paper's set-up: 13 bits per item and k = 9).
  static Bloom with_memory_and_hashes(std::size_t bytes, std::size_t capacity, unsigned hash_count,
                                      std::uint64_t seed = defaults::kSeed) {
    detail::check_capacity("Bloom", capacity);
    return Bloom(budget_bits(bytes), hash_count, capacity, seed);
  }

  /// Sets the key's k bits. Always true: a Bloom filter never runs out of room (only accuracy).
  bool insert_hash(std::uint64_t hash) noexcept {
    std::uint64_t* const words = this->words();
    detail::DoubleHashing probe(hash, bit_count_);
    for (unsigned i = 0; i < hash_count_; ++i) {
      words[probe.position() >> 6] |= std::uint64_t{1} << (probe.position() & 63);
      probe.advance();
    }
    ++size_;
    return true;
  }

  bool contains_hash(std::uint64_t hash) const noexcept {
    // All k lines are requested before the first is tested, so a positive lookup pays about one
    // memory latency instead of k; a negative one still stops at its first 0.
    const std::uint64_t* const words = this->words();
    std::uint64_t positions[kMaxHashes];
    detail::DoubleHashing probe(hash, bit_count_);
    for (unsigned i = 0; i < hash_count_; ++i) {
      positions[i] = probe.position();
      detail::prefetch(words + (positions[i] >> 6));
      probe.advance();
    }
    for (unsigned i = 0; i < hash_count_; ++i) {
      if ((words[positions[i] >> 6] >> (positions[i] & 63) & 1) == 0) return false;
    }
    return true;
  }

  /// Items inserted (repeats counted).
  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t memory_bytes() const noexcept { return bits_.size(); }
  std::uint64_t bit_count() const noexcept { return bit_count_; }
  unsigned hash_count() const noexcept { return hash_count_; }
  /// The textbook ε at the current number of items.
  double expected_fpr() const noexcept {
    return detail::bloom_fpr(static_cast<double>(bit_count_), hash_count_,
                             static_cast<double>(size_));
  }

 private:
  static unsigned optimal(std::uint64_t bits, std::size_t capacity) {
    return detail::optimal_hashes(static_cast<double>(bits), static_cast<double>(capacity),
                                  kMaxHashes);
  }
  static std::uint64_t budget_bits(std::size_t bytes) {
    const std::size_t usable = detail::whole_cache_lines(bytes);
    if (usable == 0) {
      detail::invalid("Bloom", "a budget of " + std::to_string(bytes) +
                                   " bytes is too small; the minimum is 64 (one cache line)");
    }
    return std::uint64_t{usable} * 8;
  }
  static std::size_t checked_storage(std::uint64_t bit_count, unsigned hash_count) {
    if (bit_count == 0) detail::invalid("Bloom", "bit_count must be at least 1");
    if (hash_count == 0 || hash_count > kMaxHashes) {
      detail::invalid("Bloom", "hash_count must be in 1.." + std::to_string(kMaxHashes) + ", got " +
                                   std::to_string(hash_count));
    }
    return static_cast<std::size_t>((bit_count + 511) / 512 * 64);
  }

  std::uint64_t* words() noexcept { return reinterpret_cast<std::uint64_t*>(bits_.data()); }
  const std::uint64_t* words() const noexcept {
    return reinterpret_cast<const std::uint64_t*>(bits_.data());
  }

  cuckoo::detail::AlignedBuffer bits_;
  std::uint64_t bit_count_;
  unsigned hash_count_;
  std::size_t capacity_;
  std::size_t size_ = 0;
};

}  // namespace cuckoo::amq
