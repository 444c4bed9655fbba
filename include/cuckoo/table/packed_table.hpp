// cuckoo/table/packed_table.hpp — buckets of b fingerprints of f bits, bit-packed end to end.
//
// Layout. Entry j of bucket i occupies bits [(i·b + j)·f, (i·b + j + 1)·f) of one little-endian bit
// string; no bucket is padded, so the table costs exactly m·b·f bits plus 8 bytes of tail padding
// (every access is an unaligned 8-byte load, which the padding keeps inside the allocation). Any f
// from 2 to 32 works with any b in {2, 4, 8}: an entry starts at bit offset 0..7 of its first byte,
// so an entry of up to 32 bits always lies inside the 8 loaded bytes. 0 means "empty".
//
// Bucket compare. The entries of a bucket are compared in groups of g lanes that fit in one 57-bit
// window of a single load (g = the largest power of two ≤ b with g·f ≤ 57): for f = 12, b = 4 the
// whole bucket is one load. A group holds v iff x = group ⊕ (v · ones) has a zero lane, which the
// SWAR test (x − ones) & ~x & highs detects exactly: a borrow only starts at a zero lane, so the
// result is non-zero iff some lane is zero (lanes above the first zero may be flagged spuriously,
// which is why `find` confirms the lane before answering).
//
// Template parameters:
//   kSlots      entries per bucket, b ∈ {2, 4, 8}.
//   FixedBits   the fingerprint width f when known at compile time (2..32), letting the compiler
//               fold every shift and mask; 0 (the default) takes f at run time from the
//               constructor.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuckoo/detail/aligned_buffer.hpp"
#include "cuckoo/detail/endian.hpp"

namespace cuckoo {

template <unsigned kSlots, unsigned FixedBits = 0>
class PackedTable {
  static_assert(kSlots == 2 || kSlots == 4 || kSlots == 8, "bucket size must be 2, 4 or 8");
  static_assert(FixedBits == 0 || (FixedBits >= 2 && FixedBits <= 32),
                "fingerprint width must be 2..32");

 public:
  static constexpr unsigned kBucketSize = kSlots;
  static constexpr unsigned kFixedBits = FixedBits;
  static constexpr unsigned kMinBits = 2;
  static constexpr unsigned kMaxBits = 32;
  static constexpr bool kSemiSorted = false;

  /// Bytes a table of `bucket_count` buckets of `bits`-bit entries occupies.
  static constexpr std::size_t bytes_for(std::uint64_t bucket_count, unsigned bits) noexcept {
    return static_cast<std::size_t>((bucket_count * kSlots * bits + 7) / 8 + kTailPadding);
  }

  PackedTable() : PackedTable(2, kFixedBits == 0 ? 8 : kFixedBits) {}
  PackedTable(std::uint64_t bucket_count, unsigned bits)
      : PackedTable(bucket_count, bits, detail::AlignedBuffer(bytes_for(bucket_count, bits))) {}
  /// A table over storage it does not own (a memory-mapped file), which must hold exactly
  /// bytes_for(bucket_count, bits) bytes and outlive the table.
  PackedTable(std::uint64_t bucket_count, unsigned bits, detail::ExternalStorage storage)
      : PackedTable(bucket_count, bits,
                    detail::AlignedBuffer(check_storage(storage, bucket_count, bits))) {}

 private:
  PackedTable(std::uint64_t bucket_count, unsigned bits, detail::AlignedBuffer&& buffer)
      : bucket_count_(bucket_count), bits_(check_bits(bits)), buffer_(std::move(buffer)) {
    group_ = kSlots;
    while (group_ > 1 && group_ * bits > kWindowBits) group_ /= 2;
    ones_ = 0;
    for (unsigned lane = 0; lane < group_; ++lane) ones_ |= std::uint64_t{1} << (lane * bits);
    highs_ = ones_ << (bits - 1);
    group_mask_ = low_mask(group_ * bits);
  }

 public:
  std::uint64_t bucket_count() const noexcept { return bucket_count_; }
  unsigned fingerprint_bits() const noexcept { return kFixedBits != 0 ? kFixedBits : bits_; }
  std::size_t memory_bytes() const noexcept { return buffer_.size(); }
  std::span<const std::byte> bytes() const noexcept { return {buffer_.data(), buffer_.size()}; }
  std::span<std::byte> bytes() noexcept { return {buffer_.data(), buffer_.size()}; }
  void clear() noexcept { buffer_.zero(); }

  std::uint32_t read(std::uint64_t bucket, unsigned slot) const noexcept {
    const std::uint64_t bit = (bucket * kSlots + slot) * fingerprint_bits();
    return static_cast<std::uint32_t>(load(bit >> 3) >> (bit & 7) & entry_mask());
  }

  void write(std::uint64_t bucket, unsigned slot, std::uint32_t value) noexcept {
    const std::uint64_t bit = (bucket * kSlots + slot) * fingerprint_bits();
    const unsigned shift = bit & 7;
    std::uint64_t word = load(bit >> 3);
    word = (word & ~(entry_mask() << shift)) | (std::uint64_t{value} << shift);
    word = detail::little_endian(word);
    std::memcpy(buffer_.data() + (bit >> 3), &word, sizeof word);
  }

  /// Puts `value` into `slot` and returns what was there (one step of a kick walk).
  std::uint32_t exchange(std::uint64_t bucket, unsigned slot, std::uint32_t value) noexcept {
    const std::uint32_t old = read(bucket, slot);
    write(bucket, slot, value);
    return old;
  }

  /// Reverses exchange(bucket, slot, placed) that returned `original`. Slots here never move, so
  /// the bucket's bits are restored exactly.
  void undo_exchange(std::uint64_t bucket, unsigned slot, std::uint32_t /*placed*/,
                     std::uint32_t original) noexcept {
    write(bucket, slot, original);
  }

  /// True if some entry of `bucket` equals `value`.
  bool contains(std::uint64_t bucket, std::uint32_t value) const noexcept {
    const std::uint64_t first = bucket * kSlots;
    for (unsigned lane = 0; lane < kSlots; lane += group()) {
      if (group_has(first + lane, value) != 0) return true;
    }
    return false;
  }

  /// The lowest slot of `bucket` holding `value` (0 finds an empty slot), or -1.
  int find(std::uint64_t bucket, std::uint32_t value) const noexcept {
    const std::uint64_t first = bucket * kSlots;
    for (unsigned lane = 0; lane < kSlots; lane += group()) {
      if (group_has(first + lane, value) == 0) continue;
      for (unsigned slot = lane; slot < lane + group(); ++slot) {
        if (read(bucket, slot) == value) return static_cast<int>(slot);
      }
    }
    return -1;
  }

  /// How many entries of `bucket` equal `value`.
  unsigned count(std::uint64_t bucket, std::uint32_t value) const noexcept {
    unsigned n = 0;
    for (unsigned slot = 0; slot < kSlots; ++slot) n += read(bucket, slot) == value;
    return n;
  }

  void prefetch(std::uint64_t bucket) const noexcept {
    __builtin_prefetch(buffer_.data() + ((bucket * kSlots * fingerprint_bits()) >> 3));
  }

 private:
  static constexpr unsigned kWindowBits = 57;  // 64 bits loaded minus up to 7 bits of offset
  static constexpr std::size_t kTailPadding = 8;

  static unsigned check_bits(unsigned bits) {
    if (bits < kMinBits || bits > kMaxBits) {
      throw std::invalid_argument("fingerprint_bits must be in 2..32, got " + std::to_string(bits));
    }
    if (kFixedBits != 0 && bits != kFixedBits) {
      throw std::invalid_argument("this table is compiled for " + std::to_string(kFixedBits) +
                                  "-bit fingerprints, got " + std::to_string(bits));
    }
    return bits;
  }
  static detail::ExternalStorage check_storage(detail::ExternalStorage storage,
                                               std::uint64_t bucket_count, unsigned bits) {
    if (storage.size != bytes_for(bucket_count, bits)) {
      throw std::invalid_argument("external table storage of " + std::to_string(storage.size) +
                                  " bytes, the layout needs " +
                                  std::to_string(bytes_for(bucket_count, bits)));
    }
    return storage;
  }
  static constexpr std::uint64_t low_mask(unsigned bits) noexcept {
    return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  }

  std::uint64_t entry_mask() const noexcept { return low_mask(fingerprint_bits()); }
  unsigned group() const noexcept {
    if constexpr (kFixedBits != 0) {
      unsigned g = kSlots;
      while (g > 1 && g * kFixedBits > kWindowBits) g /= 2;
      return g;
    } else {
      return group_;
    }
  }

  std::uint64_t load(std::uint64_t byte) const noexcept {
    std::uint64_t word;
    std::memcpy(&word, buffer_.data() + byte, sizeof word);
    word = detail::little_endian(word);
    return word;
  }

  /// Non-zero iff the group of lanes starting at entry index `entry` holds `value`.
  std::uint64_t group_has(std::uint64_t entry, std::uint32_t value) const noexcept {
    const std::uint64_t bit = entry * fingerprint_bits();
    const std::uint64_t lanes = load(bit >> 3) >> (bit & 7) & group_mask_;
    const std::uint64_t x = lanes ^ (value * ones_);
    return (x - ones_) & ~x & highs_;
  }

  std::uint64_t bucket_count_;
  unsigned bits_;
  unsigned group_ = 1;
  std::uint64_t ones_ = 1;
  std::uint64_t highs_ = 0;
  std::uint64_t group_mask_ = 0;
  detail::AlignedBuffer buffer_;
};

}  // namespace cuckoo
