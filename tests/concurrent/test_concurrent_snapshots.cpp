// clear() and snapshots beside concurrent inserts. clear() and to_filter() hold every stripe, so
// no insert changes the table while they run; these tests pin down what a user may rely on
// whatever the protocol: size() equals the entries the table holds once the threads have joined,
// however many clear()s ran beside the inserts, and a snapshot holds every key whose insert
// returned before it began, with a size between the inserts returned when it began and those
// begun when it ended. (Written for a protocol in which the commonest insert takes no stripe,
// tried on 2026-12-06 and not landed: README, Performance, "Concurrency".)
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "cuckoo/cuckoo.hpp"

namespace {

struct ClearShape {
  unsigned bucket_size;
  unsigned bits;
};
// A whole-word bucket (b = 4, f = 12), two-slot and eight-slot buckets, and f = 5, where some
// entries straddle two 64-bit words.
constexpr ClearShape kClearShapes[] = {{4, 12}, {2, 8}, {8, 16}, {4, 5}};

/// Entries held by the table of `copy` (a plain table's slots minus its empty ones), counted
/// from the bits, not taken from size().
std::size_t entries_in(const cuckoo::Filter& copy) {
  return copy.visit([](const auto& f) -> std::size_t {
    if constexpr (requires { f.table().count(std::uint64_t{0}, std::uint32_t{0}); }) {
      std::size_t empty = 0;
      for (std::uint64_t b = 0; b < f.bucket_count(); ++b) empty += f.table().count(b, 0);
      return static_cast<std::size_t>(f.bucket_count() * f.bucket_size()) - empty;
    } else {
      ADD_FAILURE() << "not a plain table";
      return 0;
    }
  });
}

cuckoo::ConcurrentFilter filter_for_clear_tests(const ClearShape& shape, std::size_t capacity) {
  cuckoo::Config cfg;
  cfg.capacity = capacity;
  cfg.bucket_size = shape.bucket_size;
  cfg.fingerprint_bits = shape.bits;
  return cuckoo::ConcurrentFilter(cfg);
}

// Two threads insert distinct keys while a third clears the filter kClears times (inserts that
// find the filter full between two clears fail and change nothing). Whatever each clear() caught,
// size() must equal the entries the table holds once all have joined (counted from a snapshot's
// bits).
TEST(ConcurrentSnapshots, ClearBesideInsertsKeepsSizeExact) {
  for (const ClearShape& shape : kClearShapes) {
    SCOPED_TRACE(testing::Message() << "b = " << shape.bucket_size << ", f = " << shape.bits);
    constexpr int kClears = 20;
    cuckoo::ConcurrentFilter filter = filter_for_clear_tests(shape, 5000);
    std::atomic<bool> clearing{true};
    std::vector<std::thread> inserters;
    for (std::uint64_t t = 0; t < 2; ++t) {
      inserters.emplace_back([&filter, &clearing, t] {
        for (std::uint64_t key = t << 40; clearing.load(std::memory_order_relaxed); ++key) {
          (void)filter.insert(key);
        }
      });
    }
    for (int i = 0; i < kClears; ++i) {
      filter.clear();
      std::this_thread::yield();
    }
    clearing.store(false, std::memory_order_relaxed);
    for (std::thread& t : inserters) t.join();
    EXPECT_EQ(filter.size(), entries_in(filter.to_filter()));

    // After the threads have joined: inserts and one clear give exact counts again.
    filter.clear();
    EXPECT_EQ(filter.size(), 0u);
    EXPECT_EQ(entries_in(filter.to_filter()), 0u);
    for (std::uint64_t key = 0; key < 1000; ++key) ASSERT_TRUE(filter.insert(key));
    for (std::uint64_t key = 0; key < 1000; ++key) ASSERT_TRUE(filter.contains(key));
    EXPECT_EQ(filter.size(), 1000u);
    EXPECT_EQ(entries_in(filter.to_filter()), 1000u);
  }
}

// One thread inserts keys 0, 1, 2, ... in order while this one takes snapshots. Every key whose
// insert returned before a snapshot began must be in it (no false negatives), and its count is
// between the inserts that had returned when it began and those that had begun when it ended.
TEST(ConcurrentSnapshots, SnapshotBesideInsertsHoldsEveryEarlierKey) {
  for (const ClearShape& shape : kClearShapes) {
    SCOPED_TRACE(testing::Message() << "b = " << shape.bucket_size << ", f = " << shape.bits);
    constexpr std::uint64_t kKeys = 100'000;
    cuckoo::ConcurrentFilter filter = filter_for_clear_tests(shape, kKeys);
    std::atomic<std::uint64_t> returned{0};
    std::atomic<bool> inserting{true};  // cleared however the inserter ends (a failed ASSERT too)
    std::thread inserter([&] {
      for (std::uint64_t key = 0; key < kKeys; ++key) {
        const bool inserted = filter.insert(key);
        EXPECT_TRUE(inserted) << "key " << key;
        if (!inserted) break;
        returned.store(key + 1, std::memory_order_release);
      }
      inserting.store(false, std::memory_order_release);
    });
    int snapshots = 0;
    while (inserting.load(std::memory_order_acquire) || snapshots < 3) {
      const std::uint64_t before = returned.load(std::memory_order_acquire);
      const cuckoo::Filter copy = filter.to_filter();
      const std::uint64_t after = returned.load(std::memory_order_acquire);
      ++snapshots;
      EXPECT_EQ(copy.size(), entries_in(copy));
      EXPECT_GE(copy.size(), before);
      EXPECT_LE(copy.size(), after + 1);  // + 1: the insert in flight
      for (std::uint64_t key = 0; key < before; ++key) {
        if (!copy.contains(key)) {
          ADD_FAILURE() << "key " << key << " inserted before the snapshot is missing from it";
          break;
        }
      }
    }
    inserter.join();
    EXPECT_EQ(filter.to_filter().size(), kKeys);
    EXPECT_EQ(filter.size(), kKeys);
  }
}

}  // namespace
