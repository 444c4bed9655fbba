// bench/support/timing.hpp — what every plain-main benchmark here needs: a best-of-N wall-clock
// timer and a reproducible stream of random 64-bit keys.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "cuckoo/detail/rng.hpp"

namespace cuckoo::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Best of `reps` timings of fn(), in seconds: the run least disturbed by the rest of the machine.
inline double best_of(int reps, const std::function<void()>& fn) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    fn();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

/// Best of `reps` timings of each body, in seconds, the bodies taken in turn (all of them once,
/// then all again, ...), so that every body meets the machine's slow and fast phases alike and
/// their ratios compare runs made minutes apart at most one round apart, not one side's runs
/// against the other's made later.
inline std::vector<double> best_of_each(int reps,
                                        const std::vector<std::function<void()>>& bodies) {
  std::vector<double> best(bodies.size(), 1e300);
  for (int r = 0; r < reps; ++r) {
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      const auto t0 = Clock::now();
      bodies[b]();
      best[b] = std::min(best[b], seconds_since(t0));
    }
  }
  return best;
}

/// n keys from SplitMix64(seed): distinct with overwhelming probability, the same on every run.
inline std::vector<std::uint64_t> keys_from(std::uint64_t seed, std::size_t n) {
  cuckoo::detail::SplitMix64 rng(seed);
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys) k = rng();
  return keys;
}

/// 2·pairs lookups: alternately one of `stored` (picked at random, so in an order unrelated to
/// the inserts) and a fresh key from keys_from(2, pairs).
inline std::vector<std::uint64_t> half_stored(const std::vector<std::uint64_t>& stored,
                                              std::size_t pairs) {
  std::vector<std::uint64_t> queries;
  queries.reserve(2 * pairs);
  cuckoo::detail::SplitMix64 pick(7);
  for (const std::uint64_t absent : keys_from(2, pairs)) {
    queries.push_back(stored[pick() % stored.size()]);
    queries.push_back(absent);
  }
  return queries;
}

}  // namespace cuckoo::bench
