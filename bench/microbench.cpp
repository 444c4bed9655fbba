// cuckoo_microbench — single-key insert / contains / erase cost and memory of a few cuckoo filter
// configurations at 10^7 items (issue 2's figures). Keys are pre-generated; hashing is inside the
// timed loops. Each figure is the median of --runs runs, each on a freshly built filter.
//
//   cuckoo_microbench [--items N] [--runs R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "cuckoo/detail/rng.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ns_per(Clock::duration elapsed, std::size_t operations) {
  return std::chrono::duration<double, std::nano>(elapsed).count() /
         static_cast<double>(operations);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::vector<std::uint64_t> keys_from(std::uint64_t seed, std::size_t n) {
  cuckoo::detail::SplitMix64 rng(seed);
  std::vector<std::uint64_t> keys(n);
  for (auto& key : keys) key = rng();
  return keys;
}

struct Row {
  std::string name;
  double insert_ns, positive_ns, negative_ns, erase_ns, bits_per_item, load;
};

// Fills a filter of capacity n to `fill` of its slots (the paper's "95% full"), then times
// lookups of held and of absent keys, then erases everything.
Row measure(const std::string& name, cuckoo::Config cfg, std::size_t items, double fill, int runs) {
  std::vector<double> ins, pos, neg, del;
  Row row{name, 0, 0, 0, 0, 0, 0};
  for (int run = 0; run < runs; ++run) {
    cuckoo::Filter filter{cfg};
    const auto target = static_cast<std::size_t>(fill * static_cast<double>(filter.slot_count()));
    const auto keys = keys_from(1000 + static_cast<std::uint64_t>(run), std::max(items, target));
    const auto absent = keys_from(9000 + static_cast<std::uint64_t>(run), target);
    std::size_t held = 0;
    volatile std::size_t sink = 0;
    filter.visit([&](auto& f) {
      auto start = Clock::now();
      for (std::size_t i = 0; i < target; ++i) held += f.insert(keys[i]);
      ins.push_back(ns_per(Clock::now() - start, target));
      std::size_t hits = 0;
      start = Clock::now();
      for (std::size_t i = 0; i < held; ++i) hits += f.contains(keys[i]);
      pos.push_back(ns_per(Clock::now() - start, held));
      start = Clock::now();
      for (std::size_t i = 0; i < held; ++i) hits += f.contains(absent[i]);
      neg.push_back(ns_per(Clock::now() - start, held));
      sink = hits;
      row.bits_per_item = static_cast<double>(f.memory_bytes()) * 8.0 / static_cast<double>(held);
      row.load = f.load_factor();
      start = Clock::now();
      for (std::size_t i = 0; i < held; ++i) hits += f.erase(keys[i]);
      del.push_back(ns_per(Clock::now() - start, held));
      sink = hits;
    });
    (void)sink;
  }
  row.insert_ns = median(ins);
  row.positive_ns = median(pos);
  row.negative_ns = median(neg);
  row.erase_ns = median(del);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t items = 10'000'000;
  int runs = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--items") == 0) items = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::atoi(argv[i + 1]);
  }
  std::printf(
      "cuckoo_microbench: %zu items, median of %d runs, filled to 95%% of slots "
      "(b = 2: 84%%)\n\n",
      items, runs);
  std::printf(
      "| config | insert ns/key (fill) | contains+ ns | contains- ns | erase ns | bits/item | load "
      "|\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  struct Case {
    const char* name;
    cuckoo::Config cfg;
    double fill;
  };
  const Case cases[] = {
      {"b=4 f=12 (fixed-width table)", {.capacity = items, .fingerprint_bits = 12}, 0.95},
      {"b=4 f=13 (run-time width)", {.capacity = items, .fingerprint_bits = 13}, 0.95},
      {"b=4 f=16 (fixed-width table)", {.capacity = items, .fingerprint_bits = 16}, 0.95},
      {"b=2 f=12", {.capacity = items, .fingerprint_bits = 12, .bucket_size = 2}, 0.84},
      {"b=8 f=16", {.capacity = items, .fingerprint_bits = 16, .bucket_size = 8}, 0.95},
  };
  for (const Case& c : cases) {
    const Row r = measure(c.name, c.cfg, items, c.fill, runs);
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.3f |\n", r.name.c_str(), r.insert_ns,
                r.positive_ns, r.negative_ns, r.erase_ns, r.bits_per_item, r.load);
    std::fflush(stdout);
  }
  return 0;
}
