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
// How. call_preserving_registers runs the call inside one assembly statement that declares no
// clobber but the flags: it steps over the caller's red zone, saves every caller-saved
// general-purpose register and (by XSAVE) the x87, SSE, AVX and AVX-512 state, aligns the stack,
// calls, and restores all of it. The callee's arguments and result travel through a struct in
// the caller's frame, so no argument register is pinned. The statement reads `object` (the
// caller's object as a memory input, so stores to it are made before the call) and does not
// declare other memory: a callee that writes only through atomic operations on memory the caller
// never reads with plain loads (as the locked read does: it takes and releases stripe locks)
// needs nothing more, and the caller keeps its loop's invariants in registers.
//
// Where. x86-64 with the System V calling convention (Linux, the BSDs, macOS) and GCC or clang;
// kPreservingCallAvailable says so, and callers take an ordinary call elsewhere. The XSAVE it
// uses exists on every CPU with AVX, and the callers here use it only on paths chosen for AVX2.
// The saved area is the standard (uncompacted) form of components 0, 1, 2, 5, 6 and 7: 2,688
// bytes. About 3 KiB of stack, and two XSAVE-class instructions (a few hundred cycles): for a
// path taken only after 63 failed optimistic reads.
#pragma once

#include <cstdint>

namespace cuckoo::detail {

#if defined(__x86_64__) && !defined(_WIN32) && (defined(__GNUC__) || defined(__clang__))
inline constexpr bool kPreservingCallAvailable = true;
#else
inline constexpr bool kPreservingCallAvailable = false;
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

/// call.function(call.a0, call.a1, call.a2, call.a3), its result stored in call.result, with
/// every register but the flags as it was; `object` is what the callee reads of the caller's.
template <class Object>
[[gnu::always_inline]] inline void call_preserving_registers(PreservedCall& call,
                                                             const Object& object) noexcept {
#if defined(__x86_64__) && !defined(_WIN32) && (defined(__GNUC__) || defined(__clang__))
  PreservedCall* const at = &call;
  asm volatile(
      // The caller may keep data in the 128 bytes below its stack pointer (System V red zone).
      "lea -128(%%rsp), %%rsp\n\t"
      // %[at] is read before %rbp changes: it may be %rbp.
      "push %%rbx\n\t"
      "mov %[at], %%rbx\n\t"
      "push %%rbp\n\t"
      "mov %%rsp, %%rbp\n\t"
      "push %%rax\n\tpush %%rdi\n\tpush %%rsi\n\tpush %%rdx\n\tpush %%rcx\n\t"
      "push %%r8\n\tpush %%r9\n\tpush %%r10\n\tpush %%r11\n\t"
      "sub $2688, %%rsp\n\t"
      "and $-64, %%rsp\n\t"
      // XSAVE writes only the requested bits of the header's XSTATE_BV, and XRSTOR faults on
      // any other bit set there or on a nonzero byte in the rest of the header: zero it all.
      "xor %%edx, %%edx\n\t"
      "mov %%rdx, 512(%%rsp)\n\t"
      "mov %%rdx, 520(%%rsp)\n\tmov %%rdx, 528(%%rsp)\n\tmov %%rdx, 536(%%rsp)\n\t"
      "mov %%rdx, 544(%%rsp)\n\tmov %%rdx, 552(%%rsp)\n\tmov %%rdx, 560(%%rsp)\n\t"
      "mov %%rdx, 568(%%rsp)\n\t"
      "mov $0xe7, %%eax\n\t"
      "xsave (%%rsp)\n\t"
      "mov 8(%%rbx), %%rdi\n\tmov 16(%%rbx), %%rsi\n\tmov 24(%%rbx), %%rdx\n\t"
      "mov 32(%%rbx), %%rcx\n\t"
      "call *(%%rbx)\n\t"
      "mov %%rax, 40(%%rbx)\n\t"
      "mov $0xe7, %%eax\n\t"
      "xor %%edx, %%edx\n\t"
      "xrstor (%%rsp)\n\t"
      "lea -72(%%rbp), %%rsp\n\t"
      "pop %%r11\n\tpop %%r10\n\tpop %%r9\n\tpop %%r8\n\t"
      "pop %%rcx\n\tpop %%rdx\n\tpop %%rsi\n\tpop %%rdi\n\tpop %%rax\n\t"
      "pop %%rbp\n\t"
      "pop %%rbx\n\t"
      "lea 128(%%rsp), %%rsp"
      : "+m"(call)
      : [at] "r"(at), "m"(object)
      : "cc");
#else
  (void)object;
  call.result = call.function(call.a0, call.a1, call.a2, call.a3);
#endif
}

}  // namespace cuckoo::detail
