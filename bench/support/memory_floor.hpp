// bench/support/memory_floor.hpp — what a lookup cannot beat: two random 64-byte reads per key
// (one, for the blocked filter), placed by the key's hash, over a buffer of the filter's size
// (perf_bench, the single-key callers, blocked_bench).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "cuckoo/detail/aligned_buffer.hpp"
#include "cuckoo/detail/rng.hpp"
#include "cuckoo/hash.hpp"

namespace cuckoo::bench {

/// Two random cache-line reads per key over a buffer of the filter's size.
class Floor {
 public:
  explicit Floor(std::size_t bytes, std::uint64_t seed)
      : buffer_(bytes), lines_(bytes / 64), hasher_(seed) {
    // Fill with non-zero data so that reads are real and pages are faulted in (and collapsed).
    auto* words = reinterpret_cast<std::uint64_t*>(buffer_.data());
    cuckoo::detail::SplitMix64 rng(seed);
    for (std::size_t i = 0; i < bytes / 8; ++i) words[i] = rng();
  }
  const void* data() const { return buffer_.data(); }

  struct Lines {
    const std::byte* a;
    const std::byte* b;
  };
  template <bool kHash>
  Lines lines(std::uint64_t key) const {
    std::uint64_t h;
    if constexpr (kHash) {
      h = hasher_(key);
    } else {
      h = key * 0x9E3779B97F4A7C15ull;  // one multiply: the reads alone
    }
    const std::uint64_t la = ((h >> 32) * lines_) >> 32;
    const std::uint64_t lb = ((h & 0xFFFF'FFFFu) * lines_) >> 32;
    return {buffer_.data() + la * 64, buffer_.data() + lb * 64};
  }
  template <unsigned kLines = 2>
  static bool probe(const Lines& l, std::uint64_t key) {
    std::uint64_t x, y = 0;
    std::memcpy(&x, l.a, 8);
    if constexpr (kLines == 2) std::memcpy(&y, l.b, 8);
    return (x ^ y) == key;  // a result that depends on every read
  }

  /// The same pipeline as BasicFilter::lookup_pipeline, with the same prefetch (into L2).
  template <std::size_t Depth, bool kHash, unsigned kLines = 2>
  void batched(std::span<const std::uint64_t> keys, bool* out) const {
    Lines ring[Depth];
    const std::size_t n = keys.size();
    const auto stage = [&](std::size_t i) {
      const Lines l = lines<kHash>(keys[i]);
      __builtin_prefetch(l.a, 0, 2);
      if constexpr (kLines == 2) __builtin_prefetch(l.b, 0, 2);
      ring[i & (Depth - 1)] = l;
    };
    for (std::size_t i = 0; i < std::min(n, Depth); ++i) stage(i);
    std::size_t i = 0;
    for (; i + Depth < n; ++i) {
      const Lines l = ring[i & (Depth - 1)];
      stage(i + Depth);
      out[i] = probe<kLines>(l, keys[i]);
    }
    for (; i < n; ++i) out[i] = probe<kLines>(ring[i & (Depth - 1)], keys[i]);
  }
  template <bool kHash, unsigned kLines = 2>
  void single(std::span<const std::uint64_t> keys, bool* out) const {
    for (std::size_t i = 0; i < keys.size(); ++i)
      out[i] = probe<kLines>(lines<kHash>(keys[i]), keys[i]);
  }
  /// The single-key floor of an erase: the same two reads, then a write to the first line of a
  /// value that depends on both (as an erase clears a lane it found by reading).
  void single_write(std::span<const std::uint64_t> keys) {
    for (const std::uint64_t key : keys) {
      const Lines l = lines<true>(key);
      std::uint64_t x, y;
      std::memcpy(&x, l.a, 8);
      std::memcpy(&y, l.b, 8);
      const std::uint64_t z = x ^ (y & 1);
      std::memcpy(const_cast<std::byte*>(l.a), &z, 8);
    }
  }

 private:
  cuckoo::detail::AlignedBuffer buffer_;
  std::uint64_t lines_;
  cuckoo::Xxh3Hasher hasher_;
};

}  // namespace cuckoo::bench
