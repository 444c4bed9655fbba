// cuckoo/detail/aligned_buffer.hpp — zeroed, cache-line-aligned storage for tables.
//
// Tables of 4 MiB or more are aligned to 2 MiB and advised with MADV_HUGEPAGE where the platform
// has it: a lookup on a large table is two random cache-line reads, and 2 MiB pages cut the TLB
// misses that would otherwise come with each. Where huge pages are unavailable the advice is
// silently ignored and the buffer works the same.
//
// A buffer can also view storage it does not own (ExternalStorage: a memory-mapped filter file).
// Such a view is never freed by the buffer; copying it makes an owning, writable copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace cuckoo::detail {

inline constexpr std::size_t kCacheLine = 64;
inline constexpr std::size_t kHugePage = std::size_t{2} << 20;
inline constexpr std::size_t kHugePageThreshold = std::size_t{4} << 20;

/// Storage owned by someone else (a file mapping) that must outlive every table viewing it.
struct ExternalStorage {
  std::byte* data = nullptr;
  std::size_t size = 0;
};

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  /// A non-owning view of `storage`.
  explicit AlignedBuffer(ExternalStorage storage) noexcept
      : data_(storage.data), size_(storage.size), owns_(false) {}
  explicit AlignedBuffer(std::size_t bytes) : size_(bytes) {
    if (bytes == 0) return;
    // Only the start is aligned to a huge page; the size is rounded to a cache line, so a 5 MiB
    // table costs 5 MiB, not 6.
    const std::size_t alignment = bytes >= kHugePageThreshold ? kHugePage : kCacheLine;
    const std::size_t rounded = (bytes + kCacheLine - 1) / kCacheLine * kCacheLine;
    void* memory = nullptr;
    if (::posix_memalign(&memory, alignment, rounded) != 0) throw std::bad_alloc();
    data_ = static_cast<std::byte*>(memory);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (alignment == kHugePage) (void)::madvise(data_, rounded, MADV_HUGEPAGE);
#endif
    std::memset(data_, 0, rounded);
  }
  AlignedBuffer(const AlignedBuffer& other) : AlignedBuffer(other.size_) {
    if (size_ != 0) std::memcpy(data_, other.data_, size_);
  }
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        owns_(std::exchange(other.owns_, true)) {}
  AlignedBuffer& operator=(AlignedBuffer other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(owns_, other.owns_);
    return *this;
  }
  ~AlignedBuffer() {
    if (owns_) std::free(data_);
  }

  std::byte* data() noexcept {
    return data_;
  }
  const std::byte* data() const noexcept {
    return data_;
  }
  std::size_t size() const noexcept {
    return size_;
  }
  /// False for a view of ExternalStorage.
  bool owns_memory() const noexcept {
    return owns_;
  }
  void zero() noexcept {
    if (size_ != 0) std::memset(data_, 0, size_);
  }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool owns_ = true;
};

}  // namespace cuckoo::detail
