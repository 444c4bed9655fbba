// detail::call_preserving_registers: the callee gets its arguments, the caller its result, and
// every value the caller held survives a callee that overwrites all the caller-saved registers
// (general-purpose ones by the call's own saving, vector ones by the compiler's, as declared).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>

#include "cuckoo/detail/preserving_call.hpp"

namespace {

using cuckoo::detail::PreservedCall;

std::uint64_t weighted_sum_callee(const void* base, std::uint64_t a1, std::uint64_t a2,
                                  std::uint64_t a3) noexcept {
  return *static_cast<const std::uint64_t*>(base) + 3 * a1 + 5 * a2 + 7 * a3;
}

// Writes a pattern into every caller-saved general-purpose register and every SSE register (and
// the AVX / AVX-512 ones where the build has them), as a callee compiled anywhere may.
[[gnu::noinline]] std::uint64_t clobbering_callee(const void* counter, std::uint64_t a1,
                                                  std::uint64_t a2, std::uint64_t a3) noexcept {
  // The counter is the callee's only write, atomic, as the contract asks.
  static_cast<std::atomic<std::uint64_t>*>(const_cast<void*>(counter))
      ->fetch_add(1, std::memory_order_relaxed);
#if defined(__x86_64__)
  asm volatile(
      "mov $0x5a5a5a5a5a5a5a5a, %%rax\n\tmov %%rax, %%rcx\n\tmov %%rax, %%rdx\n\t"
      "mov %%rax, %%rsi\n\tmov %%rax, %%rdi\n\tmov %%rax, %%r8\n\tmov %%rax, %%r9\n\t"
      "mov %%rax, %%r10\n\tmov %%rax, %%r11\n\t"
      "pcmpeqd %%xmm0, %%xmm0\n\tpcmpeqd %%xmm1, %%xmm1\n\tpcmpeqd %%xmm2, %%xmm2\n\t"
      "pcmpeqd %%xmm3, %%xmm3\n\tpcmpeqd %%xmm4, %%xmm4\n\tpcmpeqd %%xmm5, %%xmm5\n\t"
      "pcmpeqd %%xmm6, %%xmm6\n\tpcmpeqd %%xmm7, %%xmm7\n\tpcmpeqd %%xmm8, %%xmm8\n\t"
      "pcmpeqd %%xmm9, %%xmm9\n\tpcmpeqd %%xmm10, %%xmm10\n\tpcmpeqd %%xmm11, %%xmm11\n\t"
      "pcmpeqd %%xmm12, %%xmm12\n\tpcmpeqd %%xmm13, %%xmm13\n\tpcmpeqd %%xmm14, %%xmm14\n\t"
      "pcmpeqd %%xmm15, %%xmm15\n\t"
#if defined(__AVX2__)
      "vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n\tvpcmpeqd %%ymm7, %%ymm7, %%ymm7\n\t"
      "vpcmpeqd %%ymm15, %%ymm15, %%ymm15\n\t"
#endif
#if defined(__AVX512F__)
      "vpternlogd $0xff, %%zmm16, %%zmm16, %%zmm16\n\tvpternlogd $0xff, %%zmm31, %%zmm31, "
      "%%zmm31\n\t"
      "kxnorw %%k0, %%k0, %%k1\n\tkxnorw %%k0, %%k0, %%k7\n\t"
#endif
      :
      :
      : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0", "xmm1", "xmm2", "xmm3",
        "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
        "xmm15",
#if defined(__AVX512F__)
        "xmm16", "xmm31", "k1", "k7",
#endif
        "cc");
#endif
  return a1 ^ a2 ^ a3;
}

// Many values live across each call, more than the callee-saved registers hold, so the
// compiler (told that nothing but the flags changes) keeps some in caller-saved ones.
struct PreservedCallValues {
  std::uint64_t g[12];
  double d[12];
};

[[gnu::noinline]] PreservedCallValues run_preserving_rounds(unsigned rounds, bool call,
                                                            std::uint64_t& results,
                                                            std::atomic<std::uint64_t>& counter) {
  PreservedCallValues v{};
  for (unsigned k = 0; k < 12; ++k) {
    v.g[k] = 0x9e3779b97f4a7c15ULL * (k + 1);
    v.d[k] = 1.0 + k;
  }
  for (unsigned i = 0; i < rounds; ++i) {
    for (unsigned k = 0; k < 12; ++k) {
      v.g[k] = v.g[k] * 6364136223846793005ULL + i + k;
      v.d[k] = v.d[k] * 0.5 + static_cast<double>(i & 7);
    }
    if (call) {
      PreservedCall c{&clobbering_callee, &counter, v.g[0], v.g[5], i, 0};
      cuckoo::detail::call_preserving_registers<cuckoo::detail::kBuildHasAvx512>(c, counter);
      results += c.result;
    }
  }
  return v;
}

std::uintptr_t preserving_frame_alignment_seen = 1;

[[gnu::noinline]] std::uint64_t frame_recording_callee(const void*, std::uint64_t, std::uint64_t,
                                                       std::uint64_t) noexcept {
  // At entry the System V stack pointer is 8 below a 16-byte boundary; the frame pointer, after
  // the callee pushes the old one, sits on the boundary.
  preserving_frame_alignment_seen =
      reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) % 16;
  return 1;
}

}  // namespace

TEST(PreservingCall, PassesTheArgumentsAndReturnsTheResult) {
  const std::uint64_t base = 1000;
  PreservedCall call{&weighted_sum_callee, &base, 1, 2, 3, 0};
  cuckoo::detail::call_preserving_registers<cuckoo::detail::kBuildHasAvx512>(call, base);
  EXPECT_EQ(call.result, 1000u + 3 * 1 + 5 * 2 + 7 * 3);
}

TEST(PreservingCall, KeepsEveryRegisterTheCallerHolds) {
  std::uint64_t results = 0, unused_results = 0;
  std::atomic<std::uint64_t> counter{0}, unused_counter{0};
  const PreservedCallValues with = run_preserving_rounds(1000, true, results, counter);
  const PreservedCallValues without =
      run_preserving_rounds(1000, false, unused_results, unused_counter);
  EXPECT_EQ(counter.load(), 1000u);
  for (unsigned k = 0; k < 12; ++k) {
    EXPECT_EQ(with.g[k], without.g[k]) << "integer value " << k;
    EXPECT_EQ(with.d[k], without.d[k]) << "floating-point value " << k;
  }
  // The callee's results, recomputed: each is g[0] ^ g[5] ^ i after round i's update.
  std::uint64_t expected = 0, unused = 0;
  std::atomic<std::uint64_t> unused2{0};
  for (unsigned i = 0; i < 1000; ++i) {
    const PreservedCallValues at = run_preserving_rounds(i + 1, false, unused, unused2);
    expected += at.g[0] ^ at.g[5] ^ i;
  }
  EXPECT_EQ(results, expected);
}

TEST(PreservingCall, CalleeGetsAnAlignedStack) {
  PreservedCall call{&frame_recording_callee, nullptr, 0, 0, 0, 0};
  cuckoo::detail::call_preserving_registers<cuckoo::detail::kBuildHasAvx512>(call, call);
  EXPECT_EQ(call.result, 1u);
  EXPECT_EQ(preserving_frame_alignment_seen, 0u);
}
