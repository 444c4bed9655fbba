// Runs a test body once per instruction-set level this CPU can run (detail/isa.hpp), for the
// tables whose lookups have a form per level. The vector levels exist on x86-64 only.
#pragma once

#include <type_traits>

#include "cuckoo/detail/isa.hpp"

namespace cuckoo::test {

/// Calls f(std::integral_constant<Isa, L>{}) for every level this CPU can run, portable first.
template <class F>
void for_each_runnable_level(F&& f) {
  f(std::integral_constant<Isa, Isa::kPortable>{});
#if CUCKOO_HAS_X86_VECTOR_PATHS
  const Isa cpu = cuckoo::detail::detect_cpu_isa();
  if (cpu >= Isa::kAvx2) f(std::integral_constant<Isa, Isa::kAvx2>{});
  if (cpu >= Isa::kAvx512) f(std::integral_constant<Isa, Isa::kAvx512>{});
#endif
}

}  // namespace cuckoo::test
