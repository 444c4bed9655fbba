// A growable filter never answers "no" for a key it holds: checked against an exact multiset
// through many doublings, for b = 2, 4, 8 and several targets, with inserts, duplicate inserts and
// erases interleaved. The narrowest case (f = 7) runs past the doubling where generation 0 runs
// out of bits, so pinned entries and the copies of exhausted ones are exercised too.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cuckoo/growable/growable_filter.hpp"

namespace {

template <unsigned kSlots>
void run_model(cuckoo::Config cfg, std::size_t keys, std::uint64_t seed) {
  cfg.bucket_size = kSlots;
  cfg.seed = seed;
  cuckoo::BasicGrowableFilter<kSlots> filter(cfg);
  std::map<std::uint64_t, unsigned> model;  // key -> copies held
  std::vector<std::uint64_t> held;          // keys with at least one copy (may hold stale ones)
  std::mt19937_64 rng(seed);
  const auto label = "b=" + std::to_string(kSlots) +
                     " f=" + std::to_string(filter.base_fingerprint_bits()) +
                     " seed=" + std::to_string(seed);
  std::uint64_t next_key = 0;
  std::size_t checked_at_generation = 0;
  for (std::size_t op = 0; model.size() < keys; ++op) {
    const unsigned dice = rng() % 100;
    if (dice < 70 || held.empty()) {
      const std::uint64_t key = next_key++ * 0x9E3779B97F4A7C15ull;
      ASSERT_TRUE(filter.insert(key)) << label << " insert failed at " << filter.size();
      ++model[key];
      held.push_back(key);
    } else if (dice < 80) {  // a duplicate of a held key
      const std::uint64_t key = held[rng() % held.size()];
      if (model[key] == 0 || model[key] >= kSlots) continue;
      ASSERT_TRUE(filter.insert(key)) << label;
      ++model[key];
    } else {  // erase one copy of a held key
      const std::size_t at = rng() % held.size();
      const std::uint64_t key = held[at];
      auto it = model.find(key);
      if (it == model.end() || it->second == 0) continue;
      ASSERT_TRUE(filter.erase(key)) << label << " erase of a held key found nothing";
      if (--it->second == 0) {
        model.erase(it);
        held[at] = held.back();
        held.pop_back();
      }
    }
    if (filter.doublings() != checked_at_generation) {  // after every doubling: every key
      checked_at_generation = filter.doublings();
      for (const auto& [key, copies] : model) {
        ASSERT_TRUE(filter.contains(key))
            << label << " false negative after doubling " << filter.doublings();
        ASSERT_GE(filter.count(key), copies) << label;
      }
    }
  }
  std::size_t copies_total = 0;
  for (const auto& [key, copies] : model) {
    ASSERT_TRUE(filter.contains(key)) << label << " false negative at the end";
    ASSERT_GE(filter.count(key), copies) << label;
    copies_total += copies;
  }
  EXPECT_EQ(filter.size(), copies_total) << label;
  EXPECT_GE(filter.doublings(), 8u) << label << ": the test should cross many doublings";

  // Batch lookups give the single-key answers.
  std::vector<std::uint64_t> probe;
  for (std::uint64_t i = 0; i < 2000; ++i) probe.push_back(i * 0x9E3779B97F4A7C15ull + (i & 1));
  std::unique_ptr<bool[]> answers(new bool[probe.size()]);
  filter.contains(std::span<const std::uint64_t>(probe),
                  std::span<bool>(answers.get(), probe.size()));
  for (std::size_t i = 0; i < probe.size(); ++i) {
    ASSERT_EQ(answers[i], filter.contains(probe[i])) << label << " batch differs at " << i;
  }

  // Drain: every erase of a held copy succeeds and the rest stay visible.
  std::size_t drained = 0;
  for (auto it = model.begin(); it != model.end(); ++it) {
    for (unsigned c = 0; c < it->second; ++c) ASSERT_TRUE(filter.erase(it->first)) << label;
    if (++drained % 2048 == 0) {
      for (auto rest = std::next(it); rest != model.end(); ++rest) {
        ASSERT_TRUE(filter.contains(rest->first)) << label;
      }
    }
  }
  EXPECT_EQ(filter.size(), 0u) << label;
}

TEST(GrowableNoFalseNegatives, BucketSize4AtTheDefaultTarget) {
  for (std::uint64_t seed : {1u, 2u}) {
    run_model<4>({.capacity = 100, .target_fpr = 0.001}, 60'000, seed);
  }
}

TEST(GrowableNoFalseNegatives, BucketSize2) {
  run_model<2>({.capacity = 50, .target_fpr = 0.01}, 40'000, 3);
  run_model<2>({.capacity = 64, .target_fpr = 0.0001}, 40'000, 4);
}

TEST(GrowableNoFalseNegatives, BucketSize8) {
  run_model<8>({.capacity = 200, .target_fpr = 0.001}, 80'000, 5);
}

TEST(GrowableNoFalseNegatives, NarrowFingerprintsRunOutOfBits) {
  // f = 11: generation 0 starts with 12 bits and has none left after 12 doublings; past that its
  // entries live on as copies in both children, and k = 6 pins entries after 6 doublings.
  cuckoo::Config cfg{.capacity = 4, .fingerprint_bits = 11};
  run_model<4>(cfg, 60'000, 6);
  run_model<2>(cfg, 30'000, 7);
  run_model<8>(cfg, 100'000, 8);
}

TEST(GrowableNoFalseNegatives, StringKeys) {
  cuckoo::BasicGrowableFilter<4> filter({.capacity = 10});
  std::vector<std::string> keys;
  for (int i = 0; i < 20'000; ++i) keys.push_back("key-" + std::to_string(i));
  for (const auto& k : keys) ASSERT_TRUE(filter.insert(k));
  EXPECT_GE(filter.doublings(), 10u);
  for (const auto& k : keys) ASSERT_TRUE(filter.contains(k)) << k;
  for (std::size_t i = 0; i < keys.size(); i += 2) ASSERT_TRUE(filter.erase(keys[i]));
  for (std::size_t i = 1; i < keys.size(); i += 2) ASSERT_TRUE(filter.contains(keys[i]));
}

}  // namespace
