// perf_bench — the filter at the memory limit, measured against a floor taken in the same run.
//
// What it does (issue 6). Builds a filter of --mb megabytes (default 192, f = 12, b = 4) to --load
// (default 0.95) with the batch insert, then times, over keys that are all in the filter
// (positive) and keys that are not (negative):
//   batched contains   vs  the batched floor: two independent random 64-byte reads per key over a
//                          buffer of the filter's size, through the same pipeline with the same
//                          prefetch (hash, prefetch both lines into L2 Depth keys ahead, then
//                          read);
//   single-key contains vs the single-key floor: the same two reads per key, no prefetch, so only
//                          what the out-of-order core overlaps by itself;
//   batched count      vs  batched contains (the same pipeline; counts compare every slot);
//   single-key erase   vs  the same two reads plus a write to the first line;
//   batched erase, and the build rate (batch insert, optionally also single-key insert into a
//   second filter), with the last 5% of the fill and each band of load timed on their own.
// --semi measures a semi-sorted filter of the same memory (--f 13 gives the paper's equal-memory
// pairing with plain f = 12); --compare times the bucket compares alone on a table in cache.
// Both floors hash the key with the filter's hasher to place the two reads, so a ratio of 1.0
// means "nothing but the two memory reads and the hash"; the floor without hashing is printed too.
//
// Methodology. Keys come from a fixed-seed SplitMix64. Every timing is the best of --reps runs
// (default 3) of the same operation on the same inputs, because the machine is shared and noisy;
// compare figures only as ratios taken in one run. --depths sweeps the pipeline depth.
// Huge pages: the AnonHugePages of the mappings holding the filter and the floor buffer are read
// from /proc/self/smaps and printed.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "cuckoo/detail/aligned_buffer.hpp"
#include "cuckoo/detail/rng.hpp"
#include "support/memory_floor.hpp"
#include "support/timing.hpp"

namespace {

using cuckoo::bench::Clock;

struct Options {
  double mb = 192;
  unsigned f = 12;
  double load = 0.95;
  std::size_t queries = 10'000'000;
  int reps = 3;
  bool depths = false;
  bool single_build = false;
  bool compare = false;
  bool semi = false;
  std::string isa;  // empty: the tables as this build's flags compile them
};

using cuckoo::bench::best_of;
using cuckoo::bench::Floor;
using cuckoo::bench::keys_from;
using cuckoo::bench::seconds_since;

/// kB of AnonHugePages in the mapping that contains `p` (-1 if not found).
long huge_kb(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > 12) {
      inside = addr >= lo && addr < hi;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) {
      return std::strtol(line.c_str() + 14, nullptr, 10);
    }
  }
  return -1;
}

std::size_t count_true(const bool* out, std::size_t n) {
  return static_cast<std::size_t>(std::count(out, out + n, true));
}

/// The bucket compare alone, on a table that fits L1/L2, so memory does not hide it: ns per pair.
template <class Table>
void compare_paths(unsigned f, int reps) {
  const std::uint64_t m = 4096;
  Table table(m, f);
  cuckoo::detail::SplitMix64 rng(9);
  for (std::uint64_t i = 0; i < m; ++i) {
    for (unsigned s = 0; s < Table::kBucketSize; ++s) {
      table.write(i, s, static_cast<std::uint32_t>(rng() & ((1u << f) - 1)));
    }
  }
  struct Q {
    std::uint64_t b1, b2;
    std::uint32_t v;
  };
  std::vector<Q> qs(1 << 20);
  for (auto& q : qs) {
    q = {rng() % m, rng() % m, static_cast<std::uint32_t>(rng() & ((1u << f) - 1))};
  }
  std::size_t sink = 0;
  auto time = [&](auto&& fn) {
    return best_of(reps,
                   [&] {
                     for (const Q& q : qs) sink += fn(q) ? 1 : 0;
                   }) *
           1e9 / static_cast<double>(qs.size());
  };
  const double portable =
      time([&](const Q& q) { return table.contains_pair_portable(q.b1, q.b2, q.v); });
  std::printf("bucket compare, both buckets, in cache (f=%u b=%u): portable %.2f ns", f,
              Table::kBucketSize, portable);
#if defined(__AVX2__)
  const double avx2 = time([&](const Q& q) { return table.contains_pair_avx2(q.b1, q.b2, q.v); });
  std::printf(", avx2 %.2f ns (%.2fx portable)", avx2, avx2 / portable);
#endif
#if defined(__AVX512F__)
  const double avx512 =
      time([&](const Q& q) { return table.contains_pair_avx512(q.b1, q.b2, q.v); });
  std::printf(", avx512 %.2f ns (%.2fx portable)", avx512, avx512 / portable);
#endif
  std::printf(" [%zu]\n", sink % 2);
}

/// BasicFilter over Table; wrapped in IsaFilter (its lookup path compiled for the table's level,
/// as the facade holds it) when the table was asked for a level explicitly (--isa).
template <class Table, bool kWrapped>
using BenchFilter =
    std::conditional_t<kWrapped && cuckoo::detail::table_isa<Table>() != cuckoo::Isa::kPortable,
                       cuckoo::detail::IsaFilter<cuckoo::BasicFilter<Table>>,
                       cuckoo::BasicFilter<Table>>;

template <class Table, bool kWrapped = false>
int run(const Options& opt) {
  using Filter = BenchFilter<Table, kWrapped>;
  constexpr unsigned b = Table::kBucketSize;
  const auto target_bytes = static_cast<std::uint64_t>(opt.mb * 1024 * 1024);
  // A semi-sorted bucket stores its four fingerprints in 4f - 4 bits (semisort_table.hpp).
  const unsigned bucket_bits = b * opt.f - (Table::kSemiSorted ? 4 : 0);
  std::uint64_t buckets = target_bytes * 8 / bucket_bits;
  buckets -= buckets & 1;
  const cuckoo::Layout layout{buckets, opt.f, b, Table::kSemiSorted};
  const auto n = static_cast<std::size_t>(opt.load * static_cast<double>(buckets * b));
  const std::uint64_t seed = cuckoo::defaults::kSeed;
  const std::size_t q = std::min(opt.queries, n);

  std::printf(
      "perf_bench: isa=%s%s f=%u b=%u buckets=%llu (%.1f MB), fill to %.3f = %zu keys, %zu"
      " queries, best of %d\n",
      cuckoo::isa_name(cuckoo::detail::table_isa<Table>()).data(),
      kWrapped ? " (IsaFilter)" : " (as compiled)", opt.f, b,
      static_cast<unsigned long long>(buckets),
      static_cast<double>(Table::bytes_for(buckets, opt.f)) / (1 << 20), opt.load, n, q, opt.reps);
  const auto keys = keys_from(1, n);
  const auto negatives = keys_from(2, q);
  // Positive queries: a random sample of the inserted keys, in random order.
  std::vector<std::uint64_t> positives(q);
  {
    cuckoo::detail::SplitMix64 rng(3);
    for (auto& k : positives) k = keys[((rng() >> 32) * n) >> 32];
  }

  // ---- Build with the batch insert, in chunks of 64 Ki keys, timing the last 5% separately ----
  Filter filter(layout, n, cuckoo::defaults::kMaxKicks, seed);
  const std::size_t chunk = 1 << 16;
  const std::size_t last5 =
      static_cast<std::size_t>(static_cast<double>(n) * (1 - 0.05 / opt.load));
  double t_build = 0, t_last = 0;
  std::size_t inserted = 0;
  // ns/key by the load at which a chunk started: where the build time goes.
  const double band_edges[] = {0.0, 0.3, 0.5, 0.65, 0.8, 0.9, 0.93, 2.0};
  double band_time[7] = {}, band_keys[7] = {};
  for (std::size_t i = 0; i < n; i += chunk) {
    const std::size_t len = std::min(chunk, n - i);
    const double load_before = filter.load_factor();
    const auto t0 = Clock::now();
    const std::size_t r = filter.insert(std::span<const std::uint64_t>(keys.data() + i, len));
    const double t = seconds_since(t0);
    t_build += t;
    if (i >= last5) t_last += t;
    for (int band = 0; band < 7; ++band) {
      if (load_before >= band_edges[band] && load_before < band_edges[band + 1]) {
        band_time[band] += t;
        band_keys[band] += static_cast<double>(r);
      }
    }
    inserted += r;
    if (r != len) {
      std::printf("  batch insert stopped at key %zu (load %.4f)\n", i + r, filter.load_factor());
      break;
    }
  }
  const double last_keys = static_cast<double>(inserted > last5 ? inserted - last5 : 1);
  std::printf(
      "build (batch insert): %.2f M keys/s overall; last 5%% of slots: %.1f ns/key;"
      " load %.4f; %.2f bits/item\n",
      static_cast<double>(inserted) / t_build / 1e6, t_last / last_keys * 1e9, filter.load_factor(),
      static_cast<double>(filter.memory_bytes()) * 8 / static_cast<double>(inserted));
  std::printf("build by load:");
  for (int band = 0; band < 7; ++band) {
    std::printf(" [%.2f, %.2f) %.1f ns/key, %.2f s;", band_edges[band],
                std::min(band_edges[band + 1], opt.load), band_time[band] * 1e9 / band_keys[band],
                band_time[band]);
  }
  std::printf("\n");
  std::printf("huge pages: filter mapping has %ld kB AnonHugePages (table %zu kB)\n",
              huge_kb(filter.table().bytes().data()), filter.memory_bytes() >> 10);

  if (opt.single_build) {
    Filter single(layout, n, cuckoo::defaults::kMaxKicks, seed);
    double t_all = 0, t_end = 0;
    std::size_t ok = 0;
    for (std::size_t i = 0; i < inserted; i += chunk) {
      const std::size_t len = std::min(chunk, inserted - i);
      const auto t0 = Clock::now();
      for (std::size_t j = i; j < i + len; ++j) ok += single.insert(keys[j]) ? 1 : 0;
      const double t = seconds_since(t0);
      t_all += t;
      if (i >= last5) t_end += t;
    }
    std::printf(
        "build (single-key insert, same keys): %.2f M keys/s overall; last 5%%: %.1f ns/key;"
        " batch/single speed-up %.2fx\n",
        static_cast<double>(ok) / t_all / 1e6, t_end / last_keys * 1e9, t_all / t_build);
  }

  // ---- The floor, in the same run, over a buffer of the filter's size --------------------------
  Floor floor(filter.memory_bytes(), seed);
  std::printf("huge pages: floor mapping has %ld kB AnonHugePages\n", huge_kb(floor.data()));
  std::vector<char> out_storage(q);
  bool* out = reinterpret_cast<bool*>(out_storage.data());
  const std::span<const std::uint64_t> pos(positives), neg(negatives);
  const double per = 1e9 / static_cast<double>(q);
  constexpr std::size_t D = Filter::kPipelineDepth;

  const double floor_batched = best_of(opt.reps, [&] { floor.batched<D, true>(pos, out); }) * per;
  const double floor_batched_nohash =
      best_of(opt.reps, [&] { floor.batched<D, false>(pos, out); }) * per;
  const double floor_single = best_of(opt.reps, [&] { floor.single<true>(pos, out); }) * per;
  std::printf("floor: batched %.2f ns/key (without hashing %.2f), single-key %.2f ns/key\n",
              floor_batched, floor_batched_nohash, floor_single);

  const std::span<bool> outs(out, q);
  const double pos_batch = best_of(opt.reps, [&] { filter.contains(pos, outs); }) * per;
  if (count_true(out, q) != q) std::printf("  ERROR: a false negative in the batch!\n");
  const double neg_batch = best_of(opt.reps, [&] { filter.contains(neg, outs); }) * per;
  const double fpr = static_cast<double>(count_true(out, q)) / static_cast<double>(q);
  const double pos_single = best_of(opt.reps,
                                    [&] {
                                      for (std::size_t i = 0; i < q; ++i)
                                        out[i] = filter.contains(pos[i]);
                                    }) *
                            per;
  const double neg_single = best_of(opt.reps,
                                    [&] {
                                      for (std::size_t i = 0; i < q; ++i)
                                        out[i] = filter.contains(neg[i]);
                                    }) *
                            per;
  std::printf(
      "contains batched:   positive %.2f ns/key = %.2fx floor, negative %.2f ns/key = %.2fx"
      " floor (fpr %.5f)\n",
      pos_batch, pos_batch / floor_batched, neg_batch, neg_batch / floor_batched, fpr);
  std::printf(
      "contains single:    positive %.2f ns/key = %.2fx single floor, negative %.2f ns/key"
      " = %.2fx single floor; batch speed-up %.2fx\n",
      pos_single, pos_single / floor_single, neg_single, neg_single / floor_single,
      (pos_single + neg_single) / (pos_batch + neg_batch));
  // The count against the contains timed in turn (best_of_each), not after it: timed one after
  // the other, whole batches, the ratio swung from 1.16x to 1.75x between runs.
  std::vector<std::size_t> counts(q);
  const std::span<std::size_t> count_out(counts);
  const auto pos_pair = cuckoo::bench::best_of_each(
      opt.reps, {[&] { filter.contains(pos, outs); }, [&] { filter.count(pos, count_out); }});
  if (std::count(counts.begin(), counts.end(), std::size_t{0}) != 0)
    std::printf("  ERROR: a held key counted 0 in the batch!\n");
  const auto neg_pair = cuckoo::bench::best_of_each(
      opt.reps, {[&] { filter.contains(neg, outs); }, [&] { filter.count(neg, count_out); }});
  std::printf(
      "count batched:      positive %.2f ns/key = %.2fx batched contains, negative %.2f ns/key"
      " = %.2fx (each timed in turn with the contains)\n",
      pos_pair[1] * per, pos_pair[1] / pos_pair[0], neg_pair[1] * per, neg_pair[1] / neg_pair[0]);

  if (opt.depths) {
    std::printf(
        "pipeline depth sweep (positive keys, ns/key; ratio to the floor at that depth):\n");
    auto sweep = [&]<std::size_t Depth>() {
      const double fl = best_of(opt.reps, [&] { floor.batched<Depth, true>(pos, out); }) * per;
      const double fi =
          best_of(opt.reps, [&] { filter.template contains_pipelined<Depth>(pos, outs); }) * per;
      std::printf("  depth %2zu: floor %.2f, filter %.2f (%.2fx)\n", Depth, fl, fi, fi / fl);
    };
    sweep.template operator()<1>();
    sweep.template operator()<2>();
    sweep.template operator()<4>();
    sweep.template operator()<8>();
    sweep.template operator()<16>();
    sweep.template operator()<32>();
    sweep.template operator()<64>();
  }

  // ---- Erase: on a fresh copy of the filter each repetition, half the positive sample each way
  // (no repeats), so that every repetition removes the same copies from the same table. ----------
  const std::size_t half = q / 2;
  std::vector<std::uint64_t> victims(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(q));
  double erase_single = 1e300, erase_batch = 1e300;
  std::size_t removed = 0;
  for (int rep = 0; rep < opt.reps; ++rep) {
    Filter copy = filter;
    removed = 0;
    auto t0 = Clock::now();
    for (std::size_t i = 0; i < half; ++i) removed += copy.erase(victims[i]) ? 1 : 0;
    erase_single = std::min(erase_single, seconds_since(t0) * 1e9 / static_cast<double>(half));
    t0 = Clock::now();
    removed += copy.erase(std::span<const std::uint64_t>(victims.data() + half, q - half));
    erase_batch = std::min(erase_batch, seconds_since(t0) * 1e9 / static_cast<double>(q - half));
  }
  const double floor_write = best_of(opt.reps, [&] { floor.single_write(pos); }) * per;
  std::printf(
      "erase: single-key %.2f ns/key (%.2fx single-key positive contains; %.2fx the single-key"
      " read-read-write floor of %.2f ns), batched %.2f ns/key (%.2fx batched floor, %.2fx"
      " single-key positive contains); removed %zu of %zu, each repetition on a fresh copy\n",
      erase_single, erase_single / pos_single, erase_single / floor_write, floor_write, erase_batch,
      erase_batch / floor_batched, erase_batch / pos_single, removed, q);
  return 0;
}

template <cuckoo::Isa L>
int run_level(const Options& opt) {
  switch (opt.f) {
    case 8:
      return run<cuckoo::PackedTable<4, 8, L>, true>(opt);
    case 12:
      return run<cuckoo::PackedTable<4, 12, L>, true>(opt);
    case 16:
      return run<cuckoo::PackedTable<4, 16, L>, true>(opt);
    default:
      return run<cuckoo::PackedTable<4, 0, L>, true>(opt);
  }
}

/// --isa: the filter at an explicit level, as the facade would hold it on a CPU that has it.
int run_at_level(const Options& opt) {
  if (opt.isa == "portable") return run_level<cuckoo::Isa::kPortable>(opt);
#if CUCKOO_HAS_X86_VECTOR_PATHS
  if (opt.isa == "avx2" || opt.isa == "avx512") {
    const cuckoo::Isa want = opt.isa == "avx2" ? cuckoo::Isa::kAvx2 : cuckoo::Isa::kAvx512;
    if (cuckoo::active_isa() < want) {
      std::fprintf(stderr, "perf_bench: this CPU (or CUCKOO_ISA) does not allow %s\n",
                   opt.isa.c_str());
      return 2;
    }
    return want == cuckoo::Isa::kAvx2 ? run_level<cuckoo::Isa::kAvx2>(opt)
                                      : run_level<cuckoo::Isa::kAvx512>(opt);
  }
#endif
  std::fprintf(stderr, "perf_bench: --isa takes portable, avx2 or avx512\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--mb") {
      opt.mb = std::stod(value());
    } else if (a == "--f") {
      opt.f = static_cast<unsigned>(std::stoul(value()));
    } else if (a == "--load") {
      opt.load = std::stod(value());
    } else if (a == "--queries") {
      opt.queries = std::stoull(value());
    } else if (a == "--reps") {
      opt.reps = std::stoi(value());
    } else if (a == "--depths") {
      opt.depths = true;
    } else if (a == "--single-build") {
      opt.single_build = true;
    } else if (a == "--compare") {
      opt.compare = true;
    } else if (a == "--semi") {
      opt.semi = true;
    } else if (a == "--isa") {
      opt.isa = value();
    } else {
      std::fprintf(stderr,
                   "usage: perf_bench [--mb 192] [--f 12] [--load 0.95] [--queries 10000000]"
                   " [--reps 3] [--depths] [--single-build] [--compare] [--semi]"
                   " [--isa portable|avx2|avx512]\n");
      return 2;
    }
  }
  if (opt.compare) {
    compare_paths<cuckoo::PackedTable<4, 12>>(12, opt.reps);
    compare_paths<cuckoo::PackedTable<4, 16>>(16, opt.reps);
    compare_paths<cuckoo::PackedTable<4, 8>>(8, opt.reps);
    compare_paths<cuckoo::PackedTable<2>>(16, opt.reps);
    return 0;
  }
  if (opt.semi) {
    if (opt.f == 12) return run<cuckoo::SemiSortedTable<12>>(opt);
    if (opt.f == 13) return run<cuckoo::SemiSortedTable<13>>(opt);
    return run<cuckoo::SemiSortedTable<>>(opt);
  }
  if (!opt.isa.empty()) return run_at_level(opt);
  switch (opt.f) {
    case 8:
      return run<cuckoo::PackedTable<4, 8>>(opt);
    case 12:
      return run<cuckoo::PackedTable<4, 12>>(opt);
    case 16:
      return run<cuckoo::PackedTable<4, 16>>(opt);
    default:
      return run<cuckoo::PackedTable<4>>(opt);
  }
}
