// Linearizability of short recorded histories (Wing and Gong's check with memoisation, as in
// Lowe's "Testing for linearizability", 2017).
//
// 3 or 4 threads each run a few random operations (insert, erase, contains, count) on keys from a
// small universe against a table of a few buckets, so inserts displace, fail and fall back to the
// exclusive kick walk, and operations overlap. Each operation's invocation and response are
// stamped from one atomic counter. The history is linearizable if some order of the operations
// that respects real time (A before B whenever A responded before B was invoked) gives every
// recorded result when run against the sequential model.
//
// The model tracks fingerprints in buckets, not keys: an entry with fingerprint v in bucket i has
// the signature (v, {i, alt(i, v)}), and a key's signature is (fp, {i1, i2}). A key's lookup and
// count see exactly the entries that share its signature, so the model is a multiset of
// signatures: insert adds one (when the insert returned true; a false insert changes nothing),
// erase removes one and returns whether there was one, contains is "one is present", count is how
// many. False positives are part of the model, not noise: count() must be exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "cuckoo/detail/rng.hpp"

namespace {

enum class Kind { kInsert, kErase, kContains, kCount };

struct Operation {
  Kind kind;
  std::uint64_t key;
  std::uint64_t invoked = 0, responded = 0;
  std::size_t result = 0;  // bool results as 0 / 1
};

using Signature = std::pair<std::uint32_t, std::uint64_t>;  // (fp, lower bucket of the pair)
using Model = std::map<Signature, unsigned>;

Signature signature_of(const cuckoo::ConcurrentFilter& filter, std::uint64_t key) {
  return filter.visit([&](const auto& f) {
    const cuckoo::Position pos = f.addressing().position(cuckoo::hash_key(f.hasher(), key));
    const std::uint64_t alt = f.alternate(pos.bucket, pos.fingerprint);
    return Signature{pos.fingerprint, std::min(pos.bucket, alt)};
  });
}

/// Applies `op` to the model; false if the model cannot give op's recorded result.
bool apply(Model& model, const Signature& sig, const Operation& op) {
  const auto it = model.find(sig);
  const unsigned held = it == model.end() ? 0 : it->second;
  switch (op.kind) {
    case Kind::kInsert:
      if (op.result != 0) ++model[sig];
      return true;
    case Kind::kErase:
      if ((held > 0) != (op.result != 0)) return false;
      if (held > 0 && --model[sig] == 0) model.erase(sig);
      return true;
    case Kind::kContains:
      return (held > 0) == (op.result != 0);
    case Kind::kCount:
      return held == op.result;
  }
  return false;
}

class Checker {
 public:
  Checker(const std::vector<Operation>& ops, const std::vector<Signature>& sigs)
      : ops_(ops), sigs_(sigs) {}

  bool linearizable(const Model& initial) { return search(0, initial); }

 private:
  bool search(std::uint32_t done, const Model& model) {
    if (done == (std::uint32_t{1} << ops_.size()) - 1) return true;
    std::vector<std::pair<Signature, unsigned>> flat(model.begin(), model.end());
    if (!seen_.insert({done, flat}).second) return false;  // explored: it failed before
    // Only an operation invoked before every pending one has responded may come next.
    std::uint64_t first_response = UINT64_MAX;
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if ((done >> i & 1) == 0) first_response = std::min(first_response, ops_[i].responded);
    }
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if ((done >> i & 1) != 0 || ops_[i].invoked > first_response) continue;
      Model next = model;
      if (apply(next, sigs_[i], ops_[i]) && search(done | (std::uint32_t{1} << i), next)) {
        return true;
      }
    }
    return false;
  }

  const std::vector<Operation>& ops_;
  const std::vector<Signature>& sigs_;
  std::set<std::pair<std::uint32_t, std::vector<std::pair<Signature, unsigned>>>> seen_;
};

struct HistoryShape {
  unsigned threads;
  unsigned ops_per_thread;
  cuckoo::Layout layout;
  unsigned universe;
};

/// Runs one operation on the filter and records its result.
void run_operation(cuckoo::ConcurrentFilter& filter, Operation& op) {
  switch (op.kind) {
    case Kind::kInsert:
      op.result = filter.insert(op.key);
      break;
    case Kind::kErase:
      op.result = filter.erase(op.key);
      break;
    case Kind::kContains:
      op.result = filter.contains(op.key);
      break;
    case Kind::kCount:
      op.result = filter.count(op.key);
      break;
  }
}

/// Runs `histories` random histories; returns how many were not linearizable (with a description
/// of the first). The threads live across histories and start each one together from a spinning
/// barrier, so that their operations overlap (threads started per history mostly ran one after
/// another: 0.2–0.3 overlapping pairs per history, against several with the barrier).
std::size_t run_histories(const HistoryShape& setup, std::size_t histories, std::uint64_t seed,
                          std::string& first_failure) {
  cuckoo::detail::SplitMix64 rng(seed);
  std::size_t failures = 0, overlapping_pairs = 0;
  std::unique_ptr<cuckoo::ConcurrentFilter> filter;
  std::vector<Operation> ops(setup.threads * setup.ops_per_thread);
  std::atomic<std::uint64_t> clock{0};
  std::atomic<std::size_t> generation{0};  // history h runs while generation == h + 1
  std::atomic<unsigned> finished{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < setup.threads; ++t) {
    threads.emplace_back([&, t] {
      cuckoo::detail::SplitMix64 jitter(seed + t);
      for (std::size_t seen = 0;;) {
        for (unsigned spins = 0; generation.load(std::memory_order_acquire) == seen &&
                                 !stop.load(std::memory_order_relaxed);
             ++spins) {
          if (spins > 2000) std::this_thread::yield();  // more threads than cores
        }
        if (stop.load(std::memory_order_relaxed)) return;
        ++seen;
        for (unsigned i = 0; i < setup.ops_per_thread; ++i) {
          for (auto pause = jitter() % 64; pause > 0; --pause) cuckoo::concurrent::cpu_relax();
          Operation& op = ops[t * setup.ops_per_thread + i];
          op.invoked = clock.fetch_add(1);
          run_operation(*filter, op);
          op.responded = clock.fetch_add(1);
        }
        finished.fetch_add(1, std::memory_order_release);
      }
    });
  }

  for (std::size_t h = 0; h < histories; ++h) {
    filter = std::make_unique<cuckoo::ConcurrentFilter>(setup.layout, 8, 20, rng());
    // A prefix run by one thread: the model's initial state.
    Model initial;
    const unsigned slots =
        static_cast<unsigned>(setup.layout.bucket_count * setup.layout.bucket_size);
    const unsigned prefill = slots / 2 + static_cast<unsigned>(rng() % (slots / 2 + 1));
    for (unsigned i = 0; i < prefill; ++i) {
      const std::uint64_t key = rng() % setup.universe;
      if (filter->insert(key)) ++initial[signature_of(*filter, key)];
    }
    for (Operation& op : ops) {
      const std::uint64_t r = rng();
      // Inserts into a table at least half full displace; lookups race the moves.
      const unsigned pick = r % 10;
      op.kind = pick < 4   ? Kind::kInsert
                : pick < 5 ? Kind::kErase
                : pick < 8 ? Kind::kContains
                           : Kind::kCount;
      op.key = (r >> 8) % setup.universe;
    }
    finished.store(0, std::memory_order_relaxed);
    generation.store(h + 1, std::memory_order_release);
    while (finished.load(std::memory_order_acquire) < setup.threads) std::this_thread::yield();

    for (std::size_t a = 0; a < ops.size(); ++a) {
      for (std::size_t b = 0; b < ops.size(); ++b) {
        if (a / setup.ops_per_thread != b / setup.ops_per_thread &&
            ops[a].invoked < ops[b].invoked && ops[b].invoked < ops[a].responded) {
          ++overlapping_pairs;
        }
      }
    }
    std::vector<Signature> sigs;
    for (const Operation& op : ops) sigs.push_back(signature_of(*filter, op.key));
    Checker checker(ops, sigs);
    if (!checker.linearizable(initial) && failures++ == 0) {
      static const char* const kNames[] = {"insert", "erase", "contains", "count"};
      first_failure = "history " + std::to_string(h) + ":";
      for (const Operation& op : ops) {
        first_failure += std::string(" [") + std::to_string(op.invoked) + "," +
                         std::to_string(op.responded) + "] " + kNames[static_cast<int>(op.kind)] +
                         "(" + std::to_string(op.key) + ")=" + std::to_string(op.result) + ";";
      }
    }
    // size() is exact once the threads are done.
    std::size_t model_size = 0;
    for (const auto& [sig, n] : initial) model_size += n;
    for (const Operation& op : ops) {
      if (op.kind == Kind::kInsert) model_size += op.result;
      if (op.kind == Kind::kErase) model_size -= op.result;
    }
    if (filter->size() != model_size && failures++ == 0) {
      first_failure =
          "size " + std::to_string(filter->size()) + ", model " + std::to_string(model_size);
    }
  }
  stop.store(true);
  for (auto& thread : threads) thread.join();
  std::printf("%zu histories, %.2f overlapping operation pairs per history\n", histories,
              static_cast<double>(overlapping_pairs) / static_cast<double>(histories));
  return failures;
}

std::size_t histories_to_run() {
  // Under ThreadSanitizer every operation is many times slower; the histories stay short.
  if (const char* env = std::getenv("CUCKOO_LINEARIZABILITY_HISTORIES")) {
    return std::strtoull(env, nullptr, 10);
  }
  return 3000;
}

TEST(ConcurrentLinearizability, ThreeThreadsTwoSlotBuckets) {
  std::string failure;
  const HistoryShape setup{3, 5, cuckoo::Layout{4, 4, 2, false}, 12};
  EXPECT_EQ(run_histories(setup, histories_to_run(), 11, failure), 0u) << failure;
}

TEST(ConcurrentLinearizability, FourThreadsFourSlotBuckets) {
  std::string failure;
  const HistoryShape setup{4, 4, cuckoo::Layout{4, 5, 4, false}, 24};
  EXPECT_EQ(run_histories(setup, histories_to_run(), 12, failure), 0u) << failure;
}

TEST(ConcurrentLinearizability, ThreeThreadsWideEntriesAcrossWords) {
  // f = 27, b = 8: entries straddle 64-bit words, so writes take two stores each and a reader
  // can see half of one; validation must discard such reads.
  std::string failure;
  const HistoryShape setup{3, 5, cuckoo::Layout{2, 27, 8, false}, 20};
  EXPECT_EQ(run_histories(setup, histories_to_run(), 13, failure), 0u) << failure;
}

TEST(ConcurrentLinearizability, FourThreadsWholeWordBuckets) {
  // f = 8, b = 4: 32-bit buckets, which a lookup reads with one load each, between its two loads
  // of the activity word; where the CPU has AVX2, all four in one assembly statement
  // (AtomicPackedTable::any_hit_avx2_between).
  std::string failure;
  const HistoryShape setup{4, 4, cuckoo::Layout{4, 8, 4, false}, 24};
  EXPECT_EQ(run_histories(setup, histories_to_run(), 14, failure), 0u) << failure;
}

}  // namespace
