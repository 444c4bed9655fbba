// ApproximateMap's batch calls give exactly the answers of the single-key calls, in order, for
// batches shorter and longer than the pipeline, with stored and absent keys mixed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

template <class V>
void expect_batches_match_single_calls(unsigned b, unsigned f) {
  const std::string label = "b=" + std::to_string(b) + " f=" + std::to_string(f);
  cuckoo::ApproximateMap<V> map{
      cuckoo::Config{.capacity = 5'000, .fingerprint_bits = f, .bucket_size = b}};
  const auto keys = cuckoo::test::random_keys(map.capacity(), 9 * f + b);
  std::vector<V> values(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) values[i] = static_cast<V>(keys[i] >> 5);
  // Half the keys stored by the batch insert, some twice (another value), the rest absent.
  const std::size_t half = keys.size() / 2;
  ASSERT_EQ(map.insert(std::span<const std::uint64_t>(keys).first(half),
                       std::span<const V>(values).first(half)),
            half)
      << label;
  for (std::size_t i = 0; i < half; i += 7) ASSERT_TRUE(map.insert(keys[i], V{3})) << label;

  for (std::size_t n : {0u, 1u, 15u, 16u, 17u, 63u, 64u, 65u, 80u, 81u, 1'000u, 5'000u}) {
    const auto probe = std::span<const std::uint64_t>(keys).first(n);
    auto contained = std::make_unique<bool[]>(n + 1);
    map.contains(probe, std::span<bool>(contained.get(), n));
    std::vector<V> found;
    std::vector<std::size_t> ends(n);
    map.find(probe, found, std::span<std::size_t>(ends));
    std::size_t begin = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(contained[i], map.contains(keys[i])) << label << " n=" << n << " i=" << i;
      const std::vector<V> single = map.find(keys[i]);
      ASSERT_EQ(std::vector<V>(found.begin() + static_cast<std::ptrdiff_t>(begin),
                               found.begin() + static_cast<std::ptrdiff_t>(ends[i])),
                single)
          << label << " n=" << n << " i=" << i;
      begin = ends[i];
    }
    ASSERT_EQ(begin, found.size()) << label;
  }
}

TEST(ApproximateMapBatches, MatchSingleKeyCalls) {
  for (unsigned b : {2u, 4u, 8u}) {
    for (unsigned f : {7u, 12u, 16u}) {
      expect_batches_match_single_calls<std::uint32_t>(b, f);
      expect_batches_match_single_calls<std::uint8_t>(b, f);
    }
  }
}

// The batch insert is pipelined; its inserts must still be the single inserts in order: the same
// bytes (fingerprints, values, kick choices) after fills into the kicking range and past the
// first refusal, in batches shorter and longer than the pipeline.
TEST(ApproximateMapBatches, InsertWritesTheBytesOfSingleInsertsInOrder) {
  for (unsigned b : {2u, 4u, 8u}) {
    for (unsigned f : {7u, 12u, 16u}) {
      const std::string label = "b=" + std::to_string(b) + " f=" + std::to_string(f);
      const cuckoo::Config cfg{.capacity = 3'000, .fingerprint_bits = f, .bucket_size = b};
      cuckoo::ApproximateMap<std::uint32_t> batched{cfg}, single{cfg};
      // Twice the slots: the fill runs into kicks and then into a refusal.
      const auto keys = cuckoo::test::random_keys(2 * batched.slot_count(), 31 * f + b);
      std::vector<std::uint32_t> values(keys.size());
      for (std::size_t i = 0; i < keys.size(); ++i) values[i] = static_cast<std::uint32_t>(i);
      std::size_t single_stop = keys.size();
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (!single.insert(keys[i], values[i])) {
          single_stop = i;
          break;
        }
      }
      ASSERT_LT(single_stop, keys.size()) << label << ": the fill should reach a refusal";
      std::size_t at = 0, batch_stop = keys.size();
      for (std::size_t len : {1u, 15u, 16u, 17u, 100u, 1'000u, 100'000u}) {
        const std::size_t n = std::min(len, keys.size() - at);
        const std::size_t r = batched.insert(std::span<const std::uint64_t>(keys).subspan(at, n),
                                             std::span<const std::uint32_t>(values).subspan(at, n));
        if (r < n) {
          batch_stop = at + r;
          break;
        }
        at += n;
      }
      EXPECT_EQ(batch_stop, single_stop) << label;
      EXPECT_EQ(batched.size(), single.size()) << label;
      EXPECT_TRUE(batched.serialize() == single.serialize()) << label;
    }
  }
}

// The batch erase is pipelined too; it must remove what the single erases in order remove: the
// same count per batch and the same bytes, with pairs stored once, stored twice (and erased twice
// and three times), stored under another value, and never stored, in one shuffled stream.
TEST(ApproximateMapBatches, EraseRemovesWhatSingleErasesRemoveInOrder) {
  for (unsigned b : {2u, 4u, 8u}) {
    for (unsigned f : {7u, 12u, 16u}) {
      const std::string label = "b=" + std::to_string(b) + " f=" + std::to_string(f);
      const cuckoo::Config cfg{.capacity = 3'000, .fingerprint_bits = f, .bucket_size = b};
      cuckoo::ApproximateMap<std::uint32_t> batched{cfg};
      const auto keys = cuckoo::test::random_keys(2 * batched.capacity(), 37 * f + b);
      const std::size_t stored = batched.capacity() * 9 / 10;
      std::vector<std::uint64_t> erase_keys;
      std::vector<std::uint32_t> erase_values;
      for (std::size_t i = 0; i < stored; ++i) {
        const auto value = static_cast<std::uint32_t>(i);
        ASSERT_TRUE(batched.insert(keys[i], value)) << label;
        // Every tenth pair stored twice; every fifth asked to be erased three times, so more
        // often than it was stored.
        if (i % 10 == 0) {
          ASSERT_TRUE(batched.insert(keys[i], value)) << label;
        }
        const std::size_t copies = i % 5 == 0 ? 3 : 1;
        for (std::size_t c = 0; c < copies; ++c) {
          erase_keys.push_back(keys[i]);
          erase_values.push_back(value);
        }
        if (i % 3 == 0) {  // a stored key with a value it was never stored with
          erase_keys.push_back(keys[i]);
          erase_values.push_back(value + 1);
        }
      }
      for (std::size_t i = stored; i < keys.size(); i += 2) {  // never stored
        erase_keys.push_back(keys[i]);
        erase_values.push_back(7);
      }
      std::vector<std::size_t> order(erase_keys.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::shuffle(order.begin(), order.end(), std::mt19937_64(5 * f + b));
      std::vector<std::uint64_t> shuffled_keys(order.size());
      std::vector<std::uint32_t> shuffled_values(order.size());
      for (std::size_t i = 0; i < order.size(); ++i) {
        shuffled_keys[i] = erase_keys[order[i]];
        shuffled_values[i] = erase_values[order[i]];
      }
      erase_keys.swap(shuffled_keys);
      erase_values.swap(shuffled_values);
      cuckoo::ApproximateMap<std::uint32_t> single =
          cuckoo::ApproximateMap<std::uint32_t>::deserialize(batched.serialize());

      std::size_t at = 0, batch_removed = 0;
      for (std::size_t len : {0u, 1u, 15u, 16u, 17u, 100u, 1'000u, 100'000u}) {
        const std::size_t n = std::min(len, erase_keys.size() - at);
        std::size_t single_now = 0;
        for (std::size_t i = at; i < at + n; ++i) {
          single_now += single.erase(erase_keys[i], erase_values[i]) ? 1 : 0;
        }
        const std::size_t batch_now =
            batched.erase(std::span<const std::uint64_t>(erase_keys).subspan(at, n),
                          std::span<const std::uint32_t>(erase_values).subspan(at, n));
        ASSERT_EQ(batch_now, single_now) << label << " at=" << at << " n=" << n;
        batch_removed += batch_now;
        at += n;
      }
      ASSERT_EQ(at, erase_keys.size()) << label;
      // Every stored copy is gone (each was asked for at least once per copy); false matches
      // may have taken a few more, so at least the stored count and the same in both.
      EXPECT_GE(batch_removed, stored + stored / 10) << label;
      EXPECT_EQ(batched.size(), single.size()) << label;
      EXPECT_TRUE(batched.serialize() == single.serialize()) << label;
    }
  }
}

TEST(ApproximateMapBatches, InsertStopsAtTheFirstRefusalAndChangesNothingForIt) {
  cuckoo::ApproximateMap<std::uint16_t> map{cuckoo::Config{.capacity = 50, .bucket_size = 2}};
  // One key repeated: its two buckets hold 2b = 4 copies, and the fifth is refused.
  const std::vector<std::uint64_t> keys(8, 1234);
  const std::vector<std::uint16_t> values = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(
      map.insert(std::span<const std::uint64_t>(keys), std::span<const std::uint16_t>(values)), 4u);
  EXPECT_EQ(map.size(), 4u);
  auto found = map.find(std::uint64_t{1234});
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, (std::vector<std::uint16_t>{1, 2, 3, 4}));
}

TEST(ApproximateMapBatches, StringKeys) {
  cuckoo::ApproximateMap<std::uint32_t> map{cuckoo::Config{.capacity = 1'000}};
  std::vector<std::string> keys;
  for (int i = 0; i < 500; ++i) keys.push_back("user-" + std::to_string(i));
  for (std::size_t i = 0; i < keys.size(); i += 2) {
    ASSERT_TRUE(map.insert(keys[i], static_cast<std::uint32_t>(i)));
  }
  std::vector<std::uint32_t> found;
  std::vector<std::size_t> ends(keys.size());
  map.find(std::span<const std::string>(keys), found, std::span<std::size_t>(ends));
  std::size_t begin = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::vector<std::uint32_t> got(found.begin() + static_cast<std::ptrdiff_t>(begin),
                                         found.begin() + static_cast<std::ptrdiff_t>(ends[i]));
    EXPECT_EQ(got, map.find(keys[i]));
    if (i % 2 == 0) {
      EXPECT_NE(std::find(got.begin(), got.end(), i), got.end());
    }
    begin = ends[i];
  }
}

}  // namespace
