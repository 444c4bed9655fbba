// Biased writing (striped_versions.hpp, "Biased writing"): a filter's first writer thread holds
// every stripe between its writes and writes as a SoleWriter does, until another thread wants a
// stripe and takes the bias away. What a user may rely on: nothing changes in what any thread
// sees; the bias goes to the first writer and to no lookup; a second writer thread takes it away
// for good without losing a write made on either side of that moment; the holder's own clears,
// snapshots and sessions let go of it and never wait for themselves.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "cuckoo/concurrent/striped_versions.hpp"
#include "cuckoo/cuckoo.hpp"

namespace {

using BiasState = cuckoo::concurrent::StripedVersions::BiasState;

const cuckoo::concurrent::StripedVersions& stripes_of(const cuckoo::ConcurrentFilter& filter) {
  return filter.visit(
      [](const auto& f) -> const cuckoo::concurrent::StripedVersions& { return f.stripes(); });
}

cuckoo::ConcurrentFilter biased_test_filter(std::size_t capacity, unsigned bits = 12,
                                            unsigned bucket_size = 4) {
  cuckoo::Config cfg;
  cfg.capacity = capacity;
  cfg.bucket_size = bucket_size;
  cfg.fingerprint_bits = bits;
  cfg.seed = 0xB1A5'0001;
  return cuckoo::ConcurrentFilter(cfg);
}

/// Skips the test where the process cannot have a bias (no membarrier: the filter then only
/// ever uses locks, which every other concurrent test covers).
#define SKIP_WITHOUT_BIAS(filter)                              \
  if (stripes_of(filter).bias_state() == BiasState::kDisabled) \
  GTEST_SKIP() << "no expedited membarrier in this process: filters are never biased"

// The first write takes the bias and a lookup never does; another thread cannot take a stripe
// (try_lock, as a lookup's fallback would) but reads every key; its first write takes the bias
// away for good, and every key of both threads is there, with an exact size.
TEST(BiasedWriting, FirstWriterHoldsItUntilASecondWriterTakesItAway) {
  cuckoo::ConcurrentFilter filter = biased_test_filter(10000);
  const auto& stripes = stripes_of(filter);
  EXPECT_FALSE(filter.contains(std::uint64_t{0}));
  EXPECT_EQ(stripes.bias_state(), BiasState::kNone);  // a lookup takes nothing
  ASSERT_TRUE(filter.insert(std::uint64_t{0}));
  SKIP_WITHOUT_BIAS(filter);
  ASSERT_EQ(stripes.bias_state(), BiasState::kHeld);
  EXPECT_TRUE(stripes.bias_held_here());
  for (std::uint64_t key = 1; key < 5000; ++key) ASSERT_TRUE(filter.insert(key));
  EXPECT_TRUE(filter.erase(std::uint64_t{4999}));
  std::thread([&] {
    EXPECT_FALSE(stripes.bias_held_here());
    EXPECT_FALSE(stripes.try_lock(stripes.stripe_count() - 1));  // held for the bias
    for (std::uint64_t key = 0; key < 4999; ++key) ASSERT_TRUE(filter.contains(key)) << key;
    EXPECT_EQ(stripes.bias_state(), BiasState::kHeld);  // lookups left it alone
    EXPECT_TRUE(filter.insert(std::uint64_t{1'000'000}));
    EXPECT_EQ(stripes.bias_state(), BiasState::kRevoked);
  }).join();
  EXPECT_FALSE(stripes.bias_held_here());
  ASSERT_TRUE(filter.insert(std::uint64_t{1'000'001}));  // under locks now
  EXPECT_EQ(stripes.bias_state(), BiasState::kRevoked);
  for (std::uint64_t key = 0; key < 4999; ++key) ASSERT_TRUE(filter.contains(key)) << key;
  EXPECT_TRUE(filter.contains(std::uint64_t{1'000'000}));
  EXPECT_EQ(filter.size(), 5001u);
  ASSERT_TRUE(stripes.try_lock(0));  // nobody holds the stripes any more
  stripes.unlock(0);
}

// The holder's own whole-filter calls (snapshot, clear, a SoleWriter) need every stripe: it lets
// go of the bias instead of waiting for itself, and its next write takes it again.
TEST(BiasedWriting, TheHolderLetsGoForItsOwnWholeFilterCalls) {
  cuckoo::ConcurrentFilter filter = biased_test_filter(4000);
  const auto& stripes = stripes_of(filter);
  ASSERT_TRUE(filter.insert("a"));
  SKIP_WITHOUT_BIAS(filter);
  ASSERT_TRUE(stripes.bias_held_here());
  EXPECT_TRUE(filter.to_filter().contains("a"));
  EXPECT_EQ(stripes.bias_state(), BiasState::kNone);
  ASSERT_TRUE(filter.insert("b"));
  EXPECT_TRUE(stripes.bias_held_here());
  {
    auto writer = filter.sole_writer();
    EXPECT_EQ(stripes.bias_state(), BiasState::kNone);
    EXPECT_TRUE(filter.insert("c"));
    EXPECT_EQ(stripes.bias_state(), BiasState::kNone);  // a session's writes take no bias
  }
  ASSERT_TRUE(filter.insert("d"));
  EXPECT_TRUE(stripes.bias_held_here());
  EXPECT_EQ(filter.size(), 4u);
  filter.clear();
  EXPECT_EQ(filter.size(), 0u);
  EXPECT_FALSE(filter.contains("a"));
  ASSERT_TRUE(filter.insert("e"));
  EXPECT_TRUE(stripes.bias_held_here());
  // Another thread's snapshot takes it away, but only lends it: the next write takes it again.
  std::thread([&] { EXPECT_TRUE(filter.to_filter().contains("e")); }).join();
  EXPECT_EQ(stripes.bias_state(), BiasState::kNone);
  EXPECT_TRUE(filter.insert("f"));
  EXPECT_TRUE(stripes.bias_held_here());
  // Another thread's write takes it away for good.
  std::thread([&] { EXPECT_TRUE(filter.insert("g")); }).join();
  EXPECT_EQ(stripes.bias_state(), BiasState::kRevoked);
  EXPECT_TRUE(filter.insert("h"));
  EXPECT_EQ(stripes.bias_state(), BiasState::kRevoked);
  EXPECT_EQ(filter.size(), 4u);
}

// A write that comes while another thread holds every stripe for a whole-filter call (a periodic
// snapshot beside a writer thread) waits for it without trying to take the bias, which would find
// the stripes held and give the bias up for good: afterwards the writer's next write takes it.
TEST(BiasedWriting, AWriteDuringAnotherThreadsSnapshotKeepsTheBiasOpen) {
  cuckoo::ConcurrentFilter filter = biased_test_filter(4000);
  const auto& stripes = stripes_of(filter);
  ASSERT_TRUE(filter.insert(std::uint64_t{1}));
  SKIP_WITHOUT_BIAS(filter);
  for (const bool held_before : {true, false}) {
    SCOPED_TRACE(held_before ? "the bias held when the call begins" : "no bias held then");
    if (!held_before) (void)filter.to_filter();  // the holder lets go: no bias held now
    ASSERT_EQ(stripes.bias_state(), held_before ? BiasState::kHeld : BiasState::kNone);
    std::atomic<bool> holding{false};
    std::thread whole([&] {
      stripes.lock_all();  // what clear() and snapshots do
      holding.store(true, std::memory_order_release);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      EXPECT_EQ(stripes.bias_state(), BiasState::kLent);
      stripes.unlock_all();
    });
    while (!holding.load(std::memory_order_acquire)) std::this_thread::yield();
    EXPECT_TRUE(filter.insert(std::uint64_t{held_before ? 2u : 3u}));  // waits for the call
    whole.join();
    EXPECT_EQ(stripes.bias_state(), BiasState::kNone);
    EXPECT_TRUE(filter.insert(std::uint64_t{held_before ? 4u : 5u}));
    EXPECT_TRUE(stripes.bias_held_here());
  }
  EXPECT_EQ(filter.size(), 5u);
}

// The moment of revocation: one thread writes (it holds the bias) while another's first write
// takes the bias away in the middle of that stream. Neither may lose a write: every key held is
// found, the size is exact, and afterwards no stripe is left held (a holder that wrote as one
// after the bias was gone would leave its stripes marked held, and the next writer of them would
// wait forever: a writer that has not finished in 20 s fails the test, and its thread and filter
// are left behind so that the test can report it). Many fresh filters, so that the moment falls
// at many points of a write; the holder's stream begins with erases, whose stripes a biased write
// marks, and f = 27's inserts mark theirs too (straddling entries). With the holder's check made
// before it says it is inside (CUCKOO_TEST_MUTATION_UNCHECKED_BIAS) or the revoker not waiting
// for it (CUCKOO_TEST_MUTATION_REVOKE_WITHOUT_WAIT), this fails (make mutation-check).
TEST(BiasedWriting, RevocationLosesNoWrite) {
  struct Shape {
    unsigned bucket_size, bits;
  };
  for (const Shape shape : {Shape{4, 12}, Shape{4, 27}, Shape{2, 8}}) {
    SCOPED_TRACE(testing::Message() << "b = " << shape.bucket_size << ", f = " << shape.bits);
    constexpr int kRounds = 300;
    constexpr std::uint64_t kKeys = 12;
    int failed_rounds = 0;
    for (int round = 0; round < kRounds; ++round) {
      auto filter = std::make_unique<cuckoo::ConcurrentFilter>(
          biased_test_filter(64, shape.bits, shape.bucket_size));
      const auto& stripes = stripes_of(*filter);
      const std::uint64_t base = std::uint64_t(round) << 32;
      std::atomic<bool> ready{false}, go{false};
      std::atomic<int> done{0};
      std::vector<std::uint64_t> holder_keys;
      std::thread holder([&] {
        for (std::uint64_t i = 1; i <= kKeys; ++i) {  // the first write takes the bias
          if (filter->insert(base + i)) holder_keys.push_back(base + i);  // never 0 (= erased)
        }
        ready.store(true, std::memory_order_release);
        while (!go.load(std::memory_order_acquire)) {
        }
        for (std::uint64_t i = 0; i < kKeys; ++i) {
          if (i < holder_keys.size() && filter->erase(holder_keys[i])) holder_keys[i] = 0;
          if (filter->insert(base + 100 + i)) holder_keys.push_back(base + 100 + i);
        }
        done.fetch_add(1, std::memory_order_release);
      });
      while (!ready.load(std::memory_order_acquire)) std::this_thread::yield();
      if (stripes.bias_state() == BiasState::kDisabled) {
        go.store(true, std::memory_order_release);
        holder.join();
        GTEST_SKIP() << "no expedited membarrier in this process: filters are never biased";
      }
      ASSERT_EQ(stripes.bias_state(), BiasState::kHeld);
      std::vector<std::uint64_t> revoker_keys;
      std::thread revoker([&] {  // its first insert takes the bias away
        while (!go.load(std::memory_order_acquire)) {
        }
        for (std::uint64_t i = 0; i < kKeys; ++i) {
          if (filter->insert(base + 1000 + i)) revoker_keys.push_back(base + 1000 + i);
        }
        done.fetch_add(1, std::memory_order_release);
      });
      go.store(true, std::memory_order_release);
      for (int i = 0; i < 20000 && done.load(std::memory_order_acquire) < 2; ++i) {
        if (i < 1000) {
          std::this_thread::yield();
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
      if (done.load(std::memory_order_acquire) < 2) {
        ADD_FAILURE() << "round " << round << ": a writer waited 20 s for a stripe";
        holder.detach();
        revoker.detach();
        (void)filter.release();  // still in use by the detached threads
        return;
      }
      revoker.join();
      holder.join();
      std::size_t want = 0;
      bool lost = false;
      for (const auto* keys : {&holder_keys, &revoker_keys}) {
        for (const std::uint64_t key : *keys) {
          if (key == 0) continue;  // erased
          ++want;
          lost = lost || !filter->contains(key);
        }
      }
      bool left_held = false;
      for (std::size_t s = 0; s < stripes.stripe_count(); ++s) {
        if (!stripes.try_lock(s)) {
          left_held = true;
          continue;
        }
        stripes.unlock(s);
      }
      if (lost || left_held || filter->size() != want ||
          stripes.bias_state() != BiasState::kRevoked) {
        ++failed_rounds;
      }
    }
    EXPECT_EQ(failed_rounds, 0) << "rounds that lost a key, miscounted or left a stripe held";
  }
}

}  // namespace
