// bench/evaluation/growth_experiments.cpp — issue 14: a filter that starts at 1000 items and grows
// to the scale's final count (10^8 at --scale paper) at ε = 0.001, b = 4, measured against the two
// chained designs built from our fixed filters and against a fixed filter sized for each size.
//
// Designs:
//   growable            cuckoo::BasicGrowableFilter<4>, capacity 1000, doubling itself.
//   chained-equal       RedisBloom's CF with EXPANSION 2: sub-filters of capacity 1000, 2000,
//                       4000, ... all at ε (the same fingerprint width); a new one when an insert
//                       into the newest fails; lookups probe every sub-filter, newest first.
//   chained-tightening  the same capacities, sub-filter i at ε_i = ε·(1 − r)·r^i with r = 1/2, so
//                       that Σ ε_i ≤ ε (scalable Bloom / scalable_cuckoo_filter style).
//   fixed               one cuckoo::Filter sized for exactly the checkpoint's key count, rebuilt at
//                       every checkpoint: the reference.
//
// Keys are one SplitMix64 stream (a bijection of a counter, so every output is distinct): the first
// `growth_final_keys` are inserted in order, the ones after them are the never-inserted queries.
// The growing designs receive the keys in segments that end at the checkpoints 1000·10^k; at each
// checkpoint every design is measured (untimed between segments):
//   - the false-positive rate over scale.fpr_queries never-inserted keys;
//   - bits per item, memory_bytes()·8 / items;
//   - single-key lookups over scale.lookup_queries keys, half inserted (uniform over those so
//     far), half not, shuffled together, and batched lookups (contains(span, span)) over the same
//     keys in batches of kBatch; for the chained designs the batch call is made on every
//     sub-filter and the answers OR-ed. Median of scale.throughput_runs timings, interleaved over
//     the designs;
//   - insert time per key over the whole growth so far (doublings and new sub-filters included);
//     for the fixed filter, the time to fill the pre-sized filter with that many keys.
// And for the growable filter, at every doubling, its bits per item just before it (the insert that
// doubles), beside the bound: fixed bits per item at that size + 2 + log2(1 + doublings).
//
// growth.csv: keys, design, fpr, fpr_queries, expected_fpr, bits_per_item, memory_bytes,
//   lookup_ns, batch_ns, insert_ns, doublings, subfilters, fingerprint_bits
// growth_doublings.csv: doubling, size_before, memory_bytes_before, bits_per_item, slot_bits,
//   fixed_bits_per_item, bound, excess, doublings_in_insert (2 or more: one insert doubled the
//   table more than once, see note_doublings)
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/core.h>

#include "common.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/cuckoo.hpp"
#include "cuckoo/growable/growable_filter.hpp"
#include "experiments.hpp"

namespace bench {
namespace {

constexpr std::size_t kStartCapacity = 1000;
constexpr double kTargetFpr = 0.001;
constexpr unsigned kBucketSize = 4;
constexpr double kTighteningRatio = 0.5;  // r of chained-tightening
constexpr std::size_t kBatch = 1024;      // keys per batched contains call
constexpr std::uint64_t kKeySeed = 0x1405'6E0C'7A11'5EEDull;

cuckoo::Config config_for(std::size_t capacity, double target_fpr) {
  return {.capacity = capacity, .target_fpr = target_fpr, .bucket_size = kBucketSize};
}

/// 2bα / (2^f − 1): the rate a fixed filter of width f at load α is expected to have.
double expected_fpr_of(const cuckoo::Filter& f) {
  return 2.0 * kBucketSize * f.load_factor() /
         (std::ldexp(1.0, static_cast<int>(f.fingerprint_bits())) - 1);
}

/// A chain of fixed filters of doubling capacity; `tightening` picks the rate of each.
class Chain {
 public:
  explicit Chain(bool tightening) : tightening_(tightening) { add_part(); }

  bool insert(std::uint64_t key) {
    if (parts_.back().insert(key)) return ++size_, true;
    add_part();
    if (!parts_.back().insert(key)) return false;
    return ++size_, true;
  }
  bool contains(std::uint64_t key) const noexcept {
    for (auto it = parts_.rbegin(); it != parts_.rend(); ++it) {
      if (it->contains(key)) return true;
    }
    return false;
  }
  /// The batch call on every sub-filter, newest first, answers OR-ed.
  void contains(std::span<const std::uint64_t> keys, std::span<bool> out) const noexcept {
    std::array<bool, kBatch> more;
    for (std::size_t start = 0; start < keys.size(); start += kBatch) {
      const std::size_t n = std::min(kBatch, keys.size() - start);
      const auto in = keys.subspan(start, n);
      const auto answers = out.subspan(start, n);
      parts_.back().contains(in, answers);
      for (std::size_t p = parts_.size() - 1; p-- > 0;) {
        parts_[p].contains(in, std::span<bool>(more.data(), n));
        for (std::size_t i = 0; i < n; ++i) answers[i] = answers[i] || more[i];
      }
    }
  }

  std::size_t size() const noexcept { return size_; }
  std::size_t memory_bytes() const noexcept {
    std::size_t bytes = 0;
    for (const auto& p : parts_) bytes += p.memory_bytes();
    return bytes;
  }
  std::size_t parts() const noexcept { return parts_.size(); }
  unsigned newest_fingerprint_bits() const noexcept { return parts_.back().fingerprint_bits(); }
  double expected_fpr() const noexcept {
    double sum = 0;
    for (const auto& p : parts_) sum += expected_fpr_of(p);
    return sum;
  }

 private:
  void add_part() {
    const std::size_t i = parts_.size();
    const double eps = tightening_
                           ? kTargetFpr * (1 - kTighteningRatio) * std::pow(kTighteningRatio, i)
                           : kTargetFpr;
    parts_.emplace_back(config_for(kStartCapacity << i, eps));
  }

  bool tightening_;
  std::vector<cuckoo::Filter> parts_;
  std::size_t size_ = 0;
};

/// The growable filter's state just before one of its doublings.
struct DoublingEvent {
  unsigned doublings_before;
  std::size_t size_before, bytes_before;
  unsigned slot_bits_before;
  unsigned doublings_in_insert;  // how many doublings the insert that made this one made
};

/// Notes the doublings the last insert made, from `before` to g.doublings(): usually one; an insert
/// may double the table again when its key's bucket pair is still crowded after the first. The
/// state before a later doubling of the same insert is not observable; its table is that of the
/// generation in between (PackedTable::bytes_for of its buckets and slot width).
void note_doublings(const cuckoo::BasicGrowableFilter<kBucketSize>& g, unsigned before,
                    std::vector<DoublingEvent>& events, std::size_t& bytes, unsigned& slot_bits) {
  using Table = cuckoo::BasicGrowableFilter<kBucketSize>::table_type;
  const unsigned count = g.doublings() - before;
  events.push_back({before, g.size() - 1, bytes, slot_bits, count});
  for (unsigned j = before + 1; j < g.doublings(); ++j) {
    const unsigned bits = cuckoo::growth::slot_bits(g.base_fingerprint_bits(), j, g.schedule());
    events.push_back(
        {j, g.size() - 1, Table::bytes_for(g.initial_bucket_count() << j, bits), bits, count});
  }
  bytes = g.memory_bytes();
  slot_bits = g.slot_bits();
}

/// Inserts keys[begin, end) into the growable filter, noting each doubling; returns the thread
/// time it took. The check after each insert is one comparison, and the note a push onto a vector
/// reserved in advance, so they hardly weigh on the time.
double insert_growable(cuckoo::BasicGrowableFilter<kBucketSize>& g,
                       const std::vector<std::uint64_t>& keys, std::size_t begin, std::size_t end,
                       std::vector<DoublingEvent>& events, std::size_t& bytes,
                       unsigned& slot_bits) {
  unsigned doublings = g.doublings();
  const double t0 = thread_seconds();
  for (std::size_t i = begin; i < end; ++i) {
    if (!g.insert(keys[i])) {
      throw std::runtime_error(
          fmt::format("growable: insert of key #{} ({:#x}) returned false at size {}, {} doublings",
                      i, keys[i], g.size(), g.doublings()));
    }
    if (g.doublings() != doublings) {
      note_doublings(g, doublings, events, bytes, slot_bits);
      doublings = g.doublings();
    }
  }
  return thread_seconds() - t0;
}

template <class F>
double insert_range(F& f, const std::string& name, const std::vector<std::uint64_t>& keys,
                    std::size_t begin, std::size_t end) {
  const double t0 = thread_seconds();
  for (std::size_t i = begin; i < end; ++i) {
    if (!f.insert(keys[i])) {
      throw std::runtime_error(
          fmt::format("{}: insert of key #{} returned false at size {}", name, i, f.size()));
    }
  }
  return thread_seconds() - t0;
}

template <class F>
double measure_fpr(const F& f, const std::vector<std::uint64_t>& negatives, std::size_t queries) {
  std::size_t hits = 0;
  for (std::size_t i = 0; i < queries; ++i) hits += f.contains(negatives[i]) ? 1 : 0;
  return static_cast<double>(hits) / static_cast<double>(queries);
}

/// ns per single-key lookup over `queries`; `hits` is how many answered true.
template <class F>
double time_single(const F& f, const std::vector<std::uint64_t>& queries, std::size_t& hits) {
  std::size_t h = 0;
  const double t0 = thread_seconds();
  for (const std::uint64_t q : queries) h += f.contains(q) ? 1 : 0;
  const double dt = thread_seconds() - t0;
  hits = h;
  g_sink = g_sink + h;
  return dt * 1e9 / static_cast<double>(queries.size());
}

/// ns per key of batched lookups over `queries`, kBatch keys per call.
template <class F>
double time_batch(const F& f, const std::vector<std::uint64_t>& queries, std::size_t& hits) {
  std::array<bool, kBatch> out{};
  std::size_t h = 0;
  const double t0 = thread_seconds();
  for (std::size_t start = 0; start < queries.size(); start += kBatch) {
    const std::size_t n = std::min(kBatch, queries.size() - start);
    f.contains(std::span<const std::uint64_t>(queries.data() + start, n),
               std::span<bool>(out.data(), n));
    for (std::size_t i = 0; i < n; ++i) h += out[i] ? 1 : 0;
  }
  const double dt = thread_seconds() - t0;
  hits = h;
  g_sink = g_sink + h;
  return dt * 1e9 / static_cast<double>(queries.size());
}

/// What one design measures at one checkpoint.
struct Row {
  std::string design;
  double fpr = NAN, expected_fpr = NAN, bits_per_item = NAN;
  std::size_t memory_bytes = 0;
  std::vector<double> single_ns, batch_ns;
  double insert_ns = NAN;
  unsigned doublings = 0, fingerprint_bits = 0;
  std::size_t subfilters = 1;
};

/// Times the lookups of one design once (single-key, then batched) and checks their answers: every
/// inserted key found, the batch agreeing with the single-key calls in how many keys it accepts.
template <class F>
void time_lookups(const F& f, Row& row, const std::vector<std::uint64_t>& queries,
                  std::size_t positives) {
  std::size_t single_hits = 0, batch_hits = 0;
  row.single_ns.push_back(time_single(f, queries, single_hits));
  row.batch_ns.push_back(time_batch(f, queries, batch_hits));
  if (single_hits < positives) {
    throw std::logic_error(fmt::format("{}: false negative ({} of {} inserted keys found)",
                                       row.design, single_hits, positives));
  }
  if (batch_hits != single_hits) {
    throw std::logic_error(fmt::format("{}: batched lookups accept {} keys, single-key {}",
                                       row.design, batch_hits, single_hits));
  }
}

}  // namespace

void run_growth(const Options& opt) {
  const auto start = Clock::now();
  const Scale& s = opt.scale;
  const std::size_t final_keys = s.growth_final_keys;
  std::vector<std::size_t> checkpoints;
  for (std::size_t n = kStartCapacity; n <= final_keys; n *= 10) checkpoints.push_back(n);
  if (checkpoints.empty() || checkpoints.back() != final_keys) checkpoints.push_back(final_keys);

  // One stream: the first final_keys are inserted, the rest are never-inserted queries.
  const std::size_t negative_count = std::max(s.fpr_queries, s.lookup_queries);
  std::vector<std::uint64_t> keys(final_keys), negatives(negative_count);
  {
    cuckoo::detail::SplitMix64 rng(kKeySeed);
    for (auto& k : keys) k = rng();
    for (auto& k : negatives) k = rng();
  }

  Csv csv(opt.out_dir / "growth.csv",
          {"keys", "design", "fpr", "fpr_queries", "expected_fpr", "bits_per_item", "memory_bytes",
           "lookup_ns", "batch_ns", "insert_ns", "doublings", "subfilters", "fingerprint_bits"});
  Progress progress("growth", checkpoints.size() * 3);

  cuckoo::BasicGrowableFilter<kBucketSize> growable(config_for(kStartCapacity, kTargetFpr));
  Chain equal(false), tightening(true);
  double growable_seconds = 0, equal_seconds = 0, tightening_seconds = 0;
  std::vector<DoublingEvent> events;
  events.reserve(64);
  std::size_t growable_bytes = growable.memory_bytes();
  unsigned growable_slot_bits = growable.slot_bits();

  std::size_t inserted = 0;
  for (const std::size_t n : checkpoints) {
    // Grow the three growing designs to n keys, one after the other.
    growable_seconds +=
        insert_growable(growable, keys, inserted, n, events, growable_bytes, growable_slot_bits);
    equal_seconds += insert_range(equal, "chained-equal", keys, inserted, n);
    tightening_seconds += insert_range(tightening, "chained-tightening", keys, inserted, n);
    inserted = n;
    progress.step(fmt::format("n={} grown", n));

    // The reference: a fixed filter built for exactly n keys.
    cuckoo::Filter fixed(config_for(n, kTargetFpr));
    const double fixed_seconds = insert_range(fixed, "fixed", keys, 0, n);
    progress.step(fmt::format("n={} fixed built", n));

    // Queries: half inserted keys (uniform over the n so far), half never inserted, shuffled.
    const std::size_t q = s.lookup_queries;
    std::vector<std::uint64_t> queries(q);
    std::size_t positives = 0;
    {
      cuckoo::detail::SplitMix64 rng(0x600D5EED ^ n);
      std::size_t next_negative = 0;
      for (std::size_t i = 0; i < q; ++i) {
        if (i % 2 == 0) {
          queries[i] = keys[((rng() >> 32) * n) >> 32];
          ++positives;
        } else {
          queries[i] = negatives[next_negative++];
        }
      }
      for (std::size_t i = q; i > 1; --i) {  // Fisher-Yates
        std::swap(queries[i - 1], queries[((rng() >> 32) * i) >> 32]);
      }
    }

    const double per_key = 1e9 / static_cast<double>(n);
    std::vector<Row> rows(4);
    rows[0].design = "growable";
    rows[0].fpr = measure_fpr(growable, negatives, s.fpr_queries);
    rows[0].expected_fpr = growable.expected_fpr();
    rows[0].memory_bytes = growable.memory_bytes();
    rows[0].insert_ns = growable_seconds * per_key;
    rows[0].doublings = growable.doublings();
    rows[0].fingerprint_bits = growable.fingerprint_bits();
    rows[1].design = "chained-equal";
    rows[2].design = "chained-tightening";
    for (auto [row, chain, seconds] : {std::tuple{&rows[1], &equal, equal_seconds},
                                       std::tuple{&rows[2], &tightening, tightening_seconds}}) {
      row->fpr = measure_fpr(*chain, negatives, s.fpr_queries);
      row->expected_fpr = chain->expected_fpr();
      row->memory_bytes = chain->memory_bytes();
      row->insert_ns = seconds * per_key;
      row->doublings = static_cast<unsigned>(chain->parts() - 1);
      row->subfilters = chain->parts();
      row->fingerprint_bits = chain->newest_fingerprint_bits();
    }
    rows[3].design = "fixed";
    rows[3].fpr = measure_fpr(fixed, negatives, s.fpr_queries);
    rows[3].expected_fpr = expected_fpr_of(fixed);
    rows[3].memory_bytes = fixed.memory_bytes();
    rows[3].insert_ns = fixed_seconds * per_key;
    rows[3].fingerprint_bits = fixed.fingerprint_bits();

    // Lookup timings, the designs interleaved in every round so that a slow moment of the machine
    // is spread over all of them.
    for (unsigned r = 0; r < s.throughput_runs; ++r) {
      time_lookups(growable, rows[0], queries, positives);
      time_lookups(equal, rows[1], queries, positives);
      time_lookups(tightening, rows[2], queries, positives);
      time_lookups(fixed, rows[3], queries, positives);
    }
    for (const Row& row : rows) {
      csv.row({num(n), row.design, num(row.fpr), num(s.fpr_queries), num(row.expected_fpr),
               num(8.0 * static_cast<double>(row.memory_bytes) / static_cast<double>(n)),
               num(row.memory_bytes), num(summarize(row.single_ns).median),
               num(summarize(row.batch_ns).median), num(row.insert_ns), num(row.doublings),
               num(row.subfilters), num(row.fingerprint_bits)});
    }
    progress.step(fmt::format("n={} measured", n));
  }

  // The memory just before each doubling, against the bound. The fixed filter's bits per
  // item at that size come from a filter built for it (its table is allocated, not filled).
  Csv doublings(opt.out_dir / "growth_doublings.csv",
                {"doubling", "size_before", "memory_bytes_before", "bits_per_item", "slot_bits",
                 "fixed_bits_per_item", "bound", "excess", "doublings_in_insert"});
  for (const DoublingEvent& e : events) {
    const double size = static_cast<double>(e.size_before);
    const double bits = 8.0 * static_cast<double>(e.bytes_before) / size;
    const double fixed_bits =
        8.0 *
        static_cast<double>(cuckoo::Filter(config_for(e.size_before, kTargetFpr)).memory_bytes()) /
        size;
    const double bound = fixed_bits + 2 + std::log2(1.0 + e.doublings_before);
    doublings.row({num(e.doublings_before + 1), num(e.size_before), num(e.bytes_before), num(bits),
                   num(e.slot_bits_before), num(fixed_bits), num(bound), num(bits - bound),
                   num(e.doublings_in_insert)});
  }
  record_meta(opt.out_dir, "seconds_growth", num(seconds_since(start)));
}

}  // namespace bench
