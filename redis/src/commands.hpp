// redis/src/commands.hpp — the CF.* commands (RedisBloom 2.4 syntax, replies and error texts).
#pragma once

#include "module_api.hpp"

namespace cuckoo_redis {

/// Registers every CF.* command; kErr when the server refuses one.
int register_commands(RedisModuleCtx* ctx);

}  // namespace cuckoo_redis
