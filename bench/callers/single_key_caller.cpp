// single_key_caller — the smallest program a user writes: fill a filter with insert, then a loop
// of single-key contains. Built several times with different flags and APIs (bench/CMakeLists.txt,
// `make bench-callers`), because the speed of a single-key lookup depends on how the caller's loop
// is compiled (issue 17, part 4), and on whether the library's vector compare reaches the loop in
// a build without -march=native (part 2).
//
// Compile-time choices:
//   CALLER_FACADE       cuckoo::Filter (runtime ISA choice) instead of BasicFilter<PackedTable<4,
//   12>>
//                       (the compare the caller's own flags select)
//   CALLER_TWO_FILTERS  also fill a second filter before the timed loop over the first
//   CALLER_NAME         the label printed
// The filter: f = 12, b = 4, 2^25 buckets (192 MiB), filled to 95% of its slots. The timed loop
// looks up 10^7 stored keys in random order; the best of 3 runs is printed as ns per key, beside
// the unprefetched two-line floor measured in the same process (perf_bench's single-key floor).
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/memory_floor.hpp"
#include "support/timing.hpp"

#ifndef CALLER_NAME
#define CALLER_NAME "caller"
#endif

namespace {

constexpr std::uint64_t kBuckets = std::uint64_t{1} << 25;
constexpr unsigned kBits = 12;

#ifdef CALLER_FACADE
using FilterType = cuckoo::Filter;
#else
using FilterType = cuckoo::BasicFilter<cuckoo::PackedTable<4, kBits> >;
#endif

FilterType make_filter(std::size_t n) {
  const cuckoo::Layout layout{kBuckets, kBits, 4, false};
  return FilterType(layout, n, cuckoo::defaults::kMaxKicks, cuckoo::defaults::kSeed);
}

std::size_t fill(FilterType& filter, const std::vector<std::uint64_t>& keys) {
  std::size_t in = 0;
  for (const std::uint64_t k : keys) in += filter.insert(k) ? 1 : 0;
  return in;
}

/// perf_bench's unprefetched single-key floor (bench/support/memory_floor.hpp), ns per key.
[[gnu::noinline]] double floor_ns(const std::vector<std::uint64_t>& queries) {
  const cuckoo::bench::Floor floor(kBuckets * 4 * kBits / 8, cuckoo::defaults::kSeed);
  std::unique_ptr<bool[]> out(new bool[queries.size()]);
  const double s = cuckoo::bench::best_of(3, [&] { floor.single<true>(queries, out.get()); });
  return s * 1e9 / static_cast<double>(queries.size());
}

}  // namespace

int main() {
  const auto n = static_cast<std::size_t>(0.95 * static_cast<double>(kBuckets * 4));
  const auto keys = cuckoo::bench::keys_from(1, n);
  FilterType filter = make_filter(n);
  const std::size_t stored = fill(filter, keys);
#ifdef CALLER_TWO_FILTERS
  FilterType other = make_filter(n);
  const auto other_keys = cuckoo::bench::keys_from(3, n);
  const std::size_t other_stored = fill(other, other_keys);
#else
  const std::size_t other_stored = 0;
#endif
  // 10^7 stored keys in an order unrelated to the insertion order.
  std::vector<std::uint64_t> queries(10'000'000);
  cuckoo::detail::SplitMix64 pick(7);
  for (auto& q : queries) q = keys[pick() % stored];

  std::size_t found = 0;
  const double s = cuckoo::bench::best_of(3, [&] {
    found = 0;
    for (const std::uint64_t k : queries) found += filter.contains(k) ? 1 : 0;
  });
  const double ns = s * 1e9 / static_cast<double>(queries.size());
  const double floor = floor_ns(queries);
  std::printf("%-28s contains %6.2f ns/key  floor %6.2f ns/key  ratio %.2fx  found %zu/%zu%s\n",
              CALLER_NAME, ns, floor, ns / floor, found, queries.size(),
              other_stored > 0 ? " (second filter filled)" : "");
  return found == queries.size() ? 0 : 1;
}
