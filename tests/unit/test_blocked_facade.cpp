// The blocked filter through cuckoo::Filter (Config::blocked): the Config checks, the level the
// facade picks, the same answers as the class it holds, and files of format version 4 — saved,
// loaded, mapped and streamed identically, and refused when their blocks, counts or header cannot
// be trusted.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/io_test_support.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::fix_checksum;
using cuckoo::test::refusal;
using cuckoo::test::ScratchDir;
using cuckoo::test::set_u32;
using cuckoo::test::set_u64;

cuckoo::Config blocked(std::size_t capacity) {
  return cuckoo::Config{.capacity = capacity, .target_fpr = 0.0025, .blocked = true};
}

std::string config_error(const cuckoo::Config& cfg) {
  try {
    cuckoo::Filter filter{cfg};
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(BlockedFacade, ConfigChecksNameTheProblem) {
  // The default target (0.1%) is below what the format keeps: refused, not silently missed.
  EXPECT_NE(config_error({.blocked = true}).find("target_fpr must be in [0.002500"),
            std::string::npos);
  EXPECT_NE(config_error({.target_fpr = 0.01, .semi_sort = true, .blocked = true})
                .find("blocked cannot be combined with semi_sort"),
            std::string::npos);
  EXPECT_NE(config_error({.target_fpr = 0.01, .growable = true, .blocked = true})
                .find("blocked cannot be combined with growable"),
            std::string::npos);
  EXPECT_NE(config_error({.fingerprint_bits = 12, .blocked = true}).find("must be 0 or 8"),
            std::string::npos);
  EXPECT_NE(config_error({.capacity = 0, .target_fpr = 0.01, .blocked = true}).find("capacity"),
            std::string::npos);
  EXPECT_EQ(config_error({.fingerprint_bits = 8, .blocked = true}), "");
  EXPECT_EQ(config_error(blocked(1)), "");
}

TEST(BlockedFacade, ShapeQueriesDescribeBlocks) {
  const cuckoo::Filter filter{blocked(100'000)};
  EXPECT_TRUE(filter.blocked());
  EXPECT_FALSE(filter.growable());
  EXPECT_FALSE(filter.semi_sorted());
  EXPECT_TRUE(filter.layout().blocked);
  EXPECT_EQ(filter.bucket_size(), 43u);
  EXPECT_EQ(filter.fingerprint_bits(), 8u);
  EXPECT_EQ(filter.bucket_count() % 2, 0u);
  EXPECT_EQ(filter.memory_bytes(), filter.bucket_count() * 64);
  // Sized for 42.2 items per block: 12.1 bits per item of capacity, never a power of two by rule.
  EXPECT_EQ(filter.bucket_count(), cuckoo::blocked_block_count(100'000));
  EXPECT_LE(8.0 * static_cast<double>(filter.memory_bytes()) / 100'000, 12.2);
  // The level is the best the CPU has (and CUCKOO_ISA allows).
  EXPECT_EQ(filter.isa(), cuckoo::active_isa());
  EXPECT_FALSE(cuckoo::Filter{cuckoo::Config{}}.blocked());
}

TEST(BlockedFacade, AnswersAsTheClassItHolds) {
  cuckoo::Filter facade{blocked(20'000)};
  cuckoo::BasicBlockedFilter<cuckoo::Isa::kPortable> direct(
      facade.bucket_count(), facade.capacity(), facade.max_kicks(), facade.seed());
  const auto keys = cuckoo::test::random_keys(25'000, 17);
  std::size_t inserted = 0;
  for (const auto key : keys) {
    const bool a = facade.insert(key), b = direct.insert(key);
    ASSERT_EQ(a, b);
    inserted += a ? 1 : 0;
  }
  EXPECT_GE(inserted, 20'000u);  // the capacity is kept
  EXPECT_EQ(facade.size(), direct.size());
  const auto table = facade.visit([](const auto& f) { return f.table().bytes(); });
  ASSERT_EQ(table.size(), direct.bytes().size());
  EXPECT_TRUE(std::equal(table.begin(), table.end(), direct.bytes().begin()));
  const auto probes = cuckoo::test::random_keys(50'000, 18);
  for (const auto key : probes) ASSERT_EQ(facade.contains(key), direct.contains(key));
  std::vector<char> out(probes.size());
  facade.contains(std::span<const std::uint64_t>(probes),
                  std::span<bool>(reinterpret_cast<bool*>(out.data()), out.size()));
  for (std::size_t i = 0; i < probes.size(); ++i)
    ASSERT_EQ(out[i] != 0, direct.contains(probes[i]));
}

TEST(BlockedFacade, NeverAFalseNegativeThroughFillAndDrain) {
  for (const std::size_t capacity : {1u, 300u, 20'000u}) {
    cuckoo::Filter filter{blocked(capacity)};
    cuckoo::test::fill_and_drain_against_model(
        filter, capacity, 31 + capacity, "blocked facade capacity " + std::to_string(capacity));
  }
}

TEST(BlockedFacade, FilesRoundTripInEveryForm) {
  cuckoo::Filter filter{blocked(30'000)};
  const auto keys = cuckoo::test::random_keys(30'000, 5);
  for (const auto key : keys) ASSERT_TRUE(filter.insert(key));
  for (std::size_t i = 0; i < 1000; ++i) ASSERT_TRUE(filter.erase(keys[i]));

  const std::vector<std::byte> bytes = filter.serialize();
  EXPECT_EQ(cuckoo::io::detail::load_u32(bytes.data() + cuckoo::io::detail::kOffVersion),
            cuckoo::io::kBlockedFormatVersion);
  const ScratchDir dir;
  const auto path = dir.path() / "blocked.cf";
  filter.save(path);
  EXPECT_EQ(cuckoo::test::read_file(path), bytes);

  std::stringstream stream;
  filter.serialize(stream);
  const cuckoo::Filter from_bytes = cuckoo::Filter::deserialize(bytes);
  const cuckoo::Filter from_file = cuckoo::Filter::load(path);
  const cuckoo::Filter from_stream = cuckoo::Filter::deserialize(stream);
  const cuckoo::MappedFilter mapped = cuckoo::Filter::map(path);
  EXPECT_TRUE(mapped.views_file());
  for (const cuckoo::Filter* copy : {&from_bytes, &from_file, &from_stream, &*mapped}) {
    EXPECT_TRUE(copy->blocked());
    EXPECT_EQ(copy->size(), filter.size());
    EXPECT_EQ(copy->capacity(), filter.capacity());
    EXPECT_EQ(copy->seed(), filter.seed());
    EXPECT_EQ(copy->serialize(), bytes);
    for (std::size_t i = 1000; i < keys.size(); ++i) ASSERT_TRUE(copy->contains(keys[i]));
  }
  // A loaded filter keeps working: it can be changed and saved again.
  cuckoo::Filter reloaded = cuckoo::Filter::load(path);
  for (std::size_t i = 0; i < 1000; ++i) ASSERT_TRUE(reloaded.insert(keys[i]));
  for (const auto key : keys) ASSERT_TRUE(reloaded.contains(key));
}

std::vector<std::byte> small_blocked_file(cuckoo::Filter* out = nullptr) {
  cuckoo::Filter filter{blocked(200)};
  for (int i = 0; i < 150; ++i) filter.insert(i);
  if (out != nullptr) *out = filter;
  return filter.serialize();
}

void expect_blocked_file_refused(std::vector<std::byte> file, const std::string& reason) {
  fix_checksum(file);
  const std::string what = refusal(file);
  EXPECT_NE(what.find(reason), std::string::npos) << "got: '" << what << "'";
}

TEST(BlockedFacade, DamagedBlocksAndHeadersAreRefused) {
  using namespace cuckoo::io::detail;
  const auto good = small_blocked_file();
  ASSERT_EQ(refusal(good), "");
  const std::size_t table = cuckoo::io::kHeaderBytes;
  {
    auto file = good;  // a header claiming another block shape
    set_u32(file, kOffBucketSize, 44);
    expect_blocked_file_refused(file, "slots per block");
  }
  {
    auto file = good;
    set_u32(file, kOffBits, 12);
    expect_blocked_file_refused(file, "12-bit remainders");
  }
  {
    auto file = good;  // blocked and semi-sorted at once
    set_u32(file, kOffFlags, cuckoo::io::kFlagBlocked | cuckoo::io::kFlagSemiSorted);
    expect_blocked_file_refused(file, "cannot be semi-sorted");
  }
  {
    auto file = good;  // one item fewer than the blocks hold
    set_u64(file, kOffItemCount, load_u64(good.data() + kOffItemCount) - 1);
    expect_blocked_file_refused(file, "but the table holds");
  }
  {
    auto file = good;                     // a header bit set past the hundredth list end of block 0
    file[table + 17] |= std::byte{0x40};  // header bit 142
    expect_blocked_file_refused(file, "not a valid encoding");
  }
  {
    auto file = good;  // all 143 header bits set: no list ends at all
    for (std::size_t i = 0; i < 17; ++i) file[table + i] = std::byte{0xFF};
    file[table + 17] |= std::byte{0x7F};
    expect_blocked_file_refused(file, "not a valid encoding");
  }
  {
    auto file = good;  // c1 of block 0 off by one
    file[table + 19] = static_cast<std::byte>(std::to_integer<unsigned>(file[table + 19]) ^ 1);
    expect_blocked_file_refused(file, "not a valid encoding");
  }
  {
    auto file = good;                     // a threshold between the last unit and "none"
    file[table + 17] |= std::byte{0x80};  // threshold field bit 0
    file[table + 18] = std::byte{0x01};   // field = 3: t = 508, no unit that high
    expect_blocked_file_refused(file, "not a valid encoding");
  }
  {
    auto file = good;  // a stray byte in an unused slot of the last block
    file[table + file.size() - 8 - table - 1] = std::byte{0x5A};
    expect_blocked_file_refused(file, "not a valid encoding");
  }
}

TEST(BlockedFacade, HeaderByteFlipsAreRefusedOrLoadAsBlocked) {
  // Every single-bit change of a header byte, with the checksum fixed, is either refused or loads
  // a blocked filter of the same size (a changed seed or capacity is not damage the loader can
  // see); none may crash or read outside the table (the sanitizer build checks that).
  const auto good = small_blocked_file();
  std::size_t refused = 0;
  for (std::size_t i = 8; i < cuckoo::io::kHeaderBytes; ++i) {
    auto file = good;
    file[i] ^= std::byte{0x01};
    fix_checksum(file);
    try {
      const cuckoo::Filter loaded = cuckoo::Filter::deserialize(file);
      EXPECT_TRUE(loaded.blocked()) << "byte " << i;
      EXPECT_EQ(loaded.memory_bytes(), good.size() - cuckoo::io::kHeaderBytes - 8) << "byte " << i;
    } catch (const cuckoo::format_error&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0u);
}

}  // namespace
