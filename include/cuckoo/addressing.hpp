// cuckoo/addressing.hpp — from one 64-bit hash to (bucket i1, fingerprint fp), and alt(i, fp).
//
// Bucket index. The high 32 bits of the hash are range-reduced into [0, m) by multiply-shift
// ((hi · m) >> 32): one multiplication, no division, and m need not be a power of two. The bucket
// count m is limited to 2^32.
//
// Fingerprint. The low 32 bits, which the index never reads, are range-reduced the same way into
// [1, 2^f − 1]; 0 is reserved to mean "empty slot". Every non-zero value is equally likely, so a
// query compared against one stored fingerprint matches with probability 1 / (2^f − 1), and a
// negative lookup against a table at load α matches with probability 1 − (1 − 1/(2^f − 1))^(2bα)
// (paper Eq. 5 with the empty slots and the reserved 0 taken into account).
//
// Alternate bucket (partial-key cuckoo hashing, paper §3.1). The paper's i ⊕ hash(fp) needs m to be
// a power of two. We use instead
//
//     alt(i, fp) = (H(fp) − i) mod m,   H(fp) odd, in [1, m − 1],   m even,
//
// which is an involution for every even m (alt(alt(i)) = H − (H − i) = i), is computed from the
// stored fingerprint alone, and never maps a bucket to itself: i = H − i (mod m) would need
// 2i ≡ H (mod m), impossible with m even and H odd. So every key has two distinct buckets and may
// be inserted 2b times. H(fp) is a multiplicative hash of fp reduced into the m/2 odd residues.
#pragma once

#include <cstdint>

namespace cuckoo {

/// A key's place in the table: its first bucket and its fingerprint (never 0).
struct Position {
  std::uint64_t bucket;
  std::uint32_t fingerprint;
};

/// Maps hashes to positions for a table of `bucket_count` buckets (even, 2..2^32) and
/// `fingerprint_bits` bits per fingerprint (1..32). Cheap to copy; holds two integers.
class Addressing {
 public:
  constexpr Addressing() = default;
  constexpr Addressing(std::uint64_t bucket_count, unsigned fingerprint_bits) noexcept
      : bucket_count_(bucket_count),
        fingerprint_range_((std::uint64_t{1} << fingerprint_bits) - 1) {}

  constexpr std::uint64_t bucket_count() const noexcept { return bucket_count_; }
  /// 2^f − 1: the fingerprint's range before the +1 that keeps it non-zero.
  constexpr std::uint64_t fingerprint_range() const noexcept { return fingerprint_range_; }

  constexpr Position position(std::uint64_t hash) const noexcept {
    const std::uint64_t bucket = ((hash >> 32) * bucket_count_) >> 32;
    const auto fingerprint =
        static_cast<std::uint32_t>((((hash & 0xFFFF'FFFFu) * fingerprint_range_) >> 32) + 1);
    return {bucket, fingerprint};
  }

  constexpr std::uint64_t alternate(std::uint64_t bucket,
                                    std::uint32_t fingerprint) const noexcept {
    return alternate_from_offset(bucket, offset(fingerprint));
  }

  /// H(fp), the odd offset in [1, m − 1] that alt(i, fp) = (H(fp) − i) mod m subtracts from.
  constexpr std::uint64_t offset(std::uint32_t fingerprint) const noexcept {
    // Fibonacci hashing of fp spreads neighbouring fingerprints over the whole table.
    const std::uint64_t mixed = (std::uint64_t{fingerprint} * 0x9E3779B97F4A7C15ull) >> 32;
    return ((mixed * (bucket_count_ >> 1)) >> 32) * 2 + 1;
  }

  /// alt(bucket, fp) from offset(fp), for callers that keep the offsets in a table.
  constexpr std::uint64_t alternate_from_offset(std::uint64_t bucket,
                                                std::uint64_t offset) const noexcept {
    const std::uint64_t diff = offset - bucket;
    return offset >= bucket ? diff : diff + bucket_count_;
  }

 private:
  std::uint64_t bucket_count_ = 2;
  std::uint64_t fingerprint_range_ = 1;
};

}  // namespace cuckoo
