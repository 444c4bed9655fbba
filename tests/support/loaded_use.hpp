// tests/support/loaded_use.hpp — what a filter or map that loaded from untrusted bytes must still
// do: keep every key it accepts. Shared by the loader's fuzz target (tests/fuzz/fuzz_load.cpp),
// which aborts on a loss, and the replay of its kept inputs
// (tests/unit/test_io_fuzz_regressions.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"

namespace cuckoo::test {

/// Keys that the fuzzer's inputs never name: inserted into every filter and map that loads.
inline constexpr std::uint64_t kFirstUseKey = 0x5EED000000000000ull;
inline constexpr std::uint64_t kUseKeys = 24;

/// Inserts kUseKeys new keys, checks that each one accepted is found, erases every other one and
/// checks the rest again, then in a filter loaded from its own bytes. A state that a loader's
/// checks let through but the filter cannot work from shows as a lost key (returned as a message;
/// empty when nothing was lost) or a crash.
inline std::string lost_after_use(cuckoo::Filter& filter) {
  std::vector<std::uint64_t> accepted;
  for (std::uint64_t key = kFirstUseKey; key < kFirstUseKey + kUseKeys; ++key) {
    if (filter.insert(key)) accepted.push_back(key);
  }
  for (const std::uint64_t key : accepted) {
    if (!filter.contains(key)) return "the filter lost key " + std::to_string(key);
  }
  for (std::size_t i = 0; i < accepted.size(); i += 2) (void)filter.erase(accepted[i]);
  for (std::size_t i = 1; i < accepted.size(); i += 2) {
    if (!filter.contains(accepted[i])) {
      return "the filter lost key " + std::to_string(accepted[i]) + " to erases of others";
    }
  }
  try {
    const cuckoo::Filter again = cuckoo::Filter::deserialize(filter.serialize());
    for (std::size_t i = 1; i < accepted.size(); i += 2) {
      if (!again.contains(accepted[i])) {
        return "the filter's own bytes lost key " + std::to_string(accepted[i]);
      }
    }
  } catch (const cuckoo::format_error& e) {
    return std::string("the filter's own bytes were refused: ") + e.what();
  }
  return {};
}

/// The same for a map: find(key) must include the value stored with it.
inline std::string lost_after_use(cuckoo::ApproximateMap<std::uint32_t>& map) {
  const auto value_of = [](std::uint64_t key) { return static_cast<std::uint32_t>(key * 7 + 1); };
  const auto holds = [&](const cuckoo::ApproximateMap<std::uint32_t>& in, std::uint64_t key) {
    const std::vector<std::uint32_t> values = in.find(key);
    return std::find(values.begin(), values.end(), value_of(key)) != values.end();
  };
  std::vector<std::uint64_t> accepted;
  for (std::uint64_t key = kFirstUseKey; key < kFirstUseKey + kUseKeys; ++key) {
    if (map.insert(key, value_of(key))) accepted.push_back(key);
  }
  for (const std::uint64_t key : accepted) {
    if (!holds(map, key)) return "the map lost key " + std::to_string(key);
  }
  for (std::size_t i = 0; i < accepted.size(); i += 2) {
    (void)map.erase(accepted[i], value_of(accepted[i]));
  }
  for (std::size_t i = 1; i < accepted.size(); i += 2) {
    if (!holds(map, accepted[i])) {
      return "the map lost key " + std::to_string(accepted[i]) + " to erases of others";
    }
  }
  try {
    const auto again = cuckoo::ApproximateMap<std::uint32_t>::deserialize(map.serialize());
    for (std::size_t i = 1; i < accepted.size(); i += 2) {
      if (!holds(again, accepted[i])) {
        return "the map's own bytes lost key " + std::to_string(accepted[i]);
      }
    }
  } catch (const cuckoo::format_error& e) {
    return std::string("the map's own bytes were refused: ") + e.what();
  }
  return {};
}

}  // namespace cuckoo::test
