// cuckoo/io/posix_file.hpp — the few POSIX file operations saving and mapping need.
//
// AtomicFileWriter gives save() its guarantee: the bytes go to a new temporary file in the target's
// directory, which is flushed (fsync), renamed over the target, and the directory flushed so the
// rename itself is durable. rename() within one directory is atomic, so a reader of the target
// sees the old file or the complete new one, never a mixture; after a crash or a full disk the
// target is untouched. Any failure removes the temporary and throws std::system_error.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <system_error>
#include <utility>

namespace cuckoo::io {

[[noreturn]] inline void throw_errno(int error, const std::string& what,
                                     const std::filesystem::path& path) {
  throw std::system_error(error, std::generic_category(), what + " " + path.string());
}

/// An open file descriptor, closed on destruction.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }
  /// Closes now, returning close()'s errno (0 on success): a delayed write error shows up here.
  int close() noexcept {
    const int fd = std::exchange(fd_, -1);
    return fd >= 0 && ::close(fd) != 0 ? errno : 0;
  }

 private:
  int fd_ = -1;
};

inline FileDescriptor open_for_reading(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno(errno, "cannot open", path);
  return FileDescriptor(fd);
}

/// Reads until `out` is full or the file ends; returns the bytes read.
inline std::size_t read_fully(int fd, std::span<std::byte> out, const std::filesystem::path& path) {
  std::size_t done = 0;
  while (done < out.size()) {
    const ::ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      throw_errno(errno, "cannot read", path);
    }
  }
  return done;
}

/// Size of a regular file, or -1 for anything else (a pipe, a terminal).
inline std::int64_t regular_file_size(int fd, const std::filesystem::path& path) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) throw_errno(errno, "cannot stat", path);
  if (S_ISDIR(status.st_mode)) throw_errno(EISDIR, "cannot read", path);
  return S_ISREG(status.st_mode) ? static_cast<std::int64_t>(status.st_size) : -1;
}

/// Writes a file atomically (see the top of this file): write() as often as needed, then commit().
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::filesystem::path target) : target_(std::move(target)) {
    const std::filesystem::path directory =
        target_.has_parent_path() ? target_.parent_path() : std::filesystem::path(".");
    // O_EXCL with a name unique to this process and call; 0666 lets the umask decide the mode,
    // as for any newly created file.
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
      temp_ = directory / ("." + target_.filename().string() + ".tmp-" +
                           std::to_string(::getpid()) + "-" + std::to_string(counter++));
      const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) {
        fd_ = FileDescriptor(fd);
        return;
      }
      if (errno != EEXIST) throw_errno(errno, "cannot create a temporary file for", target_);
    }
    throw_errno(EEXIST, "cannot create a temporary file for", target_);
  }
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter() {
    if (!committed_) {
      fd_.close();
      ::unlink(temp_.c_str());
    }
  }

  void write(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      const ::ssize_t n = ::write(fd_.get(), bytes.data(), bytes.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        throw_errno(errno, "cannot write", target_);
      }
      bytes = bytes.subspan(static_cast<std::size_t>(n));
    }
  }

  /// Makes the written bytes durable and puts them at the target path.
  void commit() {
    if (::fsync(fd_.get()) != 0) throw_errno(errno, "cannot flush", target_);
    if (const int error = fd_.close(); error != 0) throw_errno(error, "cannot write", target_);
    if (::rename(temp_.c_str(), target_.c_str()) != 0)
      throw_errno(errno, "cannot replace", target_);
    committed_ = true;
    // The rename is in place; flushing the directory makes it survive a crash. A failure here
    // cannot be undone (the target is already the new file), so it is reported, not rolled back.
    const std::filesystem::path directory =
        target_.has_parent_path() ? target_.parent_path() : std::filesystem::path(".");
    FileDescriptor dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0 || ::fsync(dir.get()) != 0) {
      throw_errno(errno, "saved, but cannot flush the directory of", target_);
    }
  }

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  FileDescriptor fd_;
  bool committed_ = false;
};

/// A whole file mapped read-only; unmapped on destruction. Move-only; moving keeps the address.
class MappedFile {
 public:
  explicit MappedFile(const std::filesystem::path& path) {
    FileDescriptor fd = open_for_reading(path);
    const std::int64_t size = regular_file_size(fd.get(), path);
    if (size < 0) throw_errno(ENODEV, "cannot map (not a regular file)", path);
    size_ = static_cast<std::size_t>(size);
    if (size_ == 0) return;  // nothing to map; the header check refuses it
    void* base = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (base == MAP_FAILED) throw_errno(errno, "cannot map", path);
    data_ = static_cast<std::byte*>(base);
  }
  MappedFile(MappedFile&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(data_, size_);
  }

  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  /// The mapping is PROT_READ: writing through this pointer faults. It is handed to tables that
  /// only ever read it (MappedFilter exposes a const Filter).
  std::byte* data_for_reading_only() const noexcept { return data_; }
  /// Lookups touch two random cache lines: read-ahead would only waste I/O.
  void advise_random() const noexcept {
    if (data_ != nullptr) (void)::madvise(data_, size_, MADV_RANDOM);
  }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace cuckoo::io
