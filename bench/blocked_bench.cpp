// bench/blocked_bench.cpp — the blocked cuckoo filter (issue 17) beside the plain filter, the
// blocked Bloom filter and the one- and two-line memory floors, in one run.
//
// What it does. Builds a blocked filter of --mb megabytes (default 192) to --load (default 0.95)
// of its capacity with the batch insert, and the plain f = 12, b = 4 filter of the same memory to
// the same share of its own capacity; a blocked Bloom filter of the same memory gets the blocked
// filter's keys (k chosen for that memory and count). Then times, best of --reps, over --queries
// keys: single-key and batched contains of positive, of negative and of mixed keys (each one or the
// other by a coin toss), single-key erase, and the floors over a buffer of the same size: one and
// two random line reads per key, unprefetched (single) and prefetched 64 keys ahead (batched),
// each with the key's hash. Prints bits per item,
// measured false-positive rates and the share of lookups that read a second line.
//
// Compare figures only as ratios from one run: the machine is shared and noisy.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cuckoo/amq/blocked_bloom.hpp"
#include "cuckoo/blocked/blocked_filter.hpp"
#include "cuckoo/filter.hpp"
#include "cuckoo/table/packed_table.hpp"
#include "support/memory_floor.hpp"
#include "support/timing.hpp"

namespace {

using cuckoo::bench::best_of;
using cuckoo::bench::keys_from;

struct Options {
  double mb = 192;
  double load = 0.95;
  std::size_t queries = 10'000'000;
  int reps = 3;
};

constexpr std::size_t kChunk = std::size_t{1} << 16;

/// ns per key of fn() over `count` keys, best of reps.
double ns_per_key(const Options& o, std::size_t count, const std::function<void()>& fn) {
  return best_of(o.reps, fn) * 1e9 / static_cast<double>(count);
}

template <class Filter>
double build(Filter& filter, std::span<const std::uint64_t> keys, const char* name) {
  const auto t0 = cuckoo::bench::Clock::now();
  for (std::size_t at = 0; at < keys.size(); at += kChunk) {
    const auto chunk = keys.subspan(at, std::min(kChunk, keys.size() - at));
    std::size_t inserted = 0;
    if constexpr (requires { filter.insert(chunk); }) {
      inserted = filter.insert(chunk);
    } else {
      for (const auto k : chunk) inserted += filter.insert(k) ? 1 : 0;
    }
    if (inserted != chunk.size()) {
      std::fprintf(stderr, "blocked_bench: %s refused an insert below its capacity\n", name);
      std::exit(1);
    }
  }
  return cuckoo::bench::seconds_since(t0);
}

struct LookupTimes {
  double single_pos, single_neg, single_mixed, batch_pos, batch_neg, batch_mixed, fpr;
};

template <class Filter>
LookupTimes time_lookups(const Options& o, const Filter& filter,
                         std::span<const std::uint64_t> positives,
                         std::span<const std::uint64_t> negatives,
                         std::span<const std::uint64_t> mixed) {
  std::vector<char> out_storage(positives.size());
  std::span<bool> out(reinterpret_cast<bool*>(out_storage.data()), out_storage.size());
  LookupTimes t{};
  std::size_t sink = 0;
  t.single_pos = ns_per_key(o, positives.size(), [&] {
    for (const auto k : positives) sink += filter.contains(k) ? 1 : 0;
  });
  t.single_neg = ns_per_key(o, negatives.size(), [&] {
    for (const auto k : negatives) sink += filter.contains(k) ? 1 : 0;
  });
  t.single_mixed = ns_per_key(o, mixed.size(), [&] {
    for (const auto k : mixed) sink += filter.contains(k) ? 1 : 0;
  });
  t.batch_mixed = ns_per_key(o, mixed.size(), [&] { filter.contains(mixed, out); });
  t.batch_pos = ns_per_key(o, positives.size(), [&] { filter.contains(positives, out); });
  for (std::size_t i = 0; i < positives.size(); ++i) {
    if (!out[i]) {
      std::fprintf(stderr, "blocked_bench: a false negative\n");
      std::exit(1);
    }
  }
  t.batch_neg = ns_per_key(o, negatives.size(), [&] { filter.contains(negatives, out); });
  std::size_t hits = 0;
  for (std::size_t i = 0; i < negatives.size(); ++i) hits += out[i] ? 1 : 0;
  t.fpr = static_cast<double>(hits) / static_cast<double>(negatives.size());
  if (sink == 0) std::printf("(no positives?)\n");
  return t;
}

/// Single-key erase of `keys` (all present), ns per key: a fresh copy of the filter per
/// repetition, so that every repetition removes the same copies; the copy is not timed.
template <class Filter>
double time_erase(const Options& o, const Filter& filter, std::span<const std::uint64_t> keys) {
  double best = 1e300;
  for (int r = 0; r < o.reps; ++r) {
    auto copy = std::make_unique<Filter>(filter);
    const auto t0 = cuckoo::bench::Clock::now();
    std::size_t removed = 0;
    for (const auto k : keys) removed += copy->erase(k) ? 1 : 0;
    best = std::min(best, cuckoo::bench::seconds_since(t0));
    if (removed != keys.size()) {
      std::fprintf(stderr, "blocked_bench: an erase of a present key failed\n");
      std::exit(1);
    }
  }
  return best * 1e9 / static_cast<double>(keys.size());
}

double bits_per_item(std::size_t bytes, std::size_t items) {
  return 8.0 * static_cast<double>(bytes) / static_cast<double>(items);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string("0"); };
    if (a == "--mb") {
      o.mb = std::stod(value());
    } else if (a == "--load") {
      o.load = std::stod(value());
    } else if (a == "--queries") {
      o.queries = std::stoull(value());
    } else if (a == "--reps") {
      o.reps = std::stoi(value());
    } else {
      std::fprintf(
          stderr,
          "usage: blocked_bench [--mb 192] [--load 0.95] [--queries 10000000] [--reps 3]\n");
      return 2;
    }
  }
  const auto bytes = static_cast<std::size_t>(o.mb * 1024 * 1024);

  // ---- The blocked filter --------------------------------------------------------------------
  using Blocked = cuckoo::BasicBlockedFilter<>;
  std::uint64_t blocks = bytes / Blocked::kBlockBytes;
  blocks -= blocks & 1;
  const auto blocked_capacity =
      static_cast<std::size_t>(static_cast<double>(blocks) * Blocked::kDesignItemsPerBlock);
  const auto blocked_n = static_cast<std::size_t>(o.load * static_cast<double>(blocked_capacity));
  const auto keys = keys_from(1, blocked_n);
  auto blocked = std::make_unique<Blocked>(blocks, blocked_capacity, cuckoo::defaults::kMaxKicks,
                                           cuckoo::defaults::kSeed);
  const double blocked_build = build(*blocked, keys, "the blocked filter");

  // ---- The plain f = 12, b = 4 filter of the same memory --------------------------------------
  using Plain = cuckoo::BasicFilter<cuckoo::PackedTable<4, 12>>;
  std::uint64_t buckets = bytes * 8 / (4 * 12);
  buckets -= buckets & 1;
  const double plain_design = cuckoo::design_load(4, 12, 1e9);
  const auto plain_capacity =
      static_cast<std::size_t>(static_cast<double>(buckets) * 4 * plain_design);
  const auto plain_n = static_cast<std::size_t>(o.load * static_cast<double>(plain_capacity));
  const auto plain_keys =
      std::span<const std::uint64_t>(keys).first(std::min(plain_n, keys.size()));
  const auto plain_extra = keys_from(2, plain_n - plain_keys.size());
  auto plain = std::make_unique<Plain>(cuckoo::Layout{buckets, 12, 4, false}, plain_capacity,
                                       cuckoo::defaults::kMaxKicks, cuckoo::defaults::kSeed);
  const double plain_build = build(*plain, plain_keys, "the plain filter") +
                             build(*plain, plain_extra, "the plain filter");

  // ---- The blocked Bloom filter of the same memory, with the blocked filter's keys -------------
  auto bloom = std::make_unique<cuckoo::amq::BlockedBloom>(
      cuckoo::amq::BlockedBloom::with_memory(bytes, blocked_n, cuckoo::defaults::kSeed));
  const double bloom_build = build(*bloom, keys, "the blocked Bloom filter");

  // ---- Queries ---------------------------------------------------------------------------------
  const std::size_t q = std::min(o.queries, plain_keys.size());
  std::vector<std::uint64_t> positives(q);
  {
    cuckoo::detail::SplitMix64 pick(3);
    for (auto& k : positives) k = keys[pick() % plain_keys.size()];  // in all three filters
  }
  const auto negatives = keys_from(4, q);
  // Positive or negative by a coin toss per key, so that no branch on the answer predicts well.
  std::vector<std::uint64_t> mixed(q);
  {
    cuckoo::detail::SplitMix64 coin(5);
    for (std::size_t i = 0; i < q; ++i) mixed[i] = (coin() & 1) != 0 ? positives[i] : negatives[i];
  }

  const LookupTimes tb = time_lookups(o, *blocked, positives, negatives, mixed);
  const LookupTimes tp = time_lookups(o, *plain, positives, negatives, mixed);
  const LookupTimes tbf = time_lookups(o, *bloom, positives, negatives, mixed);

  std::size_t pos2 = 0, neg2 = 0;
  for (const auto k : positives) pos2 += blocked->lines_read(blocked->hasher()(k)) == 2 ? 1 : 0;
  for (const auto k : negatives) neg2 += blocked->lines_read(blocked->hasher()(k)) == 2 ? 1 : 0;

  // Erase: distinct keys, half the sample (no repeats).
  const auto erase_keys =
      std::span<const std::uint64_t>(keys).first(std::min(q, plain_keys.size()) / 2);
  const double erase_blocked = time_erase(o, *blocked, erase_keys);
  const double erase_plain = time_erase(o, *plain, erase_keys);

  // ---- Floors over a buffer of the same size
  // -----------------------------------------------------
  const cuckoo::bench::Floor floor(bytes, 5);
  std::vector<char> sink_storage(q);
  bool* sink = reinterpret_cast<bool*>(sink_storage.data());
  const double one_single = ns_per_key(o, q, [&] { floor.single<true, 1>(negatives, sink); });
  const double two_single = ns_per_key(o, q, [&] { floor.single<true, 2>(negatives, sink); });
  const double one_batch = ns_per_key(o, q, [&] { floor.batched<64, true, 1>(negatives, sink); });
  const double two_batch = ns_per_key(o, q, [&] { floor.batched<64, true, 2>(negatives, sink); });

  const auto per_key = [](double seconds, std::size_t n) {
    return seconds * 1e9 / static_cast<double>(n);
  };
  std::printf("blocked_bench: %.0f MiB, load %.2f of capacity, %zu queries, best of %d\n", o.mb,
              o.load, q, o.reps);
  std::printf("%-22s %10s %8s %8s %9s %9s %9s %9s %9s %9s %9s %8s\n", "filter", "items", "bits/it",
              "FPR%", "add ns", "1-key +", "1-key -", "1-key +-", "batch +", "batch -", "batch +-",
              "erase");
  const auto row = [&](const char* name, std::size_t items, std::size_t mem, const LookupTimes& t,
                       double add_ns, double erase_ns) {
    std::printf("%-22s %10zu %8.2f %8.4f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %8.1f\n", name,
                items, bits_per_item(mem, items), 100 * t.fpr, add_ns, t.single_pos, t.single_neg,
                t.single_mixed, t.batch_pos, t.batch_neg, t.batch_mixed, erase_ns);
  };
  row("blocked cuckoo", blocked_n, blocked->memory_bytes(), tb, per_key(blocked_build, blocked_n),
      erase_blocked);
  row("cuckoo f=12 b=4", plain_n, plain->memory_bytes(), tp, per_key(plain_build, plain_n),
      erase_plain);
  row("blocked Bloom", blocked_n, bloom->memory_bytes(), tbf, per_key(bloom_build, blocked_n), 0);
  std::printf(
      "floor ns/key: one line single %.1f batched %.1f; two lines single %.1f batched %.1f\n",
      one_single, one_batch, two_single, two_batch);
  std::printf("blocked: lookups reading a second line: positive %.2f%%, negative %.2f%%\n",
              100.0 * static_cast<double>(pos2) / static_cast<double>(q),
              100.0 * static_cast<double>(neg2) / static_cast<double>(q));
  std::printf(
      "blocked: single-key contains / one-line floor: + %.2fx, - %.2fx; batched: + %.2fx, "
      "- %.2fx; / blocked Bloom single-key: + %.2fx, - %.2fx\n",
      tb.single_pos / one_single, tb.single_neg / one_single, tb.batch_pos / one_batch,
      tb.batch_neg / one_batch, tb.single_pos / tbf.single_pos, tb.single_neg / tbf.single_neg);
  std::printf("blocked: batched inserts to %.0f%%: %.1f M keys/s; plain %.1f M keys/s\n",
              100 * o.load, static_cast<double>(blocked_n) / blocked_build / 1e6,
              static_cast<double>(plain_n) / plain_build / 1e6);
  return 0;
}
