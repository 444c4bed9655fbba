// redis/src/dump_chunks.hpp — CF.SCANDUMP / CF.LOADCHUNK: a filter as chunks of its file.
//
// The chunks of a dump, concatenated in order, are the filter's file in the library's format
// (docs/FORMAT.md): `cuckoo info` and Python's CuckooFilter.from_bytes read it as it is. The first
// chunk is the 128-byte header; the rest are at most kDumpChunkBytes each. Each SCANDUMP reply is
// (iterator, data) where the iterator is the byte offset at which the chunk ends: the next
// SCANDUMP call passes it back, and CF.LOADCHUNK takes the same pair, so a client replays the
// replies as RedisBloom's clients do. SCANDUMP with an iterator at or past the end replies
// (0, nil). LOADCHUNK accepts chunks only in order; the loaded file is checked whole (checksum
// and all) by the library's reader when its last byte arrives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "filter_value.hpp"

namespace cuckoo_redis {

inline constexpr std::size_t kDumpChunkBytes = std::size_t{16} << 20;

struct DumpChunk {
  long long next_iterator = 0;  // 0: the dump is complete and `bytes` is empty
  std::vector<std::byte> bytes;
};

/// The chunk after `iterator` (0 for the first) of a filter's serialized `file`.
DumpChunk chunk_of(std::span<const std::byte> file, long long iterator);

/// Starts loading into a missing key: `bytes` must be the first chunk (iterator == its length)
/// and hold a valid header for a file of at most `max_bytes`. Throws CommandError.
std::unique_ptr<FilterValue> start_load(long long iterator, std::span<const std::byte> bytes,
                                        std::size_t max_bytes);

/// Appends the next chunk to a value being loaded; when the file is complete, replaces the pending
/// bytes with the filter they encode. Throws CommandError (the caller then drops the value when
/// it is still loading: a refused file leaves nothing half-built).
void continue_load(FilterValue& value, long long iterator, std::span<const std::byte> bytes);

}  // namespace cuckoo_redis
