// ConcurrentFilter's lookups at the AVX2 and AVX-512 levels (concurrent/isa_concurrent_filter.hpp):
// the facade picks the best the CPU has for whole-word shapes (and CUCKOO_ISA does not cap), and
// they answer exactly as the portable lookups over the same bytes, single-key and batched (at
// AVX-512 the batch of integer keys is staged eight keys at once, detail/vector_probes.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

using cuckoo::Isa;

template <class Filter>
Isa level_of(const Filter& filter) {
  return filter.visit([](const auto& f) {
    return cuckoo::detail::table_isa<typename std::decay_t<decltype(f)>::table_type>();
  });
}

bool cpu_runs_avx2_level() {
  return CUCKOO_HAS_X86_VECTOR_PATHS && cuckoo::active_isa() >= Isa::kAvx2;
}
bool cpu_runs_avx512_level() {
  return CUCKOO_HAS_X86_VECTOR_PATHS && cuckoo::active_isa() >= Isa::kAvx512;
}
// The level the facade should take for a whole-word shape: the best vector level the CPU runs.
Isa expected_whole_word_level() {
  if (cpu_runs_avx512_level()) return Isa::kAvx512;
  return cpu_runs_avx2_level() ? Isa::kAvx2 : Isa::kPortable;
}

TEST(ConcurrentIsa, FacadePicksTheCpusLevelForWholeWordBuckets) {
  for (const unsigned f : {8u, 12u, 16u}) {
    const cuckoo::ConcurrentFilter filter{
        cuckoo::Config{.capacity = 1000, .fingerprint_bits = f, .bucket_size = 4}};
    EXPECT_EQ(level_of(filter), expected_whole_word_level()) << f;
    EXPECT_EQ(filter.isa(), level_of(filter)) << f;
    // A copy, a snapshot's way back and a loaded file take the same level.
    EXPECT_EQ(level_of(cuckoo::ConcurrentFilter(filter.to_filter())), level_of(filter));
  }
  // b = 4 with a run-time f: AVX-512 where the CPU has it (for the batches' stage), else portable.
  for (const unsigned f : {7u, 13u, 27u}) {
    const cuckoo::ConcurrentFilter filter{
        cuckoo::Config{.capacity = 1000, .fingerprint_bits = f, .bucket_size = 4}};
    EXPECT_EQ(level_of(filter), cpu_runs_avx512_level() ? Isa::kAvx512 : Isa::kPortable) << f;
    EXPECT_EQ(filter.isa(), level_of(filter)) << f;
  }
  for (const auto& [b, f] : {std::pair{2u, 8u}, std::pair{8u, 8u}}) {
    const cuckoo::ConcurrentFilter filter{
        cuckoo::Config{.capacity = 1000, .fingerprint_bits = f, .bucket_size = b}};
    EXPECT_EQ(level_of(filter), Isa::kPortable) << b << " " << f;
    EXPECT_EQ(filter.isa(), Isa::kPortable) << b << " " << f;
  }
}

#if CUCKOO_HAS_X86_VECTOR_PATHS
// The same keys into a vector-level filter and a portable one of the same layout: the same bytes,
// and for every key, present or absent, the same answer from contains, count and batch contains
// and count (batches of every length around the eight-key group and the pipeline's depth).
// kBits = 0: the run-time width f (else f = kBits).
template <unsigned kBits, Isa kLevel>
void check_same_answers(unsigned f = kBits) {
  using Portable = cuckoo::detail::ConcurrentAt<4, kBits>;
  using Vector =
      cuckoo::detail::IsaConcurrentFilter<cuckoo::detail::ConcurrentAt<4, kBits, kLevel>>;
  const cuckoo::Config cfg{.capacity = 40'000, .fingerprint_bits = f, .bucket_size = 4};
  const cuckoo::Layout layout = cuckoo::plan(cfg);
  auto portable = std::make_unique<Portable>(layout, cfg.capacity, cfg.max_kicks, cfg.seed);
  auto vector = std::make_unique<Vector>(layout, cfg.capacity, cfg.max_kicks, cfg.seed);

  const auto keys = cuckoo::test::random_keys(80'000, f);
  const std::span<const std::uint64_t> present(keys.data(), keys.size() / 2);
  const std::span<const std::uint64_t> absent(keys.data() + present.size(), present.size());
  const std::size_t in = portable->insert(present);
  ASSERT_EQ(vector->insert(present), in);
  ASSERT_GT(in, present.size() * 9 / 10);
  const auto a = portable->snapshot(), b = vector->snapshot();
  const auto x = a.table().bytes(), y = b.table().bytes();
  ASSERT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end()));

  std::size_t positives = 0;
  for (const auto k : keys) {
    const bool expected = portable->contains(k);
    ASSERT_EQ(vector->contains(k), expected) << k;
    ASSERT_EQ(vector->count(k), portable->count(k)) << k;
    positives += expected;
  }
  for (std::size_t i = 0; i < in; ++i) ASSERT_TRUE(vector->contains(present[i])) << i;
  // Some absent keys must match a fingerprint, or the test would not compare the hit path's
  // lanes for them: expected about in · 2b / 2^f (e.g. 33 at f = 12, 0.1 at f = 16).
  if (f <= 12) {
    EXPECT_GT(positives, in);
  }

  std::vector<char> batch_storage(keys.size());
  const std::span<bool> batch(reinterpret_cast<bool*>(batch_storage.data()), keys.size());
  vector->contains(std::span<const std::uint64_t>(keys), batch);
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(batch[i], portable->contains(keys[i]));

  // Short batches from several offsets: lengths 0..137 cover a partial group, whole groups and
  // the pipeline's depth (64) with every tail, for counts too.
  std::vector<std::size_t> counts(keys.size());
  for (const std::size_t offset : {std::size_t{0}, std::size_t{3}, present.size() - 70}) {
    for (std::size_t length = 0; length <= 137; ++length) {
      const std::span<const std::uint64_t> part(keys.data() + offset, length);
      vector->contains(part, batch.first(length));
      vector->count(part, std::span<std::size_t>(counts).first(length));
      for (std::size_t i = 0; i < length; ++i) {
        ASSERT_EQ(batch[i], portable->contains(part[i])) << offset << " " << length << " " << i;
        ASSERT_EQ(counts[i], portable->count(part[i])) << offset << " " << length << " " << i;
      }
    }
  }
}

TEST(ConcurrentIsa, Avx2LookupsAnswerAsThePortableOnes) {
  if (!cpu_runs_avx2_level()) GTEST_SKIP() << "this CPU (or CUCKOO_ISA) does not run AVX2";
  check_same_answers<8, Isa::kAvx2>();
  check_same_answers<12, Isa::kAvx2>();
  check_same_answers<16, Isa::kAvx2>();
}

TEST(ConcurrentIsa, Avx512LookupsAnswerAsThePortableOnes) {
  if (!cpu_runs_avx512_level()) GTEST_SKIP() << "this CPU (or CUCKOO_ISA) does not run AVX-512";
  check_same_answers<8, Isa::kAvx512>();
  check_same_answers<12, Isa::kAvx512>();
  check_same_answers<16, Isa::kAvx512>();
  check_same_answers<0, Isa::kAvx512>(7);
  check_same_answers<0, Isa::kAvx512>(13);
  check_same_answers<0, Isa::kAvx512>(27);
}

// The vector-level tables' pair lookups against the single-thread table's portable one, over
// random bytes: every bucket paired with random others and with the last bucket (whose 8-byte read
// reaches into the tail word), each slot's own entry as the value (a hit in either bucket) and
// random values (mostly misses). contains_pair is whole_word_pair (in a build without sanitizers
// each bucket read by one vpbroadcastq from memory, in sanitizer builds by __atomic_load_n);
// contains_pair_quiet_or is the single-key lookup's validated read (in a build without sanitizers
// one assembly statement: any_hit_avx2_quiet_or, or at AVX-512 any_hit_avx512_quiet_or), which
// must answer from the buckets while the activity word is quiet and call disturbed(), and answer
// what it returns, once the word shows a writer.
template <unsigned kSlots, unsigned kBits, Isa kLevel = Isa::kAvx2>
void check_table_pairs() {
  using Atomic = cuckoo::concurrent::AtomicPackedTable<kSlots, kBits, kLevel>;
  using Plain = cuckoo::PackedTable<kSlots, kBits, Isa::kPortable>;
  constexpr std::uint64_t kBuckets = 1001;
  Plain plain(kBuckets, kBits);
  cuckoo::detail::SplitMix64 next(0x5eed'0000 + kSlots * 64 + kBits);
  for (auto& byte : plain.bytes()) byte = static_cast<std::byte>(next());
  // The tail bytes past the last bucket stay as the table keeps them (zero).
  const std::size_t used = (kBuckets * kSlots * kBits + 7) / 8;
  for (std::size_t i = used; i < plain.bytes().size(); ++i) plain.bytes()[i] = std::byte{0};
  Atomic atomic(kBuckets, kBits);
  atomic.assign(plain.bytes());

  const std::uint64_t quiet = 0;
  const std::uint64_t writing = 1;  // a writer inside: the low (writer) bits are not zero
  ASSERT_TRUE(cuckoo::concurrent::StripedVersions::quiet(quiet, quiet));
  ASSERT_FALSE(cuckoo::concurrent::StripedVersions::quiet(writing, writing));
  std::size_t hits = 0, checks = 0, disturbed_calls = 0;
  for (std::uint64_t b1 = 0; b1 < kBuckets; ++b1) {
    for (const std::uint64_t b2 : {next() % kBuckets, kBuckets - 1, b1}) {
      std::vector<std::uint32_t> values;
      for (const auto e : plain.entries(b1)) values.push_back(e);
      for (const auto e : plain.entries(b2)) values.push_back(e);
      for (int r = 0; r < 4; ++r)
        values.push_back(static_cast<std::uint32_t>(next()) >> (32 - kBits));
      for (const auto v : values) {
        const bool expected = plain.contains_pair(b1, b2, v);
        ASSERT_EQ(atomic.contains_pair(b1, b2, v), expected) << b1 << " " << b2 << " " << v;
        const bool validated = atomic.contains_pair_quiet_or(&quiet, b1, b2, v, [&] {
          ADD_FAILURE() << "disturbed() under a quiet word";
          return !expected;
        });
        ASSERT_EQ(validated, expected) << b1 << " " << b2 << " " << v;
        // Disturbed, the answer is disturbed()'s, whatever the buckets hold.
        for (const bool answer : {false, true}) {
          const bool got = atomic.contains_pair_quiet_or(&writing, b1, b2, v, [&] {
            ++disturbed_calls;
            return answer;
          });
          ASSERT_EQ(got, answer) << b1 << " " << b2 << " " << v;
        }
        hits += expected;
        ++checks;
      }
    }
  }
  // The slots' own entries alone make at least 2b of every 2b + 4 values hits.
  EXPECT_GE(hits, checks * (2 * kSlots) / (2 * kSlots + 4));
  EXPECT_EQ(disturbed_calls, 2 * checks);
}

TEST(ConcurrentIsa, Avx2TableReadsAnswerAsThePortableTable) {
  if (!cpu_runs_avx2_level()) GTEST_SKIP() << "this CPU (or CUCKOO_ISA) does not run AVX2";
  check_table_pairs<4, 8>();
  check_table_pairs<4, 12>();
  check_table_pairs<4, 16>();
  check_table_pairs<2, 8>();
  check_table_pairs<2, 16>();
  check_table_pairs<2, 32>();
}

TEST(ConcurrentIsa, Avx512TableReadsAnswerAsThePortableTable) {
  if (!cpu_runs_avx512_level()) GTEST_SKIP() << "this CPU (or CUCKOO_ISA) does not run AVX-512";
  check_table_pairs<4, 8, Isa::kAvx512>();
  check_table_pairs<4, 12, Isa::kAvx512>();
  check_table_pairs<4, 16, Isa::kAvx512>();
  check_table_pairs<2, 8, Isa::kAvx512>();
  check_table_pairs<2, 16, Isa::kAvx512>();
  check_table_pairs<2, 32, Isa::kAvx512>();
}
#endif

}  // namespace
