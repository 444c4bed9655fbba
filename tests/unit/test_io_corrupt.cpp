// Files the loader cannot trust are refused with cuckoo::format_error naming the problem, by every
// loader (bytes, file, stream, map): wrong magic, unknown version, out-of-range parameters, a
// table size that does not match them, too many items, truncation at every length, trailing
// bytes, and every single-bit flip of a whole file.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/io_test_support.hpp"

namespace {

using cuckoo::test::fix_checksum;
using cuckoo::test::refusal;
using cuckoo::test::ScratchDir;
using cuckoo::test::set_u32;
using cuckoo::test::set_u64;

std::vector<std::byte> small_filter_file() {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 40, .fingerprint_bits = 12}};
  for (int i = 0; i < 30; ++i) filter.insert(i);
  return filter.serialize();
}

void expect_refused(const std::vector<std::byte>& file, const std::string& reason) {
  const std::string what = refusal(file);
  EXPECT_NE(what.find(reason), std::string::npos) << "got: '" << what << "'";
}

TEST(CorruptFiles, HeaderFieldsAreCheckedAndNamed) {
  const auto good = small_filter_file();
  ASSERT_EQ(refusal(good), "");
  using namespace cuckoo::io::detail;
  struct Case {
    std::size_t offset;
    std::uint64_t value;
    bool wide;
    const char* reason;
  };
  const Case cases[] = {
      {0, 0x0A0D4F4F4B4389ull ^ 1, true, "wrong magic"},
      {kOffVersion, 3, false, "version-3 file that is not an approximate map"},
      {kOffVersion, 5, false, "unsupported format version 5"},
      {kOffVersion, 4, false, "version-4 file without the blocked flag"},
      {kOffFlags, 4, false, "blocked flag in a version-1 file"},
      {kOffVersion, 2, false, "version-2 file without the growable flag"},
      {kOffFlags, 2, false, "growable flag in a version-1 file"},
      {kOffDoublings, 1, false, "reserved header bytes not zero"},
      {kOffVersion, 0, false, "unsupported format version 0"},
      {kOffKind, 7, false, "unknown filter kind 7"},
      {kOffHashId, 9, false, "unknown hash function id 9"},
      {kOffFlags, 8, false, "unknown flags"},
      // A plain table relabelled semi-sorted: 4f − 4 bits per bucket instead of 4f, so the size
      // differs.
      {kOffFlags, 1, false, "does not match the parameters"},
      {kOffReserved32, 1, false, "reserved header field"},
      {kOffReservedTail + 5, 1, false, "reserved header bytes"},
      {kOffBits, 1, false, "fingerprint width 1 out of range"},
      {kOffBits, 33, false, "fingerprint width 33 out of range"},
      {kOffBucketSize, 3, false, "bucket size 3 out of range"},
      {kOffBucketSize, 16, false, "bucket size 16 out of range"},
      {kOffBucketCount, 0, true, "bucket count 0 out of range"},
      {kOffBucketCount, 13, true, "bucket count 13 out of range"},
      {kOffBucketCount, (1ull << 32) + 2, true, "out of range"},
      {kOffMaxKicks, (1u << 20) + 1, false, "max_kicks"},
      {kOffCapacity, 0, true, "capacity 0 out of range"},
      {kOffItemCount, 1'000'000, true, "item count 1000000 exceeds"},
      {kOffTableBytes, 12345, true, "table size 12345 does not match"},
      {kOffTableBytes, ~0ull, true, "does not match"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    auto file = good;
    if (c.wide) {
      set_u64(file, c.offset, c.value);
    } else {
      set_u32(file, c.offset, static_cast<std::uint32_t>(c.value));
    }
    expect_refused(file, c.reason);  // caught before the checksum is even computed...
    fix_checksum(file);
    expect_refused(file, c.reason);  // ...and refused for the right reason with a valid one
  }
}

TEST(CorruptFiles, AHugeBucketCountIsRefusedBeforeAllocating) {
  // 2^32 buckets of 32-bit entries would be 64 GiB: refused by the length check, not allocated.
  auto file = small_filter_file();
  using namespace cuckoo::io::detail;
  set_u64(file, kOffBucketCount, 1ull << 32);
  set_u32(file, kOffBits, 32);
  set_u32(file, kOffBucketSize, 8);
  set_u64(file, kOffTableBytes, cuckoo::PackedTable<8>::bytes_for(1ull << 32, 32));
  fix_checksum(file);
  expect_refused(file, "truncated");
  std::stringstream stream(std::string(reinterpret_cast<const char*>(file.data()), file.size()));
  EXPECT_THROW((void)cuckoo::Filter::deserialize(stream), cuckoo::format_error);
}

TEST(CorruptFiles, TruncationAtEveryLengthIsRefused) {
  const auto good = small_filter_file();
  for (std::size_t length = 0; length < good.size(); ++length) {
    const std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<long>(length));
    const std::string what = refusal(cut);
    ASSERT_NE(what, "") << "length " << length;
    EXPECT_TRUE(what.find("truncated") != std::string::npos ||
                (length == 0 && what.find("magic") != std::string::npos))
        << "length " << length << ": " << what;
  }
}

TEST(CorruptFiles, TrailingBytesAreRefused) {
  auto file = small_filter_file();
  file.push_back(std::byte{0});
  expect_refused(file, "unexpected bytes after the checksum");
}

TEST(CorruptFiles, EverySingleBitFlipIsRefused) {
  const auto good = small_filter_file();
  for (std::size_t bit = 0; bit < good.size() * 8; ++bit) {
    auto file = good;
    file[bit / 8] ^= std::byte{static_cast<unsigned char>(1u << (bit % 8))};
    ASSERT_NE(refusal(file), "") << "bit " << bit;
  }
}

TEST(CorruptFiles, ChecksumMismatchIsNamed) {
  auto file = small_filter_file();
  file[cuckoo::io::kHeaderBytes + 3] ^= std::byte{0x40};  // inside the table
  expect_refused(file, "checksum mismatch");
}

TEST(CorruptFiles, FileLoadersNameThePathAndRefuseToo) {
  ScratchDir dir;
  auto file = small_filter_file();
  file[cuckoo::io::kHeaderBytes + 3] ^= std::byte{0x40};
  const auto path = dir.path() / "damaged.cf";
  cuckoo::test::write_file(path, file);
  try {
    (void)cuckoo::Filter::load(path);
    ADD_FAILURE() << "loaded a damaged file";
  } catch (const cuckoo::format_error& e) {
    EXPECT_NE(std::string(e.what()).find("damaged.cf"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)cuckoo::Filter::map(path), cuckoo::format_error);
  // Without the checksum check, map still validates the header and the length.
  EXPECT_NO_THROW((void)cuckoo::Filter::map(path, cuckoo::ChecksumCheck::kSkip));
  const auto info = cuckoo::io::inspect(path);
  EXPECT_FALSE(info.checksum_ok());

  const auto cut_path = dir.path() / "cut.cf";
  cuckoo::test::write_file(cut_path, {file.begin(), file.end() - 1});
  EXPECT_THROW((void)cuckoo::Filter::load(cut_path), cuckoo::format_error);
  EXPECT_THROW((void)cuckoo::Filter::map(cut_path, cuckoo::ChecksumCheck::kSkip),
               cuckoo::format_error);
  EXPECT_THROW((void)cuckoo::io::inspect(cut_path), cuckoo::format_error);

  const auto empty_path = dir.path() / "empty.cf";
  cuckoo::test::write_file(empty_path, {});
  EXPECT_THROW((void)cuckoo::Filter::load(empty_path), cuckoo::format_error);
  EXPECT_THROW((void)cuckoo::Filter::map(empty_path), cuckoo::format_error);
}

TEST(CorruptFiles, UnreadablePathsThrowSystemErrors) {
  ScratchDir dir;
  EXPECT_THROW((void)cuckoo::Filter::load(dir.path() / "missing.cf"), std::system_error);
  EXPECT_THROW((void)cuckoo::Filter::map(dir.path() / "missing.cf"), std::system_error);
  EXPECT_THROW((void)cuckoo::Filter::load(dir.path()), std::system_error);  // a directory
  EXPECT_THROW((void)cuckoo::Filter::map(dir.path()), std::system_error);
}

TEST(CorruptFiles, SemiSortedTableWithAnImpossibleIndexIsRefused) {
  // With f = 4 a semi-sorted bucket is only its 12-bit tuple index; 4095 names no tuple (there
  // are 3876), and decoding it must never be attempted. The checksum is made valid, so only the
  // encoding check can refuse the file.
  cuckoo::Filter filter{cuckoo::Config{.capacity = 40, .fingerprint_bits = 4, .semi_sort = true}};
  for (int i = 0; i < 20; ++i) filter.insert(i);
  auto file = filter.serialize();
  const std::size_t table = cuckoo::io::kHeaderBytes;
  file[table] = std::byte{0xFF};
  file[table + 1] |= std::byte{0x0F};
  fix_checksum(file);
  expect_refused(file, "not a valid encoding");
}

}  // namespace
