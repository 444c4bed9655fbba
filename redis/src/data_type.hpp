// redis/src/data_type.hpp — the module's key type: persistence, AOF rewrite, digest, memory.
//
// The type is registered as "cuckoo-CF", not RedisBloom's "MBbloomCF": the RDB payload is the
// library's file, not RedisBloom's, so an RDB written by one must not be read by the other.
#pragma once

#include "module_api.hpp"

namespace cuckoo_redis {

inline constexpr const char* kTypeName = "cuckoo-CF";  // exactly 9 characters, as Redis requires
inline constexpr int kEncodingVersion = 1;

/// Registers the type; kErr when the server refuses it.
int register_data_type(RedisModuleCtx* ctx);

/// The registered type (for OpenKey / ModuleTypeSetValue).
RedisModuleType* data_type() noexcept;

}  // namespace cuckoo_redis
