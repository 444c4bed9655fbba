// The golden files: filters saved by format versions 1 and 2 (growable) and committed to tests/data
// must load and give exactly the answers recorded when they were written, in every later version of
// the library (or, if a version is ever retired, be refused with a message saying so). See
// tests/data/make_golden.cpp; never regenerate these files to make this test pass.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <utility>

#include "cuckoo/cuckoo.hpp"
#include "data/golden_keys.hpp"
#include "support/io_test_support.hpp"

namespace {

using namespace cuckoo::golden;

struct Expected {
  std::size_t size = 0;
  std::set<std::pair<char, std::uint64_t>> positives;
};

Expected read_expected(const std::filesystem::path& path) {
  std::ifstream in(path);
  Expected expected;
  std::string word;
  in >> word >> expected.size;
  EXPECT_EQ(word, "size");
  char kind;
  std::uint64_t index;
  while (in >> kind >> index) expected.positives.insert({kind, index});
  return expected;
}

void expect_golden_answers(const cuckoo::Filter& filter, const Expected& expected) {
  EXPECT_EQ(filter.size(), expected.size);
  EXPECT_EQ(filter.seed(), kSeed);
  if (filter.growable()) {
    EXPECT_GE(filter.doublings(), 3u);
    EXPECT_EQ(filter.capacity(), kGrowableCapacity << filter.doublings());
  } else {
    EXPECT_EQ(filter.capacity(), kCapacity);
  }
  std::size_t mismatches = 0;
  for (std::uint64_t i = 0; i < kProbedIntegers; ++i) {
    mismatches += filter.contains(integer_key(i)) != expected.positives.contains({'u', i});
  }
  for (std::uint64_t i = 0; i < kProbedStrings; ++i) {
    mismatches += filter.contains(string_key(i)) != expected.positives.contains({'s', i});
  }
  EXPECT_EQ(mismatches, 0u);
  for (std::uint64_t i = 0; i < kInsertedIntegers; ++i)
    ASSERT_TRUE(filter.contains(integer_key(i)));
  for (std::uint64_t i = 0; i < kInsertedStrings; ++i) ASSERT_TRUE(filter.contains(string_key(i)));
}

TEST(GoldenFiles, LoadAndAnswerAsWhenWritten) {
  for (const GoldenFile& file : kFiles) {
    SCOPED_TRACE(file.name);
    const auto path = cuckoo::test::tests_source_dir() / "data" / file.name;
    const Expected expected = read_expected(path.string() + ".expected");
    ASSERT_GT(expected.positives.size(), kInsertedIntegers);

    const cuckoo::Filter loaded = cuckoo::Filter::load(path);
    EXPECT_EQ(loaded.bucket_size(), file.bucket_size);
    EXPECT_EQ(loaded.growable(), file.growable);
    EXPECT_EQ(loaded.layout().fingerprint_bits, file.fingerprint_bits);
    loaded.visit([&](const auto& f) {
      if constexpr (requires { f.schedule(); }) {
        EXPECT_EQ(static_cast<unsigned>(f.schedule()), file.schedule);
      }
    });
    expect_golden_answers(loaded, expected);
    expect_golden_answers(*cuckoo::Filter::map(path), expected);
    // Saving what was loaded reproduces the committed bytes exactly.
    EXPECT_EQ(loaded.serialize(), cuckoo::test::read_file(path));
  }
}

}  // namespace
