// cuckoo/concurrent/isa_concurrent_filter.hpp — a concurrent filter whose lookups are compiled for
// a vector ISA level, as detail::IsaFilter (isa_filter.hpp) is for the single-thread filters.
//
// IsaConcurrentFilter<Inner> is Inner (a BasicConcurrentFilter over an AtomicPackedTable whose
// kIsa is kAvx2 or kAvx512) with its membership lookups redeclared under the level's target
// attribute and flattened: the key's hash, the optimistic read and the table's compare become one
// function compiled for the level, as in a -march=native build. ConcurrentFilter
// (concurrent_filter.hpp) holds these for the whole-word shapes (b = 4 with f = 8, 12, 16) and
// picks the best level the CPU has (active_isa()), so builds without -march=native (distribution
// packages, the Python module) get the vector compare too; b = 4 with a run-time f is held at
// AVX-512 for its batches (it compares with SWAR at every level). Writers, the retry paths and
// everything else are Inner's: the table's bytes, and every answer, are the portable filter's
// (tests/concurrent/test_concurrent_isa.cpp).
//
// Both levels compare the two buckets with the same AVX2 code (an AVX-512 compare of them measured
// no faster; README, "Concurrency"). What the AVX-512 level adds is the batch lookups' stage of
// eight integer keys at once (detail/vector_probes.hpp), which needs AVX-512 DQ.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "cuckoo/detail/isa.hpp"
#include "cuckoo/detail/isa_lookup_members.hpp"
#include "cuckoo/detail/single_key_dispatch.hpp"
#include "cuckoo/hash.hpp"

namespace cuckoo::detail {

template <class Inner, Isa = table_isa<typename Inner::table_type>()>
class IsaConcurrentFilter;

#if CUCKOO_HAS_X86_VECTOR_PATHS

template <class Inner>
class IsaConcurrentFilter<Inner, Isa::kAvx2> : public Inner {
 public:
  using Inner::Inner;
  CUCKOO_ISA_LOOKUP_MEMBERS(CUCKOO_TARGET_AVX2)
  using single_key_entries = Avx2LookupEntries;  // writers keep their slow paths out of line
};

template <class Inner>
class IsaConcurrentFilter<Inner, Isa::kAvx512> : public Inner {
 public:
  using Inner::Inner;
  CUCKOO_ISA_LOOKUP_MEMBERS(CUCKOO_TARGET_AVX512)
  using single_key_entries = Avx512LookupEntries;  // writers keep their slow paths out of line
};

#endif  // CUCKOO_HAS_X86_VECTOR_PATHS

}  // namespace cuckoo::detail
