// redis/src/commands.cpp — the CF.* commands.
//
// Every handler computes its whole answer before it starts replying, inside guarded(), so that an
// exception (bad input, no memory) becomes one error reply and never reaches the server. Every
// write that changed something is replicated verbatim; the replica runs the same deterministic
// code (filter_value.hpp's reseed_for_write) and ends bit-for-bit equal.
#include "commands.hpp"

#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data_type.hpp"
#include "dump_chunks.hpp"
#include "filter_options.hpp"
#include "filter_value.hpp"

namespace cuckoo_redis {

using redis_api::api;

namespace {

constexpr const char* kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
constexpr const char* kNotFound = "ERR not found";
// CF.DEL and CF.COMPACT have their own texts for a missing key in RedisBloom (src/rebloom.c),
// which clients may match on.
constexpr const char* kDelNotFound = "Not found";
constexpr const char* kCompactNotFound = "Cuckoo filter was not found";
constexpr const char* kItemExists = "ERR item exists";
constexpr const char* kFilterFull = "Filter is full";
constexpr const char* kStillLoading =
    "ERR the filter is still being loaded: CF.LOADCHUNK has not received every chunk";

/// An open key, closed when it goes out of scope.
class OpenKey {
 public:
  OpenKey(RedisModuleCtx* ctx, RedisModuleString* name, int mode)
      : key_(api.OpenKey(ctx, name, mode)) {}
  ~OpenKey() {
    if (key_ != nullptr) api.CloseKey(key_);
  }
  OpenKey(const OpenKey&) = delete;
  OpenKey& operator=(const OpenKey&) = delete;

  /// The key's value; nullptr when the key is missing; WRONGTYPE when it holds another type.
  FilterValue* value() const {
    if (key_ == nullptr || api.KeyType(key_) == redis_api::kKeyTypeEmpty) return nullptr;
    if (api.ModuleTypeGetType(key_) != data_type()) throw CommandError(kWrongType);
    return static_cast<FilterValue*>(api.ModuleTypeGetValue(key_));
  }
  /// Stores a new value in the (empty) key; the key owns it from then on.
  FilterValue* store(std::unique_ptr<FilterValue> value) {
    if (api.ModuleTypeSetValue(key_, data_type(), value.get()) != redis_api::kOk) {
      throw CommandError("ERR cannot store the filter in this key");
    }
    return value.release();
  }
  void remove() { api.DeleteKey(key_); }

 private:
  RedisModuleKey* key_;
};

std::string_view view_of(RedisModuleString* argument) {
  std::size_t length = 0;
  const char* text = api.StringPtrLen(argument, &length);
  return {text, length};
}

std::span<const std::byte> bytes_of(RedisModuleString* argument) {
  const std::string_view text = view_of(argument);
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

std::vector<std::string_view> views_of(RedisModuleString** argv, int first, int end) {
  std::vector<std::string_view> views;
  views.reserve(static_cast<std::size_t>(end - first));
  for (int i = first; i < end; ++i) views.push_back(view_of(argv[i]));
  return views;
}

/// The filter of a value that has finished loading, to read.
const cuckoo::Filter& readable(const FilterValue& value) {
  const cuckoo::Filter* filter = value.readable();
  if (filter == nullptr) throw CommandError(kStillLoading);
  return *filter;
}

/// The same, to change.
cuckoo::Filter& writable(FilterValue& value) {
  cuckoo::Filter* filter = value.writable();
  if (filter == nullptr) throw CommandError(kStillLoading);
  return *filter;
}

std::unique_ptr<FilterValue> new_value(const FilterOptions& options) {
  auto value = std::make_unique<FilterValue>();
  value->filter.emplace(create_filter(options, max_filter_bytes()));
  return value;
}

template <class Body>
int guarded(RedisModuleCtx* ctx, Body&& body) noexcept {
  try {
    return body();
  } catch (const CommandError& e) {
    return api.ReplyWithError(ctx, e.what());
  } catch (const std::bad_alloc&) {
    return api.ReplyWithError(ctx, kInsufficientMemory);
  } catch (const std::exception& e) {
    return api.ReplyWithError(ctx, (std::string("ERR ") + e.what()).c_str());
  } catch (...) {
    return api.ReplyWithError(ctx, "ERR internal error");
  }
}

// ---- CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] [ERROR_RATE r]
//      [FINGERPRINT_BITS f] -----------------------------------------------------------------------
int reserve(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3 || argc % 2 == 0) return api.WrongArity(ctx);
  FilterOptions options;
  options.capacity = parse_capacity(argv[2]);
  for (int i = 3; i < argc; i += 2) {
    if (!parse_shape_option(upper_case(argv[i]), argv[i + 1], options)) {
      throw CommandError("Unknown argument received");
    }
  }
  OpenKey key(ctx, argv[1], redis_api::kRead | redis_api::kWrite);
  if (key.value() != nullptr) throw CommandError(kItemExists);
  key.store(new_value(options));
  api.ReplicateVerbatim(ctx);
  return api.ReplyWithSimpleString(ctx, "OK");
}

// ---- CF.ADD / CF.ADDNX key item -----------------------------------------------------------------
int add(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool only_new) {
  if (argc != 3) return api.WrongArity(ctx);
  OpenKey key(ctx, argv[1], redis_api::kRead | redis_api::kWrite);
  FilterValue* value = key.value();
  const bool created = value == nullptr;
  if (created) value = key.store(new_value(FilterOptions{}));
  cuckoo::Filter& filter = writable(*value);
  const std::string_view item = view_of(argv[2]);
  if (only_new && filter.contains(item)) {
    if (created) api.ReplicateVerbatim(ctx);
    return api.ReplyWithLongLong(ctx, 0);
  }
  reseed_for_write(filter);
  if (!filter.insert(item)) {
    if (created) api.ReplicateVerbatim(ctx);
    throw CommandError(kFilterFull);
  }
  api.ReplicateVerbatim(ctx);
  return api.ReplyWithLongLong(ctx, 1);
}

// ---- CF.INSERT / CF.INSERTNX key [CAPACITY c] [NOCREATE] [ERROR_RATE r] [FINGERPRINT_BITS f]
//      ITEMS item... ------------------------------------------------------------------------------
int insert(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool only_new) {
  if (argc < 4) return api.WrongArity(ctx);
  FilterOptions options;
  bool create = true;
  int items_at = -1;
  for (int i = 2; i < argc; ++i) {
    const std::string name = upper_case(argv[i]);
    if (name == "ITEMS") {
      items_at = i + 1;
      break;
    }
    if (name == "NOCREATE") {
      create = false;
    } else if (name == "CAPACITY") {
      if (i + 1 == argc) return api.WrongArity(ctx);  // as RedisBloom: no value after CAPACITY
      options.capacity = parse_capacity(argv[++i]);
    } else if (i + 1 < argc && parse_shape_option(name, argv[i + 1], options)) {
      ++i;
    } else {
      throw CommandError("Unknown argument received");
    }
  }
  if (items_at < 0 || items_at >= argc) return api.WrongArity(ctx);

  OpenKey key(ctx, argv[1], redis_api::kRead | redis_api::kWrite);
  FilterValue* value = key.value();
  const bool created = value == nullptr;
  if (created) {
    if (!create) throw CommandError(kNotFound);
    value = key.store(new_value(options));
  }
  cuckoo::Filter& filter = writable(*value);
  const std::vector<std::string_view> items = views_of(argv, items_at, argc);
  std::vector<long long> results(items.size(), 1);
  bool changed = created;
  reseed_for_write(filter);
  if (only_new) {
    // One pipelined lookup for the batch; an item absent from it is looked up again just before
    // its insert, since an earlier item of the same batch may have been it.
    std::unique_ptr<bool[]> present(new bool[items.size()]);
    filter.contains(std::span<const std::string_view>(items),
                    std::span<bool>(present.get(), items.size()));
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (present[i] || filter.contains(items[i])) {
        results[i] = 0;
      } else if (filter.insert(items[i])) {
        changed = true;
      } else {
        results[i] = -1;
      }
    }
  } else {
    // The batch insert stops at the first item that does not fit; that one gets -1 and the rest
    // are tried again, as RedisBloom tries every item.
    for (std::size_t at = 0; at < items.size();) {
      const std::size_t inserted =
          filter.insert(std::span<const std::string_view>(items).subspan(at));
      changed = changed || inserted != 0;
      at += inserted;
      if (at < items.size()) results[at++] = -1;
    }
  }
  if (changed) api.ReplicateVerbatim(ctx);
  api.ReplyWithArray(ctx, static_cast<long>(results.size()));
  for (const long long result : results) api.ReplyWithLongLong(ctx, result);
  return redis_api::kOk;
}

// ---- CF.EXISTS / CF.COUNT key item, CF.MEXISTS key item... --------------------------------------
int exists(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api.WrongArity(ctx);
  OpenKey key(ctx, argv[1], redis_api::kRead);
  FilterValue* value = key.value();
  if (value == nullptr) return api.ReplyWithLongLong(ctx, 0);
  return api.ReplyWithLongLong(ctx, readable(*value).contains(view_of(argv[2])) ? 1 : 0);
}

int count(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api.WrongArity(ctx);
  OpenKey key(ctx, argv[1], redis_api::kRead);
  FilterValue* value = key.value();
  if (value == nullptr) return api.ReplyWithLongLong(ctx, 0);
  return api.ReplyWithLongLong(ctx,
                               static_cast<long long>(readable(*value).count(view_of(argv[2]))));
}

int mexists(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3) return api.WrongArity(ctx);
  OpenKey key(ctx, argv[1], redis_api::kRead);
  FilterValue* value = key.value();
  const std::vector<std::string_view> items = views_of(argv, 2, argc);
  std::unique_ptr<bool[]> present(new bool[items.size()]());
  if (value != nullptr) {
    readable(*value).contains(std::span<const std::string_view>(items),
                              std::span<bool>(present.get(), items.size()));
  }
  api.ReplyWithArray(ctx, static_cast<long>(items.size()));
  for (std::size_t i = 0; i < items.size(); ++i) api.ReplyWithLongLong(ctx, present[i] ? 1 : 0);
  return redis_api::kOk;
}

// ---- CF.DEL key item, CF.COMPACT key, CF.INFO key ---------------------------------------------
int del(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api.WrongArity(ctx);
  OpenKey key(ctx, argv[1], redis_api::kRead | redis_api::kWrite);
  FilterValue* value = key.value();
  if (value == nullptr) throw CommandError(kDelNotFound);
  if (!writable(*value).erase(view_of(argv[2]))) return api.ReplyWithLongLong(ctx, 0);
  ++value->items_deleted;
  api.ReplicateVerbatim(ctx);
  return api.ReplyWithLongLong(ctx, 1);
}

// RedisBloom compacts by moving items from its later sub-filters into earlier ones. This filter is
// one table (a growable one doubles in place), so there is nothing to move: OK, unchanged.
int compact(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return api.WrongArity(ctx);
  OpenKey key(ctx, argv[1], redis_api::kRead | redis_api::kWrite);
  FilterValue* value = key.value();
  if (value == nullptr) throw CommandError(kCompactNotFound);
  readable(*value);
  return api.ReplyWithSimpleString(ctx, "OK");
}

int info(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return api.WrongArity(ctx);
  OpenKey key(ctx, argv[1], redis_api::kRead);
  FilterValue* value = key.value();
  if (value == nullptr) throw CommandError(kNotFound);
  const cuckoo::Filter& filter = readable(*value);
  // A growable filter is one table that doubles: "Number of filters" counts 1 + its doublings,
  // and its "Expansion rate" is 2 (each growth doubles the capacity); a fixed filter's is 0.
  const std::pair<const char*, long long> fields[] = {
      {"Size", static_cast<long long>(filter.memory_bytes())},
      {"Number of buckets", static_cast<long long>(filter.bucket_count())},
      {"Number of filters", 1 + static_cast<long long>(filter.doublings())},
      {"Number of items inserted", static_cast<long long>(filter.size())},
      {"Number of items deleted", static_cast<long long>(value->items_deleted)},
      {"Bucket size", static_cast<long long>(filter.bucket_size())},
      {"Expansion rate", filter.growable() ? 2 : 0},
      {"Max iterations", static_cast<long long>(filter.max_kicks())},
  };
  api.ReplyWithArray(ctx, 2 * static_cast<long>(std::size(fields)));
  for (const auto& [name, number] : fields) {
    api.ReplyWithSimpleString(ctx, name);
    api.ReplyWithLongLong(ctx, number);
  }
  return redis_api::kOk;
}

// ---- CF.SCANDUMP key iterator, CF.LOADCHUNK key iterator data -------------------------------
long long parse_iterator(RedisModuleString* argument) {
  long long iterator = 0;
  if (api.StringToLongLong(argument, &iterator) != redis_api::kOk || iterator < 0) {
    throw CommandError("Invalid position");
  }
  return iterator;
}

int scandump(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api.WrongArity(ctx);
  const long long iterator = parse_iterator(argv[2]);
  OpenKey key(ctx, argv[1], redis_api::kRead);
  FilterValue* value = key.value();
  if (value == nullptr) throw CommandError(kNotFound);
  const cuckoo::Filter& filter = readable(*value);
  // Serialized once per walk (kept until the walk ends or a write changes the filter).
  if (iterator == 0 || !value->dump_in_progress) value->dump_in_progress = filter.serialize();
  const DumpChunk chunk = chunk_of(*value->dump_in_progress, iterator);
  if (chunk.next_iterator == 0) value->dump_in_progress.reset();  // the walk is over
  api.ReplyWithArray(ctx, 2);
  api.ReplyWithLongLong(ctx, chunk.next_iterator);
  if (chunk.next_iterator == 0) return api.ReplyWithNull(ctx);
  return api.ReplyWithStringBuffer(ctx, reinterpret_cast<const char*>(chunk.bytes.data()),
                                   chunk.bytes.size());
}

int loadchunk(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 4) return api.WrongArity(ctx);
  const long long iterator = parse_iterator(argv[2]);
  OpenKey key(ctx, argv[1], redis_api::kRead | redis_api::kWrite);
  FilterValue* value = key.value();
  if (value == nullptr) {
    key.store(start_load(iterator, bytes_of(argv[3]), max_filter_bytes()));
  } else {
    try {
      continue_load(*value, iterator, bytes_of(argv[3]));
    } catch (const CommandError&) {
      // A complete file the reader refused: drop it, so the key is not left half-loaded.
      if (value->loading && value->loading->bytes.size() >= value->loading->expected_bytes) {
        key.remove();
        api.ReplicateVerbatim(ctx);
      }
      throw;
    }
  }
  api.ReplicateVerbatim(ctx);
  return api.ReplyWithSimpleString(ctx, "OK");
}

// ---- Registration
// --------------------------------------------------------------------------------
template <int (*Handler)(RedisModuleCtx*, RedisModuleString**, int)>
int command(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  return guarded(ctx, [&] { return Handler(ctx, argv, argc); });
}

int add_any(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  return add(ctx, argv, argc, false);
}
int add_new(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  return add(ctx, argv, argc, true);
}
int insert_any(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  return insert(ctx, argv, argc, false);
}
int insert_new(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  return insert(ctx, argv, argc, true);
}

struct CommandSpec {
  const char* name;
  redis_api::CommandFunc handler;
  const char* flags;
};

constexpr CommandSpec kCommands[] = {
    {"cf.reserve", command<reserve>, "write deny-oom"},
    {"cf.add", command<add_any>, "write deny-oom"},
    {"cf.addnx", command<add_new>, "write deny-oom"},
    {"cf.insert", command<insert_any>, "write deny-oom"},
    {"cf.insertnx", command<insert_new>, "write deny-oom"},
    {"cf.exists", command<exists>, "readonly fast"},
    {"cf.mexists", command<mexists>, "readonly fast"},
    {"cf.count", command<count>, "readonly fast"},
    {"cf.del", command<del>, "write fast"},
    {"cf.compact", command<compact>, "write"},
    {"cf.info", command<info>, "readonly fast"},
    {"cf.scandump", command<scandump>, "readonly"},
    {"cf.loadchunk", command<loadchunk>, "write deny-oom"},
};

}  // namespace

int register_commands(RedisModuleCtx* ctx) {
  for (const CommandSpec& spec : kCommands) {
    if (api.CreateCommand(ctx, spec.name, spec.handler, spec.flags, 1, 1, 1) != redis_api::kOk) {
      return redis_api::kErr;
    }
  }
  return redis_api::kOk;
}

}  // namespace cuckoo_redis
