// cuckoo/blocked/blocked_table.hpp — the storage of a blocked cuckoo filter: an array of 64-byte
// pocket-dictionary blocks (pocket_block.hpp), owned or viewed in a mapped file.
//
// A zeroed block is an empty one with no overflow threshold, so a new table is zeroed memory. A
// table read from a file is checked block by block (valid_encoding): a block whose header does
// not hold exactly 100 list ends after at most 43 items could send a lookup's slow path outside
// the block, so such a file is refused; the checks also insist on the canonical form the filter
// writes (items sorted, unused bytes zero, counts and threshold consistent), so a loaded filter
// undoes failed inserts exactly as a new one does.
//
// Template parameter:
//   L  the instruction-set level of the lookups (detail/isa.hpp): PDEP and a vector compare of
//      the line from kAvx2 on, broadword arithmetic at kPortable. The bytes are the same at every
//      level.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuckoo/blocked/pocket_block.hpp"
#include "cuckoo/detail/aligned_buffer.hpp"
#include "cuckoo/detail/isa.hpp"
#include "cuckoo/sizing.hpp"

namespace cuckoo {

template <Isa L = kCompiledIsa>
class BlockedTable {
  static_assert(CUCKOO_HAS_X86_VECTOR_PATHS || L == Isa::kPortable,
                "vector lookups exist for x86-64 only");

 public:
  static constexpr Isa kIsa = L;
  static constexpr bool kSemiSorted = false;
  static constexpr std::size_t kBlockBytes = detail::pocket::kBlockBytes;
  /// Items a block holds (what a Layout calls its bucket size).
  static constexpr unsigned kSlotsPerBlock = detail::pocket::kSlots;
  /// Bits stored per item besides the header: the remainder (a Layout's fingerprint width).
  static constexpr unsigned kRemainderBits = detail::pocket::kRemainderBits;

  static constexpr std::size_t bytes_for(std::uint64_t block_count) noexcept {
    return static_cast<std::size_t>(block_count) * kBlockBytes;
  }

  explicit BlockedTable(std::uint64_t block_count)
      : BlockedTable(block_count, detail::AlignedBuffer(bytes_for(checked(block_count)))) {}
  /// A table over storage it does not own (a memory-mapped file), which must hold exactly
  /// bytes_for(block_count) bytes and outlive the table.
  BlockedTable(std::uint64_t block_count, detail::ExternalStorage storage)
      : BlockedTable(block_count, detail::AlignedBuffer(check_storage(storage, block_count))) {}

  std::uint64_t block_count() const noexcept { return block_count_; }
  std::size_t memory_bytes() const noexcept { return buffer_.size(); }

  const std::byte* block(std::uint64_t b) const noexcept {
    return buffer_.data() + b * kBlockBytes;
  }
  std::byte* block(std::uint64_t b) noexcept { return buffer_.data() + b * kBlockBytes; }

  std::span<const std::byte> bytes() const noexcept { return {buffer_.data(), buffer_.size()}; }
  std::span<std::byte> bytes() noexcept { return {buffer_.data(), buffer_.size()}; }

  void clear() noexcept { buffer_.zero(); }

  /// Items held in all blocks.
  std::size_t item_count() const noexcept {
    std::size_t n = 0;
    for (std::uint64_t b = 0; b < block_count_; ++b) n += detail::pocket::size(block(b));
    return n;
  }

  /// Whether every block is in the canonical form the filter writes (see the essay above).
  bool valid_encoding() const noexcept {
    for (std::uint64_t b = 0; b < block_count_; ++b) {
      if (!valid_block(block(b))) return false;
    }
    return true;
  }

 private:
  BlockedTable(std::uint64_t block_count, detail::AlignedBuffer&& buffer)
      : block_count_(block_count), buffer_(std::move(buffer)) {}

  static std::uint64_t checked(std::uint64_t block_count) {
    if (block_count < 2 || (block_count & 1) != 0 || block_count > kMaxBucketCount) {
      throw std::invalid_argument(
          "cuckoo::BlockedTable: block count must be even and in 2..2^32, "
          "got " +
          std::to_string(block_count));
    }
    return block_count;
  }
  static detail::ExternalStorage check_storage(detail::ExternalStorage storage,
                                               std::uint64_t block_count) {
    if (storage.size != bytes_for(checked(block_count))) {
      throw std::invalid_argument("cuckoo::BlockedTable: external storage of " +
                                  std::to_string(storage.size) + " bytes, " +
                                  std::to_string(bytes_for(block_count)) + " needed");
    }
    return storage;
  }

  static bool valid_block(const std::byte* block) noexcept {
    namespace pocket = detail::pocket;
    const pocket::Tail t = pocket::load_tail(block);
    const unsigned n = pocket::item_count(t);
    if (n > pocket::kSlots) return false;
    // 100 zeros with every one before the last of them: the header's top bits are all zero.
    const unsigned used = pocket::kLists + n;
    const std::uint64_t words[3] = {t.w0, t.w1, t.w2};
    for (unsigned bit = used; bit < pocket::kHeaderBits; ++bit) {
      if ((words[bit / 64] >> (bit % 64)) & 1) return false;
    }
    if (used > 0 && ((words[(used - 1) / 64] >> ((used - 1) % 64)) & 1) != 0) return false;
    const unsigned t_field = t.threshold_field;
    const unsigned units = pocket::kValues >> pocket::kThresholdUnitBits;
    if (t_field != 0 && pocket::kNoOverflow - t_field >= units) return false;
    // Walk the header: lists, counts before groups 1 and 2, sorted remainders.
    unsigned list = 0, slot = 0, previous = 0;
    unsigned counts[pocket::kGroups - 1] = {0, 0};
    for (unsigned bit = 0; bit < used; ++bit) {
      if (((words[bit / 64] >> (bit % 64)) & 1) == 0) {
        ++list;
        continue;
      }
      const unsigned value = (list << pocket::kRemainderBits) | pocket::remainder_at(block, slot);
      if (slot > 0 && value < previous) return false;
      previous = value;
      for (unsigned g = 1; g < pocket::kGroups; ++g) {
        if (list < g * pocket::kGroupStride) ++counts[g - 1];
      }
      ++slot;
    }
    for (unsigned g = 0; g + 1 < pocket::kGroups; ++g) {
      if (counts[g] != t.counts[g]) return false;
    }
    for (unsigned s = n; s < pocket::kSlots; ++s) {
      if (pocket::remainder_at(block, s) != 0) return false;
    }
    return true;
  }

  std::uint64_t block_count_;
  detail::AlignedBuffer buffer_;
};

}  // namespace cuckoo
