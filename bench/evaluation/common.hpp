// bench/evaluation/common.hpp — what every experiment of cuckoo-bench shares: the scale presets,
// pre-generated keys, timing, statistics over runs, progress lines and CSV output.
#pragma once

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cuckoo/detail/rng.hpp"

namespace bench {

// ---- Scales -------------------------------------------------------------------------------------

/// Every size and repetition count an experiment uses, so that one flag moves all of them.
struct Scale {
  std::string name;
  // load (Table 2 / Fig. 2): log2 of the bucket counts, and the runs at each.
  std::vector<unsigned> load_log2_buckets;
  std::vector<unsigned> load_runs;
  // From this entry of load_log2_buckets on, only f = 2..8, 10, 12, 16, 20: the plateau beyond
  // f ≈ 8 is flat, and the large tables are where the time goes.
  std::size_t load_sparse_from;
  // fpr (Fig. 3) and space (Fig. 4): slots per table, runs, and the most queries per point.
  unsigned fpr_log2_slots;
  unsigned fpr_runs;
  std::size_t fpr_max_queries;
  // table3 and the throughput figures: bytes per filter, runs, queries per measured point.
  std::size_t filter_bytes;
  unsigned throughput_runs;
  std::size_t lookup_queries;
  std::size_t fpr_queries;
  double point_seconds;  // a lookup point stops after this long, even short of lookup_queries
  // growth (issue 14): the key count a growable filter started at 1000 items grows to.
  std::size_t growth_final_keys;
};

inline Scale scale_named(const std::string& name) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  if (name == "tiny") {
    return {.name = "tiny",
            .load_log2_buckets = {10, 12},
            .load_runs = {3, 2},
            .load_sparse_from = 2,
            .fpr_log2_slots = 12,
            .fpr_runs = 2,
            .fpr_max_queries = 200'000,
            .filter_bytes = kMiB,
            .throughput_runs = 2,
            .lookup_queries = 20'000,
            .fpr_queries = 100'000,
            .point_seconds = 0.01,
            .growth_final_keys = 100'000};
  }
  // Default: what fits in about five minutes on two cores. m = 2^25 (128M slots per fill) would
  // take minutes per point, so the load experiment stops at 2^20 with one run and fewer widths
  // there; throughput
  // filters are 64 MiB (well above the caches), three runs each.
  if (name == "default") {
    return {.name = "default",
            .load_log2_buckets = {15, 20},
            .load_runs = {10, 1},
            .load_sparse_from = 1,
            .fpr_log2_slots = 20,
            .fpr_runs = 3,
            .fpr_max_queries = 4'000'000,
            .filter_bytes = 64 * kMiB,
            .throughput_runs = 3,
            .lookup_queries = 1'000'000,
            .fpr_queries = 4'000'000,
            .point_seconds = 0.1,
            .growth_final_keys = 10'000'000};
  }
  // The paper: 192 MB filters (m = 2^25 buckets of four 12-bit entries), 10 runs everywhere,
  // load tables up to 2^30 buckets where memory allows.
  if (name == "paper") {
    return {.name = "paper",
            .load_log2_buckets = {15, 20, 25, 30},
            .load_runs = {10, 10, 10, 10},
            .load_sparse_from = 4,
            .fpr_log2_slots = 22,
            .fpr_runs = 10,
            .fpr_max_queries = 50'000'000,
            .filter_bytes = 192 * kMiB,
            .throughput_runs = 10,
            .lookup_queries = 10'000'000,
            .fpr_queries = 20'000'000,
            .point_seconds = 1.0,
            .growth_final_keys = 100'000'000};
  }
  throw std::invalid_argument("unknown scale '" + name + "' (tiny, default, paper)");
}

// ---- Keys ---------------------------------------------------------------------------------------

/// n random 64-bit keys from a fixed seed: runs differ by seed, reruns repeat exactly.
inline std::vector<std::uint64_t> make_keys(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint64_t> keys(n);
  cuckoo::detail::SplitMix64 rng(seed);
  for (auto& k : keys) k = rng();
  return keys;
}

// Positive (inserted) and negative (never inserted) keys come from different streams; a collision
// between them has probability ~n²/2^64 and is ignored, as in the paper.
inline std::uint64_t positive_seed(unsigned run) {
  return 0x9E3779B97F4A7C15ull * (2 * run + 1);
}
inline std::uint64_t negative_seed(unsigned run) {
  return 0xD1B54A32D192ED03ull * (2 * run + 2);
}

// ---- Timing -------------------------------------------------------------------------------------

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// CPU time consumed by this thread, in seconds. The timed regions use it rather than the wall
/// clock: on an idle machine the two agree (a thread stalled on memory is still running), and on
/// a shared one — two cores, several builds and benchmarks at once — time spent descheduled
/// would otherwise be charged to whichever filter happened to be running.
inline double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// Keeps the compiler from deleting a timed loop whose answers nobody reads.
inline volatile std::size_t g_sink = 0;

// ---- Statistics ---------------------------------------------------------------------------------

struct Summary {
  double median = NAN, min = NAN, max = NAN, mean = NAN, variance = NAN;
};

inline Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  s.min = v.front();
  s.max = v.back();
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.variance = n > 1 ? ss / static_cast<double>(n - 1) : 0.0;
  return s;
}

// ---- Progress -----------------------------------------------------------------------------------

/// One progress line: rewritten in place on a terminal, a plain line every few seconds otherwise
/// (so that `make bench | tee log` stays readable).
class Progress {
 public:
  Progress(std::string what, std::size_t total)
      : what_(std::move(what)), total_(total), tty_(isatty(STDERR_FILENO) != 0) {}
  ~Progress() {
    if (tty_) std::fputs("\n", stderr);
    std::fprintf(stderr, "[%s] done in %.1f s\n", what_.c_str(), seconds_since(start_));
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void step(const std::string& detail) {
    ++done_;
    const double t = seconds_since(start_);
    if (tty_) {
      std::fprintf(stderr, "\r[%s] %zu/%zu %-40s %6.1f s", what_.c_str(), done_, total_,
                   detail.c_str(), t);
    } else if (t - last_ >= 5.0 || done_ == total_) {
      std::fprintf(stderr, "[%s] %zu/%zu %s (%.1f s)\n", what_.c_str(), done_, total_,
                   detail.c_str(), t);
      last_ = t;
    }
  }

 private:
  std::string what_;
  std::size_t total_, done_ = 0;
  bool tty_;
  Clock::time_point start_ = Clock::now();
  double last_ = 0;
};

// ---- CSV ----------------------------------------------------------------------------------------

/// A CSV file with a fixed header; every row must have as many fields (checked as it is written,
/// so a malformed file is a bug in the experiment rather than a surprise in the report).
class Csv {
 public:
  Csv(const std::filesystem::path& path, std::vector<std::string> header)
      : out_(path), columns_(header.size()) {
    if (!out_) throw std::runtime_error("cannot write " + path.string());
    row(header);
  }
  void row(const std::vector<std::string>& fields) {
    if (fields.size() != columns_) throw std::logic_error("CSV row of the wrong width");
    for (std::size_t i = 0; i < fields.size(); ++i) out_ << (i ? "," : "") << fields[i];
    out_ << '\n';
  }

 private:
  std::ofstream out_;
  std::size_t columns_;
};

inline std::string num(double x) {
  return std::isfinite(x) ? fmt::format("{:.6g}", x) : "nan";
}
inline std::string num(std::size_t x) {
  return std::to_string(x);
}
inline std::string num(unsigned x) {
  return std::to_string(x);
}

/// Options every experiment receives.
struct Options {
  Scale scale;
  std::filesystem::path out_dir;
};

/// Records how long an experiment took, for the report (results/meta.txt, key=value lines).
inline void record_meta(const std::filesystem::path& dir, const std::string& key,
                        const std::string& value) {
  std::ofstream(dir / "meta.txt", std::ios::app) << key << '=' << value << '\n';
}

}  // namespace bench
