// concurrent_bench — cuckoo::ConcurrentFilter against cuckoo::Filter, a memory floor, a Filter
// behind a std::shared_mutex and libcuckoo, all measured side by side in one run (issue 13).
//
// What it measures. Builds a filter of --mb megabytes (default 192, f = 12, b = 4) to --load
// (default 0.95), and times:
//   [1] one thread: the time to build a Filter and a ConcurrentFilter from empty to --load with
//       single-key inserts and with batch inserts (chunks of 64 Ki keys, as perf_bench); single-key
//       and batched contains of keys that are all in the filter (positive) and keys that are not
//       (negative); single-key and batched erase. Every figure is a ratio ConcurrentFilter /
//       Filter of times taken in this run.
//   [2] --threads threads (default 2) on one ConcurrentFilter, each thread its own share of the
//       keys; the aggregate ns per key is wall time / total keys: single-key lookups (throughput
//       with T threads / with 1 thread); batched lookups against a T-thread floor (T threads each
//       doing the batched floor over the same buffer) and beside Filter's own batched lookups on
//       T threads (read-only calls); builds from empty to --load with T threads
//       on disjoint shares of the keys, single-key and batched, against the one-thread builds of
//       [1]; a mixed load of 90% lookups and 10% writes (see below), 1 and T threads.
//   [3] the same mixed load and single-key lookups, 1 and T threads, on a cuckoo::Filter behind a
//       std::shared_mutex (shared_lock for lookups, unique_lock for writes: what a user writes
//       without ConcurrentFilter) and on libcuckoo's cuckoohash_map<std::uint64_t, bool> (the
//       reference concurrent cuckoo hash table; it stores whole keys, so its memory is printed;
//       its hash is its default, std::hash, the identity for integers in libstdc++, which the
//       random keys here make good enough and cheaper than the filters' XXH3).
// The run ends with a table of issue 13's targets: measured ratio, target, met or not.
//
// The floor (as perf_bench): two independent random 64-byte reads per key over a buffer of the
// filter's size, placed by the filter's hasher, batched through the same pipeline with the same
// prefetch depth as the filter's batched lookups; a ratio of 1.0 means "nothing but the two
// memory reads and the hash". Beside it in [2], the layout floor: the same loop making the
// filter's own reads, 8 bytes from the start of a random 6-byte bucket (f = 12, b = 4), whose
// lines are the floor's plus the second line of the 3 reads in 32 that straddle two, both lines
// prefetched; what the packed layout alone costs against line-aligned reads.
//
// The mixed load. The three structures start from the same keys: the Filter built in [1] with
// its keys above --mixed-load (default 0.92: between 90 and 95%, and under the 0.935 design load
// of sizing.hpp, so that no insert fails) of the slots erased, a ConcurrentFilter copied from
// it, and a libcuckoo map reserved for that many keys and filled with them (by T threads). Each
// thread then runs its own share of the operations: nine lookups (alternately a key in the set
// and a key not in it), then one write, the writes alternating between inserting a fresh key and
// erasing a key of the initial fill that no other thread erases; so the load stays where it is.
// Each repetition continues with new fresh keys and new victims, the same sequence on each
// structure. Throughput is total operations / wall time.
//
// Methodology. Keys come from a fixed-seed SplitMix64. Every timing is the best of --reps runs
// (default 3). Everything compared in a ratio is alternated, repetition by repetition, so that
// drift (this VM's memory has slow phases minutes long) falls on both sides: F and CF lookups;
// F and CF erases (each repetition on a fresh copy of the full table made just before it); builds,
// each after a clear() that touches the whole table (so page faults are never timed); the 1-thread
// and T-thread runs on one structure; and the T-thread batched lookups with their floor. Threads
// are std::thread, not pinned; they start together at a flag and the wall time runs from the flag
// to the last join. Huge pages: the AnonHugePages the process gained while each table was allocated
// (/proc/self/smaps_rollup) are printed.
//
// Beside each phase, how many CPUs other processes and the hypervisor took meanwhile is printed
// (/proc/stat less this process's own time): on this 2-core machine a neighbour's build halves
// the two-thread figures, so judge a run by that line.
//
// How to run (the whole default run takes about 7 minutes on the 2-core machine when it is quiet,
// every structure running the full --queries operations; build with CUCKOO_NATIVE=ON, as
// perf_bench's figures are):
//   cmake -S . -B build/cbench -DCMAKE_BUILD_TYPE=Release -DCUCKOO_NATIVE=ON
//         -DCUCKOO_BUILD_TESTS=OFF
//   cmake --build build/cbench --target cuckoo_concurrent_bench -j2
//   build/cbench/bench/cuckoo_concurrent_bench --quick    # 16 MiB, 10^6 queries: smoke test
//   build/cbench/bench/cuckoo_concurrent_bench            # 192 MiB, 95% full, 2 threads, best of 3
// Options: --mb 192 --load 0.95 --mixed-load 0.92 --queries 10000000 --reps 3 --threads 2 --quick
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

// libcuckoo 0.3.1 (Debian's libcuckoo-dev): namespace libcuckoo. A system header (/usr/include).
#include <libcuckoo/cuckoohash_map.hh>

#include "cuckoo/cuckoo.hpp"
#include "cuckoo/detail/aligned_buffer.hpp"
#include "cuckoo/detail/rng.hpp"
#include "support/timing.hpp"

namespace {

using cuckoo::bench::Clock;
using Keys = std::span<const std::uint64_t>;

constexpr unsigned kBits = 12;
constexpr unsigned kSlots = 4;
using PlainCore = cuckoo::BasicFilter<cuckoo::PackedTable<kSlots, kBits>>;
using ConcCore =
    cuckoo::BasicConcurrentFilter<cuckoo::concurrent::AtomicPackedTable<kSlots, kBits>>;
constexpr std::size_t kDepth = PlainCore::kPipelineDepth;
static_assert(ConcCore::kPipelineDepth == kDepth, "both filters batch through the same depth");
constexpr std::size_t kChunk = std::size_t{1} << 16;  // batch-insert chunk, as perf_bench

using LibcuckooMap = libcuckoo::cuckoohash_map<std::uint64_t, bool>;
// The bucket type the map allocates (public in bucket_container): SLOT_PER_BUCKET key-value pairs
// plus a partial-key byte and an occupied flag per slot.
using LibcuckooBucket =
    libcuckoo::bucket_container<std::uint64_t, bool,
                                std::allocator<std::pair<const std::uint64_t, bool>>, std::uint8_t,
                                LibcuckooMap::slot_per_bucket()>::bucket;
constexpr std::size_t kLibcuckooMaxLocks = std::size_t{1} << 16;  // its kMaxNumLocks
constexpr std::size_t kLibcuckooLockBytes = 64;                   // alignas(64) spinlock

struct Options {
  double mb = 192;
  double load = 0.95;
  double mixed_load = 0.92;
  std::size_t queries = 10'000'000;
  int reps = 3;
  unsigned threads = 2;
  bool quick = false;
};

using cuckoo::bench::best_of;
using cuckoo::bench::keys_from;
using cuckoo::bench::seconds_since;

double time_of(const std::function<void()>& fn) {
  const auto t0 = Clock::now();
  fn();
  return seconds_since(t0);
}

/// kB of AnonHugePages in the whole process (-1 if unreadable).
long total_huge_kb() {
  std::ifstream rollup("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(rollup, line)) {
    if (line.rfind("AnonHugePages:", 0) == 0) return std::strtol(line.c_str() + 14, nullptr, 10);
  }
  return -1;
}

/// CPU time of the whole machine and of this process, to tell how much other processes ran
/// beside a phase of the benchmark (the machine is shared: a busy neighbour halves a core).
struct CpuSample {
  Clock::time_point when;
  double busy = 0;   // seconds of user, nice, system, irq and softirq time over all CPUs
  double steal = 0;  // seconds stolen by the hypervisor
  double self = 0;   // seconds of CPU used by this process, all threads
};
CpuSample cpu_sample() {
  CpuSample s;
  s.when = Clock::now();
  std::ifstream stat("/proc/stat");
  std::string cpu;
  unsigned long long v[8] = {};
  stat >> cpu;
  for (auto& x : v) stat >> x;  // user nice system idle iowait irq softirq steal
  const auto hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  s.busy = static_cast<double>(v[0] + v[1] + v[2] + v[5] + v[6]) / hz;
  s.steal = static_cast<double>(v[7]) / hz;
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  s.self = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  return s;
}
/// Prints how many CPUs other processes (and the hypervisor) took, on average, since `from`.
void print_neighbours(const CpuSample& from, const char* phase) {
  const CpuSample now = cpu_sample();
  const double wall = std::chrono::duration<double>(now.when - from.when).count();
  const double others = std::max(0.0, (now.busy - from.busy) - (now.self - from.self));
  std::printf("  (%s: %.0f s; other processes used %.2f CPUs on average, steal %.2f CPUs)\n", phase,
              wall, others / wall, (now.steal - from.steal) / wall);
}

/// [begin, end) of share t of n items split among `threads`. Callers copy it into plain variables,
/// not a structured binding, which clang before 16 cannot capture in the lambdas that use it.
std::pair<std::size_t, std::size_t> share(unsigned t, unsigned threads, std::size_t n) {
  return {n * t / threads, n * (t + 1) / threads};
}

/// Runs body(t) on `threads` new threads that start together; returns the wall time in seconds
/// from the start flag to the last join.
double run_threads(unsigned threads, const std::function<void(unsigned)>& body) {
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1, std::memory_order_acq_rel);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      body(t);
    });
  }
  while (ready.load(std::memory_order_acquire) < threads) std::this_thread::yield();
  const auto t0 = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return seconds_since(t0);
}

/// Best of `reps` of body on 1 thread and on `threads` threads, taken alternately (seconds).
std::pair<double, double> best_1_and_t(int reps, unsigned threads,
                                       const std::function<void(unsigned, unsigned)>& body) {
  double one = 1e300, many = 1e300;
  for (int r = 0; r < reps; ++r) {
    one = std::min(one, run_threads(1, [&](unsigned t) { body(t, 1); }));
    many = std::min(many, run_threads(threads, [&](unsigned t) { body(t, threads); }));
  }
  return {one, many};
}

[[noreturn]] void wrong_core() {
  std::fprintf(stderr, "concurrent_bench: the filter is not the f = 12, b = 4 plain table\n");
  std::abort();
}

/// fn(core) on the compile-time filter inside (dispatched once, for a long loop).
/// True for the f = 12, b = 4 plain filter at any vector level, and for the facade's wrapper of it
/// (detail::IsaFilter, derived from the class it wraps): the facade holds the level the CPU runs,
/// which is PlainCore itself only in a -march=native build.
template <class Core>
constexpr bool is_plain_core() {
  if constexpr (requires { Core::table_type::kIsa; }) {
    return std::is_base_of_v<
        cuckoo::BasicFilter<cuckoo::PackedTable<kSlots, kBits, Core::table_type::kIsa>>, Core>;
  } else {
    return false;
  }
}

/// The same for the concurrent facade: the f = 12, b = 4 whole-word table at any level, bare or in
/// the facade's run-time wrapper (detail::IsaConcurrentFilter, derived from the class it wraps).
template <class Core>
constexpr bool is_concurrent_core() {
  if constexpr (requires { Core::table_type::kIsa; }) {
    return std::is_base_of_v<cuckoo::BasicConcurrentFilter<cuckoo::concurrent::AtomicPackedTable<
                                 kSlots, kBits, Core::table_type::kIsa>>,
                             Core>;
  } else {
    return false;
  }
}

template <class Fn>
decltype(auto) with_core(cuckoo::Filter& filter, Fn&& fn) {
  using R = std::invoke_result_t<Fn&, PlainCore&>;
  return filter.visit([&](auto& core) -> R {
    if constexpr (is_plain_core<std::remove_cvref_t<decltype(core)>>()) {
      return fn(core);
    } else {
      wrong_core();
    }
  });
}
template <class Fn>
decltype(auto) with_core(cuckoo::ConcurrentFilter& filter, Fn&& fn) {
  using R = std::invoke_result_t<Fn&, ConcCore&>;
  return filter.visit([&](auto& core) -> R {
    if constexpr (is_concurrent_core<std::remove_cvref_t<decltype(core)>>()) {
      return fn(core);
    } else {
      wrong_core();
    }
  });
}

// ---- The loops timed, the same code for both filters ----------------------------------------

template <class Core>
void lookup_single(const Core& core, Keys keys, bool* out) {
  for (std::size_t i = 0; i < keys.size(); ++i) out[i] = core.contains(keys[i]);
}
/// Single-key inserts in order, stopping at the first failure; returns how many went in.
template <class Core>
std::size_t build_single(Core& core, Keys keys) {
  std::size_t i = 0;
  while (i < keys.size() && core.insert(keys[i])) ++i;
  return i;
}
/// Batch inserts in chunks of kChunk keys, stopping at the first failure.
template <class Core>
std::size_t build_batch(Core& core, Keys keys) {
  std::size_t done = 0;
  while (done < keys.size()) {
    const std::size_t len = std::min(kChunk, keys.size() - done);
    const std::size_t r = core.insert(keys.subspan(done, len));
    done += r;
    if (r != len) break;
  }
  return done;
}

std::size_t count_true(const bool* out, std::size_t n) {
  return static_cast<std::size_t>(std::count(out, out + n, true));
}

/// Two random reads of 8 bytes per key over a buffer of the filter's size: at the start of a
/// random kStride-byte slot, each read placed by the filter's hasher.
///   kStride 64 (Floor): two random cache lines, as perf_bench's floor; the issue's.
///   kStride the bucket's size (LayoutFloor): the filter's own reads, 8 bytes from the start of a
///     6-byte bucket for f = 12, b = 4, so 3 reads in 32 straddle two lines and both lines are
///     prefetched (as PackedTable's prefetch_for_lookup does); what the packed layout costs
///     before any compare.
template <std::uint64_t kStride>
class StridedFloor {
 public:
  // (The 8 bytes past `bytes`: the last slot's read may reach beyond it when kStride < 8.)
  explicit StridedFloor(std::size_t bytes, std::uint64_t seed)
      : buffer_(bytes + sizeof(std::uint64_t)), slots_(bytes / kStride), hasher_(seed) {
    // Non-zero data, so that reads are real and pages are faulted in (and collapsed).
    auto* words = reinterpret_cast<std::uint64_t*>(buffer_.data());
    cuckoo::detail::SplitMix64 rng(seed);
    for (std::size_t i = 0; i < bytes / 8; ++i) words[i] = rng();
  }

  struct Lines {
    const std::byte* a;
    const std::byte* b;
  };
  Lines lines(std::uint64_t key) const {
    const std::uint64_t h = hasher_(key);
    const std::uint64_t sa = ((h >> 32) * slots_) >> 32;
    const std::uint64_t sb = ((h & 0xFFFF'FFFFu) * slots_) >> 32;
    return {buffer_.data() + sa * kStride, buffer_.data() + sb * kStride};
  }
  static bool probe(const Lines& l, std::uint64_t key) {
    std::uint64_t x, y;
    std::memcpy(&x, l.a, 8);
    std::memcpy(&y, l.b, 8);
    return (x ^ y) == key;  // a result that depends on both reads
  }
  /// The filters' lookup pipeline: hash, prefetch both reads' lines into L2 kDepth keys ahead,
  /// read.
  void batched(Keys keys, bool* out) const {
    Lines ring[kDepth];
    const std::size_t n = keys.size();
    const auto stage = [&](std::size_t i) {
      const Lines l = lines(keys[i]);
      prefetch(l.a);
      prefetch(l.b);
      ring[i & (kDepth - 1)] = l;
    };
    for (std::size_t i = 0; i < std::min(n, kDepth); ++i) stage(i);
    std::size_t i = 0;
    for (; i + kDepth < n; ++i) {
      const Lines l = ring[i & (kDepth - 1)];
      stage(i + kDepth);
      out[i] = probe(l, keys[i]);
    }
    for (; i < n; ++i) out[i] = probe(ring[i & (kDepth - 1)], keys[i]);
  }
  /// The same two reads per key without prefetch: what the out-of-order core overlaps itself.
  void single(Keys keys, bool* out) const {
    for (std::size_t i = 0; i < keys.size(); ++i) out[i] = probe(lines(keys[i]), keys[i]);
  }

 private:
  /// Every read starts at a multiple of kStride in a line-aligned buffer: with kStride a
  /// multiple of 8, no 8-byte read crosses a line.
  static constexpr bool kReadsMayStraddle = kStride % sizeof(std::uint64_t) != 0;
  static void prefetch(const std::byte* read) {
    __builtin_prefetch(read, 0, 2);
    if constexpr (kReadsMayStraddle) __builtin_prefetch(read + sizeof(std::uint64_t) - 1, 0, 2);
  }

  cuckoo::detail::AlignedBuffer buffer_;
  std::uint64_t slots_;
  cuckoo::Xxh3Hasher hasher_;
};
using Floor = StridedFloor<cuckoo::detail::kCacheLine>;
static_assert(kSlots * kBits % 8 == 0, "the layout floor's reads start on a bucket's byte");
using LayoutFloor = StridedFloor<kSlots * kBits / 8>;

// ---- The mixed load ----------------------------------------------------------------------------

struct alignas(64) Tally {
  std::size_t hits = 0;
  std::size_t inserts = 0;  // attempted
  std::size_t inserted = 0;
  std::size_t erases = 0;  // attempted
  std::size_t erased = 0;
};

/// Nine lookups, one write; writes alternate insert(fresh[j]) and erase(victims[j]).
template <class Lookup, class Insert, class Erase>
void mixed_ops(Keys lookups, const std::uint64_t* fresh, const std::uint64_t* victims, Tally& tally,
               Lookup&& lookup, Insert&& insert, Erase&& erase) {
  std::size_t hits = 0, inserted = 0, erased = 0, writes = 0;
  unsigned countdown = 9;
  for (std::size_t i = 0; i < lookups.size(); ++i) {
    if (countdown-- == 0) {
      countdown = 9;
      if ((writes & 1) != 0) {
        erased += erase(victims[writes >> 1]) ? 1 : 0;
      } else {
        inserted += insert(fresh[writes >> 1]) ? 1 : 0;
      }
      ++writes;
    } else {
      hits += lookup(lookups[i]) ? 1 : 0;
    }
  }
  tally.hits = hits;
  tally.inserts = (writes + 1) / 2;
  tally.inserted = inserted;
  tally.erases = writes / 2;
  tally.erased = erased;
}

/// The body of one thread of the mixed load: (lookups, fresh, victims, tally).
using MixedBody = std::function<void(Keys, const std::uint64_t*, const std::uint64_t*, Tally&)>;

struct MixedResult {
  double one_ns = 1e300;   // ns per operation, 1 thread
  double many_ns = 1e300;  // aggregate ns per operation, T threads
  Tally total;             // summed over every run
};

/// The mixed load on one structure, 1 and T threads alternately, best of reps. Each run takes the
/// next blocks of fresh keys and victims (one block per thread), so runs never repeat a write.
MixedResult run_mixed(int reps, unsigned threads, Keys lookups, Keys fresh, Keys victims,
                      const MixedBody& body) {
  MixedResult result;
  std::size_t cursor = 0;  // the same for fresh keys and victims
  std::vector<Tally> tallies(threads);
  const auto run = [&](unsigned nt) {
    const std::size_t block = lookups.size() / nt / 20 + 2;  // >= the writes of each kind
    if (cursor + nt * block > std::min(fresh.size(), victims.size())) {
      std::fprintf(stderr, "concurrent_bench: mixed load ran out of keys\n");
      std::exit(1);
    }
    const double s = run_threads(nt, [&](unsigned t) {
      const auto range = share(t, nt, lookups.size());
      const std::size_t b = range.first, e = range.second;
      body(lookups.subspan(b, e - b), fresh.data() + cursor + t * block,
           victims.data() + cursor + t * block, tallies[t]);
    });
    cursor += nt * block;
    for (unsigned t = 0; t < nt; ++t) {
      result.total.hits += tallies[t].hits;
      result.total.inserts += tallies[t].inserts;
      result.total.inserted += tallies[t].inserted;
      result.total.erases += tallies[t].erases;
      result.total.erased += tallies[t].erased;
    }
    return s * 1e9 / static_cast<double>(lookups.size());
  };
  for (int r = 0; r < reps; ++r) {
    result.one_ns = std::min(result.one_ns, run(1));
    result.many_ns = std::min(result.many_ns, run(threads));
  }
  return result;
}

double mops(double ns_per_op) {
  return 1e3 / ns_per_op;
}

// ---- The summary
// ---------------------------------------------------------------------------------

struct Target {
  std::string figure;
  std::string measured;
  std::string target;
  int met;  // 1 met, 0 not met, -1 no target
};

std::string fmt(const char* format, double a, double b = 0) {
  char buf[128];
  std::snprintf(buf, sizeof buf, format, a, b);
  return buf;
}

int run(const Options& opt) {
  const unsigned nt = opt.threads;
  const auto target_bytes = static_cast<std::uint64_t>(opt.mb * 1024 * 1024);
  std::uint64_t buckets = target_bytes * 8 / (kSlots * kBits);
  buckets -= buckets & 1;
  const cuckoo::Layout layout{buckets, kBits, kSlots, false};
  const std::uint64_t slots = buckets * kSlots;
  const auto n = static_cast<std::size_t>(opt.load * static_cast<double>(slots));
  const auto n_mixed =
      std::min(n, static_cast<std::size_t>(opt.mixed_load * static_cast<double>(slots)));
  const std::uint64_t seed = cuckoo::defaults::kSeed;
  const std::size_t q = std::min(opt.queries, n_mixed);
  const unsigned max_kicks = cuckoo::defaults::kMaxKicks;
  std::vector<Target> targets;
  const CpuSample start = cpu_sample();
  CpuSample phase = start;

  std::printf(
      "concurrent_bench: f=%u b=%u buckets=%llu (%.1f MiB), fill to %.3f = %zu keys, %zu queries,"
      " best of %d, %u threads (hardware_concurrency %u)\n",
      kBits, kSlots, static_cast<unsigned long long>(buckets),
      static_cast<double>(PlainCore::table_type::bytes_for(buckets, kBits)) / (1 << 20), opt.load,
      n, q, opt.reps, nt, std::thread::hardware_concurrency());
  std::printf(
      "Figures (ns are per key or per operation; a ratio A/B of times is taken in this run):\n"
      "  [1] one thread, the %.0f%%-full table; CF = ConcurrentFilter, F = Filter:\n"
      "      build: time from empty to %.3f, single-key inserts / batch inserts (64 Ki-key "
      "chunks);\n"
      "      contains: single-key and batched, positive (keys in the filter) and negative;\n"
      "      erase: single-key and batched, %zu keys each way, on fresh copies of the full table;\n"
      "      floor: two random 64-byte reads per key over a buffer of the filter's size, hashed,\n"
      "      batched through the same prefetch pipeline (depth %zu) or single-key without "
      "prefetch.\n"
      "  [2] %u threads on one CF, each its own share of the keys; aggregate ns = wall / keys:\n"
      "      single-key lookups, T threads against 1 thread (throughput ratio = scaling);\n"
      "      batched lookups against the %u-thread batched floor over the same buffer, and\n"
      "      Filter's batched lookups (read-only) on as many threads, and the layout floor: the\n"
      "      filter's own reads (8 bytes from a bucket's start, straddling lines prefetched)\n"
      "      with no compare, on 1 and %u threads;\n"
      "      builds from empty with %u threads on disjoint key shares against [1]'s one thread;\n"
      "      mixed load: 9 lookups (half positive) then 1 write, the writes alternating insert of\n"
      "      a fresh key and erase of a key of the initial fill, at load %.3f; 1 and %u threads.\n"
      "  [3] the same mixed load and single-key lookups at the same load, 1 and %u threads, on\n"
      "      a Filter behind a std::shared_mutex and on libcuckoo cuckoohash_map<uint64_t, "
      "bool>.\n",
      opt.load * 100, opt.load, q / 2, kDepth, nt, nt, nt, nt, opt.mixed_load, nt, nt);

  const auto keys = keys_from(1, n);
  const auto negatives = keys_from(2, q);
  std::vector<std::uint64_t> positives(q);  // a random sample of the inserted keys
  {
    cuckoo::detail::SplitMix64 rng(3);
    for (auto& k : positives) k = keys[((rng() >> 32) * n) >> 32];
  }
  const Keys all(keys), pos(positives), neg(negatives);
  std::vector<char> out_storage(q);
  bool* out = reinterpret_cast<bool*>(out_storage.data());
  const std::span<bool> outs(out, q);
  // Filter's answers where both filters are timed in turn, so that both sides' are checked.
  std::vector<char> f_out_storage(q);
  bool* f_out = reinterpret_cast<bool*>(f_out_storage.data());
  const std::span<bool> f_outs(f_out, q);
  const double per_q = 1e9 / static_cast<double>(q);

  // ================================ [1] one thread ===============================================
  std::printf("\n[1] one thread\n");
  long huge0 = total_huge_kb();
  cuckoo::Filter f(layout, n, max_kicks, seed);
  const long huge_f = total_huge_kb() - huge0;
  huge0 = total_huge_kb();
  std::optional<cuckoo::ConcurrentFilter> c(std::in_place, layout, n, max_kicks, seed);
  const long huge_c = total_huge_kb() - huge0;
  const auto exclusive = [&] {
    return with_core(*c, [](auto& core) { return core.exclusive_inserts(); });
  };

  std::size_t f_single_in = 0, c_single_in = 0, f_batch_in = 0, c_batch_in = 0;
  double f_single_s = 1e300, c_single_s = 1e300, f_batch_s = 1e300, c_batch_s = 1e300;
  std::size_t c_single_excl = 0, c_batch_excl = 0;
  // The same builds inside a SoleWriter (taken inside the timed region): plain stores instead of
  // a locked instruction per write. On a filter of their own, whose kick walks draw the same
  // random numbers as F's and CF's, so that all three end bit-identical.
  cuckoo::ConcurrentFilter sole_c(layout, n, max_kicks, seed);
  std::size_t s_single_in = 0, s_batch_in = 0;
  double s_single_s = 1e300, s_batch_s = 1e300;
  for (int r = 0; r < opt.reps; ++r) {
    f.clear();
    f_single_s = std::min(f_single_s, time_of([&] {
                            f_single_in =
                                with_core(f, [&](auto& core) { return build_single(core, all); });
                          }));
    c->clear();
    std::size_t e0 = exclusive();
    c_single_s = std::min(c_single_s, time_of([&] {
                            c_single_in =
                                with_core(*c, [&](auto& core) { return build_single(core, all); });
                          }));
    c_single_excl = exclusive() - e0;
    sole_c.clear();
    s_single_s = std::min(s_single_s, time_of([&] {
                            const auto sole = sole_c.sole_writer();
                            s_single_in = with_core(
                                sole_c, [&](auto& core) { return build_single(core, all); });
                          }));
    f.clear();
    f_batch_s = std::min(f_batch_s, time_of([&] {
                           f_batch_in =
                               with_core(f, [&](auto& core) { return build_batch(core, all); });
                         }));
    c->clear();
    e0 = exclusive();
    c_batch_s = std::min(c_batch_s, time_of([&] {
                           c_batch_in =
                               with_core(*c, [&](auto& core) { return build_batch(core, all); });
                         }));
    c_batch_excl = exclusive() - e0;
    sole_c.clear();
    s_batch_s = std::min(s_batch_s, time_of([&] {
                           const auto sole = sole_c.sole_writer();
                           s_batch_in = with_core(
                               sole_c, [&](auto& core) { return build_batch(core, all); });
                         }));
  }
  const auto rate = [](std::size_t keys_in, double s) {
    return static_cast<double>(keys_in) / s / 1e6;
  };
  std::printf(
      "build, single-key insert, empty to %.3f: F %.2f s (%.2f M keys/s, %zu in), CF %.2f s"
      " (%.2f M keys/s, %zu in, %zu exclusive kick walks): CF/F %.3f\n",
      opt.load, f_single_s, rate(f_single_in, f_single_s), f_single_in, c_single_s,
      rate(c_single_in, c_single_s), c_single_in, c_single_excl, c_single_s / f_single_s);
  std::printf(
      "build, batch insert, empty to %.3f:      F %.2f s (%.2f M keys/s, %zu in), CF %.2f s"
      " (%.2f M keys/s, %zu in, %zu exclusive kick walks): CF/F %.3f\n",
      opt.load, f_batch_s, rate(f_batch_in, f_batch_s), f_batch_in, c_batch_s,
      rate(c_batch_in, c_batch_s), c_batch_in, c_batch_excl, c_batch_s / f_batch_s);
  std::printf(
      "build inside a SoleWriter, empty to %.3f: single-key CF %.2f s (%.2f M keys/s, %zu in):"
      " CF/F %.3f; batch CF %.2f s (%.2f M keys/s, %zu in): CF/F %.3f\n",
      opt.load, s_single_s, rate(s_single_in, s_single_s), s_single_in, s_single_s / f_single_s,
      s_batch_s, rate(s_batch_in, s_batch_s), s_batch_in, s_batch_s / f_batch_s);
  targets.push_back({"1 thread: build, single-key insert, CF/F time",
                     fmt("%.3f", c_single_s / f_single_s), "<= 1.30",
                     c_single_s / f_single_s <= 1.3 ? 1 : 0});
  targets.push_back({"1 thread: build, batch insert, CF/F time", fmt("%.3f", c_batch_s / f_batch_s),
                     "<= 1.30", c_batch_s / f_batch_s <= 1.3 ? 1 : 0});
  targets.push_back({"1 thread: build inside a SoleWriter, single-key / batch, CF/F time",
                     fmt("%.3f / %.3f", s_single_s / f_single_s, s_batch_s / f_batch_s), "<= 1.30",
                     std::max(s_single_s / f_single_s, s_batch_s / f_batch_s) <= 1.3 ? 1 : 0});
  {
    const cuckoo::Filter snapshot = c->to_filter();
    const auto bytes_of = [](const cuckoo::Filter& x) {
      return x.visit([](const auto& core) { return core.table().bytes(); });
    };
    const cuckoo::Filter sole_snapshot = sole_c.to_filter();
    const auto a = bytes_of(f), b = bytes_of(snapshot), d = bytes_of(sole_snapshot);
    const bool same = a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0 &&
                      a.size() == d.size() && std::memcmp(a.data(), d.data(), a.size()) == 0;
    std::printf(
        "after the batch builds: F load %.4f, CF load %.4f, CF (SoleWriter) load %.4f; tables "
        "bit-identical: %s\n",
        f.load_factor(), c->load_factor(), sole_c.load_factor(), same ? "yes" : "NO");
  }

  huge0 = total_huge_kb();
  const Floor floor(f.memory_bytes(), seed);
  const long huge_floor = total_huge_kb() - huge0;
  huge0 = total_huge_kb();
  const LayoutFloor layout_floor(f.memory_bytes(), seed);
  const long huge_layout_floor = total_huge_kb() - huge0;
  std::printf(
      "huge pages gained on allocation: F %ld kB, CF %ld kB, floor %ld kB, layout floor %ld kB"
      " (tables %zu / %zu kB)\n",
      huge_f, huge_c, huge_floor, huge_layout_floor, f.memory_bytes() >> 10,
      c->memory_bytes() >> 10);

  const double floor_single = best_of(opt.reps, [&] { floor.single(pos, out); }) * per_q;
  const double floor_batched = best_of(opt.reps, [&] { floor.batched(pos, out); }) * per_q;
  std::printf("floor, one thread: single-key %.2f ns/key, batched %.2f ns/key\n", floor_single,
              floor_batched);

  std::size_t false_negatives = 0;
  // Each side best of reps, the two sides taken in turn (F, CF, F, CF, ...): this VM's memory has
  // slow phases minutes long, and one side's runs all made in one of them moved the ratio by 20%.
  const auto single_pair = [&](Keys k, bool check) {
    const auto t = cuckoo::bench::best_of_each(
        opt.reps, {[&] { with_core(f, [&](auto& core) { lookup_single(core, k, f_out); }); },
                   [&] { with_core(*c, [&](auto& core) { lookup_single(core, k, out); }); }});
    if (check) false_negatives += 2 * q - count_true(f_out, q) - count_true(out, q);
    return std::pair{t[0] * per_q, t[1] * per_q};
  };
  const auto batch_pair = [&](Keys k, bool check) {
    const auto t = cuckoo::bench::best_of_each(
        opt.reps, {[&] { with_core(f, [&](auto& core) { core.contains(k, f_outs); }); },
                   [&] { with_core(*c, [&](auto& core) { core.contains(k, outs); }); }});
    if (check) false_negatives += 2 * q - count_true(f_out, q) - count_true(out, q);
    return std::pair{t[0] * per_q, t[1] * per_q};
  };
  const auto [f_pos_single, c_pos_single] = single_pair(pos, true);
  const auto [f_neg_single, c_neg_single] = single_pair(neg, false);
  const double fpr = static_cast<double>(count_true(out, q)) / static_cast<double>(q);
  const auto [f_pos_batch, c_pos_batch] = batch_pair(pos, true);
  const auto [f_neg_batch, c_neg_batch] = batch_pair(neg, false);
  std::printf(
      "contains, single-key: positive F %.2f ns, CF %.2f ns: CF/F %.3f; negative F %.2f ns,"
      " CF %.2f ns: CF/F %.3f (CF %.2fx the single-key floor; fpr %.5f)\n",
      f_pos_single, c_pos_single, c_pos_single / f_pos_single, f_neg_single, c_neg_single,
      c_neg_single / f_neg_single, c_pos_single / floor_single, fpr);
  std::printf(
      "contains, batched:    positive F %.2f ns, CF %.2f ns: CF/F %.3f; negative F %.2f ns,"
      " CF %.2f ns: CF/F %.3f (CF %.2fx / F %.2fx the batched floor)\n",
      f_pos_batch, c_pos_batch, c_pos_batch / f_pos_batch, f_neg_batch, c_neg_batch,
      c_neg_batch / f_neg_batch, c_pos_batch / floor_batched, f_pos_batch / floor_batched);
  if (false_negatives != 0) std::printf("  ERROR: %zu false negatives!\n", false_negatives);
  {
    const double rs = std::max(c_pos_single / f_pos_single, c_neg_single / f_neg_single);
    const double rb = std::max(c_pos_batch / f_pos_batch, c_neg_batch / f_neg_batch);
    targets.push_back(
        {"1 thread: single-key contains, CF/F (pos / neg)",
         fmt("%.3f / ", c_pos_single / f_pos_single) + fmt("%.3f", c_neg_single / f_neg_single),
         "<= 1.10", rs <= 1.10 ? 1 : 0});
    targets.push_back(
        {"1 thread: batched contains, CF/F (pos / neg)",
         fmt("%.3f / ", c_pos_batch / f_pos_batch) + fmt("%.3f", c_neg_batch / f_neg_batch),
         "<= 1.10", rb <= 1.10 ? 1 : 0});
  }

  // Erase: on fresh identical copies each repetition, the first half of the sample single-key,
  // the second half batched (keys of the fill, each present once).
  {
    const std::size_t half = q / 2;
    const Keys first = all.subspan(0, half), second = all.subspan(half, q - half);
    double fs = 1e300, cs = 1e300, fb = 1e300, cb = 1e300;
    std::size_t f_removed = 0, c_removed = 0;
    for (int r = 0; r < opt.reps; ++r) {
      // Each copy made just before its own two timings, so both run equally warm.
      {
        cuckoo::Filter fc = f;
        f_removed = 0;
        fs = std::min(fs, time_of([&] {
                        with_core(fc, [&](auto& core) {
                          for (const std::uint64_t k : first) f_removed += core.erase(k) ? 1 : 0;
                        });
                      }));
        fb = std::min(fb, time_of([&] {
                        f_removed += with_core(fc, [&](auto& core) { return core.erase(second); });
                      }));
      }
      {
        cuckoo::ConcurrentFilter cc(f);
        c_removed = 0;
        cs = std::min(cs, time_of([&] {
                        with_core(cc, [&](auto& core) {
                          for (const std::uint64_t k : first) c_removed += core.erase(k) ? 1 : 0;
                        });
                      }));
        cb = std::min(cb, time_of([&] {
                        c_removed += with_core(cc, [&](auto& core) { return core.erase(second); });
                      }));
      }
    }
    const double ph = 1e9 / static_cast<double>(half), pb = 1e9 / static_cast<double>(q - half);
    std::printf(
        "erase, single-key: F %.2f ns, CF %.2f ns: CF/F %.3f; batched: F %.2f ns, CF %.2f ns:"
        " CF/F %.3f (removed F %zu, CF %zu of %zu)\n",
        fs * ph, cs * ph, cs / fs, fb * pb, cb * pb, cb / fb, f_removed, c_removed, q);
    targets.push_back({"1 thread: single-key erase, CF/F", fmt("%.3f", cs / fs), "-", -1});
    targets.push_back({"1 thread: batched erase, CF/F", fmt("%.3f", cb / fb), "-", -1});
  }

  print_neighbours(phase, "[1]");
  phase = cpu_sample();

  // ================================ [2] T threads, one ConcurrentFilter ==========================
  std::printf("\n[2] %u threads on one ConcurrentFilter (aggregate ns per key = wall / keys)\n",
              nt);
  const auto cf_lookups = [&](Keys k) {
    const auto [one, many] = best_1_and_t(opt.reps, nt, [&](unsigned t, unsigned threads) {
      const auto range = share(t, threads, k.size());
      const std::size_t b = range.first, e = range.second;
      with_core(*c, [&](auto& core) { lookup_single(core, k.subspan(b, e - b), out + b); });
    });
    return std::pair{one * per_q, many * per_q};
  };
  const auto [s1_pos, st_pos] = cf_lookups(pos);
  const std::size_t hits_pos = count_true(out, q);
  const auto [s1_neg, st_neg] = cf_lookups(neg);
  const double scale_pos = s1_pos / st_pos, scale_neg = s1_neg / st_neg;
  std::printf(
      "single-key lookups: positive 1 thread %.2f ns, %u threads %.2f ns: scaling %.2fx;"
      " negative %.2f ns, %.2f ns: scaling %.2fx%s\n",
      s1_pos, nt, st_pos, scale_pos, s1_neg, st_neg, scale_neg,
      hits_pos == q ? "" : " (ERROR: false negatives)");
  targets.push_back({fmt("%.0f threads: single-key lookups, throughput vs 1 (pos / neg)", nt),
                     fmt("%.2f / ", scale_pos) + fmt("%.2f", scale_neg), ">= 1.70",
                     std::min(scale_pos, scale_neg) >= 1.7 ? 1 : 0});

  // Batched lookups (positive, negative) and the floors, each on 1 and T threads, all ten taken in
  // turn in every repetition, so that the ratios to the floors compare runs made together.
  const auto cf_batched = [&](Keys k) {
    return [&, k](unsigned t, unsigned threads) {
      const auto range = share(t, threads, k.size());
      const std::size_t b = range.first, e = range.second;
      with_core(*c,
                [&](auto& core) { core.contains(k.subspan(b, e - b), outs.subspan(b, e - b)); });
    };
  };
  // Also Filter's (read-only calls are safe from many threads): how much of CF's distance from
  // the floor is the filter's own, not the concurrency's; and the layout floor: how much is the
  // packed buckets' reads themselves, before any hashing pipeline or compare of the filter's.
  const auto floor_body = [&](const auto& which) {
    return [&, fl = &which](unsigned t, unsigned threads) {
      const auto range = share(t, threads, q);
      const std::size_t b = range.first, e = range.second;
      fl->batched(pos.subspan(b, e - b), out + b);
    };
  };
  const std::function<void(unsigned, unsigned)> batched_bodies[] = {
      cf_batched(pos), cf_batched(neg), floor_body(floor),
      [&](unsigned t, unsigned threads) {
        const auto range = share(t, threads, q);
        const std::size_t b = range.first, e = range.second;
        with_core(
            f, [&](auto& core) { core.contains(pos.subspan(b, e - b), f_outs.subspan(b, e - b)); });
      },
      floor_body(layout_floor)};
  constexpr int kBodies = std::size(batched_bodies);
  double batched_best[kBodies][2];
  for (auto& best : batched_best) best[0] = best[1] = 1e300;
  for (int r = 0; r < opt.reps; ++r) {
    for (int body = 0; body < kBodies; ++body) {
      for (int side = 0; side < 2; ++side) {
        const unsigned threads = side == 0 ? 1 : nt;
        batched_best[body][side] =
            std::min(batched_best[body][side],
                     run_threads(threads, [&](unsigned t) { batched_bodies[body](t, threads); }));
      }
    }
  }
  const double b1_pos = batched_best[0][0] * per_q, bt_pos = batched_best[0][1] * per_q;
  const double b1_neg = batched_best[1][0] * per_q, bt_neg = batched_best[1][1] * per_q;
  const double floor1 = batched_best[2][0] * per_q, floort = batched_best[2][1] * per_q;
  const double f1_pos = batched_best[3][0] * per_q, ft_pos = batched_best[3][1] * per_q;
  const double lay1 = batched_best[4][0] * per_q, layt = batched_best[4][1] * per_q;
  std::printf(
      "batched lookups: floor 1 thread %.2f ns, %u threads %.2f ns (scaling %.2fx); CF positive"
      " 1 thread %.2f ns, %u threads %.2f ns = %.3fx the %u-thread floor (throughput %.2fx the"
      " floor's); negative %.2f ns, %.2f ns = %.3fx\n",
      floor1, nt, floort, floor1 / floort, b1_pos, nt, bt_pos, bt_pos / floort, nt, floort / bt_pos,
      b1_neg, bt_neg, bt_neg / floort);
  std::printf(
      "batched lookups, Filter (read-only, positive): 1 thread %.2f ns, %u threads %.2f ns ="
      " %.3fx the %u-thread floor (scaling %.2fx); CF/F on %u threads %.3f\n",
      f1_pos, nt, ft_pos, ft_pos / floort, nt, f1_pos / ft_pos, nt, bt_pos / ft_pos);
  std::printf(
      "batched lookups, layout floor (the filter's own reads, no compare): 1 thread %.2f ns = %.3fx"
      " the floor, %u threads %.2f ns = %.3fx the %u-thread floor; CF positive %.3fx it on %u"
      " threads, F %.3fx\n",
      lay1, lay1 / floor1, nt, layt, layt / floort, nt, bt_pos / layt, nt, ft_pos / layt);
  {
    const double worst = std::max(bt_pos, bt_neg) / floort;
    targets.push_back({fmt("%.0f threads: batched lookups, CF/floor ns (pos / neg)", nt),
                       fmt("%.3f / ", bt_pos / floort) + fmt("%.3f", bt_neg / floort), "<= 1.111",
                       worst <= 1 / 0.9 ? 1 : 0});
    targets.push_back({fmt("%.0f threads: batched lookups, F/floor ns (positive)", nt),
                       fmt("%.3f", ft_pos / floort), "-", -1});
    targets.push_back({fmt("%.0f threads: batched lookups, layout floor/floor ns", nt),
                       fmt("%.3f", layt / floort), "-", -1});
    targets.push_back({fmt("%.0f threads: batched lookups, CF/layout floor ns (pos / neg)", nt),
                       fmt("%.3f / ", bt_pos / layt) + fmt("%.3f", bt_neg / layt), "-", -1});
  }

  // Builds with T threads on disjoint shares (the one-thread figures are [1]'s).
  {
    double ts = 1e300, tb = 1e300;
    std::size_t in_single = 0, in_batch = 0, excl_single = 0, excl_batch = 0;
    std::vector<Tally> tallies(nt);
    const auto build = [&](bool batched) {
      c->clear();
      const std::size_t e0 = exclusive();
      const double s = run_threads(nt, [&](unsigned t) {
        const auto range = share(t, nt, n);
        const std::size_t b = range.first, e = range.second;
        tallies[t].inserted = with_core(*c, [&](auto& core) {
          return batched ? build_batch(core, all.subspan(b, e - b))
                         : build_single(core, all.subspan(b, e - b));
        });
      });
      std::size_t in = 0;
      for (unsigned t = 0; t < nt; ++t) in += tallies[t].inserted;
      return std::tuple{s, in, exclusive() - e0};
    };
    for (int r = 0; r < opt.reps; ++r) {
      const auto [s1, i1, x1] = build(false);
      if (s1 < ts) {
        ts = s1;
        in_single = i1;
        excl_single = x1;
      }
      const auto [s2, i2, x2] = build(true);
      if (s2 < tb) {
        tb = s2;
        in_batch = i2;
        excl_batch = x2;
      }
    }
    with_core(*c, [&](auto& core) { core.contains(pos, outs); });
    const std::size_t missing = q - count_true(out, q);
    std::printf(
        "build, %u threads, single-key: %.2f s (%.2f M keys/s, %zu in, %zu exclusive kick walks)"
        " vs 1 thread %.2f s: scaling %.2fx\n",
        nt, ts, rate(in_single, ts), in_single, excl_single, c_single_s, c_single_s / ts);
    std::printf(
        "build, %u threads, batch:      %.2f s (%.2f M keys/s, %zu in, %zu exclusive kick walks)"
        " vs 1 thread %.2f s: scaling %.2fx; load %.4f; positives missing %zu\n",
        nt, tb, rate(in_batch, tb), in_batch, excl_batch, c_batch_s, c_batch_s / tb,
        c->load_factor(), missing);
    targets.push_back({fmt("%.0f threads: build scaling, single-key / batch", nt),
                       fmt("%.2f / ", c_single_s / ts) + fmt("%.2f", c_batch_s / tb), "-", -1});
  }
  c.reset();
  print_neighbours(phase, "[2]");
  phase = cpu_sample();

  // ================================ The mixed load, [2] and [3] =================================
  // F (the batch build of [1], untouched since) loses its keys above the mixed load; CF copies it.
  with_core(f, [&](auto& core) { core.erase(all.subspan(n_mixed)); });
  huge0 = total_huge_kb();
  cuckoo::ConcurrentFilter cm(f);
  const long huge_cm = total_huge_kb() - huge0;
  std::shared_mutex mutex;

  huge0 = total_huge_kb();
  LibcuckooMap map(n_mixed);
  map.reserve(n_mixed);
  const double map_build = run_threads(nt, [&](unsigned t) {
    const auto range = share(t, nt, n_mixed);
    const std::size_t b = range.first, e = range.second;
    for (std::size_t i = b; i < e; ++i) map.insert(keys[i], true);
  });
  const long huge_map = total_huge_kb() - huge0;
  const std::size_t map_bytes =
      map.bucket_count() * sizeof(LibcuckooBucket) +
      std::min<std::size_t>(map.bucket_count(), kLibcuckooMaxLocks) * kLibcuckooLockBytes;

  // Lookups: alternately a key of the mixed-load set and a negative.
  std::vector<std::uint64_t> mixed_lookups(q);
  {
    cuckoo::detail::SplitMix64 rng(4);
    for (std::size_t i = 0; i < q; ++i) {
      mixed_lookups[i] = (i & 1) != 0 ? negatives[i] : keys[((rng() >> 32) * n_mixed) >> 32];
    }
  }
  const Keys mlk(mixed_lookups);
  const std::size_t pool = static_cast<std::size_t>(opt.reps) * 2 * (q / 20 + 2 * nt + 2) + 64;
  const auto fresh = keys_from(5, pool);
  const Keys victims = all.subspan(0, std::min(pool, n_mixed));

  std::printf(
      "\n[2]/[3] mixed load at %.3f: %zu keys; F (+ shared_mutex) load %.4f, CF load %.4f (copied"
      " from F, huge pages gained %ld kB); libcuckoo: %zu keys in %.2f s with %u threads (one"
      " build), %zu buckets x %u slots, load %.4f, about %.1f MiB = %.1f bits/key (%zu-byte"
      " buckets of whole keys and values + %zu 64-byte locks; huge pages gained %ld kB) against"
      " the filters' %.1f MiB = %.1f bits/key\n",
      opt.mixed_load, n_mixed, f.load_factor(), cm.load_factor(), huge_cm, map.size(), map_build,
      nt, map.bucket_count(), LibcuckooMap::slot_per_bucket(), map.load_factor(),
      static_cast<double>(map_bytes) / (1 << 20),
      static_cast<double>(map_bytes) * 8 / static_cast<double>(map.size()), sizeof(LibcuckooBucket),
      std::min<std::size_t>(map.bucket_count(), kLibcuckooMaxLocks), huge_map,
      static_cast<double>(cm.memory_bytes()) / (1 << 20),
      static_cast<double>(cm.memory_bytes()) * 8 / static_cast<double>(cm.size()));
  std::printf(
      "%zu operations per run (all structures alike), each run new fresh keys and victims\n", q);

  // Single-key lookups on each structure, 1 and T threads, before any mixed run.
  struct Lookups {
    double one, many;
    std::size_t hits;
  };
  const auto lookups_on = [&](const std::function<void(Keys, bool*)>& body) {
    const auto [one, many] = best_1_and_t(opt.reps, nt, [&](unsigned t, unsigned threads) {
      const auto range = share(t, threads, q);
      const std::size_t b = range.first, e = range.second;
      body(mlk.subspan(b, e - b), out + b);
    });
    return Lookups{one * per_q, many * per_q, count_true(out, q)};
  };
  const Lookups lk_cf = lookups_on(
      [&](Keys k, bool* o) { with_core(cm, [&](auto& core) { lookup_single(core, k, o); }); });
  const Lookups lk_mx = lookups_on([&](Keys k, bool* o) {
    with_core(f, [&](auto& core) {
      for (std::size_t i = 0; i < k.size(); ++i) {
        const std::shared_lock lock(mutex);
        o[i] = core.contains(k[i]);
      }
    });
  });
  const Lookups lk_lc = lookups_on([&](Keys k, bool* o) {
    for (std::size_t i = 0; i < k.size(); ++i) o[i] = map.contains(k[i]);
  });
  const auto print_lookups = [&](const char* name, const Lookups& l) {
    std::printf(
        "single-key lookups (half positive), %-26s 1 thread %7.2f ns (%6.2f M/s), %u threads"
        " %7.2f ns (%6.2f M/s): scaling %.2fx; hits %.4f\n",
        name, l.one, mops(l.one), nt, l.many, mops(l.many), l.one / l.many,
        static_cast<double>(l.hits) / static_cast<double>(q));
  };
  print_lookups("ConcurrentFilter:", lk_cf);
  print_lookups("Filter + shared_mutex:", lk_mx);
  print_lookups("libcuckoo:", lk_lc);

  const MixedResult mx_cf =
      run_mixed(opt.reps, nt, mlk, fresh, victims,
                [&](Keys k, const std::uint64_t* fr, const std::uint64_t* vi, Tally& tally) {
                  with_core(cm, [&](auto& core) {
                    mixed_ops(
                        k, fr, vi, tally, [&](std::uint64_t x) { return core.contains(x); },
                        [&](std::uint64_t x) { return core.insert(x); },
                        [&](std::uint64_t x) { return core.erase(x); });
                  });
                });
  const MixedResult mx_mx =
      run_mixed(opt.reps, nt, mlk, fresh, victims,
                [&](Keys k, const std::uint64_t* fr, const std::uint64_t* vi, Tally& tally) {
                  with_core(f, [&](auto& core) {
                    mixed_ops(
                        k, fr, vi, tally,
                        [&](std::uint64_t x) {
                          const std::shared_lock lock(mutex);
                          return core.contains(x);
                        },
                        [&](std::uint64_t x) {
                          const std::unique_lock lock(mutex);
                          return core.insert(x);
                        },
                        [&](std::uint64_t x) {
                          const std::unique_lock lock(mutex);
                          return core.erase(x);
                        });
                  });
                });
  const MixedResult mx_lc =
      run_mixed(opt.reps, nt, mlk, fresh, victims,
                [&](Keys k, const std::uint64_t* fr, const std::uint64_t* vi, Tally& tally) {
                  mixed_ops(
                      k, fr, vi, tally, [&](std::uint64_t x) { return map.contains(x); },
                      [&](std::uint64_t x) { return map.insert(x, true); },
                      [&](std::uint64_t x) { return map.erase(x); });
                });
  const auto print_mixed = [&](const char* name, const MixedResult& m, double load_after) {
    std::printf(
        "mixed 90/10, %-26s 1 thread %7.2f ns/op (%6.2f M ops/s), %u threads %7.2f ns/op"
        " (%6.2f M ops/s): scaling %.2fx; over all runs %zu/%zu inserts and %zu/%zu erases"
        " succeeded; load after %.4f\n",
        name, m.one_ns, mops(m.one_ns), nt, m.many_ns, mops(m.many_ns), m.one_ns / m.many_ns,
        m.total.inserted, m.total.inserts, m.total.erased, m.total.erases, load_after);
  };
  print_mixed("ConcurrentFilter:", mx_cf, cm.load_factor());
  print_mixed("Filter + shared_mutex:", mx_mx, f.load_factor());
  print_mixed("libcuckoo:", mx_lc, map.load_factor());
  const double vs_mutex = mx_mx.many_ns / mx_cf.many_ns;
  const double vs_lc = mx_lc.many_ns / mx_cf.many_ns;
  std::printf(
      "mixed 90/10 with %u threads: ConcurrentFilter %.2fx the throughput of Filter +"
      " shared_mutex, %.2fx libcuckoo's; with 1 thread %.2fx and %.2fx\n",
      nt, vs_mutex, vs_lc, mx_mx.one_ns / mx_cf.one_ns, mx_lc.one_ns / mx_cf.one_ns);
  std::printf(
      "single-key lookups with %u threads: ConcurrentFilter %.2fx the throughput of Filter +"
      " shared_mutex, %.2fx libcuckoo's\n",
      nt, lk_mx.many / lk_cf.many, lk_lc.many / lk_cf.many);
  targets.push_back({fmt("%.0f threads: mixed 90/10, CF scaling vs 1 thread", nt),
                     fmt("%.2f", mx_cf.one_ns / mx_cf.many_ns), "-", -1});
  targets.push_back({fmt("%.0f threads: mixed 90/10, CF vs Filter + shared_mutex", nt),
                     fmt("%.2fx", vs_mutex), ">= 3x", vs_mutex >= 3 ? 1 : 0});
  targets.push_back({fmt("%.0f threads: mixed 90/10, CF vs libcuckoo", nt), fmt("%.2fx", vs_lc),
                     "(reference)", -1});
  targets.push_back({fmt("%.0f threads: single-key lookups, CF vs libcuckoo", nt),
                     fmt("%.2fx", lk_lc.many / lk_cf.many), "(reference)", -1});

  print_neighbours(phase, "[2]/[3] mixed");

  // ================================ Summary ======================================================
  std::printf("\nsummary: issue 13 targets (ratios measured side by side in this run)\n");
  std::printf("  %-58s %-16s %-12s %s\n", "figure", "measured", "target", "");
  for (const Target& t : targets) {
    std::printf("  %-58s %-16s %-12s %s\n", t.figure.c_str(), t.measured.c_str(), t.target.c_str(),
                t.met < 0 ? "" : (t.met != 0 ? "met" : "NOT MET"));
  }
  print_neighbours(start, "whole run");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  bool mb_set = false, queries_set = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string("0"); };
    if (a == "--mb") {
      opt.mb = std::stod(value());
      mb_set = true;
    } else if (a == "--load") {
      opt.load = std::stod(value());
    } else if (a == "--mixed-load") {
      opt.mixed_load = std::stod(value());
    } else if (a == "--queries") {
      opt.queries = std::stoull(value());
      queries_set = true;
    } else if (a == "--reps") {
      opt.reps = std::max(1, std::stoi(value()));
    } else if (a == "--threads") {
      opt.threads = std::max(1u, static_cast<unsigned>(std::stoul(value())));
    } else if (a == "--quick") {
      opt.quick = true;
    } else {
      std::fprintf(stderr,
                   "usage: concurrent_bench [--mb 192] [--load 0.95] [--mixed-load 0.92]"
                   " [--queries 10000000] [--reps 3] [--threads 2] [--quick]\n"
                   "  --quick: a 16 MiB filter and 10^6 queries (smoke test)\n");
      return 2;
    }
  }
  if (opt.quick) {
    if (!mb_set) opt.mb = 16;
    if (!queries_set) opt.queries = 1'000'000;
  }
  return run(opt);
}
