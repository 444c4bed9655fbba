// A growable cuckoo::Filter (Config::growable) through the facade and the file format: version-2
// files save, load, map and (de)serialize at every stage of growth and answer identically, keep
// their stash, keep growing after a reload, and are refused like version-1 files when damaged.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "data/golden_keys.hpp"
#include "support/io_test_support.hpp"

namespace {

using cuckoo::test::fix_checksum;
using cuckoo::test::refusal;
using cuckoo::test::ScratchDir;
using cuckoo::test::set_u32;
using cuckoo::test::set_u64;

std::vector<bool> answers(const cuckoo::Filter& f, std::uint64_t inserted) {
  std::vector<bool> out;
  for (std::uint64_t k = 0; k < inserted + 20'000; ++k) out.push_back(f.contains(k * 7919));
  return out;
}

void expect_same(const cuckoo::Filter& a, const cuckoo::Filter& b, std::uint64_t inserted) {
  EXPECT_EQ(a.size(), b.size());
  EXPECT_EQ(a.capacity(), b.capacity());
  EXPECT_EQ(a.doublings(), b.doublings());
  EXPECT_EQ(a.bucket_count(), b.bucket_count());
  EXPECT_EQ(a.fingerprint_bits(), b.fingerprint_bits());
  EXPECT_TRUE(b.growable());
  EXPECT_EQ(answers(a, inserted), answers(b, inserted));
  EXPECT_EQ(a.serialize(), b.serialize());
}

TEST(GrowableFiles, EveryStageRoundTripsThroughEveryLoader) {
  ScratchDir dir;
  cuckoo::Filter filter({.capacity = 200, .growable = true});
  EXPECT_TRUE(filter.growable());
  std::uint64_t next = 0;
  for (std::uint64_t stage : {100u, 1'000u, 10'000u, 60'000u}) {
    while (next < stage) ASSERT_TRUE(filter.insert(next++ * 7919));
    SCOPED_TRACE("stage " + std::to_string(stage) + " doublings " +
                 std::to_string(filter.doublings()));
    const auto path = dir.path() / ("g" + std::to_string(stage) + ".cf");
    filter.save(path);
    expect_same(filter, cuckoo::Filter::load(path), next);
    expect_same(filter, cuckoo::Filter::deserialize(filter.serialize()), next);
    std::stringstream stream;
    filter.serialize(stream);
    expect_same(filter, cuckoo::Filter::deserialize(stream), next);
    const auto mapped = cuckoo::Filter::map(path);
    EXPECT_TRUE(mapped.views_file());
    expect_same(filter, *mapped, next);
    const auto info = cuckoo::io::inspect(path);
    EXPECT_TRUE(info.checksum_ok());
    EXPECT_TRUE(info.header.growable);
    EXPECT_EQ(info.header.version, 2u);
    EXPECT_EQ(info.header.doublings, filter.doublings());
    EXPECT_EQ(info.header.capacity, 200u);
  }
  EXPECT_GE(filter.doublings(), 8u);
}

TEST(GrowableFiles, ALoadedFilterKeepsGrowing) {
  cuckoo::Filter filter({.capacity = 100, .bucket_size = 8, .growable = true});
  for (std::uint64_t k = 0; k < 1'000; ++k) ASSERT_TRUE(filter.insert(k));
  cuckoo::Filter loaded = cuckoo::Filter::deserialize(filter.serialize());
  const unsigned before = loaded.doublings();
  for (std::uint64_t k = 1'000; k < 20'000; ++k) ASSERT_TRUE(loaded.insert(k));
  EXPECT_GT(loaded.doublings(), before);
  for (std::uint64_t k = 0; k < 20'000; ++k) ASSERT_TRUE(loaded.contains(k)) << k;
  // A copy of a mapped filter is an ordinary writable one.
  ScratchDir dir;
  loaded.save(dir.path() / "m.cf");
  cuckoo::Filter copy = *cuckoo::Filter::map(dir.path() / "m.cf");
  for (std::uint64_t k = 20'000; k < 40'000; ++k) ASSERT_TRUE(copy.insert(k));
  for (std::uint64_t k = 0; k < 40'000; ++k) ASSERT_TRUE(copy.contains(k)) << k;
}

TEST(GrowableFiles, AFileOfTheCeilingScheduleGrowsOnWithItsOwnWidths) {
  // Files saved before the bare-first schedule (growth::Schedule::kCeiling) keep their widths: a
  // loaded one reads as it was written and doubles on with W_g = f + 2 + ceil(log2(g + 1)).
  using namespace cuckoo::golden;
  const auto path = cuckoo::test::tests_source_dir() / "data" / "golden_v2_grow_b4_f13.cf";
  cuckoo::Filter loaded = cuckoo::Filter::load(path);
  const auto schedule_of = [](const cuckoo::Filter& f) {
    return f.visit([](const auto& g) {
      if constexpr (requires { g.schedule(); }) {
        return g.schedule();
      } else {
        return cuckoo::growth::kNewestSchedule;  // not reached: the file is growable
      }
    });
  };
  ASSERT_EQ(schedule_of(loaded), cuckoo::growth::Schedule::kCeiling);
  const unsigned before = loaded.doublings();
  for (std::uint64_t k = 0; k < 100'000; ++k) ASSERT_TRUE(loaded.insert(k));
  EXPECT_GE(loaded.doublings(), before + 5);
  for (std::uint64_t i = 0; i < kInsertedIntegers; ++i)
    ASSERT_TRUE(loaded.contains(integer_key(i)));
  for (std::uint64_t i = 0; i < kInsertedStrings; ++i) ASSERT_TRUE(loaded.contains(string_key(i)));
  for (std::uint64_t k = 0; k < 100'000; ++k) ASSERT_TRUE(loaded.contains(k)) << k;
  const unsigned g = loaded.doublings();
  EXPECT_EQ(loaded.fingerprint_bits(),
            cuckoo::growth::compared_bits(13, g, cuckoo::growth::Schedule::kCeiling));
  EXPECT_EQ(loaded.fingerprint_bits(), 14u + (g <= 1 ? g : std::bit_width(g)));
  // Saved again, it stays a ceiling file.
  const cuckoo::Filter again = cuckoo::Filter::deserialize(loaded.serialize());
  EXPECT_EQ(schedule_of(again), cuckoo::growth::Schedule::kCeiling);
  expect_same(loaded, again, 100'000);
}

/// A b = 2 filter whose stash is not empty at the end (found by a search over seeds; the stash
/// takes the rare entry no walk can place right after a doubling).
cuckoo::Filter filter_with_stash(std::vector<std::uint64_t>& keys) {
  cuckoo::Filter filter(
      {.capacity = 4, .fingerprint_bits = 11, .bucket_size = 2, .seed = 3, .growable = true});
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20'000; ++i) {
    const std::uint64_t k = rng();
    EXPECT_TRUE(filter.insert(k));
    keys.push_back(k);
    if (i % 3 == 0) {
      EXPECT_TRUE(filter.insert(k));
      keys.push_back(k);
    }
  }
  return filter;
}

TEST(GrowableFiles, TheStashIsSavedAndAnswers) {
  std::vector<std::uint64_t> keys;
  cuckoo::Filter filter = filter_with_stash(keys);
  const std::size_t stashed = filter.visit([](const auto& f) -> std::size_t {
    if constexpr (requires { f.stash_size(); }) {
      return f.stash_size();
    } else {
      return 0;
    }
  });
  ASSERT_GT(stashed, 0u) << "the search's seed no longer leaves a stash; pick another";
  cuckoo::Filter loaded = cuckoo::Filter::deserialize(filter.serialize());
  EXPECT_EQ(loaded.serialize(), filter.serialize());
  for (const std::uint64_t k : keys) ASSERT_TRUE(loaded.contains(k));
  // Erase every copy: all are found, and the filter ends empty.
  for (const std::uint64_t k : keys) ASSERT_TRUE(loaded.erase(k));
  EXPECT_EQ(loaded.size(), 0u);
}

// ---- Damaged version-2 files ------------------------------------------------------------------

TEST(GrowableFiles, DamagedHeadersAreRefusedNamingTheField) {
  cuckoo::Filter filter({.capacity = 100, .growable = true});
  for (std::uint64_t k = 0; k < 3'000; ++k) ASSERT_TRUE(filter.insert(k));
  const std::vector<std::byte> good = filter.serialize();
  ASSERT_EQ(refusal(good), "");
  using namespace cuckoo::io::detail;
  struct Case {
    std::size_t offset;
    std::uint64_t value;
    bool wide;
    const char* reason;
  };
  const Case cases[] = {
      {kOffVersion, 1, false, "growable flag in a version-1 file"},
      {kOffFlags, 0, false, "version-2 file without the growable flag"},
      {kOffFlags, 3, false, "cannot be semi-sorted"},
      {kOffBits, 10, false, "base fingerprint width 10 out of range"},
      {kOffBits, 31, false, "base fingerprint width 31 out of range"},
      {kOffDoublings, 32, false, "doublings 32 out of range"},
      {kOffDoublings, 9, false, "bucket count"},
      {kOffBucketCount, 12, true, "bucket count 12 out of range"},
      {kOffBucketCount, std::uint64_t{1} << 41, true, "out of range"},
      {kOffStashCount, 17, false, "stash of 17 entries"},
      {kOffGrowthSchedule, 2, false, "growth schedule 2 unknown"},
      {kOffStashCount, 1, false, "truncated"},
      {kOffItemCount, 1'000'000, true, "item count 1000000 exceeds"},
      {kOffTableBytes, 12345, true, "table size 12345 does not match"},
      {kOffReservedTail + 3, 1, false, "reserved header bytes not zero"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    auto file = good;
    if (c.wide) {
      set_u64(file, c.offset, c.value);
    } else {
      set_u32(file, c.offset, static_cast<std::uint32_t>(c.value));
    }
    fix_checksum(file);
    EXPECT_NE(refusal(file).find(c.reason), std::string::npos) << "got: " << refusal(file);
  }
}

TEST(GrowableFiles, DamagedStashesAndTruncationsAreRefused) {
  std::vector<std::uint64_t> keys;
  const cuckoo::Filter filter = filter_with_stash(keys);
  const std::vector<std::byte> good = filter.serialize();
  const std::size_t stash_at = good.size() - 8 - 16;  // the last stash entry
  {
    auto file = good;
    set_u64(file, stash_at, filter.bucket_count());  // first bucket past side 0
    fix_checksum(file);
    EXPECT_NE(refusal(file).find("stash entry"), std::string::npos) << refusal(file);
  }
  {
    auto file = good;
    set_u32(file, stash_at + 8, 0);  // an empty value
    fix_checksum(file);
    EXPECT_NE(refusal(file).find("stash entry"), std::string::npos) << refusal(file);
  }
  {
    auto file = good;
    set_u32(file, stash_at + 12, 1);  // padding not zero
    fix_checksum(file);
    EXPECT_NE(refusal(file).find("stash entry"), std::string::npos) << refusal(file);
  }
  for (std::size_t cut = 0; cut < good.size(); cut += good.size() / 97 + 1) {
    const std::vector<std::byte> file(good.begin(), good.begin() + static_cast<long>(cut));
    EXPECT_NE(refusal(file), "") << "cut at " << cut;
  }
  for (std::size_t at = 0; at < good.size(); at += 61) {  // bit flips: the checksum or a field
    auto file = good;
    file[at] ^= std::byte{0x10};
    EXPECT_NE(refusal(file), "") << "flip at " << at;
  }
}

TEST(GrowableFiles, FacadeAndConcurrentFilterRefuseWhatTheyCannotDo) {
  EXPECT_THROW(cuckoo::Filter({.semi_sort = true, .growable = true}), std::invalid_argument);
  EXPECT_THROW(cuckoo::Filter({.bucket_size = 3, .growable = true}), std::invalid_argument);
  EXPECT_THROW(cuckoo::ConcurrentFilter({.growable = true}), std::invalid_argument);
  const cuckoo::Filter growable({.capacity = 10, .growable = true});
  EXPECT_THROW(cuckoo::ConcurrentFilter{growable}, std::invalid_argument);
  const cuckoo::Filter fixed({.capacity = 10});
  EXPECT_FALSE(fixed.growable());
  EXPECT_EQ(fixed.doublings(), 0u);
  EXPECT_EQ(fixed.serialize()[cuckoo::io::detail::kOffVersion], std::byte{1})
      << "fixed filters are still written as version 1";
}

}  // namespace
