// redis/src/filter_options.cpp — option parsing and checked filter construction.
#include "filter_options.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>

namespace cuckoo_redis {

using redis_api::api;

namespace {
std::size_t g_max_filter_bytes = 0;  // 0: not set, use the physical memory

long long parse_integer(RedisModuleString* value, const char* parse_error) {
  long long out = 0;
  if (api.StringToLongLong(value, &out) != redis_api::kOk) throw CommandError(parse_error);
  return out;
}
}  // namespace

std::string upper_case(RedisModuleString* argument) {
  std::size_t length = 0;
  const char* text = api.StringPtrLen(argument, &length);
  std::string out(text, length);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

long long parse_capacity(RedisModuleString* value) {
  const long long capacity = parse_integer(value, "Bad capacity");
  if (capacity <= 0) throw CommandError("Bad capacity");
  return capacity;
}

bool parse_shape_option(const std::string& name, RedisModuleString* value, FilterOptions& out) {
  if (name == "BUCKETSIZE") {
    out.bucket_size = parse_integer(value, "Couldn't parse BUCKETSIZE");
    if (out.bucket_size <= 0 || out.bucket_size > kMaxBucketSize) {
      throw CommandError("BUCKETSIZE parameter needs to be a positive integer");
    }
    // RedisBloom takes 1..255; the library's tables hold 2, 4 or 8 entries a bucket.
    if (out.bucket_size != 2 && out.bucket_size != 4 && out.bucket_size != 8) {
      throw CommandError("BUCKETSIZE must be 2, 4 or 8");
    }
  } else if (name == "MAXITERATIONS") {
    out.max_iterations = parse_integer(value, "Couldn't parse MAXITERATIONS");
    if (out.max_iterations <= 0 || out.max_iterations > kMaxIterations) {
      throw CommandError("MAXITERATIONS parameter needs to be a positive integer");
    }
  } else if (name == "EXPANSION") {
    out.expansion = parse_integer(value, "Couldn't parse EXPANSION");
    if (out.expansion < 0 || out.expansion > kMaxExpansion) {
      throw CommandError("EXPANSION parameter needs to be a non-negative integer");
    }
  } else if (name == "ERROR_RATE") {
    double rate = 0;
    if (api.StringToDouble(value, &rate) != redis_api::kOk) {
      throw CommandError("Couldn't parse ERROR_RATE");
    }
    if (!(rate > 0.0 && rate < 1.0)) throw CommandError("ERROR_RATE must be in (0, 1)");
    out.error_rate = rate;
  } else if (name == "FINGERPRINT_BITS") {
    out.fingerprint_bits = parse_integer(value, "Couldn't parse FINGERPRINT_BITS");
    if (out.fingerprint_bits < 2 || out.fingerprint_bits > 32) {
      throw CommandError("FINGERPRINT_BITS must be 2..32 (11..30 for a filter that expands)");
    }
  } else {
    return false;
  }
  return true;
}

cuckoo::Filter create_filter(const FilterOptions& options, std::size_t max_bytes) {
  if (options.capacity < options.bucket_size * 2) {
    throw CommandError("Capacity must be at least (BucketSize * 2)");
  }
  const bool growable = options.expansion > 0;
  if (growable && options.fingerprint_bits != 0 &&
      (options.fingerprint_bits < 11 || options.fingerprint_bits > 30)) {
    throw CommandError("FINGERPRINT_BITS must be 2..32 (11..30 for a filter that expands)");
  }
  if (static_cast<unsigned long long>(options.capacity) > std::numeric_limits<std::size_t>::max()) {
    throw CommandError(kInsufficientMemory);
  }
  cuckoo::Config config{.capacity = static_cast<std::size_t>(options.capacity),
                        .target_fpr = options.error_rate,
                        .fingerprint_bits = static_cast<unsigned>(options.fingerprint_bits),
                        .bucket_size = static_cast<unsigned>(options.bucket_size),
                        .max_kicks = static_cast<unsigned>(options.max_iterations),
                        .growable = growable};
  // A growable filter needs at least 11-bit fingerprints: a looser ERROR_RATE gets 11.
  if (growable && config.fingerprint_bits == 0) {
    cuckoo::Config fixed = config;
    fixed.growable = false;
    try {
      if (cuckoo::plan(fixed).fingerprint_bits < 11) config.fingerprint_bits = 11;
    } catch (const std::invalid_argument&) {
      // reported below by the same plan() call
    }
  }
  // Size the table before allocating it: every other option is valid by now, so a layout the
  // library refuses is one whose capacity needs more buckets than it addresses.
  cuckoo::Layout layout;
  try {
    cuckoo::Config fixed = config;
    fixed.growable = false;
    layout = cuckoo::plan(fixed);
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).find("capacity") != std::string::npos) {
      throw CommandError(kInsufficientMemory);
    }
    throw CommandError(std::string("ERR ") + e.what());
  }
  // A growable filter's slot holds two more bits than the fingerprint at first (its file format).
  const unsigned slot_bits = layout.fingerprint_bits + (growable ? 3 : 0);
  const long double table_bytes =
      static_cast<long double>(layout.bucket_count) * layout.bucket_size * slot_bits / 8.0L;
  if (table_bytes > static_cast<long double>(max_bytes)) throw CommandError(kInsufficientMemory);
  try {
    cuckoo::Filter filter(config);
    limit_growth(filter);
    return filter;
  } catch (const std::bad_alloc&) {
    throw CommandError(kInsufficientMemory);
  } catch (const std::invalid_argument& e) {
    throw CommandError(std::string("ERR ") + e.what());
  }
}

void limit_growth(cuckoo::Filter& filter) noexcept {
  const std::size_t limit = max_filter_bytes();
  filter.visit([&](auto& f) {
    if constexpr (requires { f.set_memory_limit(limit); }) f.set_memory_limit(limit);
  });
}

std::size_t physical_memory_bytes() noexcept {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return std::size_t{1} << 32;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_bytes);
}

std::size_t max_filter_bytes() noexcept {
  // Half the machine by default: a filter that takes all of it leaves the server (and the fork
  // that writes its RDB) nothing.
  return g_max_filter_bytes != 0 ? g_max_filter_bytes : physical_memory_bytes() / 2;
}

void set_max_filter_bytes(std::size_t bytes) noexcept {
  g_max_filter_bytes = bytes;
}

}  // namespace cuckoo_redis
