// redis/src/filter_options.hpp — CF.RESERVE / CF.INSERT options, their checks and the filter they
// describe.
//
// Defaults: RedisBloom's bucket size 2 and EXPANSION 1 (a filter that grows); a false-positive
// target of 0.1% (RedisBloom's 8-bit fingerprints give about 1.5% at b = 2), which at b = 2 is a
// 12-bit fingerprint; and the library's 500 kicks rather than RedisBloom's 20, because the
// library sizes a table for the load a 500-kick walk reaches: with 20 a filter would refuse (or
// grow) before holding its capacity.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

#include "cuckoo/cuckoo.hpp"
#include "module_api.hpp"

namespace cuckoo_redis {

/// A reply error the client sees verbatim (RedisBloom's texts where it has one).
class CommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr long long kDefaultCapacity = 1024;  // CF.ADD / CF.ADDNX / CF.INSERT creating
inline constexpr long long kDefaultBucketSize = 2;
inline constexpr long long kDefaultMaxIterations = 500;
inline constexpr long long kDefaultExpansion = 1;
inline constexpr double kDefaultErrorRate = 0.001;
// RedisBloom's ranges, so that what it accepts is either accepted or refused with a clear text.
inline constexpr long long kMaxBucketSize = 255;
inline constexpr long long kMaxIterations = 65535;
inline constexpr long long kMaxExpansion = 32768;

inline constexpr const char* kInsufficientMemory = "Insufficient memory to create filter";

struct FilterOptions {
  long long capacity = kDefaultCapacity;
  long long bucket_size = kDefaultBucketSize;
  long long max_iterations = kDefaultMaxIterations;
  long long expansion = kDefaultExpansion;
  double error_rate = kDefaultErrorRate;
  long long fingerprint_bits = 0;  // 0: derived from error_rate
};

/// Reads `value` into `out` as the value of option `name` (BUCKETSIZE, MAXITERATIONS, EXPANSION,
/// ERROR_RATE, FINGERPRINT_BITS; upper case); false when `name` is none of them. Throws
/// CommandError with RedisBloom's text for a value it would refuse.
bool parse_shape_option(const std::string& name, RedisModuleString* value, FilterOptions& out);

/// Parses CAPACITY's value; throws CommandError("Bad capacity").
long long parse_capacity(RedisModuleString* value);

/// Checks the options together and builds the filter, refusing with "Insufficient memory to
/// create filter" one whose table would take more than `max_bytes`. Throws CommandError.
cuckoo::Filter create_filter(const FilterOptions& options, std::size_t max_bytes);

/// Holds a growable filter's doublings to max_filter_bytes(): a doubling past it is refused like
/// any insert that finds no room ("Filter is full"), leaving the filter as it was. Called on every
/// filter the module creates or loads. No effect on a fixed filter.
void limit_growth(cuckoo::Filter& filter) noexcept;

/// The largest filter this server builds (module argument MAX_FILTER_BYTES; by default half the
/// machine's physical memory).
std::size_t max_filter_bytes() noexcept;
void set_max_filter_bytes(std::size_t bytes) noexcept;
std::size_t physical_memory_bytes() noexcept;

/// Upper-case copy of an argument, for keyword comparison.
std::string upper_case(RedisModuleString* argument);

}  // namespace cuckoo_redis
