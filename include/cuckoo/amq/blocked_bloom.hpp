// cuckoo/amq/blocked_bloom.hpp — the blocked Bloom filter (blk-BF) of Putze, Sanders and Singler
// ("Cache-, hash- and space-efficient Bloom filters", 2007), as evaluated in the paper (§7).
//
// Layout. An array of B blocks, each one 64-byte cache line (512 bits), 64-byte aligned. A key
// lives in exactly one block: insert and lookup touch one line, so each costs at most one cache
// miss. No deletion.
//
// Hashing. One XXH3-64 hash per key. The block is the high 32 bits range-reduced into [0, B) by
// multiply-shift ((hi·B) >> 32; B ≤ 2^32, i.e. up to 256 GiB). The k bits inside the block use the
// same double hashing as the Bloom filter, g_i = h1 + i·h2 (mod 512), from the low 32 bits, which
// the block index never reads: h1 = bits 23..31, h2 = bits 14..22 with its lowest bit forced to 1.
// An odd step generates Z_512, so a key's k positions are always distinct, and each is uniform.
// Insert and lookup build the key's 512-bit mask in registers and apply it word by word (8 words,
// no branch per bit), which the compiler can vectorise.
//
// False positives. Keys fall into blocks unevenly (Poisson with mean λ = n/B), and an overfull
// block answers "yes" more often; this is why blk-BF has a higher ε than BF at equal memory (paper
// §7.1: 0.43% against 0.19% at 13 bits per item, k = 9). Putze et al.'s formula treats the bits as
// independent: ε ≈ Σ_L Poisson(L; λ)·(1 − (1 − k/512)^L)^k. Double hashing modulo 512 is further
// from independence than in a large Bloom filter: there are only 512·256 = 2^17 patterns, and a
// stored key with the query's step covers up to k − 1 of its bits. expected_fpr() therefore
// computes ε exactly for this scheme. Every affine map x ↦ u·x + c (u odd) permutes Z_512 and
// maps odd-step progressions to odd-step progressions, uniformly, so every query pattern has the
// same chance of being covered as {0, …, k−1}; by inclusion–exclusion over the subsets T of it,
//
//     ε = Σ_L Poisson(L; λ) · Σ_{T ⊆ {0..k−1}} (−1)^|T| · q_T^L,
//
// where q_T is the fraction of the 2^17 patterns that miss T (counted once per k, 2^k subsets;
// hence k ≤ 16). At 13 bits per item and k = 9 it gives 0.43%, the paper's measurement, where the
// independent-bits formula says 0.29%. Sizing for (n, ε) bisects on the bits per item until this ε
// meets the target, with k the independent-bits optimum; with_memory picks k the same way.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cuckoo/amq/common.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/detail/aligned_buffer.hpp"

namespace cuckoo::amq {

/// insert, contains (one key or a batch) and seed() come from detail::KeyForwarding.
class BlockedBloom : public detail::KeyForwarding<BlockedBloom> {
 public:
  static constexpr unsigned kBlockBits = 512;
  static constexpr unsigned kWordsPerBlock = kBlockBits / 64;
  static constexpr unsigned kMaxHashes = 16;  // the exact ε sums over 2^k subsets

  /// `block_count` 64-byte blocks (1..2^32), `hash_count` bits per key, designed for `capacity`.
  BlockedBloom(std::uint64_t block_count, unsigned hash_count, std::size_t capacity,
               std::uint64_t seed = defaults::kSeed)
      : KeyForwarding(seed),
        blocks_(checked_storage(block_count, hash_count)),
        block_count_(block_count),
        hash_count_(hash_count),
        capacity_(capacity) {}

  /// The fewest blocks (to 0.1%) whose exact ε, with k chosen for them, meets target_fpr.
  static BlockedBloom with_capacity(std::size_t capacity, double target_fpr,
                                    std::uint64_t seed = defaults::kSeed) {
    detail::check_capacity("BlockedBloom", capacity);
    detail::check_fpr("BlockedBloom", target_fpr);
    const auto n = static_cast<double>(capacity);
    const auto blocks_for = [&](double bits_per_item) {
      return static_cast<std::uint64_t>(std::ceil(bits_per_item * n / kBlockBits));
    };
    const auto meets = [&](double bits_per_item) {
      const std::uint64_t blocks = blocks_for(bits_per_item);
      return expected_fpr(blocks, optimal(blocks, capacity), n) <= target_fpr;
    };
    double low = 0.5 * detail::bloom_cells_for(n, target_fpr) / n;  // never enough
    double high = 2.0 * low;
    while (!meets(high)) {
      if (high > 400.0) {
        detail::invalid("BlockedBloom", "target_fpr " + std::to_string(target_fpr) +
                                            " is out of reach of 512-bit blocks with k <= " +
                                            std::to_string(kMaxHashes));
      }
      low = high, high *= 2.0;
    }
    while (high - low > 0.001 * high) {
      const double middle = 0.5 * (low + high);
      (meets(middle) ? high : low) = middle;
    }
    const std::uint64_t blocks = blocks_for(high);
    return BlockedBloom(blocks, optimal(blocks, capacity), capacity, seed);
  }

  /// As many blocks as `bytes` holds; k minimising expected_fpr at `capacity` items.
  static BlockedBloom with_memory(std::size_t bytes, std::size_t capacity,
                                  std::uint64_t seed = defaults::kSeed) {
    detail::check_capacity("BlockedBloom", capacity);
    const std::uint64_t blocks = budget_blocks(bytes);
    return BlockedBloom(blocks, optimal(blocks, capacity), capacity, seed);
  }

  /// As with_memory, with an explicit k (the paper's set-up: 13 bits per item and k = 9).
  static BlockedBloom with_memory_and_hashes(std::size_t bytes, std::size_t capacity,
                                             unsigned hash_count,
                                             std::uint64_t seed = defaults::kSeed) {
    detail::check_capacity("BlockedBloom", capacity);
    return BlockedBloom(budget_blocks(bytes), hash_count, capacity, seed);
  }

  /// Sets the key's k bits in its block. Always true.
  bool insert_hash(std::uint64_t hash) noexcept {
    std::uint64_t mask[kWordsPerBlock];
    make_mask(hash, mask);
    std::uint64_t* const words = block(hash);
    for (unsigned w = 0; w < kWordsPerBlock; ++w) words[w] |= mask[w];
    ++size_;
    return true;
  }

  bool contains_hash(std::uint64_t hash) const noexcept {
    std::uint64_t mask[kWordsPerBlock];
    make_mask(hash, mask);
    const std::uint64_t* const words = block(hash);
    std::uint64_t missing = 0;
    for (unsigned w = 0; w < kWordsPerBlock; ++w) missing |= mask[w] & ~words[w];
    return missing == 0;
  }

  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t memory_bytes() const noexcept { return blocks_.size(); }
  std::uint64_t block_count() const noexcept { return block_count_; }
  unsigned hash_count() const noexcept { return hash_count_; }
  /// The exact ε at the current number of items (allocates 2^k doubles: not for hot paths).
  double expected_fpr() const {
    return expected_fpr(block_count_, hash_count_, static_cast<double>(size_));
  }

  /// The exact ε of this scheme for `items` keys in `blocks` blocks (see the header comment).
  static double expected_fpr(std::uint64_t blocks, unsigned hash_count, double items) {
    const double lambda = items / static_cast<double>(blocks);
    if (lambda <= 0) return 0.0;
    const std::vector<double> miss = miss_fractions(hash_count);
    const double spread = 12.0 * std::sqrt(lambda) + 20.0;
    double fpr = 0.0;
    for (double load = std::max(0.0, std::floor(lambda - spread)); load <= lambda + spread;
         load += 1.0) {
      const double poisson = std::exp(load * std::log(lambda) - lambda - std::lgamma(load + 1.0));
      double covered = 0.0;
      for (std::size_t subset = 0; subset < miss.size(); ++subset) {
        const double term = std::pow(miss[subset], load);
        covered += (std::popcount(subset) & 1) != 0 ? -term : term;
      }
      fpr += poisson * covered;
    }
    return fpr < 0 ? 0 : fpr;
  }

  /// Putze et al.'s formula with independent bits, (1 − (1 − k/512)^L)^k averaged over L.
  static double independent_bits_fpr(std::uint64_t blocks, unsigned hash_count, double items) {
    const double lambda = items / static_cast<double>(blocks);
    if (lambda <= 0) return 0.0;
    const double keep = std::log1p(-static_cast<double>(hash_count) / kBlockBits);
    const double spread = 12.0 * std::sqrt(lambda) + 20.0;
    double fpr = 0.0;
    for (double load = std::max(0.0, std::floor(lambda - spread)); load <= lambda + spread;
         load += 1.0) {
      const double poisson = std::exp(load * std::log(lambda) - lambda - std::lgamma(load + 1.0));
      fpr += poisson * std::pow(1.0 - std::exp(load * keep), hash_count);
    }
    return fpr;
  }

 private:
  friend KeyForwarding;

  /// Batch lookups prefetch the next keys' blocks while one is tested.
  CUCKOO_HOT void prefetch_hash(std::uint64_t hash) const noexcept {
    detail::prefetch(block(hash));
  }

  std::uint64_t* block(std::uint64_t hash) noexcept {
    return reinterpret_cast<std::uint64_t*>(blocks_.data()) + block_index(hash) * kWordsPerBlock;
  }
  const std::uint64_t* block(std::uint64_t hash) const noexcept {
    return reinterpret_cast<const std::uint64_t*>(blocks_.data()) +
           block_index(hash) * kWordsPerBlock;
  }
  std::uint64_t block_index(std::uint64_t hash) const noexcept {
    return ((hash >> 32) * block_count_) >> 32;
  }

  void make_mask(std::uint64_t hash, std::uint64_t (&mask)[kWordsPerBlock]) const noexcept {
    for (unsigned w = 0; w < kWordsPerBlock; ++w) mask[w] = 0;
    const auto low = static_cast<std::uint32_t>(hash);
    unsigned position = low >> 23;                // h1: 9 bits
    const unsigned step = (low >> 14 & 511) | 1;  // h2: 9 bits, odd
    for (unsigned i = 0; i < hash_count_; ++i) {
      mask[position >> 6] |= std::uint64_t{1} << (position & 63);
      position = (position + step) & (kBlockBits - 1);
    }
  }

  /// For each subset T of the query pattern {0..k−1} (as a bit mask), the fraction of the 2^17
  /// patterns (h1, odd h2) that miss T: a histogram of each pattern's intersection with the query,
  /// summed over subsets of the complement of T.
  static std::vector<double> miss_fractions(unsigned hash_count) {
    const std::size_t subsets = std::size_t{1} << hash_count;
    std::vector<double> within(subsets, 0.0);
    for (unsigned start = 0; start < kBlockBits; ++start) {
      for (unsigned step = 1; step < kBlockBits; step += 2) {
        std::size_t hit = 0;
        for (unsigned i = 0; i < hash_count; ++i) {
          const unsigned position = (start + i * step) & (kBlockBits - 1);
          if (position < hash_count) hit |= std::size_t{1} << position;
        }
        within[hit] += 1.0;
      }
    }
    for (unsigned bit = 0; bit < hash_count; ++bit) {  // within[X] = patterns hitting only ⊆ X
      for (std::size_t x = 0; x < subsets; ++x) {
        if ((x >> bit & 1) != 0) within[x] += within[x ^ (std::size_t{1} << bit)];
      }
    }
    std::vector<double> miss(subsets);
    const double patterns = kBlockBits * (kBlockBits / 2.0);
    for (std::size_t t = 0; t < subsets; ++t) miss[t] = within[(subsets - 1) ^ t] / patterns;
    return miss;
  }

  static unsigned optimal(std::uint64_t blocks, std::size_t capacity) {
    unsigned best = 1;
    double best_fpr = 2.0;
    for (unsigned k = 1; k <= kMaxHashes; ++k) {
      const double fpr = independent_bits_fpr(blocks, k, static_cast<double>(capacity));
      if (fpr < best_fpr) best = k, best_fpr = fpr;
    }
    return best;
  }
  static std::uint64_t budget_blocks(std::size_t bytes) {
    const std::size_t usable = detail::whole_cache_lines(bytes);
    if (usable == 0) {
      detail::invalid("BlockedBloom", "a budget of " + std::to_string(bytes) +
                                          " bytes is too small; the minimum is 64 (one block)");
    }
    return usable / 64;
  }
  static std::size_t checked_storage(std::uint64_t block_count, unsigned hash_count) {
    if (block_count == 0 || block_count > (std::uint64_t{1} << 32)) {
      detail::invalid("BlockedBloom",
                      "block_count must be in 1..2^32, got " + std::to_string(block_count));
    }
    if (hash_count == 0 || hash_count > kMaxHashes) {
      detail::invalid("BlockedBloom", "hash_count must be in 1.." + std::to_string(kMaxHashes) +
                                          ", got " + std::to_string(hash_count));
    }
    return static_cast<std::size_t>(block_count * 64);
  }

  cuckoo::detail::AlignedBuffer blocks_;
  std::uint64_t block_count_;
  unsigned hash_count_;
  std::size_t capacity_;
  std::size_t size_ = 0;
};

}  // namespace cuckoo::amq
