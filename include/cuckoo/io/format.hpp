// cuckoo/io/format.hpp — the filter file header (format versions 1 to 4): encoding and
// validation.
//
// The byte layout is documented in docs/FORMAT.md; in short, all integers little-endian:
//
//   [0, 128)        header: magic, version, kind, hash id, f, b, flags, max_kicks, bucket count,
//                   seed, item count, capacity, table bytes; version 2 adds the doublings and the
//                   stash count; reserved bytes zero
//   [128, 128 + T)  the table exactly as the filter holds it (its bytes are little-endian already)
//   [.., + 16·S)    version 2 only: S stash entries (u64 first bucket, u32 slot value, u32 zero)
//   [.., + m·b·w)   version 3 only: the approximate map's values, w bytes per slot, slot order
//   [.., +8)        XXH3-64 (seed 0) of every byte before it
//
// Fixed filters are written as version 1, exactly as before; growable filters as version 2, with
// the growable flag, f = the base width, the bucket count of both sides and the starting capacity.
// Approximate maps (map/approximate_map.hpp) are version 3, kind 2: a version-1 table followed by
// the value array, with the value width w in the header. Blocked filters (blocked/) are version 4
// with the blocked flag: f = 8 (remainder bits), b = 43 (items per block), the block count as the
// bucket count, and the 64-byte blocks as the table.
//
// Everything here treats the header as untrusted input: decode_header() refuses, with a
// format_error naming the field, any value the loader could not safely act on, so that by the time
// anything is allocated the sizes are known to agree with each other.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

#include "cuckoo/config.hpp"
#include "cuckoo/growable/growable_filter.hpp"
#include "cuckoo/hash.hpp"
#include "cuckoo/sizing.hpp"

namespace cuckoo {

/// A filter file or byte stream the loader cannot trust; what() says what is wrong.
class format_error : public std::runtime_error {
 public:
  explicit format_error(const std::string& what) : std::runtime_error(what) {}
};

namespace io {

inline constexpr std::array<std::byte, 8> kMagic = {
    std::byte{0x89}, std::byte{'C'},  std::byte{'K'},  std::byte{'O'},
    std::byte{'O'},  std::byte{'\r'}, std::byte{'\n'}, std::byte{0x1A}};
inline constexpr std::uint32_t kFormatVersion = 1;
/// The version of growable filters' files.
inline constexpr std::uint32_t kGrowableFormatVersion = 2;
/// The version of approximate maps' files (kind kKindApproximateMap).
inline constexpr std::uint32_t kApproximateMapFormatVersion = 3;
/// The version of blocked filters' files (flag kFlagBlocked).
inline constexpr std::uint32_t kBlockedFormatVersion = 4;
inline constexpr std::uint32_t kKindCuckoo = 1;
/// A cuckoo filter whose slots carry values (cuckoo::ApproximateMap), in version-3 files.
inline constexpr std::uint32_t kKindApproximateMap = 2;
/// Widest value an approximate map's file may declare, in bytes.
inline constexpr std::uint32_t kMaxValueBytes = 256;
inline constexpr std::uint32_t kFlagSemiSorted = 1;
inline constexpr std::uint32_t kFlagGrowable = 2;
inline constexpr std::uint32_t kFlagBlocked = 4;
/// Bytes of one stash entry in a version-2 file.
inline constexpr std::size_t kStashEntryBytes = 16;
/// Largest bucket count of a growable filter's file (both sides): 2^40, far past any memory.
inline constexpr std::uint64_t kMaxGrowableBucketCount = std::uint64_t{1} << 40;
inline constexpr std::size_t kHeaderBytes = 128;
inline constexpr std::size_t kChecksumBytes = 8;

/// Every field of a header (version 1, or 2 for a growable filter).
struct FileHeader {
  std::uint32_t version = kFormatVersion;
  std::uint32_t kind = kKindCuckoo;
  std::uint32_t hash_id = static_cast<std::uint32_t>(HashId::kXxh3_64);
  Layout layout;
  std::uint32_t max_kicks = 0;
  std::uint64_t seed = 0;
  std::uint64_t item_count = 0;
  std::uint64_t capacity = 0;
  std::uint64_t table_bytes = 0;
  // Version 2 (growable) only. layout.fingerprint_bits is then the base width f, capacity the
  // starting capacity and layout.bucket_count the buckets of both sides now.
  bool growable = false;
  std::uint32_t doublings = 0;
  std::uint32_t stash_count = 0;
  // How the slot widths grow (u32 at offset 88; 0, kCeiling, in files saved before it existed).
  growth::Schedule schedule = growth::Schedule::kCeiling;
  // Version 3 (approximate map) only: bytes per value; 0 for filters.
  std::uint32_t value_bytes = 0;

  bool is_map() const noexcept { return kind == kKindApproximateMap; }
  /// Bytes of the value array (approximate maps; 0 for filters).
  std::uint64_t values_bytes() const noexcept {
    return layout.bucket_count * layout.bucket_size * value_bytes;
  }
  std::uint64_t stash_bytes() const noexcept {
    return std::uint64_t{stash_count} * kStashEntryBytes;
  }
  /// Size of the whole file: header, table, stash or values, checksum.
  std::uint64_t file_bytes() const noexcept {
    return kHeaderBytes + table_bytes + stash_bytes() + values_bytes() + kChecksumBytes;
  }
  /// The growable filter's geometry (meaningful only when `growable`).
  GrowableGeometry geometry() const noexcept {
    return {layout.fingerprint_bits, layout.bucket_count >> (doublings + 1), doublings, schedule};
  }
};

namespace detail {

// Field offsets in the header (docs/FORMAT.md).
inline constexpr std::size_t kOffVersion = 8, kOffKind = 12, kOffHashId = 16, kOffBits = 20,
                             kOffBucketSize = 24, kOffFlags = 28, kOffMaxKicks = 32,
                             kOffReserved32 = 36, kOffBucketCount = 40, kOffSeed = 48,
                             kOffItemCount = 56, kOffCapacity = 64, kOffTableBytes = 72,
                             kOffDoublings = 80, kOffStashCount = 84, kOffValueBytes = 88,
                             kOffGrowthSchedule = 88, kOffReservedTail = 92;

inline void store_u32(std::byte* at, std::uint32_t value) noexcept {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<std::byte>(value >> (8 * i));
}
inline void store_u64(std::byte* at, std::uint64_t value) noexcept {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<std::byte>(value >> (8 * i));
}
inline std::uint32_t load_u32(const std::byte* at) noexcept {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= std::uint32_t{std::to_integer<std::uint8_t>(at[i])} << (8 * i);
  return value;
}
inline std::uint64_t load_u64(const std::byte* at) noexcept {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= std::uint64_t{std::to_integer<std::uint8_t>(at[i])} << (8 * i);
  return value;
}

[[noreturn]] inline void refuse(const std::string& what) {
  throw format_error("cuckoo filter file: " + what);
}

}  // namespace detail

inline std::array<std::byte, kHeaderBytes> encode_header(const FileHeader& header) noexcept {
  using namespace detail;
  std::array<std::byte, kHeaderBytes> out{};
  std::memcpy(out.data(), kMagic.data(), kMagic.size());
  std::byte* p = out.data();
  store_u32(p + kOffVersion, header.version);
  store_u32(p + kOffKind, header.kind);
  store_u32(p + kOffHashId, header.hash_id);
  store_u32(p + kOffBits, header.layout.fingerprint_bits);
  store_u32(p + kOffBucketSize, header.layout.bucket_size);
  store_u32(p + kOffFlags, (header.layout.semi_sort ? kFlagSemiSorted : 0) |
                               (header.growable ? kFlagGrowable : 0) |
                               (header.layout.blocked ? kFlagBlocked : 0));
  store_u32(p + kOffMaxKicks, header.max_kicks);
  store_u64(p + kOffBucketCount, header.layout.bucket_count);
  store_u64(p + kOffSeed, header.seed);
  store_u64(p + kOffItemCount, header.item_count);
  store_u64(p + kOffCapacity, header.capacity);
  store_u64(p + kOffTableBytes, header.table_bytes);
  store_u32(p + kOffDoublings, header.doublings);
  store_u32(p + kOffStashCount, header.stash_count);
  if (header.growable) {
    store_u32(p + kOffGrowthSchedule, static_cast<std::uint32_t>(header.schedule));
  } else {
    store_u32(p + kOffValueBytes, header.value_bytes);
  }
  return out;
}

/// Checks the first bytes of a file: a wrong magic is "not a filter file", a right one cut short
/// is "truncated". `available` may be shorter than the header.
inline void check_magic(std::span<const std::byte> available) {
  if (available.empty()) detail::refuse("empty input, no magic: not a cuckoo filter file");
  const std::size_t n = available.size() < kMagic.size() ? available.size() : kMagic.size();
  if (std::memcmp(available.data(), kMagic.data(), n) != 0) {
    detail::refuse("wrong magic: not a cuckoo filter file");
  }
  if (available.size() < kHeaderBytes) {
    detail::refuse("truncated: " + std::to_string(available.size()) + " bytes, shorter than the " +
                   std::to_string(kHeaderBytes) + "-byte header");
  }
}

/// Decodes and validates a header. `table_bytes_for(layout)` gives the table size this build uses
/// for a layout, or 0 when it has no table for it. Throws format_error naming the bad field.
template <class TableBytesFor>
FileHeader decode_header(std::span<const std::byte> bytes, TableBytesFor table_bytes_for) {
  using namespace detail;
  check_magic(bytes);
  const std::byte* p = bytes.data();
  FileHeader h;
  h.version = load_u32(p + kOffVersion);
  if (h.version != kFormatVersion && h.version != kGrowableFormatVersion &&
      h.version != kApproximateMapFormatVersion && h.version != kBlockedFormatVersion) {
    refuse("unsupported format version " + std::to_string(h.version) + " (this library reads " +
           std::to_string(kFormatVersion) + ", " + std::to_string(kGrowableFormatVersion) + ", " +
           std::to_string(kApproximateMapFormatVersion) + " and " +
           std::to_string(kBlockedFormatVersion) + ")");
  }
  h.kind = load_u32(p + kOffKind);
  if (h.kind != kKindCuckoo && h.kind != kKindApproximateMap) {
    refuse("unknown filter kind " + std::to_string(h.kind));
  }
  if (h.is_map() != (h.version == kApproximateMapFormatVersion)) {
    refuse(h.is_map() ? "approximate-map kind in a version-" + std::to_string(h.version) + " file"
                      : "version-3 file that is not an approximate map");
  }
  h.hash_id = load_u32(p + kOffHashId);
  if (h.hash_id != static_cast<std::uint32_t>(HashId::kXxh3_64)) {
    refuse("unknown hash function id " + std::to_string(h.hash_id));
  }
  const std::uint32_t flags = load_u32(p + kOffFlags);
  if ((flags & ~(kFlagSemiSorted | kFlagGrowable | kFlagBlocked)) != 0) {
    refuse("unknown flags " + std::to_string(flags));
  }
  h.layout.blocked = (flags & kFlagBlocked) != 0;
  if (h.layout.blocked != (h.version == kBlockedFormatVersion)) {
    refuse(h.layout.blocked ? "blocked flag in a version-" + std::to_string(h.version) + " file"
                            : "version-4 file without the blocked flag");
  }
  h.growable = (flags & kFlagGrowable) != 0;
  if (h.growable != (h.version == kGrowableFormatVersion)) {
    refuse(h.growable ? "growable flag in a version-" + std::to_string(h.version) + " file"
                      : "version-2 file without the growable flag");
  }
  if (load_u32(p + kOffReserved32) != 0) refuse("reserved header field not zero");
  // Each version uses its own fields after offset 80; every other byte must be zero.
  for (std::size_t i = kOffDoublings; i < kHeaderBytes; ++i) {
    const bool used = (h.growable && i < kOffReservedTail) ||
                      (h.is_map() && i >= kOffValueBytes && i < kOffReservedTail);
    if (!used && p[i] != std::byte{0}) refuse("reserved header bytes not zero");
  }
  if (h.is_map()) {
    if (h.growable) refuse("an approximate map cannot be growable");
    h.value_bytes = load_u32(p + kOffValueBytes);
    if (h.value_bytes == 0 || h.value_bytes > kMaxValueBytes) {
      refuse("value width " + std::to_string(h.value_bytes) + " bytes out of range (1.." +
             std::to_string(kMaxValueBytes) + ")");
    }
  }

  const std::uint32_t bits = load_u32(p + kOffBits);
  const std::uint32_t bucket_size = load_u32(p + kOffBucketSize);
  h.layout.bucket_count = load_u64(p + kOffBucketCount);
  h.layout.semi_sort = (flags & kFlagSemiSorted) != 0;
  if (h.layout.blocked) {
    if (h.layout.semi_sort || h.growable) refuse("a blocked filter cannot be semi-sorted or grow");
    if (bucket_size != blocked_layout::kSlotsPerBlock || bits != blocked_layout::kRemainderBits) {
      refuse("blocked filter with " + std::to_string(bucket_size) + " slots per block and " +
             std::to_string(bits) + "-bit remainders (this library's blocks hold " +
             std::to_string(blocked_layout::kSlotsPerBlock) + " items of " +
             std::to_string(blocked_layout::kRemainderBits) + " bits)");
    }
  } else if (bucket_size != 2 && bucket_size != 4 && bucket_size != 8) {
    refuse("bucket size " + std::to_string(bucket_size) + " out of range (2, 4 or 8)");
  }
  if (bits < defaults::kMinFingerprintBits || bits > defaults::kMaxFingerprintBits) {
    refuse("fingerprint width " + std::to_string(bits) + " out of range (2..32)");
  }
  h.layout.fingerprint_bits = bits;
  h.layout.bucket_size = bucket_size;
  if (h.layout.semi_sort && bucket_size != 4) refuse("semi-sorted with bucket size other than 4");
  if (h.layout.semi_sort && h.is_map()) refuse("an approximate map cannot be semi-sorted");
  Layout table_layout = h.layout;  // the table's own: the slot width is f for fixed filters
  if (h.growable) {
    if (h.layout.semi_sort) refuse("a growable filter cannot be semi-sorted");
    const std::uint32_t schedule = load_u32(p + kOffGrowthSchedule);
    if (schedule > static_cast<std::uint32_t>(growth::kNewestSchedule)) {
      refuse("growth schedule " + std::to_string(schedule) + " unknown (this library reads 0.." +
             std::to_string(static_cast<std::uint32_t>(growth::kNewestSchedule)) + ")");
    }
    h.schedule = static_cast<growth::Schedule>(schedule);
    if (bits < growth::kMinBaseBits ||
        growth::slot_bits(bits, 0, h.schedule) > growth::kMaxSlotBits) {
      refuse("base fingerprint width " + std::to_string(bits) + " out of range (" +
             std::to_string(growth::kMinBaseBits) + ".." +
             std::to_string(growth::kMaxSlotBits - 2) + ")");
    }
    h.doublings = load_u32(p + kOffDoublings);
    if (h.doublings > growth::kMaxDoublings ||
        growth::slot_bits(bits, h.doublings, h.schedule) > growth::kMaxSlotBits) {
      refuse("doublings " + std::to_string(h.doublings) +
             " out of range for f = " + std::to_string(bits));
    }
    const std::uint64_t unit = std::uint64_t{2} << h.doublings;  // 2 sides · 2^g
    if (h.layout.bucket_count < unit || h.layout.bucket_count > kMaxGrowableBucketCount ||
        h.layout.bucket_count % unit != 0 ||
        (h.layout.bucket_count / unit) > (kMaxBucketCount / 2)) {
      refuse("bucket count " + std::to_string(h.layout.bucket_count) +
             " out of range (2·2^doublings times 1..2^31, at most 2^40)");
    }
    h.stash_count = load_u32(p + kOffStashCount);
    if (h.stash_count > growth::kStashSlots) {
      refuse("stash of " + std::to_string(h.stash_count) + " entries (at most " +
             std::to_string(growth::kStashSlots) + ")");
    }
    table_layout.fingerprint_bits = growth::slot_bits(bits, h.doublings, h.schedule);
  } else if (h.layout.bucket_count < 2 || h.layout.bucket_count > kMaxBucketCount ||
             h.layout.bucket_count % 2 != 0) {
    refuse("bucket count " + std::to_string(h.layout.bucket_count) +
           " out of range (even, 2..2^32)");
  }
  h.max_kicks = load_u32(p + kOffMaxKicks);
  if (h.max_kicks > defaults::kMaxKicksLimit) {
    refuse("max_kicks " + std::to_string(h.max_kicks) + " out of range (at most " +
           std::to_string(defaults::kMaxKicksLimit) + ")");
  }
  h.seed = load_u64(p + kOffSeed);
  h.capacity = load_u64(p + kOffCapacity);
  if (h.capacity == 0 || h.capacity > SIZE_MAX) {
    refuse("capacity " + std::to_string(h.capacity) + " out of range");
  }
  h.item_count = load_u64(p + kOffItemCount);
  const std::uint64_t slots = h.layout.bucket_count * bucket_size + h.stash_count;
  if (h.item_count > slots) {
    refuse("item count " + std::to_string(h.item_count) + " exceeds the " + std::to_string(slots) +
           " slots");
  }
  h.table_bytes = load_u64(p + kOffTableBytes);
  const std::size_t expected = table_bytes_for(table_layout);
  if (expected == 0) refuse("no table for this layout in this build (semi-sorted?)");
  if (h.table_bytes != expected) {
    refuse("table size " + std::to_string(h.table_bytes) + " does not match the parameters (" +
           std::to_string(expected) + " bytes expected)");
  }
  return h;
}

/// Refuses, for a filter loader, a header that describes an approximate map.
inline void check_is_filter(const FileHeader& header) {
  if (header.is_map()) {
    detail::refuse("an approximate map (" + std::to_string(header.value_bytes) +
                   "-byte values), not a filter: open it with cuckoo::ApproximateMap");
  }
}

/// Refuses a file whose length is not what its (validated) header promises.
inline void check_file_bytes(const FileHeader& header, std::uint64_t actual) {
  const std::uint64_t expected = header.file_bytes();
  if (actual < expected) {
    detail::refuse("truncated: " + std::to_string(actual) + " bytes, the header promises " +
                   std::to_string(expected));
  }
  if (actual > expected) {
    detail::refuse(std::to_string(actual - expected) + " unexpected bytes after the checksum");
  }
}

inline void check_checksum(std::uint64_t stored, std::uint64_t computed) {
  if (stored != computed) detail::refuse("checksum mismatch: the file is damaged");
}

/// The items a loaded filter or map holds, counted from its table: the slots that are not empty
/// (every table kind keeps 0 in an empty slot) plus stashed entries; tables that count their own
/// items (blocked) say so themselves. One pass over the table.
template <class Core>
std::uint64_t counted_items(const Core& core) {
  if constexpr (requires { core.counted_size(); }) {
    return core.counted_size();
  } else {
    const auto& table = core.table();
    const std::uint64_t buckets = core.bucket_count();
    std::uint64_t empty = 0;
    for (std::uint64_t bucket = 0; bucket < buckets; ++bucket) empty += table.count(bucket, 0);
    std::uint64_t items = buckets * Core::kBucketSize - empty;
    if constexpr (requires { core.stash_size(); }) items += core.stash_size();
    return items;
  }
}

/// Refuses a loaded core whose header's item count (already set as its size) is not what its table
/// holds. Trusted, a wrong count makes size(), load_factor() and the capacity limit wrong, and a
/// filter that went on taking inserts could come to save a count its own loader refuses (found by
/// the fuzz target's use of what it loads). Run after the table's encoding is known to be valid.
/// A grown filter may hold more entries than items (an entry with no bits left is copied into both
/// children of each doubling), so there the count must not exceed the entries.
template <class Core>
void check_item_count(const Core& core) {
  const std::uint64_t counted = counted_items(core);
  const bool copies_allowed = requires {
    core.doublings();
  };
  if (copies_allowed ? core.size() > counted : core.size() != counted) {
    detail::refuse("item count " + std::to_string(core.size()) + " but the table holds " +
                   std::to_string(counted));
  }
}

}  // namespace io
}  // namespace cuckoo
