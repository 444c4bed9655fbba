// ConcurrentFilter used from one thread is the single-thread Filter: the same Config gives the
// same layout, the same inserts give bit-identical tables (the same search, the same walk), and
// every API member answers as Filter's does. The filters of every plain shape never lose an item.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <span>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

bool same_table(const cuckoo::Filter& a, const cuckoo::Filter& b) {
  const auto x = a.visit([](const auto& f) { return f.table().bytes(); });
  const auto y = b.visit([](const auto& f) { return f.table().bytes(); });
  return std::equal(x.begin(), x.end(), y.begin(), y.end());
}

struct Shape {
  unsigned b;
  unsigned f;
};
const Shape kShapes[] = {{2, 2},  {2, 7},  {2, 13}, {2, 32}, {4, 3},  {4, 8},
                         {4, 11}, {4, 12}, {4, 13}, {4, 16}, {4, 17}, {4, 32},
                         {8, 5},  {8, 8},  {8, 12}, {8, 16}, {8, 21}, {8, 32}};

// The same operations, in the same order, on both filters, through a fill past the first failed
// insert (so the breadth-first search and the kick walk both run) and a drain.
TEST(ConcurrentSingleThread, BitIdenticalToFilterForEveryShape) {
  for (const Shape s : kShapes) {
    const cuckoo::Config cfg{.capacity = 3000, .fingerprint_bits = s.f, .bucket_size = s.b};
    cuckoo::Filter plain{cfg};
    cuckoo::ConcurrentFilter concurrent{cfg};
    ASSERT_EQ(concurrent.layout().bucket_count, plain.layout().bucket_count);
    const auto keys = cuckoo::test::random_keys(3300, s.b * 100 + s.f);
    // Copies first, while there is room, so that counts above 1 are compared too.
    for (std::size_t i = 0; i < 200; ++i) {
      ASSERT_EQ(concurrent.insert(keys[i]), plain.insert(keys[i]));
    }
    for (std::uint64_t key : keys) {
      ASSERT_EQ(concurrent.insert(key), plain.insert(key)) << "b=" << s.b << " f=" << s.f;
    }
    for (std::size_t i = 0; i < keys.size(); i += 3) {
      ASSERT_EQ(concurrent.erase(keys[i]), plain.erase(keys[i]));
    }
    for (std::uint64_t key : cuckoo::test::random_keys(1500, 77)) {
      ASSERT_EQ(concurrent.insert(key), plain.insert(key));
    }
    EXPECT_EQ(concurrent.size(), plain.size());
    EXPECT_TRUE(same_table(concurrent.to_filter(), plain)) << "b=" << s.b << " f=" << s.f;
    auto probes = cuckoo::test::random_keys(20'000, 78);
    probes.insert(probes.end(), keys.begin(), keys.end());
    std::size_t counted_above_one = 0;
    for (std::uint64_t key : probes) {
      ASSERT_EQ(concurrent.contains(key), plain.contains(key));
      const std::size_t n = plain.count(key);
      ASSERT_EQ(concurrent.count(key), n) << "b=" << s.b << " f=" << s.f;
      counted_above_one += n > 1;
    }
    EXPECT_GT(counted_above_one, 0u) << "b=" << s.b << " f=" << s.f;
  }
}

// Keys inserted until refused: count is every entry of the key's two buckets that matches it (the
// copies, and other keys' entries with the same fingerprint), single-key and batched, and falls by
// one with each erase. The counts sum both buckets' lane flags in one word (at the portable level
// by a multiplication into the top lane), and a pair full of matches, 2b, is the largest sum they
// must carry: most keys reach it (those that do not share their pair with an entry of another
// fingerprint whose other bucket is in the same pair, which no search can move out).
TEST(ConcurrentSingleThread, CountsEveryCopyUpToBothBucketsFull) {
  for (const Shape s : kShapes) {
    const cuckoo::Config cfg{.capacity = 3000, .fingerprint_bits = s.f, .bucket_size = s.b};
    cuckoo::ConcurrentFilter filter{cfg};
    for (std::uint64_t key : cuckoo::test::random_keys(1000, s.b * 1000 + s.f)) filter.insert(key);
    std::size_t full_pairs = 0;
    for (std::uint64_t key : cuckoo::test::random_keys(20, s.b * 1000 + s.f + 1)) {
      std::size_t matches = filter.count(key);
      while (filter.insert(key)) ++matches;
      ASSERT_EQ(filter.count(key), matches) << "b=" << s.b << " f=" << s.f;
      std::size_t batched = 0;
      filter.count(std::span<const std::uint64_t>(&key, 1), std::span<std::size_t>(&batched, 1));
      ASSERT_EQ(batched, matches) << "b=" << s.b << " f=" << s.f;
      ASSERT_LE(matches, 2u * s.b);
      full_pairs += matches == 2u * s.b;
      for (std::size_t left = matches; left-- > 0;) {
        ASSERT_TRUE(filter.erase(key));
        ASSERT_EQ(filter.count(key), left) << "b=" << s.b << " f=" << s.f;
      }
    }
    EXPECT_GE(full_pairs, 10u) << "b=" << s.b << " f=" << s.f;
  }
}

TEST(ConcurrentSingleThread, NoFalseNegativesAgainstModel) {
  for (const Shape s : kShapes) {
    if (s.f < 7) continue;  // narrower widths cannot reach the design load (sizing.hpp)
    const std::size_t capacity = 2000;
    cuckoo::ConcurrentFilter filter{
        cuckoo::Config{.capacity = capacity, .fingerprint_bits = s.f, .bucket_size = s.b}};
    cuckoo::test::fill_and_drain_against_model(
        filter, capacity, s.b * 1000 + s.f,
        "b=" + std::to_string(s.b) + " f=" + std::to_string(s.f));
  }
}

TEST(ConcurrentSingleThread, AcceptsItsCapacity) {
  for (unsigned b : {2u, 4u, 8u}) {
    const std::size_t n = 100'003;
    cuckoo::ConcurrentFilter filter{cuckoo::Config{.capacity = n, .bucket_size = b}};
    std::size_t failed = 0;
    for (std::uint64_t key : cuckoo::test::random_keys(n, b)) failed += !filter.insert(key);
    EXPECT_EQ(failed, 0u) << "b=" << b;
    EXPECT_EQ(filter.size(), n);
  }
}

TEST(ConcurrentSingleThread, BatchesGiveTheSingleKeyAnswers) {
  const cuckoo::Config cfg{.capacity = 50'000};
  cuckoo::ConcurrentFilter batched{cfg}, single{cfg};
  const auto keys = cuckoo::test::random_keys(60'000, 3);  // past capacity: the batch stops
  const std::size_t inserted = batched.insert(std::span<const std::uint64_t>(keys));
  std::size_t expected = 0;
  while (expected < keys.size() && single.insert(keys[expected])) ++expected;
  EXPECT_EQ(inserted, expected);
  EXPECT_TRUE(same_table(batched.to_filter(), single.to_filter()));

  const auto probes = cuckoo::test::random_keys(10'000, 4);
  std::vector<std::uint64_t> mixed(keys.begin(), keys.begin() + 10'000);
  mixed.insert(mixed.end(), probes.begin(), probes.end());
  std::unique_ptr<bool[]> out(new bool[mixed.size()]);
  batched.contains(std::span<const std::uint64_t>(mixed), std::span<bool>(out.get(), mixed.size()));
  for (std::size_t i = 0; i < mixed.size(); ++i) ASSERT_EQ(out[i], single.contains(mixed[i]));

  std::vector<std::uint64_t> gone(keys.begin(), keys.begin() + 5000);
  gone.push_back(probes[0]);
  std::size_t removed = 0;
  for (std::uint64_t key : gone) removed += single.erase(key);
  EXPECT_EQ(batched.erase(std::span<const std::uint64_t>(gone)), removed);
  EXPECT_TRUE(same_table(batched.to_filter(), single.to_filter()));
}

TEST(ConcurrentSingleThread, ConvertsToAndFromFilterAndFiles) {
  cuckoo::Filter plain{cuckoo::Config{.capacity = 10'000, .bucket_size = 8, .seed = 99}};
  for (std::uint64_t key : cuckoo::test::random_keys(9'000, 1)) ASSERT_TRUE(plain.insert(key));
  plain.insert("alice");
  const cuckoo::ConcurrentFilter concurrent(plain);
  EXPECT_EQ(concurrent.size(), plain.size());
  EXPECT_EQ(concurrent.seed(), 99u);
  EXPECT_EQ(concurrent.bucket_size(), 8u);
  EXPECT_TRUE(concurrent.contains("alice"));
  EXPECT_TRUE(same_table(concurrent.to_filter(), plain));

  const auto bytes = concurrent.serialize();
  EXPECT_EQ(bytes, plain.serialize());  // the same file, byte for byte
  const auto back = cuckoo::ConcurrentFilter::deserialize(bytes);
  EXPECT_TRUE(same_table(back.to_filter(), plain));
  std::stringstream stream;
  concurrent.serialize(stream);
  EXPECT_EQ(cuckoo::ConcurrentFilter::deserialize(stream).size(), plain.size());

  const auto dir =
      std::filesystem::temp_directory_path() / ("cuckoo-concurrent-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  concurrent.save(dir / "c.cf");
  const auto loaded = cuckoo::ConcurrentFilter::load(dir / "c.cf");
  EXPECT_TRUE(same_table(loaded.to_filter(), plain));
  EXPECT_TRUE(same_table(cuckoo::Filter::load(dir / "c.cf"), plain));
  std::filesystem::remove_all(dir);

  cuckoo::ConcurrentFilter copy = concurrent;  // a snapshot
  EXPECT_TRUE(copy.erase("alice"));
  EXPECT_TRUE(concurrent.contains("alice"));
  copy.clear();
  EXPECT_TRUE(copy.empty());
  EXPECT_FALSE(copy.contains("alice"));
  EXPECT_EQ(copy.capacity(), plain.capacity());
}

TEST(ConcurrentSingleThread, RefusesSemiSortedTablesWithAClearError) {
  try {
    cuckoo::ConcurrentFilter filter{cuckoo::Config{.semi_sort = true}};
    FAIL() << "semi_sort accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("semi_sort"), std::string::npos) << e.what();
  }
  const cuckoo::Filter semi{cuckoo::Config{.capacity = 100, .semi_sort = true}};
  EXPECT_THROW(cuckoo::ConcurrentFilter{semi}, std::invalid_argument);
  EXPECT_THROW(cuckoo::ConcurrentFilter{cuckoo::Config{.bucket_size = 3}}, std::invalid_argument);
  EXPECT_THROW(cuckoo::ConcurrentFilter{cuckoo::Config{.capacity = 0}}, std::invalid_argument);
}

TEST(ConcurrentSingleThread, ShapeAndStateMatchFilter) {
  const cuckoo::Config cfg{.capacity = 123'457, .target_fpr = 0.0001, .bucket_size = 2};
  const cuckoo::Filter plain{cfg};
  const cuckoo::ConcurrentFilter concurrent{cfg};
  EXPECT_EQ(concurrent.capacity(), plain.capacity());
  EXPECT_EQ(concurrent.bucket_count(), plain.bucket_count());
  EXPECT_EQ(concurrent.slot_count(), plain.slot_count());
  EXPECT_EQ(concurrent.fingerprint_bits(), plain.fingerprint_bits());
  EXPECT_EQ(concurrent.bucket_size(), 2u);
  EXPECT_EQ(concurrent.max_kicks(), plain.max_kicks());
  EXPECT_FALSE(concurrent.semi_sorted());
  EXPECT_GE(concurrent.memory_bytes(), plain.memory_bytes());
  EXPECT_LE(concurrent.memory_bytes(),
            plain.memory_bytes() + 16 + 48 * 1024 + 3 * 128);  // stripes, activity, sole, bias
  EXPECT_EQ(concurrent.load_factor(), 0.0);
}

}  // namespace
