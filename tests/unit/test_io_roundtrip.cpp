// Saved filters answer exactly as the filter they were saved from: through a file, a byte
// buffer, a stream (seekable and not) and a memory-mapped open, for every bucket size and a range
// of fingerprint widths (fixed-width and run-time-width tables alike).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/io_test_support.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::ScratchDir;

void expect_same_answers(const cuckoo::Filter& original, const cuckoo::Filter& copy,
                         const std::vector<std::uint64_t>& probes) {
  ASSERT_EQ(copy.size(), original.size());
  ASSERT_EQ(copy.capacity(), original.capacity());
  ASSERT_EQ(copy.seed(), original.seed());
  ASSERT_EQ(copy.max_kicks(), original.max_kicks());
  ASSERT_EQ(copy.bucket_count(), original.bucket_count());
  ASSERT_EQ(copy.fingerprint_bits(), original.fingerprint_bits());
  ASSERT_EQ(copy.bucket_size(), original.bucket_size());
  ASSERT_EQ(copy.semi_sorted(), original.semi_sorted());
  std::size_t mismatches = 0;
  for (std::uint64_t key : probes) mismatches += copy.contains(key) != original.contains(key);
  EXPECT_EQ(mismatches, 0u);
}

/// A non-seekable stream: the loader cannot learn its length up front.
class PipeLikeBuffer : public std::streambuf {
 public:
  explicit PipeLikeBuffer(std::string data) : data_(std::move(data)) {
    setg(data_.data(), data_.data(), data_.data() + data_.size());
  }

 private:
  std::string data_;
};

struct FileShape {
  unsigned bucket_size;
  unsigned bits;
  bool semi_sort = false;
};

class RoundTrip : public ::testing::TestWithParam<FileShape> {};

TEST_P(RoundTrip, EveryFormAnswersIdentically) {
  const FileShape shape = GetParam();
  cuckoo::Filter original{cuckoo::Config{.capacity = 20'000,
                                         .fingerprint_bits = shape.bits,
                                         .bucket_size = shape.bucket_size,
                                         .max_kicks = 300,
                                         .seed = 0x1234'5678'9ABC'DEF0ull + shape.bits,
                                         .semi_sort = shape.semi_sort}};
  ASSERT_EQ(original.semi_sorted(), shape.semi_sort);
  const auto keys = cuckoo::test::random_keys(18'000, 11);
  for (std::uint64_t key : keys) original.insert(key);  // small f may refuse some: fine
  auto probes = cuckoo::test::random_keys(200'000, 12);
  probes.insert(probes.end(), keys.begin(), keys.end());

  ScratchDir dir;
  const auto path = dir.path() / "filter.cf";
  original.save(path);
  expect_same_answers(original, cuckoo::Filter::load(path), probes);

  const std::vector<std::byte> bytes = original.serialize();
  EXPECT_EQ(bytes.size(), std::filesystem::file_size(path));
  expect_same_answers(original, cuckoo::Filter::deserialize(bytes), probes);

  std::stringstream stream;
  original.serialize(stream);
  expect_same_answers(original, cuckoo::Filter::deserialize(stream), probes);

  PipeLikeBuffer pipe(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  std::istream pipe_stream(&pipe);
  expect_same_answers(original, cuckoo::Filter::deserialize(pipe_stream), probes);

  const cuckoo::MappedFilter mapped = cuckoo::Filter::map(path);
  EXPECT_TRUE(mapped.views_file());
  expect_same_answers(original, *mapped, probes);
  expect_same_answers(original, *cuckoo::Filter::map(path, cuckoo::ChecksumCheck::kSkip), probes);

  // A copy of a mapped filter owns its table and can be changed without touching the file.
  cuckoo::Filter writable = *mapped;
  writable.clear();
  EXPECT_EQ(writable.size(), 0u);
  expect_same_answers(original, *mapped, probes);
  expect_same_answers(original, cuckoo::Filter::load(path), probes);
}

INSTANTIATE_TEST_SUITE_P(AllBucketSizes, RoundTrip,
                         ::testing::Values(FileShape{2, 4}, FileShape{2, 9}, FileShape{2, 16},
                                           FileShape{2, 32}, FileShape{4, 2}, FileShape{4, 7},
                                           FileShape{4, 8}, FileShape{4, 12}, FileShape{4, 13},
                                           FileShape{4, 16}, FileShape{4, 32}, FileShape{8, 5},
                                           FileShape{8, 8}, FileShape{8, 12}, FileShape{8, 17},
                                           FileShape{8, 32}, FileShape{4, 4, true},
                                           FileShape{4, 9, true}, FileShape{4, 13, true},
                                           FileShape{4, 32, true}),
                         [](const auto& shape_info) {
                           return "b" + std::to_string(shape_info.param.bucket_size) + "_f" +
                                  std::to_string(shape_info.param.bits) +
                                  (shape_info.param.semi_sort ? "_semisorted" : "");
                         });

TEST(RoundTrip, SavedFilterKeepsWorkingAfterLoad) {
  cuckoo::Filter original{cuckoo::Config{.capacity = 5'000, .fingerprint_bits = 12}};
  for (int i = 0; i < 2'000; ++i) ASSERT_TRUE(original.insert(i));
  cuckoo::Filter loaded = cuckoo::Filter::deserialize(original.serialize());
  for (int i = 2'000; i < 4'000; ++i) {
    ASSERT_EQ(loaded.insert(i), original.insert(i));
  }
  for (int i = 0; i < 1'000; ++i) ASSERT_EQ(loaded.erase(i), original.erase(i));
  EXPECT_EQ(loaded.serialize(), original.serialize());  // bit-for-bit the same state
}

TEST(RoundTrip, EmptyFilterAndStringKeys) {
  cuckoo::Filter original{cuckoo::Config{.capacity = 1, .bucket_size = 2}};
  EXPECT_EQ(cuckoo::Filter::deserialize(original.serialize()).size(), 0u);
  ASSERT_TRUE(original.insert("alice"));
  const auto loaded = cuckoo::Filter::deserialize(original.serialize());
  EXPECT_TRUE(loaded.contains("alice"));
  EXPECT_EQ(loaded.size(), 1u);
}

}  // namespace
