// Built against the installed package by tests/cmake_consumer/run.cmake, with the project's
// compiler and, through pkg-config, with clang as well.
#include <cuckoo/cuckoo.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

int main() {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 1000, .target_fpr = 0.01}};
  for (int i = 0; i < 1000; ++i) {
    if (!filter.insert("key-" + std::to_string(i))) return 1;
  }
  for (int i = 0; i < 1000; ++i) {
    if (!filter.contains("key-" + std::to_string(i))) return 2;
  }
  if (!filter.erase(std::string("key-7")) || filter.size() != 999) return 3;

  cuckoo::ConcurrentFilter shared{cuckoo::Config{.capacity = 1000}};
  cuckoo::ApproximateMap<std::uint32_t> map{cuckoo::Config{.capacity = 1000}};
  for (std::uint64_t k = 0; k < 500; ++k) {
    if (!shared.insert(k) || !map.insert(k, static_cast<std::uint32_t>(k * 3))) return 4;
  }
  for (std::uint64_t k = 0; k < 500; ++k) {
    std::uint32_t found[8];
    const std::size_t n = map.find(k, std::span<std::uint32_t>(found));
    bool has_value = false;
    for (std::size_t i = 0; i < n && i < 8; ++i) has_value |= found[i] == k * 3;
    if (!shared.contains(k) || !has_value) return 5;
  }
  std::printf("consumer ok: %zu items in %zu bytes; concurrent %zu, map %zu\n", filter.size(),
              filter.memory_bytes(), shared.size(), map.size());
  return 0;
}
