// redis/src/module.cpp — the module's entry point: binds the API, registers the type and commands.
//
//   redis-server --loadmodule /path/to/cuckoo_redis.so [MAX_FILTER_BYTES n]
//
// MAX_FILTER_BYTES bounds the table of one filter (CF.RESERVE / CF.INSERT capacities, CF.LOADCHUNK
// headers): larger requests get "Insufficient memory to create filter" instead of an allocation
// the machine cannot back. The default is half the machine's physical memory.
#include <cstring>
#include <string>

#include "commands.hpp"
#include "data_type.hpp"
#include "filter_options.hpp"
#include "module_api.hpp"

namespace {
constexpr const char* kModuleName = "cuckoo";
constexpr int kModuleVersion = 1;

int configure(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  using redis_api::api;
  for (int i = 0; i < argc; i += 2) {
    const std::string name = cuckoo_redis::upper_case(argv[i]);
    long long bytes = 0;
    if (name != "MAX_FILTER_BYTES" || i + 1 >= argc ||
        api.StringToLongLong(argv[i + 1], &bytes) != redis_api::kOk || bytes <= 0) {
      api.Log(ctx, redis_api::kLogWarning,
              "cuckoo: module arguments are MAX_FILTER_BYTES <positive integer>");
      return redis_api::kErr;
    }
    cuckoo_redis::set_max_filter_bytes(static_cast<std::size_t>(bytes));
  }
  return redis_api::kOk;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx* ctx,
                                                                         RedisModuleString** argv,
                                                                         int argc) {
  using redis_api::api;
  if (redis_api::bind(ctx) != redis_api::kOk) return redis_api::kErr;
  api.SetModuleAttribs(ctx, kModuleName, kModuleVersion, redis_api::kApiVersion1);
  try {
    if (configure(ctx, argv, argc) != redis_api::kOk) return redis_api::kErr;
    api.SetModuleOptions(ctx, redis_api::kOptionHandleIoErrors);
    if (cuckoo_redis::register_data_type(ctx) != redis_api::kOk) return redis_api::kErr;
    return cuckoo_redis::register_commands(ctx);
  } catch (...) {
    return redis_api::kErr;
  }
}
