// cuckoo/detail/prefetch_pipeline.hpp — the software pipeline every batch call runs its keys
// through.
//
// A key's lookup waits on one or two random lines of a table far larger than the caches. One key
// at a time, only the core's out-of-order window overlaps those misses; a batch does better by
// hashing key i + Depth and prefetching its lines while it answers key i, whose lines were asked
// for Depth keys ago. Depth is the number of misses in flight: enough to cover the memory latency
// with the work of the keys between, few enough that the lines are still in cache when their
// turn comes (the callers' depths, 16–64, were measured per filter). The probes waiting their
// turn sit in a ring of Depth entries on the stack, so nothing is allocated.
//
// Prefetching changes no state, so a batch answers exactly what the same single-key calls in the
// same order would, and a batch that stops early (an insert that did not fit) has left every later
// key untouched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cuckoo/detail/isa.hpp"

namespace cuckoo::detail {

/// What a pipeline will do with the lines it prefetches: only read them (into L2, as lookups do),
/// or write them too (into L1).
enum class Intent { kLookup, kWrite };

/// Prefetches a key's two buckets from a table with prefetch / prefetch_for_lookup (PackedTable,
/// AtomicPackedTable), as kIntent says.
template <Intent kIntent, class Table>
CUCKOO_HOT void prefetch_buckets(const Table& table, std::uint64_t first,
                                 std::uint64_t second) noexcept {
  if constexpr (kIntent == Intent::kLookup) {
    table.prefetch_for_lookup(first);
    table.prefetch_for_lookup(second);
  } else {
    table.prefetch(first);
    table.prefetch(second);
  }
}

/// Runs keys 0 .. n−1 through the pipeline. `stage(i)` hashes key i, issues its prefetches and
/// returns what its step needs (a probe); `step(i, probe)` runs Depth keys later and returns
/// whether to go on (false stops the batch: no later key is staged or stepped). Returns the index
/// of the step that stopped the batch, or n if none did.
///
///   Depth   a power of two (the ring index is a mask), at least 1.
template <std::size_t Depth, class Stage, class Step>
CUCKOO_HOT std::size_t run_prefetch_pipeline(std::size_t n, Stage&& stage, Step&& step) {
  static_assert(Depth > 0 && (Depth & (Depth - 1)) == 0, "pipeline depth: a power of two");
  using Probe = std::invoke_result_t<Stage&, std::size_t>;
  constexpr std::size_t kMask = Depth - 1;
  Probe ring[Depth];
  const std::size_t warm = n < Depth ? n : Depth;
  for (std::size_t i = 0; i < warm; ++i) ring[i] = stage(i);
  std::size_t i = 0;
  // Split in two so that the steady state does not test, per key, whether a key is left to stage.
  for (; i + Depth < n; ++i) {
    const Probe probe = ring[i & kMask];  // before stage() reuses its ring slot
    ring[i & kMask] = stage(i + Depth);
    if (!step(i, probe)) return i;
  }
  for (; i < n; ++i) {
    if (!step(i, ring[i & kMask])) return i;
  }
  return n;
}

}  // namespace cuckoo::detail
