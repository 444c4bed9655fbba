// redis/src/module_api.hpp — the part of the Redis module API this module uses, declared here.
//
// Debian ships redis-server without redismodule.h. Redis binds a module to its API at load time
// by name: the context passed to RedisModule_OnLoad starts with a pointer to a lookup function,
// `int GetApi(const char* name, void* function_pointer_out)`, and each API function is fetched
// through it ("RedisModule_OpenKey", ...). So a module needs only the signatures and constants
// it calls, which are Redis's documented ABI (API version 1, unchanged since Redis 4); they are
// written out below from the module API reference and checked by the tests against a real
// redis-server 7.0.
#pragma once

#include <cstddef>
#include <cstdint>

// Opaque server types: only ever handled through pointers.
struct RedisModuleCtx;
struct RedisModuleKey;
struct RedisModuleString;
struct RedisModuleIO;
struct RedisModuleType;
struct RedisModuleDigest;

namespace redis_api {

inline constexpr int kOk = 0;   // REDISMODULE_OK
inline constexpr int kErr = 1;  // REDISMODULE_ERR
inline constexpr int kApiVersion1 = 1;

// OpenKey modes.
inline constexpr int kRead = 1 << 0;
inline constexpr int kWrite = 1 << 1;

// KeyType results.
inline constexpr int kKeyTypeEmpty = 0;
inline constexpr int kKeyTypeModule = 6;

// SetModuleOptions: rdb_load checks IsIOError instead of the server panicking on a short read
// (a truncated RESTORE payload must be refused, not abort the server).
inline constexpr int kOptionHandleIoErrors = 1 << 0;

// Log levels are strings.
inline constexpr const char* kLogWarning = "warning";
inline constexpr const char* kLogNotice = "notice";

// Type methods: the layout of RedisModuleTypeMethods up to version 3 (Redis 6.2+). Redis reads
// only the fields up to the version declared in `version`.
inline constexpr std::uint64_t kTypeMethodVersion = 3;

using LoadFunc = void* (*)(RedisModuleIO* rdb, int encoding_version);
using SaveFunc = void (*)(RedisModuleIO* rdb, void* value);
using RewriteFunc = void (*)(RedisModuleIO* aof, RedisModuleString* key, void* value);
using MemUsageFunc = std::size_t (*)(const void* value);
using DigestFunc = void (*)(RedisModuleDigest* digest, void* value);
using FreeFunc = void (*)(void* value);
using AuxLoadFunc = int (*)(RedisModuleIO* rdb, int encoding_version, int when);
using AuxSaveFunc = void (*)(RedisModuleIO* rdb, int when);
using FreeEffortFunc = std::size_t (*)(RedisModuleString* key, const void* value);
using UnlinkFunc = void (*)(RedisModuleString* key, const void* value);
using CopyFunc = void* (*)(RedisModuleString* from_key, RedisModuleString* to_key,
                           const void* value);
using DefragFunc = int (*)(void* defrag_ctx, RedisModuleString* key, void** value);

struct TypeMethods {
  std::uint64_t version = kTypeMethodVersion;
  LoadFunc rdb_load = nullptr;
  SaveFunc rdb_save = nullptr;
  RewriteFunc aof_rewrite = nullptr;
  MemUsageFunc mem_usage = nullptr;
  DigestFunc digest = nullptr;
  FreeFunc free = nullptr;
  // version 2
  AuxLoadFunc aux_load = nullptr;
  AuxSaveFunc aux_save = nullptr;
  int aux_save_triggers = 0;
  // version 3
  FreeEffortFunc free_effort = nullptr;
  UnlinkFunc unlink = nullptr;
  CopyFunc copy = nullptr;
  DefragFunc defrag = nullptr;
};

using CommandFunc = int (*)(RedisModuleCtx* ctx, RedisModuleString** argv, int argc);

// The API functions, bound by bind() below. Names are Redis's without the "RedisModule_" prefix.
struct Api {
  void (*SetModuleAttribs)(RedisModuleCtx*, const char* name, int version, int api_version);
  void (*SetModuleOptions)(RedisModuleCtx*, int options);
  int (*CreateCommand)(RedisModuleCtx*, const char* name, CommandFunc, const char* flags,
                       int first_key, int last_key, int key_step);
  RedisModuleType* (*CreateDataType)(RedisModuleCtx*, const char* name, int encoding_version,
                                     TypeMethods* methods);
  RedisModuleKey* (*OpenKey)(RedisModuleCtx*, RedisModuleString* name, int mode);
  void (*CloseKey)(RedisModuleKey*);
  int (*DeleteKey)(RedisModuleKey*);
  int (*KeyType)(RedisModuleKey*);
  int (*ModuleTypeSetValue)(RedisModuleKey*, RedisModuleType*, void* value);
  RedisModuleType* (*ModuleTypeGetType)(RedisModuleKey*);
  void* (*ModuleTypeGetValue)(RedisModuleKey*);
  int (*WrongArity)(RedisModuleCtx*);
  int (*ReplyWithError)(RedisModuleCtx*, const char* error);
  int (*ReplyWithLongLong)(RedisModuleCtx*, long long value);
  int (*ReplyWithSimpleString)(RedisModuleCtx*, const char* text);
  int (*ReplyWithArray)(RedisModuleCtx*, long length);
  int (*ReplyWithStringBuffer)(RedisModuleCtx*, const char* bytes, std::size_t length);
  int (*ReplyWithNull)(RedisModuleCtx*);
  const char* (*StringPtrLen)(const RedisModuleString*, std::size_t* length);
  int (*StringToLongLong)(const RedisModuleString*, long long* out);
  int (*StringToDouble)(const RedisModuleString*, double* out);
  int (*ReplicateVerbatim)(RedisModuleCtx*);
  void (*EmitAOF)(RedisModuleIO*, const char* command, const char* format, ...);
  void (*SaveUnsigned)(RedisModuleIO*, std::uint64_t value);
  std::uint64_t (*LoadUnsigned)(RedisModuleIO*);
  void (*SaveStringBuffer)(RedisModuleIO*, const char* bytes, std::size_t length);
  char* (*LoadStringBuffer)(RedisModuleIO*, std::size_t* length);
  int (*IsIOError)(RedisModuleIO*);
  void (*Free)(void*);
  void (*DigestAddStringBuffer)(RedisModuleDigest*, const char* bytes, std::size_t length);
  void (*DigestEndSequence)(RedisModuleDigest*);
  void (*Log)(RedisModuleCtx*, const char* level, const char* format, ...);
  void (*LogIOError)(RedisModuleIO*, const char* level, const char* format, ...);
};

/// The bound API; valid after bind() succeeded.
extern Api api;

/// Looks every function of `api` up through the server's GetApi; kErr when one is missing.
int bind(RedisModuleCtx* ctx);

}  // namespace redis_api
