// redis/src/dump_chunks.cpp — splitting a filter's file into chunks and reassembling it.
#include "dump_chunks.hpp"

#include <algorithm>
#include <string>

#include "filter_options.hpp"

namespace cuckoo_redis {

namespace {
constexpr const char* kInvalidPosition = "Invalid position";

std::string bad_data(const std::string& why) {
  return "ERR received bad data: " + why;
}

void finish_if_complete(FilterValue& value) {
  PendingLoad& pending = *value.loading;
  if (pending.bytes.size() < pending.expected_bytes) return;
  try {
    limit_growth(value.filter.emplace(cuckoo::Filter::deserialize(pending.bytes)));
  } catch (const cuckoo::format_error& e) {
    throw CommandError(bad_data(e.what()));
  } catch (const std::bad_alloc&) {
    throw CommandError(kInsufficientMemory);
  }
  value.loading.reset();
  value.items_deleted = 0;
}
}  // namespace

DumpChunk chunk_of(std::span<const std::byte> file, long long iterator) {
  DumpChunk chunk;
  if (iterator < 0) throw CommandError(kInvalidPosition);
  const auto begin = static_cast<std::uint64_t>(iterator);
  if (begin >= file.size()) return chunk;  // done: (0, nil)
  const std::uint64_t end = begin == 0
                                ? cuckoo::io::kHeaderBytes
                                : std::min<std::uint64_t>(file.size(), begin + kDumpChunkBytes);
  chunk.bytes.assign(file.begin() + static_cast<std::ptrdiff_t>(begin),
                     file.begin() + static_cast<std::ptrdiff_t>(end));
  chunk.next_iterator = static_cast<long long>(end);
  return chunk;
}

std::unique_ptr<FilterValue> start_load(long long iterator, std::span<const std::byte> bytes,
                                        std::size_t max_bytes) {
  if (iterator <= 0 || static_cast<std::uint64_t>(iterator) != bytes.size()) {
    throw CommandError(kInvalidPosition);
  }
  if (bytes.size() < cuckoo::io::kHeaderBytes) {
    throw CommandError(bad_data("the first chunk must hold the 128-byte header"));
  }
  cuckoo::io::FileHeader header;
  try {
    // The header is validated (and the file's size derived from it) before anything is allocated.
    header = cuckoo::io::decode_header(bytes.first(cuckoo::io::kHeaderBytes),
                                       cuckoo::io::detail::table_bytes_for_layout);
  } catch (const cuckoo::format_error& e) {
    throw CommandError(bad_data(e.what()));
  }
  const std::uint64_t file_bytes = header.file_bytes();
  if (file_bytes > max_bytes) throw CommandError(kInsufficientMemory);
  if (bytes.size() > file_bytes)
    throw CommandError(bad_data("more bytes than the header declares"));
  auto value = std::make_unique<FilterValue>();
  value->loading.emplace();
  value->loading->expected_bytes = file_bytes;
  value->loading->bytes.reserve(static_cast<std::size_t>(file_bytes));
  value->loading->bytes.assign(bytes.begin(), bytes.end());
  finish_if_complete(*value);
  return value;
}

void continue_load(FilterValue& value, long long iterator, std::span<const std::byte> bytes) {
  if (!value.loading) throw CommandError("ERR item exists");
  PendingLoad& pending = *value.loading;
  // The iterator is where this chunk ends: it must start exactly where the last one ended.
  if (iterator <= 0 || static_cast<std::uint64_t>(iterator) < bytes.size() ||
      static_cast<std::uint64_t>(iterator) - bytes.size() != pending.bytes.size()) {
    throw CommandError(kInvalidPosition);
  }
  if (pending.bytes.size() + bytes.size() > pending.expected_bytes) {
    throw CommandError(bad_data("more bytes than the header declares"));
  }
  pending.bytes.insert(pending.bytes.end(), bytes.begin(), bytes.end());
  finish_if_complete(value);
}

}  // namespace cuckoo_redis
