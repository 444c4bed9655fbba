// Many writers of one filter file (include/cuckoo/io/file_lock.hpp): update_file from several
// threads and several processes at once keeps every change; a waiter whose file was replaced while
// it waited ends up locking the new file; a held lock makes a writer give up with lock_timeout and
// leaves the file as it was; a throwing change saves nothing; a missing file is std::system_error;
// readers never wait.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "cuckoo/io/file_lock.hpp"
#include "support/io_test_support.hpp"

namespace {

using cuckoo::test::ScratchDir;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string key(int writer, int i) {
  return "writer-" + std::to_string(writer) + "-" + std::to_string(i);
}

/// Another holder of a file's lock: its own open file description, as another process would have.
class ForeignLock {
 public:
  explicit ForeignLock(const std::filesystem::path& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_.get() < 0 || ::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
      throw std::system_error(errno, std::generic_category(), "test lock " + path.string());
    }
  }
  void release() { (void)fd_.close(); }

 private:
  cuckoo::io::FileDescriptor fd_;
};

/// Whether some other open file description holds the lock of the file now at `path`.
bool locked_by_someone_else(const std::filesystem::path& path) {
  cuckoo::io::FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw std::system_error(errno, std::generic_category(), path.string());
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return false;  // released when fd closes
  if (errno != EWOULDBLOCK) throw std::system_error(errno, std::generic_category(), "flock");
  return true;
}

/// How many of this process's descriptors are open on the file (device, inode) `of`.
int descriptors_open_on(const struct stat& of) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    struct stat st {};
    if (::stat(entry.path().c_str(), &st) == 0 && st.st_dev == of.st_dev &&
        st.st_ino == of.st_ino) {
      ++n;
    }
  }
  return n;
}

std::filesystem::path make_filter_file(const ScratchDir& dir, std::size_t capacity = 200'000) {
  const auto path = dir.path() / "shared.cf";
  cuckoo::Filter{cuckoo::Config{.capacity = capacity}}.save(path);
  return path;
}

TEST(FileLock, UpdateFileLoadsChangesSavesAndReturnsWhatChangeReturns) {
  ScratchDir dir;
  const auto path = make_filter_file(dir, 1000);
  const bool inserted =
      cuckoo::update_file(path, [](cuckoo::Filter& filter) { return filter.insert("alice"); });
  EXPECT_TRUE(inserted);
  cuckoo::update_file(path, [](cuckoo::Filter& filter) { filter.insert("bob"); });  // void
  const cuckoo::Filter loaded = cuckoo::Filter::load(path);
  EXPECT_TRUE(loaded.contains("alice"));
  EXPECT_TRUE(loaded.contains("bob"));
  EXPECT_EQ(loaded.size(), 2u);
  // A move-only result comes back too.
  auto owned = cuckoo::update_file(
      path, [](cuckoo::Filter& filter) { return std::make_unique<std::size_t>(filter.size()); });
  EXPECT_EQ(*owned, 2u);
}

TEST(FileLock, ThreadsUpdatingAtOnceKeepEveryKey) {
  ScratchDir dir;
  const auto path = make_filter_file(dir);
  constexpr int kWriters = 4, kRounds = 10, kKeysPerRound = 2'000;
  std::atomic<int> ready{0};
  std::vector<std::future<void>> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.push_back(std::async(std::launch::async, [&, w] {
      ++ready;
      while (ready < kWriters) std::this_thread::yield();  // start together
      for (int round = 0; round < kRounds; ++round) {
        cuckoo::update_file(
            path,
            [&](cuckoo::Filter& filter) {
              for (int i = 0; i < kKeysPerRound; ++i) {
                if (!filter.insert(key(w, round * kKeysPerRound + i))) {
                  throw std::runtime_error("full");
                }
              }
            },
            30s);
      }
    }));
  }
  for (auto& writer : writers) writer.get();  // rethrows a writer's failure
  const cuckoo::Filter loaded = cuckoo::Filter::load(path);
  EXPECT_EQ(loaded.size(), std::size_t{kWriters} * kRounds * kKeysPerRound);
  std::size_t missing = 0;
  for (int w = 0; w < kWriters; ++w) {
    for (int i = 0; i < kRounds * kKeysPerRound; ++i) missing += !loaded.contains(key(w, i));
  }
  EXPECT_EQ(missing, 0u);
}

TEST(FileLock, ProcessesUpdatingAtOnceKeepEveryKey) {
  ScratchDir dir;
  const auto path = make_filter_file(dir);
  constexpr int kWriters = 4, kRounds = 5, kKeysPerRound = 4'000;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0) << "fork: " << std::strerror(errno);
    if (pid == 0) {
      // The child: only simple work, then _exit (no gtest or static teardown in the child).
      int status = 0;
      try {
        for (int round = 0; round < kRounds; ++round) {
          cuckoo::update_file(
              path,
              [&](cuckoo::Filter& filter) {
                for (int i = 0; i < kKeysPerRound; ++i) {
                  if (!filter.insert(key(w, round * kKeysPerRound + i))) status = 3;
                }
              },
              30s);
        }
      } catch (...) {
        status = 2;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  const auto deadline = Clock::now() + 120s;
  for (const pid_t pid : children) {
    int status = 0;
    pid_t done = 0;
    while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 && Clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    if (done == 0) {  // hung: do not leave it behind
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "writer process " << pid << " did not finish in time";
      continue;
    }
    ASSERT_EQ(done, pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "writer process failed, status " << status;
  }
  const cuckoo::Filter loaded = cuckoo::Filter::load(path);
  EXPECT_EQ(loaded.size(), std::size_t{kWriters} * kRounds * kKeysPerRound);
  std::size_t missing = 0;
  for (int w = 0; w < kWriters; ++w) {
    for (int i = 0; i < kRounds * kKeysPerRound; ++i) missing += !loaded.contains(key(w, i));
  }
  EXPECT_EQ(missing, 0u);
}

// A writer opens the file and waits; meanwhile the holder renames a new file into place and only
// then releases. The waiter gets the lock of the old, unlinked inode first; it must notice and
// lock the file now at the path, so that nobody else can lock that one while it works.
TEST(FileLock, WaiterWhoseFileWasReplacedLocksTheNewFile) {
  ScratchDir dir;
  const auto path = make_filter_file(dir, 1000);
  struct stat old_file {};
  ASSERT_EQ(::stat(path.c_str(), &old_file), 0);
  ForeignLock holder(path);
  ASSERT_EQ(descriptors_open_on(old_file), 1);

  std::promise<void> acquired, may_release;
  auto waiter = std::async(std::launch::async, [&] {
    cuckoo::io::WriterLock lock(path, 30s);
    acquired.set_value();
    (void)may_release.get_future().wait_for(30s);
  });
  // Wait (bounded) until the waiter has the old file open, i.e. is polling its lock.
  const auto deadline = Clock::now() + 10s;
  while (descriptors_open_on(old_file) < 2 && Clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_EQ(descriptors_open_on(old_file), 2) << "the waiter never opened the file";

  // The holder saves a new version (a new inode at the path), then releases the old one.
  cuckoo::Filter replacement{cuckoo::Config{.capacity = 1000}};
  replacement.insert("replacement");
  replacement.save(path);
  struct stat new_file {};
  ASSERT_EQ(::stat(path.c_str(), &new_file), 0);
  ASSERT_NE(new_file.st_ino, old_file.st_ino);
  holder.release();

  ASSERT_EQ(acquired.get_future().wait_for(30s), std::future_status::ready);
  EXPECT_TRUE(locked_by_someone_else(path)) << "the waiter kept the lock of the replaced file";
  EXPECT_EQ(descriptors_open_on(old_file), 0) << "the stale descriptor was not closed";
  may_release.set_value();
  waiter.get();
  EXPECT_FALSE(locked_by_someone_else(path)) << "the lock outlived the WriterLock";
}

// The same through update_file: the waiter's change is applied to the replacement, not lost.
TEST(FileLock, UpdateAfterReplacementWhileWaitingKeepsBoth) {
  ScratchDir dir;
  const auto path = make_filter_file(dir, 1000);
  struct stat old_file {};
  ASSERT_EQ(::stat(path.c_str(), &old_file), 0);
  ForeignLock holder(path);
  auto waiter = std::async(std::launch::async, [&] {
    cuckoo::update_file(
        path, [](cuckoo::Filter& filter) { filter.insert("waiter"); }, 30s);
  });
  const auto deadline = Clock::now() + 10s;
  while (descriptors_open_on(old_file) < 2 && Clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_EQ(descriptors_open_on(old_file), 2) << "the waiter never opened the file";
  cuckoo::Filter replacement{cuckoo::Config{.capacity = 1000}};
  replacement.insert("replacement");
  replacement.save(path);
  holder.release();
  waiter.get();
  const cuckoo::Filter loaded = cuckoo::Filter::load(path);
  EXPECT_TRUE(loaded.contains("replacement"));
  EXPECT_TRUE(loaded.contains("waiter"));
  EXPECT_EQ(loaded.size(), 2u);
}

TEST(FileLock, HeldLockTimesOutAndLeavesTheFileAlone) {
  ScratchDir dir;
  const auto path = make_filter_file(dir, 1000);
  const auto before = cuckoo::test::read_file(path);
  ForeignLock holder(path);

  const auto start = Clock::now();
  bool called = false;
  try {
    cuckoo::update_file(
        path, [&](cuckoo::Filter& filter) { called = filter.insert("x"); }, 300ms);
    ADD_FAILURE() << "update_file did not time out";
  } catch (const cuckoo::lock_timeout& e) {
    const auto waited = Clock::now() - start;
    EXPECT_GE(waited, 300ms);
    EXPECT_LT(waited, 10s);  // generous: only that it gave up
    EXPECT_GE(e.waited(), 300ms);
    EXPECT_EQ(e.path(), path);
    const std::string what = e.what();
    EXPECT_NE(what.find(path.string()), std::string::npos) << what;
    EXPECT_NE(what.find("another writer holds the lock"), std::string::npos) << what;
    EXPECT_NE(what.find(" s"), std::string::npos) << what;
  }
  EXPECT_FALSE(called);
  EXPECT_EQ(cuckoo::test::read_file(path), before);

  // Wait 0: one attempt. A lock_timeout is a std::runtime_error.
  EXPECT_THROW(cuckoo::io::WriterLock(path, 0ms), cuckoo::lock_timeout);
  EXPECT_THROW(cuckoo::io::WriterLock(path, -5ms), std::runtime_error);

  // Readers neither lock nor wait.
  EXPECT_EQ(cuckoo::Filter::load(path).size(), 0u);
  EXPECT_EQ(cuckoo::Filter::map(path)->size(), 0u);
  EXPECT_TRUE(cuckoo::io::inspect(path).checksum_ok());

  // Once released, the next writer goes ahead.
  holder.release();
  cuckoo::update_file(
      path, [](cuckoo::Filter& filter) { filter.insert("x"); }, 0ms);
  EXPECT_TRUE(cuckoo::Filter::load(path).contains("x"));
}

TEST(FileLock, AWriterWaitsForTheHolder) {
  ScratchDir dir;
  const auto path = make_filter_file(dir, 1000);
  ForeignLock holder(path);
  auto writer = std::async(std::launch::async, [&] {
    cuckoo::update_file(
        path, [](cuckoo::Filter& filter) { filter.insert("late"); }, 30s);
  });
  EXPECT_EQ(writer.wait_for(100ms), std::future_status::timeout);  // still waiting
  holder.release();
  writer.get();
  EXPECT_TRUE(cuckoo::Filter::load(path).contains("late"));
}

TEST(FileLock, ThrowingChangeSavesNothingAndReleasesTheLock) {
  ScratchDir dir;
  const auto path = make_filter_file(dir, 1000);
  cuckoo::update_file(path, [](cuckoo::Filter& filter) { filter.insert("kept"); });
  const auto before = cuckoo::test::read_file(path);
  struct Failure {};
  EXPECT_THROW(cuckoo::update_file(path,
                                   [](cuckoo::Filter& filter) {
                                     filter.insert("lost");
                                     throw Failure{};
                                   }),
               Failure);
  EXPECT_EQ(cuckoo::test::read_file(path), before);
  EXPECT_FALSE(locked_by_someone_else(path));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename(), "shared.cf") << "left behind: " << entry.path();
  }
}

TEST(FileLock, MissingFileIsASystemError) {
  ScratchDir dir;
  const auto path = dir.path() / "absent.cf";
  try {
    cuckoo::io::WriterLock lock(path, 0ms);
    ADD_FAILURE() << "locked a missing file";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory);
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  bool called = false;
  try {
    cuckoo::update_file(path, [&](cuckoo::Filter&) { called = true; });
    ADD_FAILURE() << "updated a missing file";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory);
  }
  EXPECT_FALSE(called);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(FileLock, DamagedFileIsAFormatErrorAndStaysAsItWas) {
  ScratchDir dir;
  const auto path = dir.path() / "foreign.cf";
  cuckoo::test::write_file(path, std::vector<std::byte>(200, std::byte{'x'}));
  EXPECT_THROW(cuckoo::update_file(path, [](cuckoo::Filter&) {}), cuckoo::format_error);
  EXPECT_EQ(cuckoo::test::read_file(path), std::vector<std::byte>(200, std::byte{'x'}));
}

TEST(FileLock, WriterLockIsMovableAndReleasesOnce) {
  ScratchDir dir;
  const auto path = make_filter_file(dir, 1000);
  cuckoo::io::WriterLock first(path, 0ms);
  EXPECT_TRUE(first.owns_lock());
  EXPECT_EQ(first.path(), path);
  EXPECT_TRUE(locked_by_someone_else(path));
  cuckoo::io::WriterLock second(std::move(first));
  EXPECT_TRUE(second.owns_lock());
  EXPECT_TRUE(locked_by_someone_else(path));
  {
    const cuckoo::io::WriterLock moved_from = std::move(first);  // NOLINT: testing moved-from
    EXPECT_FALSE(moved_from.owns_lock());
  }
  EXPECT_TRUE(locked_by_someone_else(path)) << "a moved-from lock released the lock";
  second.unlock();
  EXPECT_FALSE(second.owns_lock());
  EXPECT_FALSE(locked_by_someone_else(path));

  // Move assignment releases the lock it held.
  const auto other_path = dir.path() / "other.cf";
  cuckoo::Filter{cuckoo::Config{.capacity = 10}}.save(other_path);
  cuckoo::io::WriterLock a(path, 0ms);
  cuckoo::io::WriterLock b(other_path, 0ms);
  a = std::move(b);
  EXPECT_FALSE(locked_by_someone_else(path));
  EXPECT_TRUE(locked_by_someone_else(other_path));
  EXPECT_EQ(a.path(), other_path);
}

}  // namespace
