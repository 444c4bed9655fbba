// erase_store_bench — what a single-key erase costs beyond a lookup, taken apart (issue 17, part
// 3).
//
// Builds a 192 MiB filter (f = 12, b = 4) to 95% load, then times loops over 5·10^6 stored keys in
// random order, side by side, best of 3:
//   contains            the library's single-key lookup;
//   erase               the library's single-key erase (each repetition on a fresh copy);
//   lookup + branch     the lookup's two loads and compare, then a branch on which bucket holds the
//                       key (an erase's control flow without its store);
//   lookup + store      the lookup, then an 8-byte store to the start of the first bucket's line
//                       whose value does not depend on the loads (no branch, no dependency: the
//                       cost of dirtying one random line per key);
//   lookup + byte store the same with a 1-byte store.
// A read of a random line is one memory transaction; a write adds a dirty line that must later be
// written back, and on this machine that shows as time even when nothing waits for the store.
// Usage: cuckoo_erase_store_bench [--reps 3] [--queries 5000000]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/timing.hpp"

namespace {

using Table = cuckoo::PackedTable<4, 12>;
using Filter = cuckoo::BasicFilter<Table>;

enum class Loop { kContains, kErase, kBranch, kStore, kByteStore, kSelectErase };

/// The lookup's two loads and its compare, then `loop`'s extra work; returns the hits.
template <Loop kLoop, bool kBoth = false>
[[gnu::noinline]] std::size_t run(Filter& filter, const std::vector<std::uint64_t>& keys) {
  std::size_t hits = 0;
  if constexpr (kLoop == Loop::kContains) {
    for (const std::uint64_t k : keys) hits += filter.contains(k) ? 1 : 0;
  } else if constexpr (kLoop == Loop::kErase) {
    for (const std::uint64_t k : keys) hits += filter.erase(k) ? 1 : 0;
  } else if constexpr (kLoop == Loop::kSelectErase) {
    // An erase without a branch: one store, its address chosen by a select from both buckets'
    // compare (a key in neither bucket rewrites the first bucket's word unchanged).
    auto* base = const_cast<std::byte*>(filter.table().bytes().data());
    for (const std::uint64_t k : keys) {
      const auto pos = filter.addressing().position(cuckoo::hash_key(filter.hasher(), k));
      std::byte* p1 = base + pos.bucket * 6;
      std::byte* p2 = base + filter.alternate(pos.bucket, pos.fingerprint) * 6;
      std::uint64_t w1, w2;
      std::memcpy(&w1, p1, 8);
      std::memcpy(&w2, p2, 8);
      // The SWAR zero-lane test on 12-bit lanes: the lowest flagged lane is a true match.
      constexpr std::uint64_t kOnes = 0x001001001001, kHighs = kOnes << 11;
      constexpr std::uint64_t kBucket = (std::uint64_t{1} << 48) - 1;
      const std::uint64_t x1 = (w1 & kBucket) ^ (pos.fingerprint * kOnes);
      const std::uint64_t x2 = (w2 & kBucket) ^ (pos.fingerprint * kOnes);
      const std::uint64_t m1 = (x1 - kOnes) & ~x1 & kHighs;
      const std::uint64_t m2 = (x2 - kOnes) & ~x2 & kHighs;
      const bool first = m1 != 0;
      if constexpr (kBoth) {
        // Both words written back, addresses known from the hash alone; only the data waits.
        const std::uint64_t c1 = ((m1 & (std::uint64_t{0} - m1)) >> 11) * 0xFFF;
        const std::uint64_t c2 = first ? 0 : ((m2 & (std::uint64_t{0} - m2)) >> 11) * 0xFFF;
        const std::uint64_t o1 = w1 & ~c1, o2 = w2 & ~c2;
        std::memcpy(p1, &o1, 8);
        std::memcpy(p2, &o2, 8);
        hits += (m1 | m2) != 0 ? 1 : 0;
        continue;
      }
      std::byte* target = first ? p1 : p2;
      const std::uint64_t m = first ? m1 : m2;
      const std::uint64_t word = first ? w1 : w2;
      const std::uint64_t clear = ((m & (std::uint64_t{0} - m)) >> 11) * 0xFFF;
      const std::uint64_t out = word & ~clear;  // unchanged when neither bucket holds the key
      std::memcpy(target, &out, 8);
      hits += (m1 | m2) != 0 ? 1 : 0;
    }
  } else {
    auto* base = const_cast<std::byte*>(filter.table().bytes().data());
    for (const std::uint64_t k : keys) {
      const auto pos = filter.addressing().position(cuckoo::hash_key(filter.hasher(), k));
      const std::uint64_t alt = filter.alternate(pos.bucket, pos.fingerprint);
      // The lookup's own compare, and the first bucket's alone (its line is in L1 by then).
      const bool any = filter.table().contains_pair(pos.bucket, alt, pos.fingerprint);
      const bool in_first = filter.table().contains(pos.bucket, pos.fingerprint);
      if constexpr (kLoop == Loop::kBranch) {
        if (in_first) {
          hits += 1;
        } else if (any) {
          hits += 2;  // a different sum, so the branch cannot be folded away
        }
      } else {
        std::byte* line = base + (pos.bucket * 6 & ~std::uint64_t{63});
        if constexpr (kLoop == Loop::kStore) {
          std::memcpy(line, &k, sizeof k);
        } else {
          *line = static_cast<std::byte>(k);
        }
        hits += any ? 1 : 0;
      }
    }
  }
  return hits;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  std::size_t queries = 5'000'000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--reps") {
      reps = std::stoi(argv[i + 1]);
    } else if (a == "--queries") {
      queries = std::stoull(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: cuckoo_erase_store_bench [--reps 3] [--queries 5000000]\n");
      return 2;
    }
  }
  const std::uint64_t buckets = std::uint64_t{1} << 25;
  const auto n = static_cast<std::size_t>(0.95 * static_cast<double>(buckets * 4));
  Filter filter(cuckoo::Layout{buckets, 12, 4, false}, n, cuckoo::defaults::kMaxKicks,
                cuckoo::defaults::kSeed);
  const auto keys = cuckoo::bench::keys_from(1, n);
  if (filter.insert(std::span<const std::uint64_t>(keys)) != n) return 1;
  std::vector<std::uint64_t> sample(
      keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(std::min(queries, n)));
  cuckoo::detail::SplitMix64 rng(9);
  for (std::size_t i = sample.size() - 1; i > 0; --i) std::swap(sample[i], sample[rng() % (i + 1)]);
  std::size_t in_first = 0;
  for (const std::uint64_t k : sample) {
    const auto pos = filter.addressing().position(cuckoo::hash_key(filter.hasher(), k));
    in_first += filter.table().find(pos.bucket, pos.fingerprint) >= 0 ? 1 : 0;
  }
  std::printf(
      "erase_store_bench: 192 MiB, f=12 b=4, 95%% full, %zu stored keys in random order,"
      " best of %d; %.1f%% found in their first bucket\n",
      sample.size(), reps, 100.0 * static_cast<double>(in_first) / sample.size());

  const auto time = [&](const char* name, auto loop, bool fresh_copy, double base_ns) {
    double best = 1e300;
    std::size_t hits = 0;
    for (int r = 0; r < reps; ++r) {
      std::optional<Filter> copy;
      if (fresh_copy) copy.emplace(filter);
      Filter& target = copy ? *copy : filter;
      const auto t0 = cuckoo::bench::Clock::now();
      hits = loop(target);
      best = std::min(best, cuckoo::bench::seconds_since(t0));
    }
    const double ns = best * 1e9 / static_cast<double>(sample.size());
    std::printf("  %-22s %6.2f ns/key  %5.2fx contains  (%zu hits)\n", name, ns,
                base_ns > 0 ? ns / base_ns : 1.0, hits);
    return ns;
  };
  // Stores go to fresh copies too, so that every loop starts from the same table.
  const double contains = time(
      "contains", [&](Filter& f) { return run<Loop::kContains>(f, sample); }, false, 0);
  time(
      "lookup + branch", [&](Filter& f) { return run<Loop::kBranch>(f, sample); }, false, contains);
  time(
      "lookup + byte store", [&](Filter& f) { return run<Loop::kByteStore>(f, sample); }, true,
      contains);
  time(
      "lookup + 8-byte store", [&](Filter& f) { return run<Loop::kStore>(f, sample); }, true,
      contains);
  time(
      "erase", [&](Filter& f) { return run<Loop::kErase>(f, sample); }, true, contains);
  time(
      "erase, both words", [&](Filter& f) { return run<Loop::kSelectErase, true>(f, sample); },
      true, contains);
  time(
      "erase by select", [&](Filter& f) { return run<Loop::kSelectErase>(f, sample); }, true,
      contains);
  return 0;
}
