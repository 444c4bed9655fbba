// redis/src/filter_value.hpp — what a CF key holds: a filter, or the chunks of one being loaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "cuckoo/detail/rng.hpp"

namespace cuckoo_redis {

/// A dump being reassembled by CF.LOADCHUNK: the bytes received so far, in order, and the size of
/// the whole file its header announced.
struct PendingLoad {
  std::vector<std::byte> bytes;
  std::uint64_t expected_bytes = 0;
};

/// The value of a key of this module's type. Exactly one of `filter` and `loading` is set.
struct FilterValue {
  std::optional<cuckoo::Filter> filter;
  std::optional<PendingLoad> loading;
  /// CF.DEL calls that removed an item (CF.INFO's "Number of items deleted"); kept in the RDB
  /// payload, not in the library's file (SCANDUMP chunks and AOF rewrites start it at 0).
  std::uint64_t items_deleted = 0;
  /// The file a CF.SCANDUMP walk is reading, kept between its calls so that each call copies one
  /// chunk instead of serializing the whole filter again. Dropped by every write (writable()),
  /// when a walk reaches its end, and never saved or copied.
  std::optional<std::vector<std::byte>> dump_in_progress;

  /// The filter of a value that has finished loading, for reading; nullptr while it loads.
  const cuckoo::Filter* readable() const noexcept { return filter ? &*filter : nullptr; }
  /// The same for a write: a walk in progress then serializes the changed filter afresh.
  cuckoo::Filter* writable() noexcept {
    dump_in_progress.reset();
    return filter ? &*filter : nullptr;
  }

  std::size_t memory_bytes() const noexcept {
    std::size_t bytes = sizeof(FilterValue);
    if (filter) bytes += filter->memory_bytes();
    if (loading) bytes += loading->bytes.capacity();
    if (dump_in_progress) bytes += dump_in_progress->capacity();
    return bytes;
  }
};

/// Makes the next write's kick walks a function of the filter's contents alone. The library does
/// not save its kick-walk PRNG position, so a replica that loaded the primary's snapshot (or a
/// server that reloaded its own) would otherwise continue with other random choices than the
/// primary and drift apart bit by bit. Every write command calls this first, on primary and
/// replica alike, so equal filters given equal commands stay equal.
inline void reseed_for_write(cuckoo::Filter& filter) noexcept {
  // The library's own mixer (SplitMix64) spreads (seed, size) over the whole state.
  cuckoo::detail::SplitMix64 mix(filter.seed() ^ static_cast<std::uint64_t>(filter.size()));
  filter.reseed_kick_walk(mix());
}

}  // namespace cuckoo_redis
