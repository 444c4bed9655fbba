// cuckoo/detail/vector_probes.hpp — eight integer keys' probes at once, for the batch lookups.
//
// A batched lookup hides its misses behind the prefetch pipeline, so what is left of its time is
// instructions: about 75 per key, of which the stage (XXH3 of the key, the bucket, the
// fingerprint, the alternate bucket, the two line addresses) is about 30 and runs one key at a
// time. Every step of the stage is a 64-bit lane operation: the hash of an 8-byte key is a
// rotation, an xor, two rotations folded by a ternary logic op, two 64-bit multiplications and
// shifts (XXH3_len_4to8_64b); the bucket, the fingerprint and the offset H(fp) are 32 × 32-bit
// multiplications (addressing.hpp: every operand is below 2^32 when the table has fewer than 2^32
// buckets). At the AVX-512 level (vpmullq, vprolq, vpternlogq, unsigned compares into a mask) one
// instruction does eight keys, so the stage of eight keys is about 25 instructions instead of
// 240. Predicted with a harness of the same loop outside the library: in cache about half the
// time, at 192 MiB 0.8–0.9×. Measured in the library (f = 12, b = 4, 95% full, 4·10^6 lookups
// half stored, `-O3 -march=native`, new ÷ old in one process): Filter 0.53–0.54 in cache,
// 0.91–0.95 at 192 MiB on one and two threads; ConcurrentFilter 0.56 in cache, 0.84–0.89 at
// 192 MiB (README, "Batch lookups: eight integer keys' probes at once"). The staged group's
// prefetches go out one key at a time between the steps: issued together after the stage, the
// sixteen of a group gained nothing at 192 MiB (1.01–1.03×).
//
// The probes are exactly the scalar ones (Prober: Addressing::position, then alternate, from the
// offset table or computed: the table holds the same H(fp)); tests/unit/test_vector_probes.cpp
// compares them key by key. Only XXH3 (Xxh3Hasher) and 8-byte integer keys take this path; string
// keys, other hashers and tables of 2^32 buckets (the one size whose bucket count does not fit the
// 32-bit multiplier) keep the scalar stage.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "cuckoo/addressing.hpp"
#include "cuckoo/detail/isa.hpp"
#include "cuckoo/detail/prefetch_pipeline.hpp"
#include "cuckoo/detail/prober.hpp"
#include "cuckoo/hash.hpp"

// The stage uses AVX-512 DQ (vpmullq): forced inline where the translation unit's flags have it,
// else compiled for the AVX-512 level and inlined into callers built for it (the facade's
// entry points), called out of line from others. Not CUCKOO_AVX512_FN, which is forced inline
// wherever the flags have AVX-512 F alone.
#if defined(__AVX512F__) && defined(__AVX512DQ__)
#define CUCKOO_VECTOR_PROBES_FN CUCKOO_HOT
#elif CUCKOO_HAS_X86_VECTOR_PATHS
#define CUCKOO_VECTOR_PROBES_FN [[CUCKOO_TARGET_AVX512]] inline
#endif

namespace cuckoo::detail {

/// Eight keys' probes, a field per array: what the vector stage stores with three vector stores.
struct alignas(64) ProbeGroup {
  static constexpr std::size_t kKeys = 8;
  std::uint64_t bucket[kKeys];
  std::uint64_t alt[kKeys];
  std::uint64_t fingerprint[kKeys];
  CUCKOO_HOT Probe operator[](std::size_t j) const noexcept {
    return {bucket[j], alt[j], static_cast<std::uint32_t>(fingerprint[j])};
  }
};

/// The per-filter constants of the vector stage, copied into the batch's frame once per call.
struct VectorProbeConstants {
  std::uint64_t bitflip;            // Xxh3Hasher::integer_bitflip()
  std::uint64_t bucket_count;       // m < 2^32
  std::uint64_t fingerprint_range;  // 2^f − 1
};

/// Whether a batch of keys of type K hashed by Hash may take the vector stage at level L: XXH3,
/// 8-byte integers (hash_key reads every integer as its 64-bit value), and AVX-512 at the table's
/// level or in the translation unit's own flags (where the stage inlines into the batch loop).
template <Isa L, class Hash, class K>
inline constexpr bool kVectorProbes =
    CUCKOO_HAS_X86_VECTOR_PATHS&& std::same_as<Hash, Xxh3Hasher>&& std::integral<K> &&
    sizeof(K) == sizeof(std::uint64_t) &&
    (L == Isa::kAvx512
#if defined(__AVX512F__) && defined(__AVX512DQ__)
     || true
#endif
    );

/// Whether a table of `bucket_count` buckets fits the stage's 32-bit multiplier.
constexpr bool vector_probes_fit(std::uint64_t bucket_count) noexcept {
  return bucket_count <= 0xFFFF'FFFFu;
}

/// The constants for a filter's addressing and hasher.
inline VectorProbeConstants vector_probe_constants(const Addressing& addressing,
                                                   const Xxh3Hasher& hasher) noexcept {
  return {hasher.integer_bitflip(), addressing.bucket_count(), addressing.fingerprint_range()};
}

#if CUCKOO_HAS_X86_VECTOR_PATHS
/// Eight 64-bit lanes, as GCC's vector extension: compiled for the AVX-512 level, each operator is
/// one instruction on a 512-bit register (vprolq for the rotations, vpmullq for the products,
/// vpcmpuq for the compare). Written so rather than with intrinsics: GCC 12's AVX-512 shift and
/// rotate intrinsics pass an "undefined" operand that -Wuninitialized reports (GCC bug 105593).
typedef std::uint64_t VectorLanes __attribute__((vector_size(64)));

/// XXH3_len_4to8_64b of each of keys[0..8)'s 8 bytes (Xxh3Hasher::operator()(std::uint64_t)),
/// `bitflip` being Xxh3Hasher::integer_bitflip().
CUCKOO_VECTOR_PROBES_FN VectorLanes vector_xxh3_avx512(const void* keys,
                                                       std::uint64_t bitflip) noexcept {
  constexpr std::uint64_t kRrmxmx = 0x9FB2'1C65'1E98'DF25ull;
  VectorLanes key;
  std::memcpy(&key, keys, sizeof key);
  VectorLanes h = ((key >> 32) | (key << 32)) ^ bitflip;
  h ^= ((h << 49) | (h >> 15)) ^ ((h << 24) | (h >> 40));
  h *= kRrmxmx;
  h ^= (h >> 35) + 8;
  h *= kRrmxmx;
  return h ^ (h >> 28);
}

/// The probes of keys[0..8) (8-byte integers), exactly Prober's, into `out`.
CUCKOO_VECTOR_PROBES_FN void vector_probes_avx512(const void* keys, const VectorProbeConstants& c,
                                                  ProbeGroup& out) noexcept {
  constexpr std::uint64_t kFibonacci = 0x9E37'79B9'7F4A'7C15ull;
  const VectorLanes h = vector_xxh3_avx512(keys, c.bitflip);
  // Addressing::position (every product is of two numbers below 2^32).
  const VectorLanes bucket = ((h >> 32) * c.bucket_count) >> 32;
  const VectorLanes fingerprint = (((h & 0xFFFF'FFFFu) * c.fingerprint_range) >> 32) + 1;
  // Addressing::offset and alternate_from_offset.
  const VectorLanes mixed = (fingerprint * kFibonacci) >> 32;
  const VectorLanes offset = ((mixed * (c.bucket_count >> 1)) >> 32) * 2 + 1;
  const VectorLanes wrap = reinterpret_cast<VectorLanes>(offset < bucket) & c.bucket_count;
  const VectorLanes alt = offset - bucket + wrap;
  std::memcpy(out.bucket, &bucket, sizeof bucket);
  std::memcpy(out.alt, &alt, sizeof alt);
  std::memcpy(out.fingerprint, &fingerprint, sizeof fingerprint);
}
#endif

/// run_prefetch_pipeline for lookups (steps that never stop the batch) whose stage computes a
/// ProbeGroup of eight keys at once: `stage_group(i, group)` computes keys i .. i + 7 into
/// `group`, `prefetch(probe)` asks for one key's lines (called for each key of the group just
/// staged, between the steps of the group Depth keys older), `step(i, probe)` answers key i; the
/// last n mod 8 keys go through `stage_one(i)` (a single key's probe, prefetched) and step. The
/// same answers in the same order as run_prefetch_pipeline with stage_one.
///
///   Depth   a power of two, at least 8.
template <std::size_t Depth, class StageGroup, class Prefetch, class StageOne, class Step>
CUCKOO_HOT void run_grouped_lookup_pipeline(std::size_t n, StageGroup&& stage_group,
                                            Prefetch&& prefetch, StageOne&& stage_one,
                                            Step&& step) {
  constexpr std::size_t kKeys = ProbeGroup::kKeys;
  static_assert(Depth >= kKeys && (Depth & (Depth - 1)) == 0, "pipeline depth: a power of two");
  constexpr std::size_t kGroups = Depth / kKeys;
  ProbeGroup ring[kGroups];
  const std::size_t grouped = n - n % kKeys;
  const std::size_t warm = grouped < Depth ? grouped : Depth;
  for (std::size_t i = 0; i < warm; i += kKeys) {
    stage_group(i, ring[i / kKeys]);
    for (std::size_t j = 0; j < kKeys; ++j) prefetch(ring[i / kKeys][j]);
  }
  std::size_t i = 0;
  for (; i + Depth < grouped; i += kKeys) {
    ProbeGroup& slot = ring[(i / kKeys) % kGroups];
    const ProbeGroup current = slot;  // before stage_group reuses the slot
    stage_group(i + Depth, slot);
    for (std::size_t j = 0; j < kKeys; ++j) {
      prefetch(slot[j]);
      step(i + j, current[j]);
    }
  }
  for (; i < grouped; i += kKeys) {
    const ProbeGroup& current = ring[(i / kKeys) % kGroups];
    for (std::size_t j = 0; j < kKeys; ++j) step(i + j, current[j]);
  }
  for (; i < n; ++i) step(i, stage_one(i));
}

/// The batch lookups' pipeline (BasicFilter's and BasicConcurrentFilter's): `step(i, probe)` for
/// every key in order, each key's lines asked for Depth keys earlier through `reader`. Keys are
/// staged eight at a time where kVectorProbes allows it at level L (and Depth holds a group),
/// else one at a time by `prober`; the same probes either way. Reader, prober and hasher are taken
/// by value, copies in this frame (detail/prober.hpp says why): taken by reference, `Filter`'s
/// batch measured 0.98-1.01x the scalar stage's time instead of 0.93x at 192 MiB.
template <std::size_t Depth, Isa L, class Reader, class ProberType, class Hash, class K, class Step>
CUCKOO_HOT void run_lookup_pipeline(std::span<const K> keys, const Reader reader,
                                    const ProberType prober, const Hash hasher, Step&& step) {
  const K* const in = keys.data();
  const auto stage_one = [&](std::size_t i) { return prober.fetch(reader, hasher, in[i]); };
#if CUCKOO_HAS_X86_VECTOR_PATHS
  // (Depth: the tuning sweeps run depths below a group; those keep the scalar stage.)
  if constexpr (Depth >= ProbeGroup::kKeys && kVectorProbes<L, Hash, K>) {
    if (vector_probes_fit(prober.addressing.bucket_count())) {
      const VectorProbeConstants constants = vector_probe_constants(prober.addressing, hasher);
      run_grouped_lookup_pipeline<Depth>(
          keys.size(),
          [&](std::size_t i, ProbeGroup& group)
              CUCKOO_LAMBDA_HOT { vector_probes_avx512(in + i, constants, group); },
          [&](const Probe& p) CUCKOO_LAMBDA_HOT { ProberType::prefetch(reader, p); }, stage_one,
          step);
      return;
    }
  }
#endif
  run_prefetch_pipeline<Depth>(keys.size(), stage_one,
                               [&](std::size_t i, const Probe& p) CUCKOO_LAMBDA_HOT {
                                 step(i, p);
                                 return true;
                               });
}

}  // namespace cuckoo::detail
