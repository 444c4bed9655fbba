// map_caller — a user's program over an approximate map: cuckoo::ApproximateMap<std::uint32_t>
// (f = 12, b = 4) holding 2·10^7 pairs (a 100 MB map, past this machine's L3), then single-key
// find, batched find and batched contains over 10^7 keys, half stored. Built with and without
// -march=native (bench/CMakeLists.txt); `make bench-callers` runs each at the CPU's level and
// again with CUCKOO_ISA=portable, so that the run-time choice of the map's vector compare
// (map/isa_map.hpp) shows against the portable compare and against a native build. Prints the
// best of 3 of each, ns per key.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/timing.hpp"

#ifndef CALLER_NAME
#define CALLER_NAME "map caller"
#endif

int main() {
  constexpr std::size_t kPairs = 20'000'000;
  const auto keys = cuckoo::bench::keys_from(1, kPairs);
  cuckoo::ApproximateMap<std::uint32_t> map{
      cuckoo::Config{.capacity = kPairs, .fingerprint_bits = 12}};
  for (std::size_t i = 0; i < kPairs; ++i) {
    if (!map.insert(keys[i], static_cast<std::uint32_t>(i))) return 1;
  }
  const auto queries = cuckoo::bench::half_stored(keys, 5'000'000);
  const double n = static_cast<double>(queries.size());
  std::size_t found = 0;
  const double single = cuckoo::bench::best_of(3, [&] {
    found = 0;
    std::uint32_t out[8];
    for (const std::uint64_t k : queries) found += map.find(k, std::span<std::uint32_t>(out));
  });
  std::vector<std::uint32_t> values;
  std::vector<std::size_t> ends(queries.size());
  const double batched = cuckoo::bench::best_of(3, [&] {
    map.find(std::span<const std::uint64_t>(queries), values, std::span<std::size_t>(ends));
  });
  std::unique_ptr<bool[]> out(new bool[queries.size()]);
  const double contains = cuckoo::bench::best_of(3, [&] {
    map.contains(std::span<const std::uint64_t>(queries),
                 std::span<bool>(out.get(), queries.size()));
  });
  std::printf(
      "%-18s %-8s find %6.2f ns/key, batched find %6.2f ns/key, batched contains %6.2f "
      "ns/key  values %zu/%zu\n",
      CALLER_NAME, cuckoo::isa_name(map.isa()).data(), single * 1e9 / n, batched * 1e9 / n,
      contains * 1e9 / n, found, values.size());
  // Every stored key finds its value (no false negatives), in both loops alike.
  return found >= queries.size() / 2 && found == values.size() ? 0 : 1;
}
