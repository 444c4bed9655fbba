// cuckoo/io/file_lock.hpp — many writers of one filter file: an exclusive writer lock and the
// locked read-modify-save cycle (protocol: docs/FORMAT.md, "Concurrent writers").
//
//   cuckoo::update_file("users.cf", [&](cuckoo::Filter& filter) {  // lock, load
//     for (const auto& user : new_users) filter.insert(user);       // change
//   });                                                               // save, unlock
//
// The problem. A writer loads a file, changes the filter in memory and saves it atomically (a
// temporary file renamed over the target, io/posix_file.hpp). Two writers doing that at once both
// load the same old file, and the second rename discards everything the first one added. Atomic
// saves keep the file sound; they do not make concurrent changes add up. Writers must take turns.
//
// The lock. A writer takes flock(LOCK_EX) on the filter file itself (no lock file beside it) and
// keeps it from before the load until after the rename. BSD flock locks belong to an open file
// description: every open() is a separate lock holder, so
//   - two threads of one process exclude each other as two processes do, whereas POSIX (fcntl)
//     record locks belong to the process and would let its threads in together;
//   - the loader opening and closing the same file does not drop the lock, whereas closing any
//     descriptor of a file drops every fcntl lock the process holds on it.
// The descriptor is opened O_CLOEXEC, so a program the holder executes does not inherit the lock;
// a child made by fork() shares the open file description, and with it the lock, until it closes
// its copy or exits.
//
// Why the inode is checked again. The lock belongs to the inode, but a save replaces the inode the
// path names. A writer that opened the file and then waited for the lock may get it only once the
// previous holder has renamed a new file into place; its lock is then on a file nobody will read
// again, and a third writer would lock the new file without conflict. So after locking, the writer
// compares fstat() of its descriptor with stat() of the path (device and inode); if they differ it
// closes and starts again on the file now at the path. Once they agree, the path cannot change
// until this writer releases the lock, because cooperating writers replace the file only while
// holding it.
//
// Waiting. The lock is requested with LOCK_NB, polled with a sleep that starts at 1 ms and doubles
// up to 50 ms, until the wait given (kDefaultLockWait, 60 s, unless told otherwise) runs out; then
// cuckoo::lock_timeout is thrown and the file is left as it was. A blocking flock() could not be
// given a deadline without signals.
//
// Readers never lock and never wait: Filter::load, Filter::map, cuckoo::io::inspect and the
// tool's `query` and `info` open whatever file the path names at that moment, and since every save
// is an atomic rename that is always a complete file, the old one or the new one. A reader that
// keeps a file open or mapped keeps answering from that version after a writer replaces it.
//
// The lock is advisory: it serializes only writers that take it (this header, the `cuckoo` tool,
// or another program following docs/FORMAT.md). A program that saves without it can still lose
// updates, and so can two writers on different machines over a network file system: Linux
// emulates flock on NFS with fcntl byte-range locks on the whole file, which do conflict between
// machines, but other network file systems may not lock at all.
//
// Included by cuckoo/cuckoo.hpp (from io/serialize.hpp); it can also be included on its own.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "cuckoo/cuckoo.hpp"
#include "cuckoo/io/posix_file.hpp"

namespace cuckoo {

/// How long a writer waits for another writer's lock by default (update_file, io::WriterLock, and
/// the tool's --wait).
inline constexpr std::chrono::milliseconds kDefaultLockWait{60'000};

/// Thrown when another writer held a filter file's lock for longer than the wait allowed. The file
/// is untouched. what(): "PATH: another writer holds the lock; gave up after S s".
class lock_timeout : public std::runtime_error {
 public:
  lock_timeout(const std::filesystem::path& path, std::chrono::duration<double> waited)
      : std::runtime_error(message(path, waited)), path_(path), waited_(waited) {}
  const std::filesystem::path& path() const noexcept { return path_; }
  /// How long the writer waited before giving up.
  std::chrono::duration<double> waited() const noexcept { return waited_; }

 private:
  static std::string message(const std::filesystem::path& path,
                             std::chrono::duration<double> waited) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f", waited.count());
    return path.string() + ": another writer holds the lock; gave up after " + seconds + " s";
  }
  std::filesystem::path path_;
  std::chrono::duration<double> waited_;
};

namespace io {

/// An exclusive writer lock on a filter file (see the top of this file), held from construction
/// to destruction. Movable, not copyable. Construction throws lock_timeout when the wait runs out,
/// and std::system_error when the file cannot be opened (ENOENT for a missing file, as for load)
/// or locked (ENOLCK, for instance, on a file system without locks).
class WriterLock {
 public:
  /// Waits up to `wait` for the lock (0 or less: one attempt, no waiting).
  explicit WriterLock(std::filesystem::path path, std::chrono::milliseconds wait = kDefaultLockWait)
      : path_(std::move(path)) {
    using Clock = std::chrono::steady_clock;
    // Beyond a year is forever; the cap keeps now + wait from overflowing.
    const auto bounded = std::clamp(wait, std::chrono::milliseconds::zero(),
                                    std::chrono::milliseconds(std::chrono::hours(24 * 366)));
    const auto start = Clock::now();
    const auto deadline = start + bounded;
    std::chrono::milliseconds pause{1};
    for (;;) {
      const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) throw_errno(errno, "cannot open", path_);
      FileDescriptor file(fd);
      for (;;) {
        if (::flock(file.get(), LOCK_EX | LOCK_NB) == 0) break;
        if (errno == EINTR) continue;
        if (errno != EWOULDBLOCK) throw_errno(errno, "cannot lock", path_);
        const auto now = Clock::now();
        if (now >= deadline) throw lock_timeout(path_, now - start);
        std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
        pause = std::min(pause * 2, std::chrono::milliseconds(50));
      }
      if (names_same_file(file.get())) {
        fd_ = std::move(file);
        return;
      }
      // The file was replaced while this writer waited: the lock is on a stale inode. Closing
      // the descriptor releases it; the next round opens the file now at the path.
    }
  }

  WriterLock(WriterLock&&) noexcept = default;
  /// Releases the lock this one held, then takes over `other`'s.
  WriterLock& operator=(WriterLock&&) noexcept = default;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  /// Closing the descriptor releases the lock.
  ~WriterLock() = default;

  /// The locked file's path, as given.
  const std::filesystem::path& path() const noexcept { return path_; }
  /// False once released or moved from.
  bool owns_lock() const noexcept { return fd_.get() >= 0; }
  /// Releases the lock now (the destructor then does nothing).
  void unlock() noexcept { (void)fd_.close(); }

 private:
  bool names_same_file(int fd) const {
    struct stat locked {};
    struct stat named {};
    if (::fstat(fd, &locked) != 0) throw_errno(errno, "cannot stat", path_);
    if (::stat(path_.c_str(), &named) != 0) {
      if (errno == ENOENT) return false;  // renamed away or removed: the next open reports it
      throw_errno(errno, "cannot stat", path_);
    }
    return locked.st_dev == named.st_dev && locked.st_ino == named.st_ino;
  }

  std::filesystem::path path_;
  FileDescriptor fd_;
};

}  // namespace io

/// The locked read-modify-save cycle on a filter file: takes the file's writer lock (waiting up to
/// `wait`), loads the filter, calls `change(filter)` with a `cuckoo::Filter&`, saves the filter
/// back atomically, and releases the lock; returns what `change` returns (void included).
///
/// The file is saved only if `change` returns normally, also when it changed nothing; if it throws,
/// the file is untouched and the exception propagates. Errors: lock_timeout when another writer
/// kept the lock past `wait` (the file is untouched and `change` was not called);
/// std::system_error when the file cannot be opened, locked or saved (ENOENT for a missing file);
/// format_error when it cannot be trusted, as for Filter::load. Every writer of the file that goes
/// through update_file (or takes io::WriterLock around its own load and save) has its changes
/// kept; readers are never blocked.
template <class Change>
decltype(auto) update_file(const std::filesystem::path& path, Change&& change,
                           std::chrono::milliseconds wait = kDefaultLockWait) {
  static_assert(std::is_invocable_v<Change&, Filter&>,
                "update_file: change must be callable with a cuckoo::Filter&");
  using Result = std::invoke_result_t<Change&, Filter&>;
  const io::WriterLock lock(path, wait);
  Filter filter = Filter::load(path);
  if constexpr (std::is_void_v<Result>) {
    change(filter);
    filter.save(path);
  } else {
    Result result = change(filter);
    filter.save(path);
    return result;  // not parenthesized: decltype(auto) gives Result itself
  }
}

}  // namespace cuckoo
