// python_baseline — the C++ side of the Python module's speed benchmark (bench_python.py).
//
// What it does. Builds a cuckoo::Filter from the Config the Python side builds its
// CuckooFilter(capacity, fingerprint_bits=f, bucket_size=b) from (same capacity, width, bucket
// size, default seed and max_kicks), reads the keys bench_python.py wrote with numpy's tofile (raw
// little-endian uint64: a fill file and a probe file), and times
//   insert:   filter.insert(std::span<const std::uint64_t>) of all the fill keys, into a fresh
//             filter each repetition (constructed, so its table is zeroed and faulted in, before
//             the clock starts: the Python side times add_many the same way);
//   contains: filter.contains(span, span<bool>) of all the probe keys, on the last filled filter.
// Every timing is taken --reps times (default 3); the JSON carries the best (what the Python
// script compares against) and the median. The answers are checked outside the timings: every
// repetition must insert the same number of keys, every fill key must be found (no false
// negatives), and the probe hits are counted, so that the script can check that the Python filter,
// built from the same keys in the same order, answers the probes identically.
//
// Output: one JSON line on stdout (fields below); errors go to stderr with exit status 1, bad
// arguments exit with 2.
//
// Run as: python_baseline --capacity N --fill fill.u64 --probes probes.u64 [--bits 12]
//         [--bucket-size 4] [--reps 3]
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"

#ifndef CUCKOO_BENCH_FLAGS
#define CUCKOO_BENCH_FLAGS "unknown"
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::size_t capacity = 0;
  unsigned bits = 12;
  unsigned bucket_size = 4;
  int reps = 3;
  std::string fill;
  std::string probes;
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Raw little-endian uint64 keys, as numpy's ndarray.tofile writes a '<u8' array.
std::optional<std::vector<std::uint64_t>> read_keys(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    std::fprintf(stderr, "python_baseline: cannot open %s\n", path.c_str());
    return std::nullopt;
  }
  const auto bytes = static_cast<std::size_t>(in.tellg());
  if (bytes % sizeof(std::uint64_t) != 0) {
    std::fprintf(stderr, "python_baseline: %s has %zu bytes, not a whole number of uint64\n",
                 path.c_str(), bytes);
    return std::nullopt;
  }
  std::vector<std::uint64_t> keys(bytes / sizeof(std::uint64_t));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(keys.data()), static_cast<std::streamsize>(bytes))) {
    std::fprintf(stderr, "python_baseline: cannot read %s\n", path.c_str());
    return std::nullopt;
  }
  if constexpr (std::endian::native == std::endian::big) {
    for (auto& k : keys) {
      std::uint64_t swapped = 0;
      for (int i = 0; i < 8; ++i) swapped = (swapped << 8) | ((k >> (8 * i)) & 0xFF);
      k = swapped;
    }
  }
  return keys;
}

double best(std::vector<double> v) {
  return *std::min_element(v.begin(), v.end());
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

int run(const Options& opt) {
  const auto fill = read_keys(opt.fill);
  const auto probes = read_keys(opt.probes);
  if (!fill || !probes) return 1;
  if (fill->empty() || probes->empty()) {
    std::fprintf(stderr, "python_baseline: the fill and probe files must not be empty\n");
    return 1;
  }
  cuckoo::Config cfg;  // default seed, max_kicks and target_fpr, as CuckooFilter's defaults
  cfg.capacity = opt.capacity;
  cfg.fingerprint_bits = opt.bits;
  cfg.bucket_size = opt.bucket_size;

  const std::span<const std::uint64_t> fill_keys(*fill), probe_keys(*probes);
  const double per_fill = 1e9 / static_cast<double>(fill_keys.size());
  const double per_probe = 1e9 / static_cast<double>(probe_keys.size());

  // ---- Batch insert into a fresh filter per repetition (only the insert is timed) ------------
  std::unique_ptr<cuckoo::Filter> filter;
  std::vector<double> insert_ns;
  std::size_t inserted = 0;
  for (int rep = 0; rep < opt.reps; ++rep) {
    filter.reset();  // free the previous table before building the next
    filter = std::make_unique<cuckoo::Filter>(cfg);
    const auto t0 = Clock::now();
    const std::size_t r = filter->insert(fill_keys);
    insert_ns.push_back(seconds_since(t0) * per_fill);
    if (rep > 0 && r != inserted) {
      std::fprintf(stderr, "python_baseline: repetition %d inserted %zu keys, the first %zu\n", rep,
                   r, inserted);
      return 1;
    }
    inserted = r;
  }

  // ---- Batch lookups of the probes on the last filter -------------------------------------
  std::vector<char> out_storage(probe_keys.size());
  const std::span<bool> out(reinterpret_cast<bool*>(out_storage.data()), probe_keys.size());
  std::vector<double> contains_ns;
  for (int rep = 0; rep < opt.reps; ++rep) {
    const auto t0 = Clock::now();
    filter->contains(probe_keys, out);
    contains_ns.push_back(seconds_since(t0) * per_probe);
  }
  const auto probe_hits = static_cast<std::size_t>(std::count(out.begin(), out.end(), true));

  // ---- Checks, untimed: every inserted key is found --------------------------------------
  std::vector<char> found_storage(inserted);
  const std::span<bool> found(reinterpret_cast<bool*>(found_storage.data()), inserted);
  filter->contains(fill_keys.first(inserted), found);
  const auto missing = static_cast<std::size_t>(std::count(found.begin(), found.end(), false));
  if (missing != 0) {
    std::fprintf(stderr, "python_baseline: %zu of %zu inserted keys not found\n", missing,
                 inserted);
    return 1;
  }

  std::printf(
      "{\"capacity\": %zu, \"fingerprint_bits\": %u, \"bucket_size\": %u, \"seed\": %llu,"
      " \"bucket_count\": %llu, \"memory_bytes\": %zu, \"fill_keys\": %zu, \"inserted\": %zu,"
      " \"size\": %zu, \"load_factor\": %.6f, \"probe_keys\": %zu, \"probe_hits\": %zu,"
      " \"all_fill_found\": true, \"reps\": %d, \"timing\": \"best\","
      " \"insert_ns_per_key\": %.4f, \"insert_ns_per_key_median\": %.4f,"
      " \"contains_ns_per_key\": %.4f, \"contains_ns_per_key_median\": %.4f, \"flags\": %s}\n",
      opt.capacity, filter->fingerprint_bits(), filter->bucket_size(),
      static_cast<unsigned long long>(filter->seed()),
      static_cast<unsigned long long>(filter->bucket_count()), filter->memory_bytes(),
      fill_keys.size(), inserted, filter->size(), filter->load_factor(), probe_keys.size(),
      probe_hits, opt.reps, best(insert_ns), median(insert_ns), best(contains_ns),
      median(contains_ns), json_string(CUCKOO_BENCH_FLAGS).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument(a);
      const std::string v = argv[++i];
      if (a == "--capacity") {
        opt.capacity = std::stoull(v);
      } else if (a == "--bits") {
        opt.bits = static_cast<unsigned>(std::stoul(v));
      } else if (a == "--bucket-size") {
        opt.bucket_size = static_cast<unsigned>(std::stoul(v));
      } else if (a == "--reps") {
        opt.reps = std::stoi(v);
      } else if (a == "--fill") {
        opt.fill = v;
      } else if (a == "--probes") {
        opt.probes = v;
      } else {
        throw std::invalid_argument(a);
      }
    }
    if (opt.capacity == 0 || opt.reps < 1 || opt.fill.empty() || opt.probes.empty()) {
      throw std::invalid_argument("missing");
    }
  } catch (const std::exception&) {
    std::fprintf(stderr,
                 "usage: python_baseline --capacity N --fill FILE --probes FILE [--bits 12]"
                 " [--bucket-size 4] [--reps 3]\n");
    return 2;
  }
  try {
    return run(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "python_baseline: %s\n", e.what());
    return 1;
  }
}
