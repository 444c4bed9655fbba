// Batch count, `count(keys, out)`, on every filter the facades hold (plain shapes, semi-sorted,
// growable, blocked), the concurrent filter and the approximate map: out[i] is what count(keys[i])
// returns, for batches shorter and longer than the pipelines, with keys held once, held several
// times and absent; never less than the copies held; nothing written past the batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

constexpr std::size_t kUnwritten = 12345;

/// Inserts keys[i] 1, 2 or 3 times (every fourth twice, every twelfth three times) until the
/// first refusal; the model holds what went in.
template <class AnyFilter, class Insert>
void fill_with_copies(AnyFilter& filter, const std::vector<std::uint64_t>& keys,
                      cuckoo::test::MultisetModel& model, Insert&& insert) {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::size_t copies = 1 + (i % 4 == 0 ? 1 : 0) + (i % 12 == 0 ? 1 : 0);
    for (std::size_t c = 0; c < copies; ++c) {
      if (!insert(filter, keys[i])) return;
      model.add(keys[i]);
    }
  }
}

/// The probes: every key tried (held or not) and as many never inserted, shuffled together.
template <class AnyFilter>
void expect_batch_count_is_single_count(const AnyFilter& filter,
                                        const std::vector<std::uint64_t>& tried,
                                        const cuckoo::test::MultisetModel& model,
                                        const std::string& label) {
  std::vector<std::uint64_t> probes = tried;
  const auto fresh = cuckoo::test::random_keys(tried.size(), 0xC0417 + tried.size());
  probes.insert(probes.end(), fresh.begin(), fresh.end());
  std::shuffle(probes.begin(), probes.end(), std::mt19937_64(5));
  for (std::size_t len : {0u, 1u, 15u, 16u, 17u, 63u, 64u, 65u, 1'000u, 100'000u}) {
    const std::size_t n = std::min(len, probes.size());
    std::vector<std::size_t> out(n + 1, kUnwritten);
    filter.count(std::span<const std::uint64_t>(probes).first(n),
                 std::span<std::size_t>(out).first(n));
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(out[i], filter.count(probes[i])) << label << " n=" << n << " i=" << i;
      ASSERT_GE(out[i], model.copies(probes[i])) << label << ": a held copy uncounted";
    }
    ASSERT_EQ(out[n], kUnwritten) << label << ": the batch wrote past its end";
  }
}

const auto insert_key = [](auto& filter, std::uint64_t key) { return filter.insert(key); };

TEST(BatchCount, PlainAndSemiSortedShapes) {
  struct Shape {
    unsigned b, f;
    bool semi;
  };
  for (const Shape s :
       {Shape{2, 8, false}, Shape{2, 21, false}, Shape{4, 12, false}, Shape{4, 16, false},
        Shape{4, 7, false}, Shape{8, 12, false}, Shape{4, 13, true}, Shape{4, 9, true}}) {
    const std::string label =
        "b=" + std::to_string(s.b) + " f=" + std::to_string(s.f) + (s.semi ? " semi-sorted" : "");
    cuckoo::Filter filter{cuckoo::Config{
        .capacity = 2'000, .fingerprint_bits = s.f, .bucket_size = s.b, .semi_sort = s.semi}};
    const auto keys = cuckoo::test::random_keys(filter.slot_count(), 17 * s.f + s.b);
    cuckoo::test::MultisetModel model;
    fill_with_copies(filter, keys, model, insert_key);
    expect_batch_count_is_single_count(filter, keys, model, label);
  }
}

TEST(BatchCount, GrowableThroughDoublings) {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 200, .target_fpr = 0.001, .growable = true}};
  const auto keys = cuckoo::test::random_keys(20'000, 23);
  cuckoo::test::MultisetModel model;
  fill_with_copies(filter, keys, model, insert_key);
  ASSERT_EQ(model.total(), filter.size());
  ASSERT_GE(filter.capacity(), 20'000u) << "the fill should have doubled the filter";
  expect_batch_count_is_single_count(filter, keys, model, "growable");
}

TEST(BatchCount, Blocked) {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 5'000, .target_fpr = 0.0025, .blocked = true}};
  const auto keys = cuckoo::test::random_keys(filter.capacity(), 29);
  cuckoo::test::MultisetModel model;
  fill_with_copies(filter, keys, model, insert_key);
  expect_batch_count_is_single_count(filter, keys, model, "blocked");
}

TEST(BatchCount, ConcurrentFilterOnOneThread) {
  for (unsigned b : {2u, 4u, 8u}) {
    cuckoo::ConcurrentFilter filter{
        cuckoo::Config{.capacity = 2'000, .fingerprint_bits = 12, .bucket_size = b}};
    const auto keys = cuckoo::test::random_keys(filter.slot_count(), 31 + b);
    cuckoo::test::MultisetModel model;
    fill_with_copies(filter, keys, model, insert_key);
    expect_batch_count_is_single_count(filter, keys, model, "concurrent b=" + std::to_string(b));
  }
}

TEST(BatchCount, ApproximateMap) {
  for (unsigned b : {2u, 4u, 8u}) {
    cuckoo::ApproximateMap<std::uint16_t> map{
        cuckoo::Config{.capacity = 2'000, .fingerprint_bits = 10, .bucket_size = b}};
    const auto keys = cuckoo::test::random_keys(map.slot_count(), 37 + b);
    cuckoo::test::MultisetModel model;
    fill_with_copies(map, keys, model, [](auto& m, std::uint64_t key) {
      return m.insert(key, static_cast<std::uint16_t>(key));
    });
    expect_batch_count_is_single_count(map, keys, model, "map b=" + std::to_string(b));
  }
}

}  // namespace
