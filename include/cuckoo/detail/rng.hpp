// cuckoo/detail/rng.hpp — the filter's own PRNG for kick walks.
//
// SplitMix64: one add and three multiply-xorshift steps, a full period of 2^64, and a state that
// is a single integer derived from the filter's seed. Deterministic by design: the same seed and
// the same operations give the same table, which tests and saved filters rely on.
#pragma once

#include <cstdint>

namespace cuckoo::detail {

class SplitMix64 {
 public:
  constexpr explicit SplitMix64(std::uint64_t seed) noexcept : state_(seed) {}
  constexpr std::uint64_t operator()() noexcept {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  constexpr std::uint64_t state() const noexcept { return state_; }

 private:
  std::uint64_t state_;
};

}  // namespace cuckoo::detail
