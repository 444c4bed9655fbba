// bench/evaluation/space_experiments.cpp — the cuckoo-only experiments of §4 and §5: how full a
// table gets (Table 2 / Fig. 2), what a bit of space buys in false positives (Fig. 3), and the
// analytic space curves with measured points on them (Fig. 4). Speed is not measured here.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "common.hpp"
#include "cuckoo/cuckoo.hpp"
#include "experiments.hpp"

namespace bench {
namespace {

constexpr unsigned kMaxKicks = 500;  // the paper's "full" condition (§4)

/// MemAvailable from /proc/meminfo in bytes, or 0 when unknown.
std::size_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

/// A table of exactly m buckets, or nothing when this build has no table for the layout (the
/// semi-sorted one, before it exists).
std::optional<cuckoo::Filter> make_table(std::uint64_t buckets, unsigned bits, unsigned b,
                                         bool semi_sort, std::uint64_t seed) {
  try {
    return cuckoo::Filter(cuckoo::Layout{buckets, bits, b, semi_sort}, buckets * b, kMaxKicks,
                          seed);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

/// Inserts fresh random keys until the first insert fails (no displacement path found); returns
/// the items held.
std::size_t fill_until_failure(cuckoo::Filter& filter, std::uint64_t key_seed) {
  return filter.visit([&](auto& f) {
    cuckoo::detail::SplitMix64 rng(key_seed);
    while (f.insert(rng())) {
    }
    return f.size();
  });
}

/// Fraction of `queries` never-inserted keys the filter claims to hold.
double measure_fpr(const cuckoo::Filter& filter, std::size_t queries, std::uint64_t seed) {
  return filter.visit([&](const auto& f) {
    cuckoo::detail::SplitMix64 rng(seed);
    std::size_t hits = 0;
    for (std::size_t i = 0; i < queries; ++i) hits += f.contains(rng()) ? 1 : 0;
    return static_cast<double>(hits) / static_cast<double>(queries);
  });
}

/// Enough negative queries to see about 300 false positives, within the scale's cap.
std::size_t queries_for(double expected_fpr, std::size_t cap) {
  const double want = 300.0 / std::max(expected_fpr, 1e-12);
  return static_cast<std::size_t>(std::clamp(want, 200'000.0, static_cast<double>(cap)));
}

struct FilledPoint {
  double load, bits_per_item, fpr;
};

/// Fills a table of about 2^log2_slots slots to its first failure and measures it.
std::optional<FilledPoint> fill_and_measure(unsigned b, unsigned f, bool semi_sort,
                                            unsigned log2_slots, unsigned run, std::size_t cap) {
  const std::uint64_t buckets = (std::uint64_t{1} << log2_slots) / b;
  auto filter = make_table(buckets, f, b, semi_sort, cuckoo::defaults::kSeed + run);
  if (!filter) return std::nullopt;
  const std::size_t n = fill_until_failure(*filter, positive_seed(run));
  FilledPoint p;
  p.load = filter->load_factor();
  p.bits_per_item = 8.0 * static_cast<double>(filter->memory_bytes()) / static_cast<double>(n);
  const double expected = 2.0 * b * p.load / std::ldexp(1.0, static_cast<int>(f));
  p.fpr = measure_fpr(*filter, queries_for(expected, cap), negative_seed(run));
  return p;
}

}  // namespace

// load.csv: b, log2_m, f, runs, mean, variance, min, max — the load factor at the first failed
// insert, over `runs` independent tables (different keys and kick seeds).
void run_load(const Options& opt) {
  const auto start = Clock::now();
  const Scale& s = opt.scale;
  Csv csv(opt.out_dir / "load.csv", {"b", "log2_m", "f", "runs", "mean", "variance", "min", "max"});
  auto widths = [&](std::size_t i) {
    std::vector<unsigned> out;
    for (unsigned f = 2; f <= 20; ++f) {
      if (i < s.load_sparse_from || f <= 8 || f == 10 || f == 12 || f == 16 || f == 20) {
        out.push_back(f);
      }
    }
    return out;
  };
  std::size_t total = 0;
  for (std::size_t i = 0; i < s.load_log2_buckets.size(); ++i) {
    total += 2 * widths(i).size() * s.load_runs[i];
  }
  Progress progress("load", total);
  const std::size_t memory = available_memory();
  for (std::size_t i = 0; i < s.load_log2_buckets.size(); ++i) {
    const unsigned log2_m = s.load_log2_buckets[i];
    for (unsigned b : {4u, 8u}) {
      for (unsigned f : widths(i)) {
        const std::uint64_t m = std::uint64_t{1} << log2_m;
        // 2^30 buckets only when the table (and the rest of the process) fits in memory.
        const double bytes = static_cast<double>(m) * b * f / 8;
        if (memory != 0 && bytes > 0.7 * static_cast<double>(memory)) {
          for (unsigned r = 0; r < s.load_runs[i]; ++r) progress.step("skipped (memory)");
          continue;
        }
        std::vector<double> loads;
        for (unsigned r = 0; r < s.load_runs[i]; ++r) {
          auto filter = make_table(m, f, b, false, cuckoo::defaults::kSeed + r);
          fill_until_failure(*filter, positive_seed(r) ^ (std::uint64_t{f} << 40 | b));
          loads.push_back(filter->load_factor());
          progress.step(fmt::format("m=2^{} b={} f={}", log2_m, b, f));
        }
        const Summary sum = summarize(loads);
        csv.row({num(b), num(log2_m), num(f), num(s.load_runs[i]), num(sum.mean), num(sum.variance),
                 num(sum.min), num(sum.max)});
      }
    }
  }
  record_meta(opt.out_dir, "seconds_load", num(seconds_since(start)));
}

// fpr.csv: b, f, runs, load, bits_per_item, fpr_median, fpr_min, fpr_max — tables of 2^k slots
// filled to their first failure; bits per item is table bits over items held (paper Eq. 4).
void run_fpr(const Options& opt) {
  const auto start = Clock::now();
  const Scale& s = opt.scale;
  Csv csv(opt.out_dir / "fpr.csv",
          {"b", "f", "runs", "load", "bits_per_item", "fpr_median", "fpr_min", "fpr_max"});
  // From the width where 2b/2^f is about 5% (the paper's plot starts near 1%) up to 20 bits.
  auto first_bits = [](unsigned b) {
    return static_cast<unsigned>(std::ceil(std::log2(2.0 * b / 0.05)));
  };
  std::size_t total = 0;
  for (unsigned b : {2u, 4u, 8u}) total += (21 - first_bits(b)) * s.fpr_runs;
  Progress progress("fpr", total);
  for (unsigned b : {2u, 4u, 8u}) {
    for (unsigned f = first_bits(b); f <= 20; ++f) {
      std::vector<double> loads, bits, fprs;
      for (unsigned r = 0; r < s.fpr_runs; ++r) {
        const auto p = fill_and_measure(b, f, false, s.fpr_log2_slots, r, s.fpr_max_queries);
        loads.push_back(p->load);
        bits.push_back(p->bits_per_item);
        fprs.push_back(p->fpr);
        progress.step(fmt::format("b={} f={}", b, f));
      }
      const Summary fs = summarize(fprs);
      csv.row({num(b), num(f), num(s.fpr_runs), num(summarize(loads).median),
               num(summarize(bits).median), num(fs.median), num(fs.min), num(fs.max)});
    }
  }
  record_meta(opt.out_dir, "seconds_fpr", num(seconds_since(start)));
}

// space.csv: series, target_epsilon, epsilon, bits_per_item. Series "bloom", "cuckoo",
// "semisort", "lower_bound" are the paper's Table 2 formulas (ε = target); "cuckoo_measured" and
// "semisort_measured" are filled tables with the width each target asks for (ε = measured FPR).
void run_space(const Options& opt) {
  const auto start = Clock::now();
  const Scale& s = opt.scale;
  Csv csv(opt.out_dir / "space.csv", {"series", "target_epsilon", "epsilon", "bits_per_item"});
  const std::vector<double> targets = {0.1, 0.03, 0.01, 0.003, 0.001, 1e-4, 1e-5};
  Progress progress("space", 2 * targets.size() * s.fpr_runs);

  // The measured points, and the b = 4 load the curves divide by (the paper's α is also measured).
  std::vector<double> loads;
  for (bool semi : {false, true}) {
    for (double eps : targets) {
      // CF: f = log2(2b/ε) = log2(1/ε) + 3. ss-CF stores one bit less per entry for the same f.
      const auto f = static_cast<unsigned>(std::ceil(std::log2(8.0 / eps) - 1e-9));
      std::vector<double> bits, fprs;
      for (unsigned r = 0; r < s.fpr_runs; ++r) {
        const auto p = fill_and_measure(4, f, semi, s.fpr_log2_slots, r, s.fpr_max_queries);
        progress.step(fmt::format("{} eps={}", semi ? "ss-CF" : "CF", eps));
        if (!p) continue;  // no semi-sorted table in this build
        bits.push_back(p->bits_per_item);
        fprs.push_back(p->fpr);
        if (!semi) loads.push_back(p->load);
      }
      if (bits.empty()) continue;
      csv.row({semi ? "semisort_measured" : "cuckoo_measured", num(eps),
               num(summarize(fprs).median), num(summarize(bits).median)});
    }
  }
  const double alpha = summarize(loads).median;
  record_meta(opt.out_dir, "space_alpha", num(alpha));
  for (int i = 0; i <= 40; ++i) {
    const double eps = std::pow(10.0, -5.0 + i * 0.1);  // 0.001% .. 10%, as in Fig. 4
    const double l = std::log2(1.0 / eps);
    csv.row({"bloom", num(eps), num(eps), num(1.44 * l)});
    csv.row({"cuckoo", num(eps), num(eps), num((l + 3) / alpha)});
    csv.row({"semisort", num(eps), num(eps), num((l + 2) / alpha)});
    csv.row({"lower_bound", num(eps), num(eps), num(l)});
  }
  record_meta(opt.out_dir, "seconds_space", num(seconds_since(start)));
}

}  // namespace bench
