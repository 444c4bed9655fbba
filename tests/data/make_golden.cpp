// Writes the golden filter files and their expected answers into the directory given:
//
//   cmake --build build/debug --target cuckoo_make_golden
//   build/debug/tests/cuckoo_make_golden tests/data
//
// Run once per format version, when the files are first committed. It writes only the files that
// do not exist yet: never regenerate existing files to make the golden test pass; the test exists
// to prove that files written by an earlier version still load and answer the same way.
//
// <name>.expected lists every probe that answered "maybe present", one per line: "u <i>" for
// integer_key(i), "s <i>" for string_key(i) (golden_keys.hpp); the first line is "size <n>". For
// an approximate map (kMapFiles) each such line goes on with the values find() returned, in order.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cuckoo/cuckoo.hpp"
#include "golden_keys.hpp"

int main(int argc, char** argv) {
  using namespace cuckoo::golden;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  for (const GoldenFile& file : kFiles) {
    if (std::filesystem::exists(dir / file.name)) continue;
    cuckoo::Filter filter{cuckoo::Config{.capacity = file.growable ? kGrowableCapacity : kCapacity,
                                         .fingerprint_bits = file.fingerprint_bits,
                                         .bucket_size = file.bucket_size,
                                         .seed = kSeed,
                                         .growable = file.growable}};
    for (std::uint64_t i = 0; i < kInsertedIntegers; ++i) filter.insert(integer_key(i));
    for (std::uint64_t i = 0; i < kInsertedStrings; ++i) filter.insert(string_key(i));
    filter.save(dir / file.name);
    std::ofstream expected(dir / (std::string(file.name) + ".expected"));
    expected << "size " << filter.size() << "\n";
    for (std::uint64_t i = 0; i < kProbedIntegers; ++i) {
      if (filter.contains(integer_key(i))) expected << "u " << i << "\n";
    }
    for (std::uint64_t i = 0; i < kProbedStrings; ++i) {
      if (filter.contains(string_key(i))) expected << "s " << i << "\n";
    }
  }
  for (const GoldenMapFile& file : kMapFiles) {
    if (std::filesystem::exists(dir / file.name)) continue;
    cuckoo::ApproximateMap<std::uint32_t> map{
        cuckoo::Config{.capacity = kCapacity,
                       .fingerprint_bits = file.fingerprint_bits,
                       .bucket_size = file.bucket_size,
                       .seed = kSeed}};
    for (std::uint64_t i = 0; i < kInsertedIntegers; ++i)
      map.insert(integer_key(i), golden_value(i));
    for (std::uint64_t i = 0; i < kInsertedStrings; ++i) {
      map.insert(string_key(i), golden_value(i + 1'000'000));
    }
    map.save(dir / file.name);
    std::ofstream expected(dir / (std::string(file.name) + ".expected"));
    expected << "size " << map.size() << "\n";
    const auto record = [&](char kind, std::uint64_t i, const std::vector<std::uint32_t>& values) {
      if (values.empty()) return;
      expected << kind << " " << i;
      for (std::uint32_t v : values) expected << " " << v;
      expected << "\n";
    };
    for (std::uint64_t i = 0; i < kProbedIntegers; ++i) record('u', i, map.find(integer_key(i)));
    for (std::uint64_t i = 0; i < kProbedStrings; ++i) record('s', i, map.find(string_key(i)));
  }
  return 0;
}
