// cuckoo/detail/path_search.hpp — the breadth-first search for a displacement path, shared by the
// single-thread filter (filter.hpp) and the concurrent one
// (concurrent/basic_concurrent_filter.hpp).
//
// When both of a key's buckets are full, the search looks for a short path over the displacement
// graph from one of them to a bucket with a free slot: node n says "the entry `moved` in slot
// `slot` of the parent's bucket would go to `bucket`, its alternate". Candidate buckets are
// prefetched kChunkParents parents' worth at a time (sixteen buckets), so one round trip to memory
// tests sixteen candidates, and the search stops fetching at the round that finds room rather
// than fetching a whole level. It only reads the table; what to do with the path (move along it
// at once, or re-validate each move under locks) is the caller's.
//
// The concurrent filter runs it with no lock held, over reads that may be stale or torn: the
// path it returns is only a plan, every move of which the caller checks before making it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuckoo/addressing.hpp"

namespace cuckoo::detail {

/// A node of the search: `bucket` would receive `moved`, the entry in slot `slot` of the parent
/// node's bucket (parent −1: one of the key's own two buckets, the roots).
struct BfsNode {
  std::uint64_t bucket;
  std::int32_t parent;
  std::uint32_t slot;
  std::uint32_t moved;
};

/// True if no bucket repeats on the path from node `n` back to its root.
inline bool path_is_simple(const BfsNode* nodes, std::size_t n) noexcept {
  for (auto a = static_cast<std::int32_t>(n); a >= 0; a = nodes[a].parent) {
    for (std::int32_t b = nodes[a].parent; b >= 0; b = nodes[b].parent) {
      if (nodes[a].bucket == nodes[b].bucket) return false;
    }
  }
  return true;
}

/// Searches from the key's buckets `b1` and `b2` (both full) for a simple path to a bucket with
/// a free slot, visiting at most kNodes buckets and max_depth levels; `nodes` holds kNodes.
/// Returns the index of the path's last node (its bucket has room), or -1. `alternate(bucket,
/// fp)` is the filter's alt(). Table: entries / prefetch / has_free per bucket, kBucketSize.
template <std::size_t kNodes, std::size_t kChunkParents, class Table, class Alternate>
std::ptrdiff_t find_displacement_path(const Table& table, const Alternate& alternate,
                                      std::uint64_t b1, std::uint64_t b2, std::uint32_t fp,
                                      unsigned max_depth, BfsNode* nodes) noexcept {
  constexpr unsigned kBucketSize = Table::kBucketSize;
  std::size_t count = 0;
  nodes[count++] = {b1, -1, 0, fp};
  nodes[count++] = {b2, -1, 0, fp};
  std::size_t level_begin = 0;
  for (unsigned depth = 1; depth <= max_depth && count < kNodes; ++depth) {
    const std::size_t level_end = count;
    for (std::size_t first = level_begin; first < level_end && count < kNodes;
         first += kChunkParents) {
      const std::size_t chunk_begin = count;
      const std::size_t last = std::min(first + kChunkParents, level_end);
      for (std::size_t n = first; n < last && count < kNodes; ++n) {
        const std::uint64_t bucket = nodes[n].bucket;
        const auto entries = table.entries(bucket);
        for (unsigned slot = 0; slot < kBucketSize && count < kNodes; ++slot) {
          const std::uint32_t moved = entries[slot];
          if (moved == 0) continue;  // a free slot here, but its path repeats a bucket
          const std::uint64_t child = alternate(bucket, moved);
          table.prefetch(child);
          nodes[count++] = {child, static_cast<std::int32_t>(n), slot, moved};
        }
      }
      for (std::size_t n = chunk_begin; n < count; ++n) {
        if (table.has_free(nodes[n].bucket) && path_is_simple(nodes, n)) {
          return static_cast<std::ptrdiff_t>(n);
        }
      }
    }
    level_begin = level_end;
  }
  return -1;
}

/// H(fp) for every fingerprint of `bits` bits (the alternate-bucket offsets), or an empty table
/// when the filter does not keep one: f above max_bits, or a table under min_bytes (see
/// BasicFilter::kOffsetTableMaxBits for why and when it pays).
inline std::vector<std::uint32_t> offset_table(const Addressing& addressing, unsigned bits,
                                               std::size_t table_bytes, unsigned max_bits,
                                               std::size_t min_bytes) {
  std::vector<std::uint32_t> offsets;
  if (bits > max_bits || table_bytes < min_bytes) return offsets;
  offsets.resize(std::size_t{1} << bits);
  // H(fp) < m ≤ 2^32, so every offset fits 32 bits. Entry 0 (no fingerprint) is never read.
  for (std::uint32_t fp = 0; fp < offsets.size(); ++fp) {
    offsets[fp] = static_cast<std::uint32_t>(addressing.offset(fp));
  }
  return offsets;
}

}  // namespace cuckoo::detail
