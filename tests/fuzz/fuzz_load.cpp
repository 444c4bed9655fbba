// libFuzzer target for the filter and approximate-map loaders: any input must load or be refused
// with cuckoo::format_error; nothing else (a crash, an out-of-bounds read, another exception, a
// huge allocation) is acceptable. What loads must then work: inserts it accepts are found, before
// and after erases of other keys, and it saves and loads again. Each input is tried as it is,
// and again with its trailing checksum made valid, so that the fuzzer also explores the checks
// behind the checksum.
//
//   make fuzz      (clang, bounded run over tests/fuzz/corpus)
//
// Inputs it finds that fail go to tests/fuzz/regressions/, which the unit tests replay
// (tests/unit/test_io_fuzz_regressions.cpp).
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/loaded_use.hpp"

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_load: %s\n", what.c_str());
  std::abort();
}

void try_load(std::span<const std::byte> bytes) {
  try {
    cuckoo::Filter filter = cuckoo::Filter::deserialize(bytes);
    // A loaded filter must answer without touching memory outside its table.
    for (std::uint64_t key = 0; key < 64; ++key) (void)filter.contains(key);
    (void)filter.serialize();
    if (const std::string lost = cuckoo::test::lost_after_use(filter); !lost.empty()) fail(lost);
  } catch (const cuckoo::format_error&) {
  }
  try {
    auto map = cuckoo::ApproximateMap<std::uint32_t>::deserialize(bytes);
    // A loaded map must answer without touching memory outside its table and values.
    for (std::uint64_t key = 0; key < 64; ++key) (void)map.find(key);
    (void)map.serialize();
    if (const std::string lost = cuckoo::test::lost_after_use(map); !lost.empty()) fail(lost);
  } catch (const cuckoo::format_error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  try_load({bytes, size});
  if (size >= 8) {
    std::vector<std::byte> fixed(bytes, bytes + size);
    const std::uint64_t sum = XXH3_64bits(fixed.data(), size - 8);
    for (int i = 0; i < 8; ++i) fixed[size - 8 + i] = static_cast<std::byte>(sum >> (8 * i));
    try_load(fixed);
    // The stream loader, whose length is known only by seeking.
    std::stringstream stream(std::string(reinterpret_cast<const char*>(fixed.data()), size));
    try {
      (void)cuckoo::Filter::deserialize(stream);
    } catch (const cuckoo::format_error&) {
    }
  }
  return 0;
}
