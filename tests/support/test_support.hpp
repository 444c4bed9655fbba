// Shared helpers for the test suites: deterministic key streams and an exact multiset model.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuckoo/detail/rng.hpp"

namespace cuckoo::test {

/// Distinct-with-overwhelming-probability 64-bit keys from a fixed seed.
inline std::vector<std::uint64_t> random_keys(std::size_t n, std::uint64_t seed) {
  detail::SplitMix64 rng(seed);
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys) k = rng();
  return keys;
}

/// A copy of what `x.bytes()` returns (a table's, or a blocked filter's, bytes), to compare two
/// states byte for byte.
template <class HasBytes>
std::vector<std::byte> bytes_of(const HasBytes& x) {
  const auto bytes = x.bytes();
  return {bytes.begin(), bytes.end()};
}

/// A copy of a filter's table: of a BasicFilter or growable filter through `table()`, or of the
/// table a cuckoo::Filter holds, through its `visit`.
template <class AnyFilter>
std::vector<std::byte> table_bytes(const AnyFilter& filter) {
  if constexpr (requires { filter.table(); }) {
    return bytes_of(filter.table());
  } else {
    return filter.visit([](const auto& held) { return bytes_of(held.table()); });
  }
}

/// The exact set the filter is meant to approximate: key → copies held.
class MultisetModel {
 public:
  void add(std::uint64_t key) { ++copies_[key]; }
  void remove(std::uint64_t key) {
    auto it = copies_.find(key);
    if (--it->second == 0) copies_.erase(it);
  }
  std::size_t copies(std::uint64_t key) const {
    auto it = copies_.find(key);
    return it == copies_.end() ? 0 : it->second;
  }
  std::size_t total() const {
    std::size_t n = 0;
    for (const auto& [key, c] : copies_) n += c;
    return n;
  }
  const std::unordered_map<std::uint64_t, std::size_t>& items() const { return copies_; }

 private:
  std::unordered_map<std::uint64_t, std::size_t> copies_;
};

/// Three rounds of: fill past the point where inserts fail (fresh keys, one in eight a copy of a
/// held key), then erase two thirds of the held copies; after each half, every held key must be
/// found with at least its copies counted, and size() must equal the model's total. `rng_seed`
/// drives the key stream; `label` names the configuration in failure messages.
template <class Filter>
void fill_and_drain_against_model(Filter& filter, std::size_t capacity, std::uint64_t rng_seed,
                                  const std::string& label) {
  MultisetModel model;
  std::vector<std::uint64_t> held;  // one entry per copy, for picking erase victims
  detail::SplitMix64 rng(rng_seed);
  auto verify = [&] {
    ASSERT_EQ(filter.size(), model.total()) << label;
    for (const auto& [key, copies] : model.items()) {
      ASSERT_TRUE(filter.contains(key)) << "false negative, " << label;
      ASSERT_GE(filter.count(key), copies) << label;
    }
  };
  for (int phase = 0; phase < 3; ++phase) {
    for (std::size_t i = 0; i < capacity * 13 / 10; ++i) {
      const std::uint64_t key =
          (!held.empty() && rng() % 8 == 0) ? held[rng() % held.size()] : rng();
      if (filter.insert(key)) {
        model.add(key);
        held.push_back(key);
      }
    }
    verify();
    for (std::size_t i = 0; i < held.size() * 2 / 3; ++i) {
      const std::size_t at = rng() % held.size();
      const std::uint64_t key = held[at];
      ASSERT_TRUE(filter.erase(key)) << "erase of a held key failed, " << label;
      model.remove(key);
      held[at] = held.back();
      held.pop_back();
    }
    verify();
  }
}

/// Upper edge of a binomial proportion: p + z·sqrt(p(1−p)/n) + 1/n (z = 5: a fixed-seed test
/// that fails this is a real excess, not bad luck, at about 1 in 3.5 million).
inline double binomial_upper(double p, double trials, double z = 5.0) {
  return p + z * std::sqrt(p * (1.0 - p) / trials) + 1.0 / trials;
}

/// Lower edge of the same interval: a measured rate below it is too good to be true (a probe
/// that skips work, a formula that overstates).
inline double binomial_lower(double p, double trials, double z = 5.0) {
  return p - z * std::sqrt(p * (1.0 - p) / trials) - 1.0 / trials;
}

}  // namespace cuckoo::test
