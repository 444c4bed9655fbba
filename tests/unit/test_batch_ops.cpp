// Batch contains / insert / erase give exactly the answers of the single-key calls made in order:
// random and adversarial inputs (empty spans, sizes that are not a multiple of the pipeline depth,
// duplicates inside one batch, inserts that fail mid-batch), uint64 and string keys, every depth.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::random_keys;
using cuckoo::test::table_bytes;

struct Shape {
  unsigned b, f;
  bool semi = false;
};
const Shape kShapes[] = {{4, 12},      {4, 8},       {4, 16},       {4, 7},       {4, 19},
                         {2, 12},      {2, 31},      {8, 12},       {8, 5},       {4, 13, true},
                         {4, 5, true}, {4, 9, true}, {4, 20, true}, {4, 32, true}};

cuckoo::Filter make(const Shape& s, std::size_t capacity = 3000, std::uint64_t seed = 7) {
  return cuckoo::Filter{cuckoo::Config{.capacity = capacity,
                                       .fingerprint_bits = s.f,
                                       .bucket_size = s.b,
                                       .seed = seed,
                                       .semi_sort = s.semi}};
}

// Queries: every inserted key, as many fresh ones, and each batch size in `sizes` cut from them.
void expect_contains_matches(const cuckoo::Filter& filter, const std::vector<std::uint64_t>& q) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{15}, std::size_t{16},
                        std::size_t{17}, std::size_t{33}, q.size()}) {
    if (n > q.size()) continue;
    std::vector<char> out_storage(n + 1, 2);  // one extra: the batch must not write past n
    auto* out = reinterpret_cast<bool*>(out_storage.data());
    for (std::size_t i = 0; i <= n; ++i) out[i] = (i % 2) == 0;
    filter.contains(std::span<const std::uint64_t>(q.data(), n), std::span<bool>(out, n));
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], filter.contains(q[i])) << "key " << i;
    ASSERT_EQ(out[n], (n % 2) == 0) << "wrote past the batch";
  }
}

TEST(BatchContains, MatchesSingleKeyLookupsForEveryShape) {
  for (const Shape& s : kShapes) {
    auto filter = make(s);
    const auto keys = random_keys(3000, s.b * 100 + s.f);
    for (auto k : keys) ASSERT_TRUE(filter.insert(k));
    auto q = keys;
    const auto fresh = random_keys(3000, 4242);
    q.insert(q.end(), fresh.begin(), fresh.end());
    expect_contains_matches(filter, q);
  }
}

TEST(BatchContains, EveryPipelineDepthGivesTheSameAnswers) {
  cuckoo::BasicFilter<cuckoo::PackedTable<4, 12>> filter{
      cuckoo::Config{.capacity = 5000, .fingerprint_bits = 12}};
  const auto keys = random_keys(5000, 1);
  for (auto k : keys) ASSERT_TRUE(filter.insert(k));
  auto q = random_keys(2001, 2);
  q.insert(q.end(), keys.begin(), keys.begin() + 1999);
  const std::span<const std::uint64_t> qs(q);
  std::vector<char> a(q.size()), b(q.size()), c(q.size()), d(q.size());
  auto as = [](std::vector<char>& v) {
    return std::span<bool>(reinterpret_cast<bool*>(v.data()), v.size());
  };
  filter.contains_pipelined<1>(qs, as(a));
  filter.contains_pipelined<4>(qs, as(b));
  filter.contains_pipelined<64>(qs, as(c));
  filter.contains(qs, as(d));
  for (std::size_t i = 0; i < q.size(); ++i) {
    const bool single = filter.contains(q[i]);
    ASSERT_EQ(static_cast<bool>(a[i]), single);
    ASSERT_EQ(static_cast<bool>(b[i]), single);
    ASSERT_EQ(static_cast<bool>(c[i]), single);
    ASSERT_EQ(static_cast<bool>(d[i]), single);
  }
}

TEST(BatchContains, StringKeys) {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 2000}};
  std::vector<std::string> keys;
  for (int i = 0; i < 2000; ++i) keys.push_back("key-" + std::to_string(i * 7919));
  EXPECT_EQ(filter.insert(std::span<const std::string>(keys)), keys.size());
  std::vector<std::string> q = keys;
  for (int i = 0; i < 2000; ++i) q.push_back("other-" + std::to_string(i));
  q.push_back("");
  std::vector<char> out(q.size());
  filter.contains(std::span<const std::string>(q),
                  std::span<bool>(reinterpret_cast<bool*>(out.data()), out.size()));
  for (std::size_t i = 0; i < q.size(); ++i)
    ASSERT_EQ(static_cast<bool>(out[i]), filter.contains(q[i]));
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_TRUE(out[i]);
}

TEST(BatchInsert, EmptyBatchChangesNothing) {
  auto filter = make({4, 12});
  EXPECT_EQ(filter.insert(std::span<const std::uint64_t>()), 0u);
  EXPECT_EQ(filter.erase(std::span<const std::uint64_t>()), 0u);
  filter.contains(std::span<const std::uint64_t>(), std::span<bool>());
  EXPECT_EQ(filter.size(), 0u);
}

// A batch insert leaves the same table as single inserts made in order up to the first failure.
void expect_insert_matches(const Shape& s, const std::vector<std::uint64_t>& batch,
                           std::size_t capacity) {
  auto batched = make(s, capacity);
  auto single = make(s, capacity);
  std::size_t expected = 0;
  while (expected < batch.size() && single.insert(batch[expected])) ++expected;
  const std::size_t got = batched.insert(std::span<const std::uint64_t>(batch));
  ASSERT_EQ(got, expected) << "b=" << s.b << " f=" << s.f;
  ASSERT_EQ(batched.size(), single.size());
  ASSERT_EQ(table_bytes(batched), table_bytes(single)) << "b=" << s.b << " f=" << s.f;
}

TEST(BatchInsert, SameTableAsSingleInsertsForEveryShapeAndSize) {
  for (const Shape& s : kShapes) {
    for (std::size_t n : {1u, 15u, 16u, 17u, 100u, 2999u}) {
      expect_insert_matches(s, random_keys(n, n + s.f), 3000);
    }
  }
}

TEST(BatchInsert, StopsAtTheFirstFailureWhichChangesNothing) {
  for (const Shape& s : kShapes) {
    // Far more keys than slots: the batch must stop at exactly the first failing key.
    const auto keys = random_keys(6000, 99 + s.b);
    expect_insert_matches(s, keys, 1500);
    auto filter = make(s, 1500);
    const std::size_t r = filter.insert(std::span<const std::uint64_t>(keys));
    ASSERT_LT(r, keys.size());
    // The failed key changed nothing: the table is what keys[0..r) alone make (a failed insert
    // only advances the kick PRNG, so a retry of keys[r] may later succeed; it is not tried).
    auto prefix = make(s, 1500);
    for (std::size_t i = 0; i < r; ++i) ASSERT_TRUE(prefix.insert(keys[i]));
    EXPECT_EQ(table_bytes(filter), table_bytes(prefix));
    for (std::size_t i = 0; i < r; ++i) ASSERT_TRUE(filter.contains(keys[i]));
    EXPECT_EQ(filter.size(), r);
  }
}

TEST(BatchInsert, DuplicatesInsideOneBatchFailAtCopyTwoBPlusOne) {
  for (const Shape& s : kShapes) {
    std::vector<std::uint64_t> batch = {11, 22, 33};
    for (unsigned i = 0; i < 2 * s.b + 1; ++i) batch.push_back(0xABCDEF);
    batch.push_back(44);
    batch.push_back(55);
    auto filter = make(s);
    const std::size_t r = filter.insert(std::span<const std::uint64_t>(batch));
    EXPECT_EQ(r, 3 + 2 * s.b) << "b=" << s.b << " f=" << s.f;
    EXPECT_EQ(filter.count(std::uint64_t{0xABCDEF}), 2 * s.b);
    EXPECT_EQ(filter.size(), r);  // 44 and 55 were not tried
    expect_insert_matches(s, batch, 3000);
  }
}

TEST(BatchErase, SameAsSingleErasesIncludingAbsentKeysAndDuplicates) {
  for (const Shape& s : kShapes) {
    auto batched = make(s);
    auto single = make(s);
    const auto keys = random_keys(2500, s.f * 3 + s.b);
    ASSERT_EQ(batched.insert(std::span<const std::uint64_t>(keys)), keys.size());
    for (auto k : keys) ASSERT_TRUE(single.insert(k));
    std::vector<std::uint64_t> gone(keys.begin(), keys.begin() + 1000);
    gone.push_back(keys[5]);  // a second erase of the same key in the batch
    const auto absent = random_keys(333, 77);
    gone.insert(gone.end(), absent.begin(), absent.end());
    std::size_t expected = 0;
    for (auto k : gone) expected += single.erase(k) ? 1 : 0;
    EXPECT_EQ(batched.erase(std::span<const std::uint64_t>(gone)), expected);
    EXPECT_EQ(batched.size(), single.size());
    // Erasing an absent key (or a key twice) may remove a colliding fingerprint, as documented
    // for erase(); what matters is that the batch does exactly what the single calls do.
    EXPECT_EQ(table_bytes(batched), table_bytes(single));
  }
}

}  // namespace
