// redis/src/module_api.cpp — binds the declared module API by name (see module_api.hpp).
#include "module_api.hpp"

#include <cstring>

namespace redis_api {

Api api{};

namespace {
using GetApiFunc = int (*)(const char* name, void* function_pointer_out);

template <class Function>
bool lookup(GetApiFunc get_api, const char* name, Function& out) {
  return get_api(name, static_cast<void*>(&out)) == kOk && out != nullptr;
}
}  // namespace

int bind(RedisModuleCtx* ctx) {
  // The server stores its lookup function in the first word of the context it passes to OnLoad.
  GetApiFunc get_api = nullptr;
  std::memcpy(&get_api, static_cast<const void*>(ctx), sizeof get_api);
  if (get_api == nullptr) return kErr;
  bool ok = true;
#define CUCKOO_BIND(name) ok = lookup(get_api, "RedisModule_" #name, api.name) && ok
  CUCKOO_BIND(SetModuleAttribs);
  CUCKOO_BIND(SetModuleOptions);
  CUCKOO_BIND(CreateCommand);
  CUCKOO_BIND(CreateDataType);
  CUCKOO_BIND(OpenKey);
  CUCKOO_BIND(CloseKey);
  CUCKOO_BIND(DeleteKey);
  CUCKOO_BIND(KeyType);
  CUCKOO_BIND(ModuleTypeSetValue);
  CUCKOO_BIND(ModuleTypeGetType);
  CUCKOO_BIND(ModuleTypeGetValue);
  CUCKOO_BIND(WrongArity);
  CUCKOO_BIND(ReplyWithError);
  CUCKOO_BIND(ReplyWithLongLong);
  CUCKOO_BIND(ReplyWithSimpleString);
  CUCKOO_BIND(ReplyWithArray);
  CUCKOO_BIND(ReplyWithStringBuffer);
  CUCKOO_BIND(ReplyWithNull);
  CUCKOO_BIND(StringPtrLen);
  CUCKOO_BIND(StringToLongLong);
  CUCKOO_BIND(StringToDouble);
  CUCKOO_BIND(ReplicateVerbatim);
  CUCKOO_BIND(EmitAOF);
  CUCKOO_BIND(SaveUnsigned);
  CUCKOO_BIND(LoadUnsigned);
  CUCKOO_BIND(SaveStringBuffer);
  CUCKOO_BIND(LoadStringBuffer);
  CUCKOO_BIND(IsIOError);
  CUCKOO_BIND(Free);
  CUCKOO_BIND(DigestAddStringBuffer);
  CUCKOO_BIND(DigestEndSequence);
  CUCKOO_BIND(Log);
  CUCKOO_BIND(LogIOError);
#undef CUCKOO_BIND
  return ok ? kOk : kErr;
}

}  // namespace redis_api
