// redis/src/data_type.cpp — the type callbacks. The RDB payload (encoding version 1):
//
//   u64 state            0: a filter, 1: a CF.LOADCHUNK sequence still incomplete
//   u64 items deleted    CF.INFO's "Number of items deleted"
//   state 0: string      the filter's file in the library's format (checksummed)
//   state 1: u64, string the file size the header announced, the bytes received so far
//
// Loading goes through the library's reader, which refuses a damaged file (wrong checksum, bad
// header, wrong length) by exception: rdb_load then returns NULL, which RESTORE reports as "Bad
// data format" with the server still up. Callbacks never let an exception out into the server.
#include "data_type.hpp"

#include <memory>
#include <string>
#include <vector>

#include "dump_chunks.hpp"
#include "filter_options.hpp"
#include "filter_value.hpp"

namespace cuckoo_redis {

using redis_api::api;

namespace {
RedisModuleType* g_type = nullptr;

constexpr std::uint64_t kStateFilter = 0;
constexpr std::uint64_t kStateLoading = 1;

/// Reads a string buffer into a vector; false on an I/O error.
bool load_bytes(RedisModuleIO* rdb, std::vector<std::byte>& out) {
  std::size_t length = 0;
  char* buffer = api.LoadStringBuffer(rdb, &length);
  if (api.IsIOError(rdb) || buffer == nullptr) {
    if (buffer != nullptr) api.Free(buffer);
    return false;
  }
  try {
    const auto* first = reinterpret_cast<const std::byte*>(buffer);
    out.assign(first, first + length);
  } catch (...) {
    api.Free(buffer);
    throw;
  }
  api.Free(buffer);
  return true;
}

void* rdb_load(RedisModuleIO* rdb, int encoding_version) {
  if (encoding_version != kEncodingVersion) {
    api.LogIOError(rdb, redis_api::kLogWarning, "cuckoo-CF: unknown encoding version %d",
                   encoding_version);
    return nullptr;
  }
  try {
    const std::uint64_t state = api.LoadUnsigned(rdb);
    const std::uint64_t items_deleted = api.LoadUnsigned(rdb);
    if (api.IsIOError(rdb)) return nullptr;
    auto value = std::make_unique<FilterValue>();
    value->items_deleted = items_deleted;
    if (state == kStateFilter) {
      std::vector<std::byte> file;
      if (!load_bytes(rdb, file)) return nullptr;
      limit_growth(value->filter.emplace(cuckoo::Filter::deserialize(file)));
    } else if (state == kStateLoading) {
      const std::uint64_t expected = api.LoadUnsigned(rdb);
      if (api.IsIOError(rdb)) return nullptr;
      PendingLoad pending;
      if (!load_bytes(rdb, pending.bytes)) return nullptr;
      if (pending.bytes.size() < cuckoo::io::kHeaderBytes || pending.bytes.size() >= expected) {
        api.LogIOError(rdb, redis_api::kLogWarning, "cuckoo-CF: inconsistent pending load");
        return nullptr;
      }
      pending.expected_bytes = expected;
      value->loading.emplace(std::move(pending));
    } else {
      api.LogIOError(rdb, redis_api::kLogWarning, "cuckoo-CF: unknown value state");
      return nullptr;
    }
    return value.release();
  } catch (const std::exception& e) {
    api.LogIOError(rdb, redis_api::kLogWarning, "cuckoo-CF: refused: %s", e.what());
    return nullptr;
  } catch (...) {
    return nullptr;
  }
}

void rdb_save(RedisModuleIO* rdb, void* raw) {
  const auto& value = *static_cast<const FilterValue*>(raw);
  try {
    if (value.filter) {
      const std::vector<std::byte> file = value.filter->serialize();
      api.SaveUnsigned(rdb, kStateFilter);
      api.SaveUnsigned(rdb, value.items_deleted);
      api.SaveStringBuffer(rdb, reinterpret_cast<const char*>(file.data()), file.size());
    } else {
      api.SaveUnsigned(rdb, kStateLoading);
      api.SaveUnsigned(rdb, value.items_deleted);
      api.SaveUnsigned(rdb, value.loading->expected_bytes);
      api.SaveStringBuffer(rdb, reinterpret_cast<const char*>(value.loading->bytes.data()),
                           value.loading->bytes.size());
    }
  } catch (const std::exception& e) {
    // Only serialize()'s allocation can fail; the save is then incomplete and Redis fails it.
    api.LogIOError(rdb, redis_api::kLogWarning, "cuckoo-CF: cannot save: %s", e.what());
  }
}

void emit_chunk(RedisModuleIO* aof, RedisModuleString* key, long long iterator,
                const std::vector<std::byte>& bytes) {
  api.EmitAOF(aof, "CF.LOADCHUNK", "slb", key, iterator,
              reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// The AOF rebuilds the filter bit for bit from its dump: the same chunks CF.SCANDUMP gives.
void aof_rewrite(RedisModuleIO* aof, RedisModuleString* key, void* raw) {
  const auto& value = *static_cast<const FilterValue*>(raw);
  try {
    if (value.filter) {
      const std::vector<std::byte> file = value.filter->serialize();  // once, not per chunk
      for (DumpChunk chunk = chunk_of(file, 0); chunk.next_iterator != 0;
           chunk = chunk_of(file, chunk.next_iterator)) {
        emit_chunk(aof, key, chunk.next_iterator, chunk.bytes);
      }
    } else {
      emit_chunk(aof, key, static_cast<long long>(value.loading->bytes.size()),
                 value.loading->bytes);
    }
  } catch (const std::exception& e) {
    api.LogIOError(aof, redis_api::kLogWarning, "cuckoo-CF: cannot rewrite: %s", e.what());
  }
}

std::size_t mem_usage(const void* raw) {
  return static_cast<const FilterValue*>(raw)->memory_bytes();
}

void digest(RedisModuleDigest* md, void* raw) {
  const auto& value = *static_cast<const FilterValue*>(raw);
  try {
    const std::vector<std::byte> file =
        value.filter ? value.filter->serialize() : value.loading->bytes;
    api.DigestAddStringBuffer(md, reinterpret_cast<const char*>(file.data()), file.size());
    const std::string deleted = std::to_string(value.items_deleted);
    api.DigestAddStringBuffer(md, deleted.data(), deleted.size());
    api.DigestEndSequence(md);
  } catch (...) {
    // DEBUG DIGEST-VALUE then reflects only what was added; nothing else to do without memory.
  }
}

void free_value(void* raw) {
  delete static_cast<FilterValue*>(raw);
}

void* copy_value(RedisModuleString*, RedisModuleString*, const void* raw) {
  try {
    auto copy = std::make_unique<FilterValue>(*static_cast<const FilterValue*>(raw));
    copy->dump_in_progress.reset();  // a walk of the original, not of the copy
    return copy.release();
  } catch (...) {
    return nullptr;  // COPY then fails
  }
}

// Freeing a large table is one free(): cheap whatever its size, so never worth a lazy free.
std::size_t free_effort(RedisModuleString*, const void*) {
  return 1;
}
}  // namespace

int register_data_type(RedisModuleCtx* ctx) {
  redis_api::TypeMethods methods;
  methods.rdb_load = rdb_load;
  methods.rdb_save = rdb_save;
  methods.aof_rewrite = aof_rewrite;
  methods.mem_usage = mem_usage;
  methods.digest = digest;
  methods.free = free_value;
  methods.free_effort = free_effort;
  methods.copy = copy_value;
  g_type = api.CreateDataType(ctx, kTypeName, kEncodingVersion, &methods);
  return g_type != nullptr ? redis_api::kOk : redis_api::kErr;
}

RedisModuleType* data_type() noexcept {
  return g_type;
}

}  // namespace cuckoo_redis
