// growable_caller — a user's program over a growable filter: cuckoo::Filter with
// Config::growable, from capacity 1000 to 2·10^7 keys (15 doublings, 18-bit slots, a 45 MB table:
// past this machine's L3), then single-key and batched contains over 10^7 keys, half stored.
// Built with and without -march=native (bench/CMakeLists.txt); `make bench-callers` runs each at
// the CPU's level and again with CUCKOO_ISA=portable, so that the run-time choice of the growable
// filter's vector compare (detail/isa.hpp) shows against the scalar compare and against a native
// build. Prints the best of 3 of each, ns per key.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/timing.hpp"

#ifndef CALLER_NAME
#define CALLER_NAME "growable caller"
#endif

int main() {
  constexpr std::size_t kKeys = 20'000'000;
  const auto keys = cuckoo::bench::keys_from(1, kKeys);
  cuckoo::Filter filter{cuckoo::Config{.capacity = 1000, .target_fpr = 0.001, .growable = true}};
  for (const std::uint64_t k : keys) {
    if (!filter.insert(k)) return 1;
  }
  const auto queries = cuckoo::bench::half_stored(keys, 5'000'000);
  const double n = static_cast<double>(queries.size());
  std::size_t found = 0;
  const double single = cuckoo::bench::best_of(3, [&] {
    found = 0;
    for (const std::uint64_t k : queries) found += filter.contains(k) ? 1 : 0;
  });
  std::unique_ptr<bool[]> out(new bool[queries.size()]);
  const double batched = cuckoo::bench::best_of(3, [&] {
    filter.contains(std::span<const std::uint64_t>(queries),
                    std::span<bool>(out.get(), queries.size()));
  });
  std::size_t batch_found = 0;
  for (std::size_t i = 0; i < queries.size(); ++i) batch_found += out[i] ? 1 : 0;
  std::printf(
      "%-22s %-8s %u doublings, %u-bit slots: contains %6.2f ns/key, batched %6.2f ns/key"
      "  found %zu/%zu\n",
      CALLER_NAME, cuckoo::isa_name(filter.isa()).data(), filter.doublings(),
      filter.fingerprint_bits(), single * 1e9 / n, batched * 1e9 / n, found, queries.size());
  // Every stored key answers yes (no false negatives), in both loops alike.
  return found >= queries.size() / 2 && found == batch_found ? 0 : 1;
}
