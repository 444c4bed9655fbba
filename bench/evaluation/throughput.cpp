// bench/evaluation/throughput.cpp — Table 3 and Figs. 5–8 (paper §7): every filter given the same
// memory, filled from empty, looked up along the way, then deleted until empty.
//
// One pass per filter and run does all of it, so a filter is built once per run rather than once
// per figure: the fill is cut into equal chunks of keys, each chunk timed (Fig. 7, and summed for
// Table 3's construction speed); after every other chunk positive and negative lookups are timed
// (Fig. 6); once full, the false-positive rate (Table 3) and the mixed workloads (Fig. 5) are
// measured; then the keys are deleted chunk by chunk (Fig. 8). Lookup and delete time never counts
// towards construction. Each point is the median over runs, min and max kept.
//
// Every operation is the single-key call with the hash computed inside the timed loop, as in the
// paper; keys are pre-generated so key generation is not timed. Timed regions use this thread's
// CPU time (common.hpp: thread_seconds), which equals wall time on an idle machine.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "common.hpp"
#include "cuckoo/blocked/blocked_filter.hpp"
#include "cuckoo/cuckoo.hpp"
#include "experiments.hpp"
#if __has_include("cuckoo/amq/bloom.hpp")
#include "cuckoo/amq/bloom.hpp"
#endif
#if __has_include("cuckoo/amq/blocked_bloom.hpp")
#include "cuckoo/amq/blocked_bloom.hpp"
#endif
#if __has_include("cuckoo/amq/quotient_filter.hpp")
#include "cuckoo/amq/quotient_filter.hpp"
#endif
#if __has_include("cuckoo/amq/dleft_counting_bloom.hpp")
#include "cuckoo/amq/dleft_counting_bloom.hpp"
#endif
#if __has_include("cuckoo/amq/counting_bloom.hpp")
#include "cuckoo/amq/counting_bloom.hpp"
#endif

namespace bench {
namespace {

constexpr std::size_t kChunks = 20;      // fill and delete steps: 5% of the key budget
constexpr std::size_t kLookupEvery = 2;  // lookups after every other chunk: 10 points
const std::vector<double> kMixes = {0, 0.25, 0.5, 0.75, 1.0};  // Fig. 5's p

struct Point {
  double occupancy, mops;
};

struct RunResult {
  std::size_t items = 0, memory = 0;
  double build_seconds = 0, fpr = NAN;
  std::vector<Point> insert, positive, negative, erase;
  std::vector<double> mix;  // Mops at each of kMixes
};

struct Wanted {
  bool occupancy = false, mix = false, fpr = false, erase = false;
};

/// What one run of one filter gets: its keys (positives inserted in order, negatives never).
struct PassInput {
  std::string name;
  const std::vector<std::uint64_t>* keys;
  const std::vector<std::uint64_t>* negatives;
  std::size_t lookup_queries, fpr_queries;
  double budget;  // seconds per lookup measurement, at most
  Progress* progress;
  std::uint64_t seed;
};

/// Items over the filter's entries (its capacity for the Bloom filters, which have none). Not
/// load_factor(): the d-left filter's scans its whole table.
template <class F>
double occupancy_of(const F& f, std::size_t capacity) {
  return static_cast<double>(f.size()) / static_cast<double>(capacity);
}

/// Lookup throughput over `queries`, in blocks, stopping early once `budget` seconds have passed
/// so that a slow filter costs about as much time per point as a fast one. `done` is the number
/// of queries made, `hits` how many answered true.
template <class F>
double time_lookups(const F& f, const std::vector<std::uint64_t>& queries, double budget,
                    std::size_t& done, std::size_t& hits) {
  constexpr std::size_t kBlock = 1 << 14;
  const double t0 = thread_seconds();
  std::size_t h = 0, i = 0;
  double dt = 0;
  while (i < queries.size()) {
    const std::size_t end = std::min(i + kBlock, queries.size());
    for (; i < end; ++i) h += f.contains(queries[i]) ? 1 : 0;
    dt = thread_seconds() - t0;
    if (dt >= budget) break;
  }
  done = i;
  hits = h;
  g_sink = g_sink + h;
  return static_cast<double>(i) / dt / 1e6;
}

/// Q inserted keys spread over the whole inserted prefix (not just the oldest ones).
std::vector<std::uint64_t> sample(const std::vector<std::uint64_t>& keys, std::size_t n,
                                  std::size_t q) {
  std::vector<std::uint64_t> out(q);
  cuckoo::detail::SplitMix64 rng(0xC0FFEE ^ n);
  for (auto& k : out) k = keys[(rng() >> 32) * n >> 32];
  return out;
}

/// The pass itself, for any filter with insert / contains (/ erase) / size. `limit` is the most
/// keys to insert (the capacity for filters filled "to capacity"; the slot count for those filled
/// until their first failed insert); `capacity` is what occupancy divides by (entries, or the
/// design capacity of a Bloom filter).
template <class F>
RunResult run_pass(F& f, std::size_t limit, std::size_t capacity, const PassInput& in,
                   const Wanted& want) {
  RunResult res;
  const auto& keys = *in.keys;
  const auto& negatives = *in.negatives;
  limit = std::min(limit, keys.size());
  const std::size_t chunk = (limit + kChunks - 1) / kChunks;
  const std::size_t q = in.lookup_queries;
  std::vector<std::uint64_t> negative_queries(negatives.begin(), negatives.begin() + q);

  std::size_t n = 0;
  bool full = false;
  for (std::size_t c = 0; !full && n < limit; ++c) {
    const std::size_t end = std::min(n + chunk, limit);
    const double before = occupancy_of(f, capacity);
    const std::size_t begin = n;
    const double t0 = thread_seconds();
    for (; n < end; ++n) {
      if (!f.insert(keys[n])) {
        full = true;
        break;
      }
    }
    const double dt = thread_seconds() - t0;
    res.build_seconds += dt;
    // A last chunk much shorter than the others (the fill stopped early in it) would be timed
    // mostly on the failed insert's kick walk; it counts towards construction but is no point.
    if (n - begin >= chunk / 4) {
      res.insert.push_back(
          {(before + occupancy_of(f, capacity)) / 2, static_cast<double>(n - begin) / dt / 1e6});
    }
    const bool last = full || n >= limit;
    if (want.occupancy && n > 0 && ((c + 1) % kLookupEvery == 0 || last)) {
      std::size_t done = 0, hits = 0;
      const double occ = occupancy_of(f, capacity);
      res.positive.push_back({occ, time_lookups(f, sample(keys, n, q), in.budget, done, hits)});
      if (hits != done) throw std::logic_error(in.name + ": false negative");
      res.negative.push_back({occ, time_lookups(f, negative_queries, in.budget, done, hits)});
    }
    if (in.progress) in.progress->step(fmt::format("{} fill {:.0f}%", in.name, 100.0 * n / limit));
  }
  res.items = n;
  res.memory = f.memory_bytes();

  if (want.fpr) {
    std::size_t fp = 0;
    for (std::size_t i = 0; i < in.fpr_queries; ++i) fp += f.contains(negatives[i]) ? 1 : 0;
    res.fpr = static_cast<double>(fp) / static_cast<double>(in.fpr_queries);
  }
  if (want.mix) {
    for (const double p : kMixes) {
      std::vector<std::uint64_t> queries(q);
      cuckoo::detail::SplitMix64 rng(0x5EED ^ static_cast<std::uint64_t>(p * 100));
      std::size_t next_negative = q;  // negatives not used by the occupancy lookups
      for (auto& k : queries) {
        const bool positive = static_cast<double>(rng() >> 11) * 0x1.0p-53 < p;
        k = positive ? keys[(rng() >> 32) * n >> 32] : negatives[next_negative++];
      }
      std::size_t done = 0, hits = 0;
      res.mix.push_back(time_lookups(f, queries, in.budget, done, hits));
    }
  }
  if constexpr (requires { f.erase(std::uint64_t{}); }) {
    if (want.erase) {
      std::size_t i = 0;
      while (i < n) {
        const std::size_t end = std::min(i + chunk, n);
        const double before = occupancy_of(f, capacity);
        const double t0 = thread_seconds();
        std::size_t erased = 0;
        for (std::size_t j = i; j < end; ++j) erased += f.erase(keys[j]) ? 1 : 0;
        const double dt = thread_seconds() - t0;
        if (erased != end - i)
          throw std::logic_error(in.name + ": erase of an inserted key failed");
        res.erase.push_back(
            {(before + occupancy_of(f, capacity)) / 2, static_cast<double>(end - i) / dt / 1e6});
        i = end;
      }
    }
  }
  return res;
}

/// Median / min / max of a per-chunk series over runs, point by point.
void write_series(Csv& csv, std::vector<std::string> prefix,
                  const std::vector<std::vector<Point>>& runs) {
  std::size_t points = 0;
  for (const auto& r : runs) points = std::max(points, r.size());
  for (std::size_t i = 0; i < points; ++i) {
    std::vector<double> occ, mops;
    for (const auto& r : runs) {
      if (i < r.size()) occ.push_back(r[i].occupancy), mops.push_back(r[i].mops);
    }
    const Summary m = summarize(mops);
    std::vector<std::string> row = prefix;
    for (auto& field :
         {num(summarize(occ).median), num(m.median), num(m.min), num(m.max), num(mops.size())}) {
      row.push_back(field);
    }
    csv.row(row);
  }
}

// ---- The filters under test
// -----------------------------------------------------------------------

/// One filter of the comparison: how to build it for a memory budget and run the pass on it.
struct Subject {
  std::string name;
  bool erasable;
  bool in_paper;  // in Table 3 and Figs. 5-7 (the paper's six and ours); the CBF only in Fig. 8
  std::function<RunResult(const PassInput&, const Wanted&)> run;
};

/// Every filter this build has, each given `bytes` of memory (paper §7.1). A comparator that has
/// not been written yet is simply absent from the list, and from every CSV and plot.
std::vector<Subject> all_subjects(std::size_t bytes) {
  std::vector<Subject> out;
  // CF: buckets of four 12-bit entries, as many as fit (m = 2^25 at 192 MiB, as in the paper);
  // filled until the first failed insert, so the limit is the slot count.
  const std::uint64_t m = bytes * 8 / (4 * 12) & ~std::uint64_t{1};
  out.push_back({"CF", true, true, [m](const PassInput& in, const Wanted& w) {
                   cuckoo::BasicFilter<cuckoo::PackedTable<4, 12>> f(
                       cuckoo::Layout{m, 12, 4, false}, m * 4, 500, in.seed);
                   return run_pass(f, m * 4, m * 4, in, w);
                 }});
  // ss-CF: the same buckets semi-sorted, which stores a 13-bit fingerprint in 12 bits per entry
  // (§5.2). Listed only when this build's facade has a semi-sorted table.
  bool semi_sorted = true;
  try {
    cuckoo::Filter probe(cuckoo::Layout{2, 13, 4, true}, 8, 500, 1);
  } catch (const std::invalid_argument&) {
    semi_sorted = false;
  }
  if (semi_sorted) {
    out.push_back({"ss-CF", true, true, [m](const PassInput& in, const Wanted& w) {
                     cuckoo::Filter filter(cuckoo::Layout{m, 13, 4, true}, m * 4, 500, in.seed);
                     return filter.visit([&](auto& f) { return run_pass(f, m * 4, m * 4, in, w); });
                   }});
  }
  // blk-CF: the blocked cuckoo filter (issue 17), one 64-byte block of 43 items per line, as many
  // blocks as fit; filled until the first failed insert, so the limit is the slot count.
  const std::uint64_t blocks =
      bytes / cuckoo::BasicBlockedFilter<>::kBlockBytes & ~std::uint64_t{1};
  const std::size_t blocked_slots = blocks * cuckoo::BasicBlockedFilter<>::kSlotsPerBlock;
  out.push_back({"blk-CF", true, true, [=](const PassInput& in, const Wanted& w) {
                   cuckoo::BasicBlockedFilter<> f(blocks, blocked_slots, 500, in.seed);
                   return run_pass(f, blocked_slots, blocked_slots, in, w);
                 }});
  // The comparators (include/cuckoo/amq/), each present only if this build has its header.
  // BF and blk-BF: 13 bits per item, k = 9, filled to that capacity (§7.1).
  [[maybe_unused]] const std::size_t bloom_items = bytes * 8 / 13;
#if __has_include("cuckoo/amq/bloom.hpp")
  out.push_back({"BF", false, true, [=](const PassInput& in, const Wanted& w) {
                   auto f =
                       cuckoo::amq::Bloom::with_memory_and_hashes(bytes, bloom_items, 9, in.seed);
                   return run_pass(f, f.capacity(), f.capacity(), in, w);
                 }});
#endif
#if __has_include("cuckoo/amq/blocked_bloom.hpp")
  out.push_back({"blk-BF", false, true, [=](const PassInput& in, const Wanted& w) {
                   auto f = cuckoo::amq::BlockedBloom::with_memory_and_hashes(bytes, bloom_items, 9,
                                                                              in.seed);
                   return run_pass(f, f.capacity(), f.capacity(), in, w);
                 }});
#endif
  // QF: 12-bit slots (9-bit remainders), filled to its 90% maximum load.
#if __has_include("cuckoo/amq/quotient_filter.hpp")
  out.push_back({"QF", true, true, [=](const PassInput& in, const Wanted& w) {
                   auto f =
                       cuckoo::amq::QuotientFilter::with_memory(bytes, bytes * 8 / 12, in.seed);
                   return run_pass(f, f.capacity(), f.slot_count(), in, w);
                 }});
#endif
  // dl-CBF: d = 4 tables of 4-cell buckets, filled until its first failed insert.
#if __has_include("cuckoo/amq/dleft_counting_bloom.hpp")
  out.push_back({"dl-CBF", true, true, [=](const PassInput& in, const Wanted& w) {
                   auto f =
                       cuckoo::amq::DLeftCountingBloom::with_memory(bytes, bytes * 8 / 12, in.seed);
                   return run_pass(f, f.cell_count(), f.cell_count(), in, w);
                 }});
#endif
  // CBF: 4-bit counters, 13 counters per item like the BF's bits, so it holds a quarter as many
  // items in the same memory. Only for Fig. 8 (the paper leaves it out; the issue asks for it).
#if __has_include("cuckoo/amq/counting_bloom.hpp")
  out.push_back({"CBF", true, false, [=](const PassInput& in, const Wanted& w) {
                   auto f =
                       cuckoo::amq::CountingBloom::with_memory(bytes, bloom_items / 4, in.seed);
                   Wanted only_delete;
                   only_delete.erase = w.erase;
                   return run_pass(f, f.capacity(), f.capacity(), in, only_delete);
                 }});
#endif
  return out;
}

bool has(const std::vector<Part>& parts, Part p) {
  return std::find(parts.begin(), parts.end(), p) != parts.end();
}

}  // namespace

// table3.csv: filter, memory_bytes, runs, items_median, items_min, items_max, bits_per_item,
//   fpr_median, fpr_min, fpr_max, build_mops_median, build_mops_min, build_mops_max
// lookup.csv (Fig. 5): filter, p, mops_median, mops_min, mops_max, runs
// occupancy.csv (Fig. 6): filter, kind (negative|positive), occupancy, mops_median, mops_min,
//   mops_max, runs
// insert.csv (Fig. 7), delete.csv (Fig. 8): filter, occupancy, mops_median, mops_min, mops_max,
//   runs
void run_throughput(const Options& opt, const std::vector<Part>& parts) {
  const auto start = Clock::now();
  const Scale& s = opt.scale;
  Wanted want;
  want.occupancy = has(parts, Part::kOccupancy);
  want.mix = has(parts, Part::kLookup);
  want.fpr = has(parts, Part::kTable3);
  want.erase = has(parts, Part::kDelete);

  const std::vector<Subject> subjects = all_subjects(s.filter_bytes);
  // Enough keys for the most frugal filter (none here stores an item in under 10 bits).
  const std::size_t key_budget = s.filter_bytes * 8 / 10;
  const std::size_t negatives_needed = std::max(s.fpr_queries, s.lookup_queries * 2);

  std::map<std::string, std::vector<RunResult>> results;
  Progress progress("throughput", subjects.size() * s.throughput_runs * (kChunks + 1));
  for (unsigned r = 0; r < s.throughput_runs; ++r) {
    const auto keys = make_keys(key_budget, positive_seed(r));
    const auto negatives = make_keys(negatives_needed, negative_seed(r));
    for (const Subject& subject : subjects) {
      if (!subject.in_paper && !want.erase) continue;  // the CBF is only in Fig. 8
      const PassInput in{.name = subject.name,
                         .keys = &keys,
                         .negatives = &negatives,
                         .lookup_queries = s.lookup_queries,
                         .fpr_queries = s.fpr_queries,
                         .budget = s.point_seconds,
                         .progress = &progress,
                         .seed = cuckoo::defaults::kSeed + r};
      results[subject.name].push_back(subject.run(in, want));
    }
  }

  if (has(parts, Part::kTable3)) {
    Csv csv(opt.out_dir / "table3.csv",
            {"filter", "memory_bytes", "runs", "items_median", "items_min", "items_max",
             "bits_per_item", "fpr_median", "fpr_min", "fpr_max", "build_mops_median",
             "build_mops_min", "build_mops_max"});
    for (const Subject& subject : subjects) {
      if (!subject.in_paper) continue;
      const auto& runs = results[subject.name];
      std::vector<double> items, fprs, speed;
      for (const auto& r : runs) {
        items.push_back(static_cast<double>(r.items));
        fprs.push_back(r.fpr);
        speed.push_back(static_cast<double>(r.items) / r.build_seconds / 1e6);
      }
      const Summary is = summarize(items), fs = summarize(fprs), ss = summarize(speed);
      const std::size_t memory = runs.front().memory;
      csv.row({subject.name, num(memory), num(runs.size()), num(is.median), num(is.min),
               num(is.max), num(8.0 * static_cast<double>(memory) / is.median), num(fs.median),
               num(fs.min), num(fs.max), num(ss.median), num(ss.min), num(ss.max)});
    }
  }
  if (want.mix) {
    Csv csv(opt.out_dir / "lookup.csv",
            {"filter", "p", "mops_median", "mops_min", "mops_max", "runs"});
    for (const Subject& subject : subjects) {
      if (!subject.in_paper) continue;
      const auto& runs = results[subject.name];
      for (std::size_t i = 0; i < kMixes.size(); ++i) {
        std::vector<double> v;
        for (const auto& r : runs) v.push_back(r.mix[i]);
        const Summary m = summarize(v);
        csv.row(
            {subject.name, num(kMixes[i]), num(m.median), num(m.min), num(m.max), num(v.size())});
      }
    }
  }
  const std::vector<std::string> series_header = {"occupancy", "mops_median", "mops_min",
                                                  "mops_max", "runs"};
  auto series = [&](Csv& csv, const Subject& subject, std::vector<Point> RunResult::*member,
                    std::vector<std::string> prefix) {
    std::vector<std::vector<Point>> v;
    for (const auto& r : results[subject.name]) v.push_back(r.*member);
    write_series(csv, std::move(prefix), v);
  };
  auto header = [&](std::vector<std::string> first) {
    first.insert(first.end(), series_header.begin(), series_header.end());
    return first;
  };
  if (want.occupancy) {
    Csv csv(opt.out_dir / "occupancy.csv", header({"filter", "kind"}));
    for (const Subject& subject : subjects) {
      if (!subject.in_paper) continue;
      series(csv, subject, &RunResult::negative, {subject.name, "negative"});
      series(csv, subject, &RunResult::positive, {subject.name, "positive"});
    }
  }
  if (has(parts, Part::kInsert)) {
    Csv csv(opt.out_dir / "insert.csv", header({"filter"}));
    for (const Subject& subject : subjects) {
      if (subject.in_paper) series(csv, subject, &RunResult::insert, {subject.name});
    }
  }
  if (want.erase) {
    Csv csv(opt.out_dir / "delete.csv", header({"filter"}));
    for (const Subject& subject : subjects) {
      if (subject.erasable) series(csv, subject, &RunResult::erase, {subject.name});
    }
  }
  record_meta(opt.out_dir, "seconds_throughput", num(seconds_since(start)));
}

}  // namespace bench
