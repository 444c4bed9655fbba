// Replays the loader fuzzer's seed corpus and every failing input it ever found
// (tests/fuzz/corpus, tests/fuzz/regressions): each must load or be refused with format_error, as
// a filter and as an approximate map, and what loads must keep every key it then accepts.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/io_test_support.hpp"
#include "support/loaded_use.hpp"

namespace {

TEST(FuzzRegressions, EveryKeptInputLoadsOrIsRefused) {
  const std::size_t files = cuckoo::test::for_each_kept_input(
      {"corpus", "regressions"},
      [](const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
        SCOPED_TRACE(path.string());
        try {
          cuckoo::Filter filter = cuckoo::Filter::deserialize(bytes);
          for (std::uint64_t key = 0; key < 64; ++key) (void)filter.contains(key);
          EXPECT_EQ(cuckoo::test::lost_after_use(filter), "");
        } catch (const cuckoo::format_error&) {
        }
        try {
          (void)cuckoo::Filter::map(path);
        } catch (const cuckoo::format_error&) {
        }
        try {
          auto map = cuckoo::ApproximateMap<std::uint32_t>::deserialize(bytes);
          for (std::uint64_t key = 0; key < 64; ++key) (void)map.find(key);
          EXPECT_EQ(cuckoo::test::lost_after_use(map), "");
        } catch (const cuckoo::format_error&) {
        }
      });
  EXPECT_GE(files, 8u);  // the seed corpus is there
}

}  // namespace
