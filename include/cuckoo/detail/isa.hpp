// cuckoo/detail/isa.hpp — which vector instructions a table's compare may use, chosen at run time.
//
// A table's bucket compare has a portable form (64-bit word tricks, any CPU) and vector forms
// (AVX2; AVX-512 where present). A build with -march=native compiles the vector forms in directly.
// A build without it (a distribution package, the Python and Redis modules) used to get only the
// portable form and lost about a third of its single-key speed on a CPU that has AVX2. So the
// level is a template parameter of the table (Isa), every level this compiler can emit is compiled
// into every build, and the facade (cuckoo.hpp) picks the level of the CPU once, when it builds a
// filter: the choice lives in which alternative of its variant holds the filter, so a call pays no
// test for it.
//
// How code for a level the build was not compiled for is emitted: the vector functions carry a
// GCC/Clang target attribute (CUCKOO_TARGET_AVX2 / CUCKOO_TARGET_AVX512), and so do the entry
// points of the filter wrapper that calls them (detail::IsaFilter, cuckoo.hpp), so the whole path
// from the key's hash to the compare is compiled, and inlined, for that level.
//
// CUCKOO_ISA=portable|avx2|avx512 in the environment caps the level (read once per process), to
// compare or test the levels on one machine.
#pragma once

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace cuckoo {

/// Instruction-set level of a table's bucket compare, lowest first.
enum class Isa : unsigned char {
  kPortable = 0,  ///< 64-bit word tricks only; every CPU.
  kAvx2 = 1,      ///< AVX2 with BMI1, BMI2 and POPCNT.
  kAvx512 = 2,    ///< kAvx2 plus AVX-512 F, VL, BW, DQ and CD.
};

// CUCKOO_NO_X86_VECTOR_PATHS builds the library as for a CPU without them (ARM, say), on x86:
// the test suite compiles some tests so (cuckoo_no_vector_paths_tests), since no other build would
// see a vector form named outside its #if.
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(CUCKOO_NO_X86_VECTOR_PATHS)
#define CUCKOO_HAS_X86_VECTOR_PATHS 1
// The ISA extensions of each level, as a target attribute (not "arch=": GCC will not inline a
// function compiled for the default arch into one with another arch, and the lookup path must
// inline to be fast). detect_cpu_isa checks exactly these extensions.
#define CUCKOO_TARGET_AVX2 gnu::target("avx2,bmi,bmi2,popcnt")
#define CUCKOO_TARGET_AVX512 \
  gnu::target("avx2,bmi,bmi2,popcnt,avx512f,avx512vl,avx512bw,avx512dq,avx512cd")
#else
#define CUCKOO_HAS_X86_VECTOR_PATHS 0
#endif

// The lookup's compare is called once per key inside the batch loop; GCC otherwise keeps the
// vector forms out of line (a call per key, measured as a visible share of a batched lookup).
// Every function whose only effect is a prefetch is CUCKOO_HOT too: GCC 12's mod/ref analysis
// takes such a function for one without effects and deletes its calls when it is not inlined
// early (it left SemiSortedTable<0>'s batches and a growable doubling without their prefetches).
#ifndef CUCKOO_HOT
#define CUCKOO_HOT [[gnu::always_inline]] inline
#endif
// A lambda forced inline into its caller: a batch loop's per-key step, or a lookup's read inside
// a validation loop (out of line it cost a call and a register save per key).
#ifndef CUCKOO_LAMBDA_HOT
#define CUCKOO_LAMBDA_HOT __attribute__((always_inline))
#endif

// The vector compares. Where the translation unit's flags already enable the level they are forced
// inline like the rest of the hot path; otherwise they carry the level's target attribute and are
// inlined into callers compiled for it (detail::IsaFilter's entry points), and called out of line
// from any other caller (correct, slower).
#if defined(__AVX2__)
#define CUCKOO_AVX2_FN CUCKOO_HOT
#elif CUCKOO_HAS_X86_VECTOR_PATHS
#define CUCKOO_AVX2_FN [[CUCKOO_TARGET_AVX2]] inline
#endif
#if defined(__AVX512F__) && defined(__AVX2__)
#define CUCKOO_AVX512_FN CUCKOO_HOT
#elif CUCKOO_HAS_X86_VECTOR_PATHS
#define CUCKOO_AVX512_FN [[CUCKOO_TARGET_AVX512]] inline
#endif

/// The highest level the translation unit's own flags enable (-march=native gives kAvx2 or
/// higher); the default of PackedTable's Isa parameter, so code that names PackedTable<b, f>
/// itself keeps the compare its flags select.
inline constexpr Isa kCompiledIsa =
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512BW__) && defined(__AVX2__)
    Isa::kAvx512;
#elif defined(__AVX2__)
    Isa::kAvx2;
#else
    Isa::kPortable;
#endif

/// "portable", "avx2" or "avx512".
constexpr std::string_view isa_name(Isa isa) noexcept {
  switch (isa) {
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    default:
      return "portable";
  }
}

namespace detail {
/// The ISA level of a table's compares (tables without vector forms are portable).
template <class Table>
constexpr Isa table_isa() noexcept {
  if constexpr (requires { Table::kIsa; }) {
    return Table::kIsa;
  } else {
    return Isa::kPortable;
  }
}

/// std::popcount at level L. Every vector level has POPCNT (the target attributes name it), but a
/// function on a level's path that the compiler keeps out of line (as it may any function not
/// forced inline) is compiled for the build's own flags, and there, without -mpopcnt, std::popcount
/// is a call into libgcc (__popcountdi2, a table walk). At the vector levels the instruction is
/// written out instead, so that it is one instruction wherever the code lands; in builds whose
/// flags have POPCNT, and at the portable level, it is std::popcount.
template <Isa L>
[[gnu::always_inline]] inline unsigned popcount_at(std::uint64_t x) noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS && !defined(__POPCNT__)
  if constexpr (L != Isa::kPortable) {
    std::uint64_t n;
    asm("popcnt {%1, %0|%0, %1}" : "=r"(n) : "rm"(x) : "cc");
    return static_cast<unsigned>(n);
  }
#endif
  return static_cast<unsigned>(std::popcount(x));
}

/// How many lanes two buckets' SWAR flag words flag together: flags1 and flags2 each hold at most
/// the top bit of each of `lanes` lanes of `bits` bits (`ones`: the lanes' lowest bits), as the
/// exact zero-lane test leaves them. Tops sit at bit bits - 1 of their lane, so flags2 shifted
/// down by one shares a word with flags1 without a collision (bits ≥ 2), and one popcount counts
/// both. At the portable level of a build without POPCNT, std::popcount is a call into libgcc,
/// which cost a single-key count about a sixth of its time (ConcurrentFilter, f = 13: 1.19-1.21x
/// its contains, 0.99-1.08x built with -mpopcnt); there the flags are summed instead by one
/// multiplication that adds every lane into the top one (at most 2·8 flags, which a lane of
/// 5 bits or more holds without a carry between lanes).
template <Isa L>
[[gnu::always_inline]] inline unsigned pair_flag_count(std::uint64_t flags1, std::uint64_t flags2,
                                                       [[maybe_unused]] std::uint64_t ones,
                                                       [[maybe_unused]] unsigned bits,
                                                       [[maybe_unused]] unsigned lanes) noexcept {
#ifndef __POPCNT__
  if constexpr (L == Isa::kPortable) {
    if (bits >= 5) [[likely]] {
      const std::uint64_t sums = ((flags1 >> (bits - 1)) + (flags2 >> (bits - 1))) * ones;
      return static_cast<unsigned>(sums >> ((lanes - 1) * bits)) & 31u;
    }
  }
#endif
  return popcount_at<L>(flags1 | flags2 >> 1);
}

inline Isa detect_cpu_isa() noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                    __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd");
  Isa isa = avx512 ? Isa::kAvx512 : avx2 ? Isa::kAvx2 : Isa::kPortable;
#else
  Isa isa = Isa::kPortable;
#endif
  if (const char* cap = std::getenv("CUCKOO_ISA")) {
    const std::string_view want(cap);
    Isa limit = isa;
    if (want == "portable") limit = Isa::kPortable;
    if (want == "avx2") limit = Isa::kAvx2;
    if (want == "avx512") limit = Isa::kAvx512;
    if (limit < isa) isa = limit;  // a cap, never a way to ask for more than the CPU has
  }
  return isa;
}
}  // namespace detail

/// The level the facade's filters use on this CPU: the highest the CPU supports, capped by
/// CUCKOO_ISA. Detected on first use, then fixed for the process.
inline Isa active_isa() noexcept {
  static const Isa isa = detail::detect_cpu_isa();
  return isa;
}

}  // namespace cuckoo
