// Semi-sorted against plain lookups (issue 3: semi-sorted contains must cost at most 1.3× plain).
//
// Each pair of filters holds the same ~10^7 keys at 95% load, in the same bucket count:
//   f13      PackedTable<4, 13> against SemiSortedTable<13>: the same width and false-positive
//   rate,
//            the semi-sorted table one bit per entry smaller (the default ε = 0.001 gives f = 13).
//   memory   PackedTable<4, 12> against SemiSortedTable<13>: the same memory, the semi-sorted
//            filter with half the false-positive rate (the paper's Table 3 comparison).
// Queries are positive (inserted keys, in random order) or negative (fresh keys), and are either
// keys (`key`: XXH3 included, what a user sees) or precomputed hashes (`hash`: the table alone).
//
// Other processes may share the machine, so absolute times mean little. Each comparison runs
// three ways: plain alone and semi alone (interleaved, with repetitions; CPU time), and `paired`,
// which times the two in alternating blocks of 4096 of the same queries and takes the median of
// the block ratios. The run ends with one table of all three; the paired RATIO is the figure to
// read on a busy machine.
//
//   semisort_bench [--benchmark_repetitions=N] [--semisort_buckets=M]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cuckoo/filter.hpp"
#include "cuckoo/table/packed_table.hpp"
#include "cuckoo/table/semisort_table.hpp"

namespace {

std::uint64_t g_bucket_count = 2'631'580;  // 10,526,320 slots; 95% of them is ~10^7 items
constexpr double kLoad = 0.95;
constexpr std::size_t kQueryCount = std::size_t{1} << 20;  // cycled through; far larger than L2

template <class Table>
struct Loaded {
  cuckoo::BasicFilter<Table> filter;
  std::vector<std::uint64_t> positive_keys, negative_keys, positive_hashes, negative_hashes;

  Loaded()
      : filter(cuckoo::Layout{g_bucket_count, Table::kFixedBits, 4, Table::kSemiSorted},
               g_bucket_count * 4, cuckoo::defaults::kMaxKicks, cuckoo::defaults::kSeed) {
    const auto target =
        static_cast<std::uint64_t>(kLoad * static_cast<double>(filter.slot_count()));
    cuckoo::detail::SplitMix64 keys(42);  // the same keys for every filter
    std::vector<std::uint64_t> inserted;
    inserted.reserve(target);
    while (inserted.size() < target) {
      const std::uint64_t key = keys();
      if (filter.insert(key)) inserted.push_back(key);
    }
    cuckoo::detail::SplitMix64 pick(7);
    cuckoo::detail::SplitMix64 fresh(0xBADC0FFEE);
    for (std::size_t i = 0; i < kQueryCount; ++i) {
      positive_keys.push_back(inserted[pick() % inserted.size()]);
      negative_keys.push_back(fresh() | (std::uint64_t{1} << 63));  // never among `keys` w.h.p.
    }
    for (std::uint64_t key : positive_keys) positive_hashes.push_back(filter.hasher()(key));
    for (std::uint64_t key : negative_keys) negative_hashes.push_back(filter.hasher()(key));
  }
};

template <class Table>
const Loaded<Table>& loaded() {
  static const auto instance = std::make_unique<Loaded<Table>>();
  return *instance;
}

template <class Table, bool kPositive, bool kByHash>
void BM_Contains(benchmark::State& state) {
  const Loaded<Table>& data = loaded<Table>();
  const auto& queries = kByHash ? (kPositive ? data.positive_hashes : data.negative_hashes)
                                : (kPositive ? data.positive_keys : data.negative_keys);
  std::size_t i = 0;
  std::uint64_t hits = 0;
  for (auto _ : state) {
    if constexpr (kByHash) {
      hits += data.filter.contains_hash(queries[i]);
    } else {
      hits += data.filter.contains(queries[i]);
    }
    i = (i + 1) & (kQueryCount - 1);
  }
  benchmark::DoNotOptimize(hits);
  state.counters["items"] = static_cast<double>(data.filter.size());
  state.counters["bits/item"] = static_cast<double>(data.filter.memory_bytes()) * 8.0 /
                                static_cast<double>(data.filter.size());
}

template <class Table, bool kPositive, bool kByHash>
const std::vector<std::uint64_t>& queries(const Loaded<Table>& data) {
  return kByHash ? (kPositive ? data.positive_hashes : data.negative_hashes)
                 : (kPositive ? data.positive_keys : data.negative_keys);
}

constexpr std::size_t kBlock = 4096;  // lookups per timed block: ~0.1 ms, below a time slice

/// Nanoseconds per lookup over one block of queries starting at `first`.
template <class Table, bool kPositive, bool kByHash>
double time_block(const Loaded<Table>& data, std::size_t first) {
  const auto& keys = queries<Table, kPositive, kByHash>(data);
  std::uint64_t hits = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = first; i < first + kBlock; ++i) {
    if constexpr (kByHash) {
      hits += data.filter.contains_hash(keys[i]);
    } else {
      hits += data.filter.contains(keys[i]);
    }
  }
  const auto stop = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(hits);
  return std::chrono::duration<double, std::nano>(stop - start).count() / kBlock;
}

double median(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + static_cast<long>(values.size() / 2),
                   values.end());
  return values[values.size() / 2];
}

/// Plain and semi-sorted lookups timed in alternating blocks of the same queries, so that both
/// see the same machine: the median of the per-pair ratios ignores blocks another process
/// interrupted and drifts in the machine's load, which a comparison of two separate runs does not.
template <class Plain, class Semi, bool kPositive, bool kByHash>
void BM_Paired(benchmark::State& state) {
  const Loaded<Plain>& plain = loaded<Plain>();
  const Loaded<Semi>& semi = loaded<Semi>();
  std::vector<double> plain_ns, semi_ns, ratios;
  std::size_t first = 0;
  bool plain_first = true;
  for (auto _ : state) {
    double p, s;
    if (plain_first) {
      p = time_block<Plain, kPositive, kByHash>(plain, first);
      s = time_block<Semi, kPositive, kByHash>(semi, first);
    } else {
      s = time_block<Semi, kPositive, kByHash>(semi, first);
      p = time_block<Plain, kPositive, kByHash>(plain, first);
    }
    plain_ns.push_back(p);
    semi_ns.push_back(s);
    ratios.push_back(s / p);
    plain_first = !plain_first;
    first = (first + kBlock) & (kQueryCount - 1);
  }
  state.counters["plain_ns"] = median(plain_ns);
  state.counters["semi_ns"] = median(semi_ns);
  state.counters["ratio"] = median(ratios);
  state.counters["items"] = static_cast<double>(semi.filter.size());
}

using Plain12 = cuckoo::PackedTable<4, 12>;
using Plain13 = cuckoo::PackedTable<4, 13>;
using Semi13 = cuckoo::SemiSortedTable<13>;

#define CUCKOO_PAIR(name, Plain, Semi, positive, by_hash)                               \
  BENCHMARK(BM_Contains<Plain, positive, by_hash>)->Name(std::string("plain/") + name); \
  BENCHMARK(BM_Contains<Semi, positive, by_hash>)->Name(std::string("semi/") + name);   \
  BENCHMARK(BM_Paired<Plain, Semi, positive, by_hash>)                                  \
      ->Name(std::string("paired/") + name)                                             \
      ->Iterations(2000)

CUCKOO_PAIR("f13/positive/key", Plain13, Semi13, true, false);
CUCKOO_PAIR("f13/negative/key", Plain13, Semi13, false, false);
CUCKOO_PAIR("f13/positive/hash", Plain13, Semi13, true, true);
CUCKOO_PAIR("f13/negative/hash", Plain13, Semi13, false, true);
CUCKOO_PAIR("memory/positive/key", Plain12, Semi13, true, false);
CUCKOO_PAIR("memory/negative/key", Plain12, Semi13, false, false);
CUCKOO_PAIR("memory/positive/hash", Plain12, Semi13, true, true);
CUCKOO_PAIR("memory/negative/hash", Plain12, Semi13, false, true);

/// Prints the usual console output, then one table: per comparison, the separate runs' median
/// CPU times and their ratio, and the paired blocks' median times and median ratio.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const std::string name = run.benchmark_name();
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      const bool single = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
      if (!median && !single) continue;
      const std::size_t slash = name.find('/');
      const std::string family = name.substr(0, slash);
      std::string pair = name.substr(slash + 1);
      if (median) pair = pair.substr(0, pair.rfind("_median"));
      pair = pair.substr(0, pair.find("/iterations:"));
      Row& row = rows_[pair];
      if (family == "plain") row.plain_cpu = run.GetAdjustedCPUTime();
      if (family == "semi") row.semi_cpu = run.GetAdjustedCPUTime();
      if (family == "paired") {
        row.paired_plain = run.counters.at("plain_ns");
        row.paired_semi = run.counters.at("semi_ns");
        row.paired_ratio = run.counters.at("ratio");
      }
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nsemi-sorted / plain contains, ns per lookup (medians)\n");
    std::printf("%-22s | %9s %9s %7s | %9s %9s %7s\n", "", "plain cpu", "semi cpu", "ratio",
                "paired pl", "paired ss", "RATIO");
    for (const auto& [pair, row] : rows_) {
      std::printf("%-22s | %9.2f %9.2f %7.3f | %9.2f %9.2f %7.3f\n", pair.c_str(), row.plain_cpu,
                  row.semi_cpu, row.semi_cpu / row.plain_cpu, row.paired_plain, row.paired_semi,
                  row.paired_ratio);
    }
  }

 private:
  struct Row {
    double plain_cpu = 0, semi_cpu = 0, paired_plain = 0, paired_semi = 0, paired_ratio = 0;
  };
  std::map<std::string, Row> rows_;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    constexpr const char* kBuckets = "--semisort_buckets=";
    if (std::strncmp(argv[i], kBuckets, std::strlen(kBuckets)) == 0) {
      g_bucket_count = std::stoull(argv[i] + std::strlen(kBuckets)) & ~std::uint64_t{1};  // even
    } else {
      args.push_back(argv[i]);
    }
  }
  // Defaults that make the ratios meaningful on a shared machine; the command line overrides.
  std::vector<std::string> defaults = {"--benchmark_repetitions=5",
                                       "--benchmark_enable_random_interleaving=true",
                                       "--benchmark_report_aggregates_only=true"};
  std::vector<char*> all = {args[0]};
  for (std::string& flag : defaults) all.push_back(flag.data());
  all.insert(all.end(), args.begin() + 1, args.end());
  int count = static_cast<int>(all.size());
  benchmark::Initialize(&count, all.data());
  if (benchmark::ReportUnrecognizedArguments(count, all.data())) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
