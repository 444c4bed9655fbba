// save() is atomic: the target holds the old file or the complete new one. A failure (missing
// directory, the disk filling up mid-write, a target that cannot be replaced) throws
// std::system_error, leaves the target untouched, and leaves no temporary file behind.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <system_error>

#include "cuckoo/cuckoo.hpp"
#include "support/io_test_support.hpp"

namespace {

using cuckoo::test::ScratchDir;

std::size_t entries_in(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicSave, ReplacesTheTargetAndLeavesNoTemporary) {
  ScratchDir dir;
  const auto path = dir.path() / "f.cf";
  cuckoo::Filter first{cuckoo::Config{.capacity = 100}};
  first.insert("a");
  first.save(path);
  cuckoo::Filter second{cuckoo::Config{.capacity = 100}};
  second.insert("b");
  second.save(path);
  EXPECT_EQ(cuckoo::test::read_file(path), second.serialize());
  EXPECT_EQ(entries_in(dir.path()), 1u);
}

TEST(AtomicSave, RelativePathInTheCurrentDirectory) {
  ScratchDir dir;
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  cuckoo::Filter filter{cuckoo::Config{.capacity = 10}};
  filter.save("relative.cf");
  std::filesystem::current_path(previous);
  EXPECT_EQ(cuckoo::test::read_file(dir.path() / "relative.cf"), filter.serialize());
}

TEST(AtomicSave, MissingDirectoryThrows) {
  ScratchDir dir;
  cuckoo::Filter filter{cuckoo::Config{.capacity = 10}};
  EXPECT_THROW(filter.save(dir.path() / "no" / "such" / "f.cf"), std::system_error);
  EXPECT_EQ(entries_in(dir.path()), 0u);
}

TEST(AtomicSave, TargetThatCannotBeReplacedIsLeftAlone) {
  ScratchDir dir;
  const auto target = dir.path() / "occupied";
  std::filesystem::create_directory(target);
  std::filesystem::create_directory(target / "child");  // rename over a non-empty dir fails
  cuckoo::Filter filter{cuckoo::Config{.capacity = 10}};
  EXPECT_THROW(filter.save(target), std::system_error);
  EXPECT_TRUE(std::filesystem::is_directory(target / "child"));
  EXPECT_EQ(entries_in(dir.path()), 1u);
}

TEST(AtomicSave, DiskFullMidWriteKeepsTheOldFile) {
  ScratchDir dir;
  const auto path = dir.path() / "f.cf";
  cuckoo::Filter small{cuckoo::Config{.capacity = 100}};
  small.insert("kept");
  small.save(path);
  const auto before = cuckoo::test::read_file(path);

  // A file-size limit makes write() fail with EFBIG part-way, as a full disk fails with ENOSPC.
  cuckoo::Filter big{cuckoo::Config{.capacity = 1'000'000}};
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = saved;
  limited.rlim_cur = 64 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  bool threw = false;
  try {
    big.save(path);
  } catch (const std::system_error&) {
    threw = true;
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous_handler);

  EXPECT_TRUE(threw);
  EXPECT_EQ(cuckoo::test::read_file(path), before);
  EXPECT_TRUE(cuckoo::Filter::load(path).contains("kept"));
  EXPECT_EQ(entries_in(dir.path()), 1u);
}

}  // namespace
