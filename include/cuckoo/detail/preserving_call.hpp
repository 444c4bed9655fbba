// cuckoo/detail/preserving_call.hpp — a call from a cold path that the caller's register
// allocation does not see.
//
// Why. ConcurrentFilter's single-key lookup is inlined into the caller's loop, and it has a rare
// way out: when a writer disturbed the read, it ends in a locked read, an out-of-line function.
// An ordinary call anywhere in the loop body, however rare, costs the whole loop: the call may
// clobber every caller-saved register and all memory, so GCC keeps only five values in registers
// across it and reloads the filter's members (seed, addressing, table address) from memory for
// every key. In a single-key loop on a table far larger than the caches, what a key costs is how
// many instructions it holds in flight while it waits for its two lines, and those reloads and
// spills were most of the lookup's excess over Filter's (README, Concurrency, "A call the loop
// does not see").
//
// How. call_preserving_registers runs the call inside one assembly statement: it steps over the
// caller's red zone, saves every caller-saved general-purpose register, aligns the stack, calls,
// and restores them. The vector registers, all caller-saved, are declared clobbered instead: the
// compiler then reloads its vector constants on this path alone (saving the whole vector state
// by XSAVE instead cost 160 ns a call here, which a lookup disturbed by a writer would pay). The
// callee's arguments and result travel through a struct in the caller's frame, so no argument
// register is pinned. The statement reads `object` (the caller's object as a memory input, so
// stores to it are made before the call) and declares no other memory: a callee that writes
// only through atomic operations on memory the caller never reads with plain loads (as the
// retried read does: it takes and releases stripe locks) needs nothing more, and the caller
// keeps its loop's invariants in registers.
//
// Where. x86-64 with the System V calling convention (Linux, the BSDs, macOS) and GCC or clang;
// kPreservingCallAvailable says so, and callers take an ordinary call elsewhere.
#pragma once

#include <cstdint>

#include "cuckoo/detail/isa.hpp"

namespace cuckoo::detail {

#if defined(__x86_64__) && !defined(_WIN32) && (defined(__GNUC__) || defined(__clang__))
inline constexpr bool kPreservingCallAvailable = true;
#else
inline constexpr bool kPreservingCallAvailable = false;
#endif
/// Whether the whole build may use AVX-512's registers (a caller compiled so may hold values in
/// xmm16-31 and k0-7, whatever the callee's table level).
#ifdef __AVX512F__
inline constexpr bool kBuildHasAvx512 = true;
#else
inline constexpr bool kBuildHasAvx512 = false;
#endif

/// The call's arguments and result, in memory that the assembly reads and writes. The field
/// offsets are the assembly's: keep them.
struct PreservedCall {
  std::uint64_t (*function)(const void*, std::uint64_t, std::uint64_t, std::uint64_t) noexcept;
  const void* a0;
  std::uint64_t a1, a2, a3;
  std::uint64_t result;
};
static_assert(sizeof(void*) != 8 ||
                  (sizeof(PreservedCall) == 48 && __builtin_offsetof(PreservedCall, a0) == 8 &&
                   __builtin_offsetof(PreservedCall, result) == 40),
              "the assembly of call_preserving_registers reads these offsets");

#if defined(__x86_64__) && !defined(_WIN32) && (defined(__GNUC__) || defined(__clang__))
// The statement's text: over the red zone, the caller-saved general-purpose registers pushed,
// the stack aligned, the call, and all of it undone. %[at] is read before %rbp changes (it may
// be %rbp).
#define CUCKOO_PRESERVING_CALL_ASM                                          \
  "lea -128(%%rsp), %%rsp\n\t"                                              \
  "push %%rbx\n\t"                                                          \
  "mov %[at], %%rbx\n\t"                                                    \
  "push %%rbp\n\t"                                                          \
  "mov %%rsp, %%rbp\n\t"                                                    \
  "push %%rax\n\tpush %%rdi\n\tpush %%rsi\n\tpush %%rdx\n\t"                \
  "push %%rcx\n\tpush %%r8\n\tpush %%r9\n\tpush %%r10\n\tpush %%r11\n\t"    \
  "and $-16, %%rsp\n\t"                                                     \
  "mov 8(%%rbx), %%rdi\n\tmov 16(%%rbx), %%rsi\n\tmov 24(%%rbx), %%rdx\n\t" \
  "mov 32(%%rbx), %%rcx\n\t"                                                \
  "call *(%%rbx)\n\t"                                                       \
  "mov %%rax, 40(%%rbx)\n\t"                                                \
  "lea -72(%%rbp), %%rsp\n\t"                                               \
  "pop %%r11\n\tpop %%r10\n\tpop %%r9\n\tpop %%r8\n\tpop %%rcx\n\t"         \
  "pop %%rdx\n\tpop %%rsi\n\tpop %%rdi\n\tpop %%rax\n\t"                    \
  "pop %%rbp\n\t"                                                           \
  "pop %%rbx\n\t"                                                           \
  "lea 128(%%rsp), %%rsp"
#define CUCKOO_PRESERVING_CALL_SSE_CLOBBERS                                                \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
      "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"
#endif

#if defined(__x86_64__) && !defined(_WIN32) && (defined(__GNUC__) || defined(__clang__)) && \
    CUCKOO_HAS_X86_VECTOR_PATHS
/// call_preserving_registers for a caller that may hold values in AVX-512's registers, which
/// only code compiled for AVX-512 may name: inlined into such callers (isa.hpp).
template <class Object>
CUCKOO_AVX512_FN void call_preserving_avx512_registers(PreservedCall& call,
                                                       const Object& object) noexcept {
  PreservedCall* const at = &call;
  asm volatile(CUCKOO_PRESERVING_CALL_ASM
               : "+m"(call)
               : [at] "r"(at), "m"(object)
               : "cc", CUCKOO_PRESERVING_CALL_SSE_CLOBBERS, "xmm16", "xmm17", "xmm18", "xmm19",
                 "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28",
                 "xmm29", "xmm30", "xmm31", "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7");
}
#endif

/// call.function(call.a0, call.a1, call.a2, call.a3), its result stored in call.result, with
/// every general-purpose register as it was; the vector registers (all caller-saved in this
/// convention) are declared clobbered, so the compiler keeps across the call only what it needs
/// and reloads that on this path alone. kAvx512Registers: the caller may be compiled for
/// AVX-512, whose registers xmm16-31 and k0-7 the callee may also change. `object` is what the
/// callee reads of the caller's.
template <bool kAvx512Registers, class Object>
[[gnu::always_inline]] inline void call_preserving_registers(PreservedCall& call,
                                                             const Object& object) noexcept {
#if defined(__x86_64__) && !defined(_WIN32) && (defined(__GNUC__) || defined(__clang__))
  if constexpr (kAvx512Registers) {
#if CUCKOO_HAS_X86_VECTOR_PATHS
    call_preserving_avx512_registers(call, object);
#else
    call.result = call.function(call.a0, call.a1, call.a2, call.a3);  // an ordinary call
#endif
  } else {
    PreservedCall* const at = &call;
    asm volatile(CUCKOO_PRESERVING_CALL_ASM
                 : "+m"(call)
                 : [at] "r"(at), "m"(object)
                 : "cc", CUCKOO_PRESERVING_CALL_SSE_CLOBBERS);
  }
#else
  (void)object;
  call.result = call.function(call.a0, call.a1, call.a2, call.a3);
#endif
}

}  // namespace cuckoo::detail

// The helpers above are this header's alone.
#undef CUCKOO_PRESERVING_CALL_ASM
#undef CUCKOO_PRESERVING_CALL_SSE_CLOBBERS
