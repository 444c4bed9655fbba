// Built against the installed package by tests/cmake_consumer/run.cmake.
#include <cuckoo/cuckoo.hpp>

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
  std::printf("consumer ok: %zu items in %zu bytes\n", filter.size(), filter.memory_bytes());
  return 0;
}
