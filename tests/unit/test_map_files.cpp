// ApproximateMap files (format version 3): every way in and out round-trips the exact bytes and
// answers; filters and maps refuse each other's files with a message saying which is which; a
// map of one value width refuses another's; damaged files are refused, naming the problem; and
// the committed golden maps load and answer as when they were written.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "data/golden_keys.hpp"
#include "support/io_test_support.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::test::fix_checksum;
using cuckoo::test::set_u32;
using Map32 = cuckoo::ApproximateMap<std::uint32_t>;

Map32 filled_map(unsigned b, unsigned f, std::size_t n) {
  Map32 map{cuckoo::Config{.capacity = n, .fingerprint_bits = f, .bucket_size = b}};
  for (std::uint64_t k = 0; k < n; ++k)
    map.insert(k * 0x9E37'79B9ull, static_cast<std::uint32_t>(k));
  return map;
}

void expect_same_answers(const Map32& a, const Map32& b, std::size_t n) {
  EXPECT_EQ(a.size(), b.size());
  EXPECT_EQ(a.layout().bucket_count, b.layout().bucket_count);
  EXPECT_EQ(a.fingerprint_bits(), b.fingerprint_bits());
  for (std::uint64_t k = 0; k < n + 500; ++k) {
    ASSERT_EQ(a.find(k * 0x9E37'79B9ull), b.find(k * 0x9E37'79B9ull)) << k;
  }
}

std::string map_refusal(const std::vector<std::byte>& file) {
  try {
    (void)Map32::deserialize(file);
  } catch (const cuckoo::format_error& e) {
    return e.what();
  }
  return "";
}

TEST(ApproximateMapFiles, EveryWayRoundTrips) {
  cuckoo::test::ScratchDir dir;
  for (unsigned b : {2u, 4u, 8u}) {
    for (unsigned f : {9u, 12u, 16u}) {
      SCOPED_TRACE("b=" + std::to_string(b) + " f=" + std::to_string(f));
      const Map32 map = filled_map(b, f, 3'000);
      const auto bytes = map.serialize();
      EXPECT_EQ(bytes.size(), cuckoo::io::kHeaderBytes + map.fingerprint_memory_bytes() +
                                  map.value_memory_bytes() + cuckoo::io::kChecksumBytes);
      const auto path = dir.path() / "m.cfm";
      map.save(path);
      EXPECT_EQ(cuckoo::test::read_file(path), bytes);

      const Map32 loaded = Map32::load(path);
      EXPECT_EQ(loaded.serialize(), bytes);
      expect_same_answers(map, loaded, 3'000);
      const auto mapped = Map32::map(path);
      expect_same_answers(map, *mapped, 3'000);
      EXPECT_EQ(mapped->serialize(), bytes);
      const Map32 copied = *mapped;  // a writable copy of the mapped file
      EXPECT_EQ(copied.serialize(), bytes);
      expect_same_answers(map, Map32::deserialize(bytes), 3'000);

      std::stringstream stream;
      map.serialize(stream);
      expect_same_answers(map, Map32::deserialize(stream), 3'000);
    }
  }
}

TEST(ApproximateMapFiles, AStreamOfUnknownLengthIsReadAsItArrives) {
  const Map32 map = filled_map(4, 12, 2'000);
  const auto bytes = map.serialize();
  // A non-seekable stream: an istream over a streambuf that cannot seek.
  struct OneWay : std::streambuf {
    explicit OneWay(const std::vector<std::byte>& bytes) {
      char* begin = const_cast<char*>(reinterpret_cast<const char*>(bytes.data()));
      setg(begin, begin, begin + bytes.size());
    }
  };
  OneWay whole(bytes);
  std::istream in(&whole);
  EXPECT_EQ(Map32::deserialize(in).serialize(), bytes);

  auto longer = bytes;
  longer.push_back(std::byte{0});
  OneWay extra(longer);
  std::istream in_extra(&extra);
  EXPECT_THROW((void)Map32::deserialize(in_extra), cuckoo::format_error);
}

TEST(ApproximateMapFiles, FiltersAndMapsRefuseEachOthersFiles) {
  cuckoo::test::ScratchDir dir;
  const Map32 map = filled_map(4, 12, 1'000);
  map.save(dir.path() / "m.cfm");
  cuckoo::Filter filter{cuckoo::Config{.capacity = 1'000}};
  filter.insert("x");
  filter.save(dir.path() / "f.cf");

  EXPECT_NE(cuckoo::test::refusal(map.serialize()).find("an approximate map (4-byte values)"),
            std::string::npos);
  try {
    (void)cuckoo::Filter::map(dir.path() / "m.cfm");
    ADD_FAILURE() << "a filter mapped a map's file";
  } catch (const cuckoo::format_error& e) {
    EXPECT_NE(std::string(e.what()).find("open it with cuckoo::ApproximateMap"), std::string::npos);
  }
  EXPECT_NE(map_refusal(filter.serialize()).find("a filter, not an approximate map"),
            std::string::npos);
  EXPECT_THROW((void)Map32::map(dir.path() / "f.cf"), cuckoo::format_error);
  // A map of another value width.
  try {
    (void)cuckoo::ApproximateMap<std::uint64_t>::load(dir.path() / "m.cfm");
    ADD_FAILURE() << "a 64-bit map loaded 32-bit values";
  } catch (const cuckoo::format_error& e) {
    EXPECT_NE(std::string(e.what()).find("values are 4 bytes wide; this map holds 8-byte values"),
              std::string::npos)
        << e.what();
  }
  // inspect() reads both kinds.
  const auto info = cuckoo::io::inspect(dir.path() / "m.cfm");
  EXPECT_TRUE(info.header.is_map());
  EXPECT_EQ(info.header.version, 3u);
  EXPECT_EQ(info.header.value_bytes, 4u);
  EXPECT_TRUE(info.checksum_ok());
  EXPECT_EQ(info.header.file_bytes(), map.serialize().size());
}

TEST(ApproximateMapFiles, DamagedFilesAreRefusedNamingTheProblem) {
  const Map32 map = filled_map(4, 12, 1'000);
  const auto good = map.serialize();
  const auto refused_with = [&](auto change, const std::string& expected) {
    auto bad = good;
    change(bad);
    const std::string why = map_refusal(bad);
    EXPECT_NE(why.find(expected), std::string::npos) << "got: '" << why << "'";
  };
  // A flipped bit anywhere in the table or the values: the checksum.
  for (std::size_t at : {std::size_t{200}, good.size() - 100}) {
    refused_with([&](auto& f) { f[at] ^= std::byte{4}; }, "checksum mismatch");
  }
  refused_with([&](auto& f) { set_u32(f, 88, 0), fix_checksum(f); }, "value width 0 bytes");
  refused_with([&](auto& f) { set_u32(f, 88, 300), fix_checksum(f); }, "value width 300 bytes");
  refused_with([&](auto& f) { set_u32(f, 88, 2), fix_checksum(f); }, "values are 2 bytes wide");
  refused_with([&](auto& f) { set_u32(f, 8, 1), fix_checksum(f); },
               "approximate-map kind in a version-1 file");
  refused_with([&](auto& f) { set_u32(f, 12, 1), fix_checksum(f); },
               "version-3 file that is not an approximate map");
  refused_with([&](auto& f) { set_u32(f, 12, 3), fix_checksum(f); }, "unknown filter kind 3");
  refused_with([&](auto& f) { set_u32(f, 80, 1), fix_checksum(f); }, "reserved header bytes");
  refused_with([&](auto& f) { set_u32(f, 92, 1), fix_checksum(f); }, "reserved header bytes");
  refused_with([&](auto& f) { set_u32(f, 28, 1), fix_checksum(f); }, "cannot be semi-sorted");
  refused_with([&](auto& f) { set_u32(f, 28, 2), fix_checksum(f); }, "growable flag");
  refused_with([&](auto& f) { f.resize(f.size() - 9); }, "truncated");
  refused_with([&](auto& f) { f.push_back(std::byte{0}); }, "unexpected bytes");
  // A version-1 filter's reserved field at the value-width offset stays reserved.
  cuckoo::Filter filter{cuckoo::Config{.capacity = 100}};
  auto file = filter.serialize();
  set_u32(file, 88, 4);
  fix_checksum(file);
  EXPECT_NE(cuckoo::test::refusal(file).find("reserved header bytes"), std::string::npos);
}

struct ExpectedMap {
  std::size_t size = 0;
  std::map<std::pair<char, std::uint64_t>, std::vector<std::uint32_t>> found;
};

ExpectedMap read_expected_map(const std::filesystem::path& path) {
  std::ifstream in(path);
  ExpectedMap expected;
  std::string line, word;
  std::getline(in, line);
  std::istringstream head(line);
  head >> word >> expected.size;
  EXPECT_EQ(word, "size");
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    char kind;
    std::uint64_t index;
    fields >> kind >> index;
    std::vector<std::uint32_t> values;
    for (std::uint32_t v; fields >> v;) values.push_back(v);
    expected.found[{kind, index}] = values;
  }
  return expected;
}

void expect_golden_map_answers(const Map32& map, const ExpectedMap& expected) {
  using namespace cuckoo::golden;
  EXPECT_EQ(map.size(), expected.size);
  EXPECT_EQ(map.seed(), kSeed);
  const auto recorded = [&](char kind, std::uint64_t i) {
    const auto it = expected.found.find({kind, i});
    return it == expected.found.end() ? std::vector<std::uint32_t>{} : it->second;
  };
  std::size_t mismatches = 0;
  for (std::uint64_t i = 0; i < kProbedIntegers; ++i) {
    mismatches += map.find(integer_key(i)) != recorded('u', i);
  }
  for (std::uint64_t i = 0; i < kProbedStrings; ++i) {
    mismatches += map.find(string_key(i)) != recorded('s', i);
  }
  EXPECT_EQ(mismatches, 0u);
  for (std::uint64_t i = 0; i < kInsertedIntegers; ++i) {
    const auto values = map.find(integer_key(i));
    ASSERT_NE(std::find(values.begin(), values.end(), golden_value(i)), values.end());
  }
}

TEST(ApproximateMapFiles, GoldenMapsLoadAndAnswerAsWhenWritten) {
  for (const auto& file : cuckoo::golden::kMapFiles) {
    SCOPED_TRACE(file.name);
    const auto path = cuckoo::test::tests_source_dir() / "data" / file.name;
    const ExpectedMap expected = read_expected_map(path.string() + ".expected");
    ASSERT_GT(expected.found.size(), cuckoo::golden::kInsertedIntegers);
    const Map32 loaded = Map32::load(path);
    EXPECT_EQ(loaded.bucket_size(), file.bucket_size);
    EXPECT_EQ(loaded.fingerprint_bits(), file.fingerprint_bits);
    expect_golden_map_answers(loaded, expected);
    expect_golden_map_answers(*Map32::map(path), expected);
    EXPECT_EQ(loaded.serialize(), cuckoo::test::read_file(path));
  }
}

}  // namespace
