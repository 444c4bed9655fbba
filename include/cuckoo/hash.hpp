// cuckoo/hash.hpp — key → one seeded 64-bit hash.
//
// Every filter in this library hashes a key exactly once, with XXH3-64 and an explicit seed, and
// derives everything else (bucket, fingerprint, Bloom bit positions) from that one 64-bit value.
// Integers are hashed as their 8 little-endian bytes, so a filter file built on one host answers
// identically on another. The seed is part of the filter's state and of its file format.
//
// A user-supplied hasher is any type H with `std::uint64_t operator()(Key) const` for the key types
// it is used with, constructible from a std::uint64_t seed (the `Hasher` concept below).
#pragma once

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#define CUCKOO_DEFINED_XXH_INLINE_ALL
#endif
#include <xxhash.h>

#ifdef CUCKOO_DEFINED_XXH_INLINE_ALL
#undef XXH_INLINE_ALL
#undef CUCKOO_DEFINED_XXH_INLINE_ALL
#endif

namespace cuckoo {

/// Identifies the hash function in saved filters; a file hashed otherwise is refused.
enum class HashId : std::uint32_t { kXxh3_64 = 1 };

/// XXH3-64 with an explicit seed.
class Xxh3Hasher {
 public:
  static constexpr HashId kId = HashId::kXxh3_64;

  explicit Xxh3Hasher(std::uint64_t seed) noexcept : seed_(seed), bitflip_(bitflip_for(seed)) {}

  // Forced inline: in a large caller GCC's inlining budget may run out and leave a call per key
  // (seen in perf_bench's erase loop: single-key erase took 55 ns with the call, 48 ns without).
  [[gnu::always_inline]] std::uint64_t operator()(std::uint64_t key) const noexcept {
    // Exactly XXH3_64bits_withSeed(&key, 8, seed): xxHash's kernel for 4..8-byte inputs
    // (XXH3_len_4to8_64b) with its seed-only term, `bitflip`, computed once at construction. The
    // public entry point (a length dispatch over all sizes) is too big for the compiler to
    // inline, and an out-of-line call per key cost about a third of a batched lookup; the kernel
    // itself recomputed the seed term per key (six instructions) wherever the caller's loop could
    // not hoist it, as in ConcurrentFilter's lookups, whose atomic loads make the compiler reload
    // members. tests/unit/test_hash_inline.cpp checks the result against the public entry point.
    // The kernel reads the key's 8 little-endian bytes as two 32-bit halves and swaps them: on
    // any host, the key's value rotated by 32.
    const std::uint64_t halves_swapped = std::rotl(key, 32);
    return XXH3_rrmxmx(halves_swapped ^ bitflip_, sizeof key);
  }
  std::uint64_t operator()(std::string_view key) const noexcept {
    return XXH3_64bits_withSeed(key.data(), key.size(), seed_);
  }
  std::uint64_t operator()(std::span<const std::byte> key) const noexcept {
    return XXH3_64bits_withSeed(key.data(), key.size(), seed_);
  }

  constexpr std::uint64_t seed() const noexcept { return seed_; }
  /// The seed's term in the hash of an integer key (XXH3_len_4to8_64b's `bitflip`), for code that
  /// hashes many integer keys at once (detail/vector_probes.hpp).
  constexpr std::uint64_t integer_bitflip() const noexcept { return bitflip_; }

 private:
  /// XXH3_len_4to8_64b's `bitflip` for this seed.
  static std::uint64_t bitflip_for(std::uint64_t seed) noexcept {
    seed ^= static_cast<std::uint64_t>(XXH_swap32(static_cast<xxh_u32>(seed))) << 32;
    return (XXH_readLE64(XXH3_kSecret + 8) ^ XXH_readLE64(XXH3_kSecret + 16)) - seed;
  }

  std::uint64_t seed_;
  std::uint64_t bitflip_;
};

/// A hasher usable by the filters: seeded at construction, hashing integers and byte strings.
template <class H>
concept Hasher = std::constructible_from<H, std::uint64_t> && requires(const H& h) {
  { h(std::uint64_t{}) } -> std::same_as<std::uint64_t>;
  { h(std::string_view{}) } -> std::same_as<std::uint64_t>;
};

/// The key types every filter accepts. Anything convertible to std::string_view (std::string,
/// string literals) is hashed as its bytes; unsigned and signed integers as 64-bit values.
template <class K>
concept Key = std::integral<K> || std::convertible_to<const K&, std::string_view> ||
    std::same_as<K, std::span<const std::byte>>;

/// Hashes any Key with hasher h; the single entry point used by all filters.
template <Hasher H, Key K>
inline std::uint64_t hash_key(const H& h, const K& key) noexcept {
  if constexpr (std::integral<K>) {
    return h(static_cast<std::uint64_t>(key));
  } else if constexpr (std::same_as<K, std::span<const std::byte>>) {
    return h(std::string_view(reinterpret_cast<const char*>(key.data()), key.size()));
  } else {
    return h(std::string_view(key));
  }
}

}  // namespace cuckoo
