// bench/dependent_work_bench.cpp — what an instruction that waits on a lookup's cache line costs
// a single-key loop (issue 17's blocked filter).
//
// A loop of independent single-key lookups is fast only while the core keeps several of their
// random reads in flight, and it can only start the next key's read while the instructions of the
// keys before it fit in its window. Instructions that depend on a read wait in the scheduler until
// the line arrives, so each one after the read takes room from later keys. This program measures
// that directly: one random 8-byte read per key from a buffer of --mb megabytes (default 192, the
// filters' benchmark size), then N instructions that depend on it, either as one serial chain
// (rotate after rotate) or as N independent rotates folded by XOR (2N instructions). Keys are
// precomputed hashes, so nothing else is in the loop. Best of --reps; ns per key.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cuckoo/detail/aligned_buffer.hpp"
#include "cuckoo/detail/rng.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Buffer {
  const std::byte* data;
  std::uint64_t lines;
};

/// x rotated by K, as one instruction the compiler cannot merge with its neighbours (x86-64; other
/// targets get std::rotr, which the compiler may fold, so their figures undercount).
template <int K>
[[gnu::always_inline]] inline std::uint64_t rotate(std::uint64_t x) {
#if defined(__x86_64__) && defined(__BMI2__)
  std::uint64_t y;
  asm("rorx %2, %1, %0" : "=r"(y) : "r"(x), "i"(K));
  return y;
#else
  return std::rotr(x, K);
#endif
}

std::uint64_t read_line(const Buffer& b, std::uint64_t key) {
  std::uint64_t x;
  std::memcpy(&x, b.data + (((key >> 32) * b.lines) >> 32) * 64, sizeof x);
  return x;
}

template <int N>
[[gnu::noinline]] std::uint64_t serial(const Buffer& b, const std::vector<std::uint64_t>& keys) {
  std::uint64_t sum = 0;
  for (const auto key : keys) {
    std::uint64_t x = read_line(b, key);
#pragma GCC unroll 64
    for (int i = 0; i < N; ++i) x = rotate<7>(x);
    sum += x;
  }
  return sum;
}

template <int N>
[[gnu::noinline]] std::uint64_t parallel(const Buffer& b, const std::vector<std::uint64_t>& keys) {
  std::uint64_t sum = 0;
  for (const auto key : keys) {
    const std::uint64_t x = read_line(b, key);
    std::uint64_t acc = 0;
    [&]<int... I>(std::integer_sequence<int, I...>) {
      ((acc ^= rotate<I + 1>(x)), ...);
    }
    (std::make_integer_sequence<int, N>{});
    sum += acc;
  }
  return sum;
}

template <class Run>
double best_ns(int reps, std::size_t n, Run&& run) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    volatile std::uint64_t sink = run();
    (void)sink;
    best = std::min(best, std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
  }
  return best / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  double mb = 192;
  int reps = 3;
  std::size_t queries = 4'000'000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--mb") mb = std::stod(argv[i + 1]);
    if (a == "--reps") reps = std::stoi(argv[i + 1]);
    if (a == "--queries") queries = std::stoull(argv[i + 1]);
  }
  const auto bytes = static_cast<std::size_t>(mb * 1024 * 1024);
  cuckoo::detail::AlignedBuffer buffer(bytes);
  auto* words = reinterpret_cast<std::uint64_t*>(buffer.data());
  cuckoo::detail::SplitMix64 rng(1);
  for (std::size_t i = 0; i < bytes / 8; ++i) words[i] = rng();
  std::vector<std::uint64_t> keys(queries);
  for (auto& k : keys) k = rng();
  const Buffer b{buffer.data(), bytes / 64};
  const auto s = [&](auto run) { return best_ns(reps, keys.size(), [&] { return run(b, keys); }); };
  std::printf("dependent_work_bench: %.0f MiB, %zu keys, best of %d, ns per key\n", mb, keys.size(),
              reps);
  std::printf("serial chain of N:   0: %.1f  5: %.1f  10: %.1f  20: %.1f  30: %.1f  40: %.1f\n",
              s(serial<0>), s(serial<5>), s(serial<10>), s(serial<20>), s(serial<30>),
              s(serial<40>));
  std::printf("N independent (2N):  5: %.1f  10: %.1f  20: %.1f  40: %.1f\n", s(parallel<5>),
              s(parallel<10>), s(parallel<20>), s(parallel<40>));
  return 0;
}
