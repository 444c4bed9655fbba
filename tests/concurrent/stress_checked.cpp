// stress_checked — the concurrent filter under a checked, displacement-heavy load (in the manner
// of libcuckoo's stress_checked).
//
// Threads own disjoint key ranges (thread t's keys are t·2^48 + a counter) and each keeps an exact
// list of the copies of its own keys it holds. The table is small and held in a narrow band near
// its maximum load (for b = 4: 90–95%), so nearly every insert needs a displacement path and
// moves other threads' items, and some inserts fail and take the exclusive kick walk. Each thread
// loops: one write (insert a fresh key, or a second copy of a held one, or erase a held copy,
// chosen to keep the load in the band), then --reads lookups of its own held keys. Checked:
//   - every lookup of a held key is true (single-key, and every 8th round a batch of up to 80),
//     and count() of it is at least its copies (single-key: at least one; batched: at least the
//     copies inside the batch);
//   - every erase of a held copy returns true;
//   - after the threads join, size() equals the sum of the threads' own counts and every held key
//     is still found.
// Another thread's erase can never take a thread's item: a thread erases only copies it holds,
// so for every (fingerprint, bucket pair) the table holds at least as many matching entries as
// the threads hold keys with it.
//
// With --sole-rounds N, each thread runs every other block of N rounds inside a SoleWriter
// (ConcurrentFilter::sole_writer): its writes then take no lock while the other threads' writes
// wait and their lookups go on, so sole writers and locked writers take turns under the same
// checks.
//
// Exit status 0 when every check passed, 1 otherwise. make test runs a short instance (ctest,
// label concurrent, also under ThreadSanitizer); `make stress-concurrent` a long one (≥ 10^8
// lookups).
//
//   stress_checked [--threads 4] [--lookups 2000000] [--bucket-size 4] [--bits 12]
//                  [--capacity 20000] [--reads 4] [--seed 1] [--sole-rounds 0]
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "cuckoo/detail/rng.hpp"

namespace {

struct Options {
  unsigned threads = 4;
  std::uint64_t lookups = 2'000'000;
  unsigned bucket_size = 4;
  unsigned bits = 12;
  std::size_t capacity = 20'000;
  unsigned reads = 4;
  std::uint64_t seed = 1;
  std::uint64_t sole_rounds = 0;  // 0: no SoleWriter
};

struct Band {
  double low, high;
};
/// The load band per bucket size: just under the load each reaches (sizing.hpp).
Band band_for(unsigned b) {
  if (b == 2) return {0.78, 0.84};
  if (b == 4) return {0.90, 0.95};
  return {0.92, 0.97};
}

struct ThreadResult {
  std::uint64_t lookups = 0, batch_lookups = 0, false_negatives = 0, low_counts = 0,
                failed_erases = 0;
  std::uint64_t inserts = 0, failed_inserts = 0, erases = 0, sole_blocks = 0;
  std::vector<std::uint64_t> held;  // one entry per copy
};

constexpr std::size_t kBatch = 80;  // more than one validation chunk, not a multiple of it

void run_thread(cuckoo::ConcurrentFilter& filter, const Options& opt, unsigned t,
                std::uint64_t lookups, const std::atomic<bool>& go, ThreadResult& r) {
  cuckoo::detail::SplitMix64 rng(opt.seed * 1000003 + t);
  const Band band = band_for(opt.bucket_size);
  const auto slots = static_cast<double>(filter.slot_count());
  std::uint64_t next_key = (std::uint64_t{t} + 1) << 48;
  while (!go.load(std::memory_order_acquire)) {
  }
  double load = 0;
  const auto one_round = [&](std::uint64_t round) {
    // size() sums every stripe's count: sampled, not read per operation.
    if ((round & 7) == 0) load = static_cast<double>(filter.size()) / slots;
    const bool insert = load < band.low || (load <= band.high && (rng() & 1) != 0);
    if (insert || r.held.empty()) {
      const bool copy = !r.held.empty() && rng() % 16 == 0;
      const std::uint64_t key = copy ? r.held[rng() % r.held.size()] : next_key++;
      ++r.inserts;
      if (filter.insert(key)) {
        r.held.push_back(key);
      } else {
        ++r.failed_inserts;
      }
    } else {
      const std::size_t at = rng() % r.held.size();
      ++r.erases;
      if (!filter.erase(r.held[at])) ++r.failed_erases;
      r.held[at] = r.held.back();
      r.held.pop_back();
    }
    for (unsigned i = 0; i < opt.reads && !r.held.empty(); ++i) {
      const std::uint64_t key = r.held[rng() % r.held.size()];
      ++r.lookups;
      if (!filter.contains(key)) ++r.false_negatives;
      if ((r.lookups & 15) == 0 && filter.count(key) == 0) ++r.low_counts;
    }
    if ((round & 7) == 7 && !r.held.empty()) {
      // A batch lookup of up to kBatch held keys: batches validate a chunk of keys at a time.
      const std::size_t n = std::min(kBatch, r.held.size());
      const std::size_t from = rng() % (r.held.size() - n + 1);
      std::array<bool, kBatch> answers{};
      filter.contains(std::span<const std::uint64_t>(r.held.data() + from, n),
                      std::span<bool>(answers.data(), n));
      r.batch_lookups += n;
      for (std::size_t i = 0; i < n; ++i) r.false_negatives += answers[i] ? 0 : 1;
      // The same keys' batch count: each at least the copies of it inside the batch, all held.
      const std::span<const std::uint64_t> batch(r.held.data() + from, n);
      std::array<std::size_t, kBatch> counts{};
      filter.count(batch, std::span<std::size_t>(counts.data(), n));
      for (std::size_t i = 0; i < n; ++i) {
        const auto copies =
            static_cast<std::size_t>(std::count(batch.begin(), batch.end(), batch[i]));
        r.low_counts += counts[i] < copies ? 1 : 0;
      }
    }
  };
  const std::uint64_t block = opt.sole_rounds == 0 ? ~std::uint64_t{0} : opt.sole_rounds;
  for (std::uint64_t round = 0; r.lookups < lookups;) {
    const std::uint64_t end = round + block;
    const auto run_block = [&] {
      while (round != end && r.lookups < lookups) one_round(round++);
    };
    if (opt.sole_rounds != 0 && (round / block) % 2 == 1) {
      const auto writer = filter.sole_writer();
      ++r.sole_blocks;
      run_block();
    } else {
      run_block();
    }
  }
}

bool parse(int argc, char** argv, Options& opt) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const std::uint64_t value = std::strtoull(argv[i + 1], nullptr, 0);
    if (name == "--threads") {
      opt.threads = static_cast<unsigned>(value);
    } else if (name == "--lookups") {
      opt.lookups = value;
    } else if (name == "--bucket-size") {
      opt.bucket_size = static_cast<unsigned>(value);
    } else if (name == "--bits") {
      opt.bits = static_cast<unsigned>(value);
    } else if (name == "--capacity") {
      opt.capacity = value;
    } else if (name == "--reads") {
      opt.reads = static_cast<unsigned>(value);
    } else if (name == "--seed") {
      opt.seed = value;
    } else if (name == "--sole-rounds") {
      opt.sole_rounds = value;
    } else {
      return false;
    }
  }
  return (argc % 2) == 1 && opt.threads > 0 && opt.reads > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse(argc, argv, opt)) {
    std::fprintf(stderr,
                 "usage: stress_checked [--threads T] [--lookups N] [--bucket-size B] [--bits F]"
                 " [--capacity C] [--reads R] [--seed S] [--sole-rounds N]\n");
    return 2;
  }
  cuckoo::ConcurrentFilter filter{cuckoo::Config{.capacity = opt.capacity,
                                                 .fingerprint_bits = opt.bits,
                                                 .bucket_size = opt.bucket_size,
                                                 .seed = opt.seed}};
  std::vector<ThreadResult> results(opt.threads);
  std::vector<std::thread> threads;
  std::atomic<bool> go{false};
  const auto t0 = std::chrono::steady_clock::now();
  for (unsigned t = 0; t < opt.threads; ++t) {
    threads.emplace_back(run_thread, std::ref(filter), std::cref(opt), t, opt.lookups / opt.threads,
                         std::cref(go), std::ref(results[t]));
  }
  go.store(true, std::memory_order_release);
  for (auto& thread : threads) thread.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  ThreadResult total;
  std::size_t held = 0;
  std::uint64_t missing_after = 0;
  for (const ThreadResult& r : results) {
    total.lookups += r.lookups;
    total.batch_lookups += r.batch_lookups;
    total.false_negatives += r.false_negatives;
    total.low_counts += r.low_counts;
    total.failed_erases += r.failed_erases;
    total.inserts += r.inserts;
    total.failed_inserts += r.failed_inserts;
    total.erases += r.erases;
    total.sole_blocks += r.sole_blocks;
    held += r.held.size();
    for (std::uint64_t key : r.held) missing_after += !filter.contains(key);
  }
  const std::size_t exclusive = filter.visit([](const auto& f) { return f.exclusive_inserts(); });
  std::printf(
      "stress_checked: %u threads, b=%u f=%u, %llu buckets, %.1f s\n"
      "  lookups %llu (false negatives %llu, low counts %llu; and %llu in batches)\n"
      "  inserts %llu (failed %llu, exclusive kick walks %zu), erases %llu (failed %llu)\n"
      "  final load %.4f, size %zu, held by the threads %zu, held keys missing after join %llu\n"
      "  blocks of %llu rounds inside a SoleWriter %llu\n",
      opt.threads, opt.bucket_size, opt.bits,
      static_cast<unsigned long long>(filter.bucket_count()), seconds,
      static_cast<unsigned long long>(total.lookups),
      static_cast<unsigned long long>(total.false_negatives),
      static_cast<unsigned long long>(total.low_counts),
      static_cast<unsigned long long>(total.batch_lookups),
      static_cast<unsigned long long>(total.inserts),
      static_cast<unsigned long long>(total.failed_inserts), exclusive,
      static_cast<unsigned long long>(total.erases),
      static_cast<unsigned long long>(total.failed_erases), filter.load_factor(), filter.size(),
      held, static_cast<unsigned long long>(missing_after),
      static_cast<unsigned long long>(opt.sole_rounds),
      static_cast<unsigned long long>(total.sole_blocks));
  const bool ok = total.false_negatives == 0 && total.low_counts == 0 && total.failed_erases == 0 &&
                  missing_after == 0 && filter.size() == held;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
