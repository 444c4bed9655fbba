// cuckoo/detail/prober.hpp — a key's two buckets and fingerprint, and what computes them from its
// hash inside a batch loop.
//
// A batch loop that reads the filter's addressing through `this` reloads it from memory for every
// key: in the filter's loop GCC ran out of registers and re-read the table's base, the output's
// address and the batch length per key, and after an atomic load (ConcurrentFilter) it must
// assume any memory changed. A Prober is a copy of the addressing and of the offset table's
// address made in the loop's own frame; its address never escapes, so the compiler keeps it in
// registers. BasicFilter's and BasicConcurrentFilter's batch lookups use it (README,
// "Performance" and "Concurrency").
#pragma once

#include <cstdint>

#include "cuckoo/addressing.hpp"
#include "cuckoo/detail/isa.hpp"
#include "cuckoo/hash.hpp"

namespace cuckoo::detail {

/// A key's two buckets and fingerprint: everything a lookup, insert or erase needs.
struct Probe {
  std::uint64_t bucket;
  std::uint64_t alt;
  std::uint32_t fingerprint;
};

/// The addressing, and the table of alternate-bucket offsets (one per fingerprint) when the
/// filter keeps one.
///
///   kMayKeepOffsets   false where the fingerprint is too wide for an offset table, so that the
///                     lookup branch is compiled out.
template <bool kMayKeepOffsets>
struct Prober {
  Addressing addressing;
  const std::uint32_t* offsets;
  // Else alternate buckets are computed, not looked up. (Not `offsets != nullptr`: GCC then
  // tested both the vector's emptiness and the pointer, one more branch per single-key lookup.)
  bool use_offsets;

  CUCKOO_HOT Probe operator()(std::uint64_t hash) const noexcept {
    const Position pos = addressing.position(hash);
    return {pos.bucket, alternate(pos.bucket, pos.fingerprint), pos.fingerprint};
  }
  /// A batch pipeline's stage: the key's probe, with both its buckets' lines asked for through
  /// `reader` (a table's LookupReader).
  template <class Reader, class Hash, class K>
  CUCKOO_HOT Probe fetch(const Reader& reader, const Hash& hasher, const K& key) const noexcept {
    const Probe p = (*this)(hash_key(hasher, key));
    prefetch(reader, p);
    return p;
  }
  /// Asks `reader` for both buckets' lines of a probe.
  template <class Reader>
  CUCKOO_HOT static void prefetch(const Reader& reader, const Probe& p) noexcept {
    reader.prefetch_for_lookup(p.bucket);
    reader.prefetch_for_lookup(p.alt);
  }
  CUCKOO_HOT std::uint64_t alternate(std::uint64_t bucket,
                                     std::uint32_t fingerprint) const noexcept {
    if constexpr (kMayKeepOffsets) {
      if (use_offsets) return addressing.alternate_from_offset(bucket, offsets[fingerprint]);
    }
    return addressing.alternate(bucket, fingerprint);
  }
};

}  // namespace cuckoo::detail
