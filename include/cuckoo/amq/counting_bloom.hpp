// cuckoo/amq/counting_bloom.hpp — the counting Bloom filter (CBF) of Fan, Cao, Almeida and Broder
// ("Summary cache", 1998), paper §2.1.
//
// Layout. m 4-bit counters, sixteen to a 64-bit word, in cache-line-aligned storage: 4× the memory
// of a Bloom filter with the same false-positive rate (paper Table 1: "3x ~ 4x").
//
// Hashing. Exactly the Bloom filter's: one XXH3-64 hash, k counters at g_i = h1 + i·h2 (mod m)
// from its two 32-bit halves (see bloom.hpp and detail::DoubleHashing).
//
// Insert increments the k counters, lookup tests that all k are non-zero, erase decrements them.
// Counters saturate at 15 and a saturated counter is never decremented again: it may be shared by
// more than 15 keys, and lowering it could let it reach 0 while a key still counts on it (a false
// negative). Saturation therefore costs only accuracy, never correctness. erase first checks that
// all k counters are non-zero and changes nothing otherwise, so erasing a key whose counters are
// not all set returns false harmlessly. Erasing a key that was never inserted but passes the test
// (a false positive) does decrement other keys' counters: only erase what you inserted.
//
// False positives. A counter is non-zero exactly when the corresponding Bloom bit would be 1, so
// ε = (1 − (1 − 1/m)^(kn))^k as for the Bloom filter with m cells (saturated counters that would
// have dropped to 0 after deletions only add to it). With 4-bit counters the chance that any
// counter ever exceeds 15 under optimal k is below 1.37·10^−15·m (Fan et al.).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuckoo/amq/common.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/detail/aligned_buffer.hpp"

namespace cuckoo::amq {

/// insert, contains (one key or a batch), erase and seed() come from detail::KeyForwarding.
class CountingBloom : public detail::KeyForwarding<CountingBloom> {
 public:
  static constexpr unsigned kMaxHashes = 32;
  static constexpr unsigned kCounterBits = 4;
  static constexpr std::uint64_t kSaturated = 15;
  static constexpr unsigned kCountersPerLine = 512 / kCounterBits;

  /// `counter_count` counters, `hash_count` per key, designed for `capacity` items.
  CountingBloom(std::uint64_t counter_count, unsigned hash_count, std::size_t capacity,
                std::uint64_t seed = defaults::kSeed)
      : KeyForwarding(seed),
        counters_(checked_storage(counter_count, hash_count)),
        counter_count_(counter_count),
        hash_count_(hash_count),
        capacity_(capacity) {}

  /// As many counters as the Bloom filter for (n, ε) has bits (≈ n·ln(1/ε)/ln²2), in whole lines.
  static CountingBloom with_capacity(std::size_t capacity, double target_fpr,
                                     std::uint64_t seed = defaults::kSeed) {
    detail::check_capacity("CountingBloom", capacity);
    detail::check_fpr("CountingBloom", target_fpr);
    const auto counters = static_cast<std::uint64_t>(detail::bloom_cells_meeting(
        static_cast<double>(capacity), target_fpr, kMaxHashes, kCountersPerLine));
    return CountingBloom(counters, optimal(counters, capacity), capacity, seed);
  }

  /// As many whole cache lines of counters as `bytes` holds; k optimal for them at `capacity`.
  static CountingBloom with_memory(std::size_t bytes, std::size_t capacity,
                                   std::uint64_t seed = defaults::kSeed) {
    detail::check_capacity("CountingBloom", capacity);
    const std::size_t usable = detail::whole_cache_lines(bytes);
    if (usable == 0) {
      detail::invalid("CountingBloom", "a budget of " + std::to_string(bytes) +
                                           " bytes is too small; the minimum is 64 (one line)");
    }
    const std::uint64_t counters = std::uint64_t{usable} * 8 / kCounterBits;
    return CountingBloom(counters, optimal(counters, capacity), capacity, seed);
  }

  /// Increments the key's k counters (saturating). Always true.
  bool insert_hash(std::uint64_t hash) noexcept {
    std::uint64_t* const words = this->words();
    detail::DoubleHashing probe(hash, counter_count_);
    for (unsigned i = 0; i < hash_count_; ++i) {
      std::uint64_t& word = words[probe.position() >> 4];
      const unsigned shift = static_cast<unsigned>(probe.position() & 15) * kCounterBits;
      if ((word >> shift & kSaturated) != kSaturated) word += std::uint64_t{1} << shift;
      probe.advance();
    }
    ++size_;
    return true;
  }

  bool contains_hash(std::uint64_t hash) const noexcept {
    const std::uint64_t* const words = this->words();
    std::uint64_t positions[kMaxHashes];
    detail::DoubleHashing probe(hash, counter_count_);
    for (unsigned i = 0; i < hash_count_; ++i) {
      positions[i] = probe.position();
      detail::prefetch(words + (positions[i] >> 4));
      probe.advance();
    }
    for (unsigned i = 0; i < hash_count_; ++i) {
      if (counter(words, positions[i]) == 0) return false;
    }
    return true;
  }

  /// Decrements the key's k counters (saturated ones stay); false, with nothing changed, if any of
  /// them is 0. Only erase what you inserted.
  bool erase_hash(std::uint64_t hash) noexcept {
    if (!contains_hash(hash)) return false;
    std::uint64_t* const words = this->words();
    detail::DoubleHashing probe(hash, counter_count_);
    for (unsigned i = 0; i < hash_count_; ++i) {
      std::uint64_t& word = words[probe.position() >> 4];
      const unsigned shift = static_cast<unsigned>(probe.position() & 15) * kCounterBits;
      const std::uint64_t value = word >> shift & kSaturated;
      // A position repeated within one key was incremented twice and is decremented twice, so a
      // counter seen non-zero above cannot be driven below 0 here.
      if (value != kSaturated && value != 0) word -= std::uint64_t{1} << shift;
      probe.advance();
    }
    --size_;
    return true;
  }

  /// Items inserted minus items erased.
  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t memory_bytes() const noexcept { return counters_.size(); }
  std::uint64_t counter_count() const noexcept { return counter_count_; }
  unsigned hash_count() const noexcept { return hash_count_; }
  double expected_fpr() const noexcept {
    return detail::bloom_fpr(static_cast<double>(counter_count_), hash_count_,
                             static_cast<double>(size_));
  }
  /// Counters stuck at 15 (a diagnostic: O(m)).
  std::uint64_t saturated_counters() const noexcept {
    std::uint64_t saturated = 0;
    for (std::uint64_t i = 0; i < counter_count_; ++i) {
      saturated += counter(words(), i) == kSaturated;
    }
    return saturated;
  }

 private:
  static std::uint64_t counter(const std::uint64_t* words, std::uint64_t index) noexcept {
    return words[index >> 4] >> ((index & 15) * kCounterBits) & kSaturated;
  }
  std::uint64_t* words() noexcept { return reinterpret_cast<std::uint64_t*>(counters_.data()); }
  const std::uint64_t* words() const noexcept {
    return reinterpret_cast<const std::uint64_t*>(counters_.data());
  }

  static unsigned optimal(std::uint64_t counters, std::size_t capacity) {
    return detail::optimal_hashes(static_cast<double>(counters), static_cast<double>(capacity),
                                  kMaxHashes);
  }
  static std::size_t checked_storage(std::uint64_t counter_count, unsigned hash_count) {
    if (counter_count == 0) detail::invalid("CountingBloom", "counter_count must be at least 1");
    if (hash_count == 0 || hash_count > kMaxHashes) {
      detail::invalid("CountingBloom", "hash_count must be in 1.." + std::to_string(kMaxHashes) +
                                           ", got " + std::to_string(hash_count));
    }
    return static_cast<std::size_t>((counter_count + kCountersPerLine - 1) / kCountersPerLine * 64);
  }

  cuckoo::detail::AlignedBuffer counters_;
  std::uint64_t counter_count_;
  unsigned hash_count_;
  std::size_t capacity_;
  std::size_t size_ = 0;
};

}  // namespace cuckoo::amq
