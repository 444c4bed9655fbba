// The stripes' words: a version counter in the low half and the stripe's share of the item count
// in the high half, changed together by the store that releases the stripe. The two halves must
// never carry into each other, shares may go negative (an erase counted in another stripe than
// the insert it undoes), and the sum must stay exact with writers on several threads.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "cuckoo/concurrent/striped_versions.hpp"

namespace {

using cuckoo::concurrent::StripedVersions;

TEST(StripedVersions, ReleaseWrapsTheCounterWithinItsHalf) {
  // A held word with its counter at the top of its 32 bits: the release wraps it to 0 and
  // leaves the share (5) to the item delta alone.
  constexpr std::uint64_t held = (std::uint64_t{5} << 32) | 0xFFFF'FFFFu;
  EXPECT_EQ(StripedVersions::released(held, 0), std::uint64_t{5} << 32);
  EXPECT_EQ(StripedVersions::released(held, 1), std::uint64_t{6} << 32);
  EXPECT_EQ(StripedVersions::share_of(StripedVersions::released(held, -7)), -2);
  EXPECT_EQ(StripedVersions::released(held, -7) & StripedVersions::kCounterBits, 0u);
  // An ordinary release: both flags cleared, the counter 4 on, the share moved by the delta,
  // both signs.
  constexpr std::uint64_t held_word = 40 | StripedVersions::kHeld | StripedVersions::kWriting;
  EXPECT_EQ(StripedVersions::released(held_word, 0), 44u);
  EXPECT_EQ(StripedVersions::share_of(StripedVersions::released(held_word, -1)), -1);
  EXPECT_EQ(StripedVersions::released(held_word, -1) & StripedVersions::kCounterBits, 44u);
  EXPECT_EQ(StripedVersions::share_of(StripedVersions::released(held_word, 3)), 3);
}

TEST(StripedVersions, ItemsSumSignedSharesAndSurviveSetItems) {
  const StripedVersions stripes(std::uint64_t{1} << 20, 0);
  ASSERT_EQ(stripes.stripe_count(), cuckoo::concurrent::kMaxStripes);
  stripes.lock(3);
  stripes.unlock(3, -2);
  stripes.lock(7);
  stripes.unlock(7, 5);
  EXPECT_EQ(stripes.items(), 3u);
  stripes.lock_pair(9, 2);
  stripes.unlock_pair(9, 2, 4);  // to the first stripe named, 9
  EXPECT_EQ(stripes.items(), 7u);
  stripes.lock(9);
  stripes.unlock(9, -4);
  EXPECT_EQ(stripes.items(), 3u);

  // Counts of every size spread over the stripes, including ones that do not divide evenly and
  // ones past what a single 32-bit share could hold.
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4097},
                              std::size_t{1'000'003}, std::size_t{3} << 32}) {
    stripes.set_items(n);
    EXPECT_EQ(stripes.items(), n);
  }
  // set_items under lock_all (clear does this) keeps every stripe held: a reader's check fails
  // until they are released, and then passes.
  stripes.lock_all();
  stripes.set_items(11);
  StripedVersions::PairRead read(stripes, 0, 4095);
  read.begin();
  EXPECT_FALSE(read.valid());
  stripes.unlock_all();
  read.begin();
  EXPECT_TRUE(read.valid());
  EXPECT_EQ(stripes.items(), 11u);
}

TEST(StripedVersions, AnyWriteOfAStripeFailsAReaderOfIt) {
  const StripedVersions stripes(64, 0);
  StripedVersions::PairRead read(stripes, 1, 2);
  read.begin();
  stripes.lock(2);
  stripes.unlock(2, 1);
  EXPECT_FALSE(read.valid());
}

// Guards of two threads add and remove items on overlapping stripes; the sum is exact once they
// have joined (ThreadSanitizer checks the words' accesses in the concurrent stage).
TEST(StripedVersions, SharesStayExactUnderConcurrentGuards) {
  const StripedVersions stripes(256, 0);
  constexpr int kThreads = 2, kOps = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&stripes, t] {
      for (int i = 0; i < kOps; ++i) {
        const std::size_t a = static_cast<std::size_t>(i * 7 + t) % stripes.stripe_count();
        const std::size_t b = static_cast<std::size_t>(i * 13 + 1) % stripes.stripe_count();
        if (i % 3 == 2) {
          cuckoo::concurrent::StripePairGuard locked(stripes, a, b);
          locked.add_items(-1);
        } else {
          cuckoo::concurrent::AddingGuard locked(stripes, a, b);
          locked.add_items(1);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // Per thread: two adds and one removal in every three operations (20000 = 3·6666 + 2).
  const std::size_t per_thread = 2 * 6666 + 2 - 6666;
  EXPECT_EQ(stripes.items(), kThreads * per_thread);
}

}  // namespace
