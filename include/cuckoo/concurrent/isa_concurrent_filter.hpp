// cuckoo/concurrent/isa_concurrent_filter.hpp — a concurrent filter whose lookups are compiled for
// a vector ISA level, as detail::IsaFilter (isa_filter.hpp) is for the single-thread filters.
//
// IsaConcurrentFilter<Inner> is Inner (a BasicConcurrentFilter over an AtomicPackedTable whose
// kIsa is kAvx2) with its membership lookups redeclared under the level's target attribute and
// flattened: the key's hash, the optimistic read and the table's AVX2 compare become one function
// compiled for AVX2, as in a -march=native build. ConcurrentFilter (concurrent_filter.hpp) holds
// these for the whole-word shapes (b = 4 with f = 8, 12, 16) and picks one when the CPU has AVX2
// (active_isa()), so builds without -march=native (distribution packages, the Python module) get
// the vector compare too. Writers, the retry paths and everything else are Inner's: the table's
// bytes, and every answer, are the portable filter's (tests/concurrent/test_concurrent_isa.cpp).
//
// Only AVX2: an AVX-512 compare of the same two buckets measured no faster (README,
// "Concurrency").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "cuckoo/detail/isa.hpp"
#include "cuckoo/detail/isa_lookup_members.hpp"
#include "cuckoo/hash.hpp"

namespace cuckoo::detail {

#if CUCKOO_HAS_X86_VECTOR_PATHS

template <class Inner>
class IsaConcurrentFilter : public Inner {
  static_assert(table_isa<typename Inner::table_type>() == Isa::kAvx2,
                "IsaConcurrentFilter wraps filters over AVX2-level tables");

 public:
  using Inner::Inner;
  CUCKOO_ISA_LOOKUP_MEMBERS(CUCKOO_TARGET_AVX2)
};

#endif  // CUCKOO_HAS_X86_VECTOR_PATHS

}  // namespace cuckoo::detail
