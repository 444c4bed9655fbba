// The keys behind the committed golden filter files (tests/data/golden_v*.cf), shared by their
// generator (make_golden.cpp) and the test that checks them (tests/unit/test_io_golden.cpp).
// Defined by plain formulas, not by the library's PRNG, so nothing the library may change later
// can change them.
#pragma once

#include <cstdint>
#include <string>

namespace cuckoo::golden {

inline constexpr std::size_t kCapacity = 2'000;
/// Where the growable golden files start: their 1,900 keys take them through several doublings.
inline constexpr std::size_t kGrowableCapacity = 100;

struct GoldenFile {
  const char* name;
  unsigned bucket_size;
  unsigned fingerprint_bits;  // f; the base width f for a growable file
  bool growable = false;
  /// Growable files: the width schedule they were saved with (0 ceiling, 1 bare first;
  /// growth::Schedule).
  unsigned schedule = 0;
};
inline constexpr GoldenFile kFiles[] = {
    {"golden_v1_b4_f12.cf", 4, 12},             // a fixed-width table of the facade
    {"golden_v1_b2_f7.cf", 2, 7},               // run-time width
    {"golden_v1_b8_f16.cf", 8, 16},             // run-time width, wide buckets
    {"golden_v2_grow_b4_f13.cf", 4, 13, true},  // format version 2: a grown filter
    {"golden_v2_grow_b2_f11.cf", 2, 11, true},
    // Format version 2 with the bare-first schedule (growth::Schedule::kBareFirst, 2026-12-04).
    {"golden_v2_barefirst_b4_f13.cf", 4, 13, true, 1},
    {"golden_v2_barefirst_b2_f11.cf", 2, 11, true, 1},
};
inline constexpr std::uint64_t kSeed = 0x676F6C64656E3031ull;  // "golden01"

/// Integer keys: i = 0..kInsertedIntegers-1 are inserted; probes use 0..kProbedIntegers-1.
inline constexpr std::uint64_t kInsertedIntegers = 1'500, kProbedIntegers = 50'000;
inline constexpr std::uint64_t integer_key(std::uint64_t i) {
  return i * 0x9E3779B97F4A7C15ull + 7;
}

/// Text keys: likewise, "golden-<i>".
inline constexpr std::uint64_t kInsertedStrings = 400, kProbedStrings = 2'000;
inline std::string string_key(std::uint64_t i) {
  return "golden-" + std::to_string(i);
}

/// Approximate maps (format version 3): the same keys, each stored with golden_value(i) (integer
/// key i) or golden_value(i + 1'000'000) (text key i).
struct GoldenMapFile {
  const char* name;
  unsigned bucket_size;
  unsigned fingerprint_bits;
};
inline constexpr GoldenMapFile kMapFiles[] = {
    {"golden_v3_map_b4_f12_u32.cf", 4, 12},  // 32-bit values, a fixed-width table
    {"golden_v3_map_b2_f9_u32.cf", 2, 9},    // run-time width
};
inline constexpr std::uint32_t golden_value(std::uint64_t i) {
  return static_cast<std::uint32_t>(i * 2'654'435'761u + 1);
}

}  // namespace cuckoo::golden
