// A file's item count must be what its table holds: every loader (bytes, file, map) counts the
// table's entries and refuses a header that says otherwise, for every table kind. Before this
// check a count one above the table was taken as it stood, and such a filter, once it took inserts
// up to its slots, saved a file its own loader refused (found by the loader's fuzz target).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/io_test_support.hpp"

namespace {

using cuckoo::io::detail::kOffItemCount;
using cuckoo::test::fix_checksum;
using cuckoo::test::ScratchDir;
using cuckoo::test::set_u64;

std::uint64_t item_count_of(const std::vector<std::byte>& file) {
  return cuckoo::io::detail::load_u64(file.data() + kOffItemCount);
}

/// `good` with its item count moved by `delta` and a valid checksum.
std::vector<std::byte> with_count_moved(const std::vector<std::byte>& good, std::int64_t delta) {
  auto file = good;
  set_u64(file, kOffItemCount, item_count_of(good) + static_cast<std::uint64_t>(delta));
  fix_checksum(file);
  return file;
}

template <class Load>
std::string refusal_of(Load&& load) {
  try {
    load();
  } catch (const cuckoo::format_error& e) {
    return e.what();
  }
  return "";
}

/// Every filter loader takes `good` and refuses it with its count moved by each of `deltas`.
void expect_filter_counts_checked(const std::vector<std::byte>& good,
                                  std::vector<std::int64_t> deltas = {-1, 1}) {
  ScratchDir dir;
  ASSERT_EQ(refusal_of([&] { (void)cuckoo::Filter::deserialize(good); }), "");
  for (const std::int64_t delta : deltas) {
    SCOPED_TRACE(delta);
    const auto file = with_count_moved(good, delta);
    const auto path = dir.path() / "moved.cf";
    cuckoo::test::write_file(path, file);
    for (const std::string& what : {refusal_of([&] { (void)cuckoo::Filter::deserialize(file); }),
                                    refusal_of([&] { (void)cuckoo::Filter::load(path); }),
                                    refusal_of([&] { (void)cuckoo::Filter::map(path); })}) {
      EXPECT_NE(what.find("but the table holds"), std::string::npos) << "got: '" << what << "'";
    }
  }
}

TEST(ItemCount, PlainTablesOfEveryBucketSize) {
  for (const unsigned b : {2u, 4u, 8u}) {
    SCOPED_TRACE(b);
    cuckoo::Filter filter{
        cuckoo::Config{.capacity = 500, .fingerprint_bits = 12, .bucket_size = b}};
    for (std::uint64_t key = 0; key < 300; ++key) ASSERT_TRUE(filter.insert(key % 250));
    expect_filter_counts_checked(filter.serialize());
  }
}

TEST(ItemCount, SemiSortedTables) {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 500, .fingerprint_bits = 13, .semi_sort = true}};
  for (std::uint64_t key = 0; key < 300; ++key) ASSERT_TRUE(filter.insert(key));
  expect_filter_counts_checked(filter.serialize());
}

TEST(ItemCount, GrownFiltersCountTheirStashToo) {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 50, .target_fpr = 0.01, .growable = true}};
  for (std::uint64_t key = 0; key < 2000; ++key) ASSERT_TRUE(filter.insert(key));
  ASSERT_GT(filter.doublings(), 3u);
  // A count above the entries only: a grown table may hold copies of an entry with no bits left.
  expect_filter_counts_checked(filter.serialize(), {1, 2});
}

TEST(ItemCount, ApproximateMaps) {
  using Map = cuckoo::ApproximateMap<std::uint32_t>;
  Map map{cuckoo::Config{.capacity = 500}};
  for (std::uint32_t key = 0; key < 300; ++key) ASSERT_TRUE(map.insert(key, key * 3));
  const auto good = map.serialize();
  ASSERT_EQ(refusal_of([&] { (void)Map::deserialize(good); }), "");
  ScratchDir dir;
  for (const std::int64_t delta : {-1, 1}) {
    SCOPED_TRACE(delta);
    const auto file = with_count_moved(good, delta);
    const auto path = dir.path() / "moved.cfm";
    cuckoo::test::write_file(path, file);
    for (const std::string& what :
         {refusal_of([&] { (void)Map::deserialize(file); }),
          refusal_of([&] { (void)Map::load(path); }), refusal_of([&] { (void)Map::map(path); })}) {
      EXPECT_NE(what.find("but the table holds"), std::string::npos) << "got: '" << what << "'";
    }
  }
}

TEST(ItemCount, TheFuzzersInputIsRefusedNotLoadedWithACountAboveItsTable) {
  auto bytes = cuckoo::test::read_file(cuckoo::test::tests_source_dir() / "fuzz" / "regressions" /
                                       "item_count_above_table.cf");
  fix_checksum(bytes);  // as the fuzz target tries every input
  const std::string what = refusal_of([&] { (void)cuckoo::Filter::deserialize(bytes); });
  EXPECT_NE(what.find("but the table holds"), std::string::npos) << "got: '" << what << "'";
}

}  // namespace
