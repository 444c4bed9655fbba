// detail/vector_probes.hpp: the batch lookups' stage of eight integer keys at once (AVX-512) gives
// exactly the scalar probes, and the grouped pipeline answers exactly as single-key calls, for
// every batch length around its groups and depth, for the filters and the approximate map. Skipped
// where the CPU lacks AVX-512.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "cuckoo/detail/vector_probes.hpp"

namespace {

using cuckoo::Isa;

bool cpu_runs_avx512() {
  return cuckoo::detail::detect_cpu_isa() == Isa::kAvx512;
}

#if CUCKOO_HAS_X86_VECTOR_PATHS

/// Keys that reach the edges of every step: 0, all ones, single bits, halves, and random ones.
std::vector<std::uint64_t> probe_keys(std::size_t random_count, std::uint64_t seed) {
  std::vector<std::uint64_t> keys = {0,
                                     ~std::uint64_t{0},
                                     1,
                                     0xFFFF'FFFFu,
                                     0xFFFF'FFFF'0000'0000u,
                                     0x8000'0000'0000'0000u,
                                     0x7FFF'FFFF'FFFF'FFFFu};
  for (unsigned bit = 0; bit < 64; ++bit) keys.push_back(std::uint64_t{1} << bit);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < random_count; ++i) keys.push_back(rng());
  while (keys.size() % 8 != 0) keys.push_back(rng());
  return keys;
}

TEST(VectorProbes, EqualTheScalarProbesForEveryKey) {
  if (!cpu_runs_avx512()) GTEST_SKIP() << "the CPU has no AVX-512";
  const std::uint64_t bucket_counts[] = {2, 6, 26'738, 34'092'740, 0x8000'0000u, 0xFFFF'FFFEu};
  const unsigned widths[] = {1, 4, 8, 12, 13, 16, 20, 31, 32};
  const std::uint64_t seeds[] = {0, 1, 0x5EED'5EED'5EED'5EEDu, ~std::uint64_t{0}};
  const std::vector<std::uint64_t> keys = probe_keys(4000, 7);
  for (const std::uint64_t m : bucket_counts) {
    for (const unsigned f : widths) {
      const cuckoo::Addressing addressing(m, f);
      const cuckoo::detail::Prober<false> computed{addressing, nullptr, false};
      // The offset table as filters of f ≤ 12 keep it (detail::offset_table, every size).
      const std::vector<std::uint32_t> offsets =
          cuckoo::detail::offset_table(addressing, f, 0, 12, 0);
      const cuckoo::detail::Prober<true> tabled{addressing, offsets.data(), !offsets.empty()};
      for (const std::uint64_t seed : seeds) {
        const cuckoo::Xxh3Hasher hasher(seed);
        const auto constants = cuckoo::detail::vector_probe_constants(addressing, hasher);
        for (std::size_t i = 0; i < keys.size(); i += 8) {
          cuckoo::detail::ProbeGroup group;
          cuckoo::detail::vector_probes_avx512(keys.data() + i, constants, group);
          for (std::size_t j = 0; j < 8; ++j) {
            const cuckoo::detail::Probe want = computed(hasher(keys[i + j]));
            const cuckoo::detail::Probe also = tabled(hasher(keys[i + j]));
            const cuckoo::detail::Probe got = group[j];
            ASSERT_EQ(got.bucket, want.bucket) << "m " << m << " f " << f << " key " << keys[i + j];
            ASSERT_EQ(got.alt, want.alt) << "m " << m << " f " << f << " key " << keys[i + j];
            ASSERT_EQ(got.fingerprint, want.fingerprint) << "m " << m << " f " << f;
            ASSERT_EQ(got.alt, also.alt) << "m " << m << " f " << f;
            ASSERT_LT(got.bucket, m);
            ASSERT_LT(got.alt, m);
          }
        }
      }
    }
  }
}

#endif  // CUCKOO_HAS_X86_VECTOR_PATHS

/// Batch contains and count against the single-key calls, over lengths around the pipeline's
/// groups (8) and depth (64): the warm-up alone, the tail after the groups, both.
template <class FilterType, class K>
void check_batches_answer_as_single_keys(FilterType& filter, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<K> stored;
  for (std::size_t i = 0; i < filter.capacity() * 9 / 10; ++i) {
    const K key = static_cast<K>(rng());
    if (filter.insert(key)) stored.push_back(key);
  }
  ASSERT_GT(stored.size(), filter.capacity() / 2);
  const std::size_t lengths[] = {0, 1, 7, 8, 9, 63, 64, 65, 71, 72, 127, 128, 129, 1000, 4099};
  for (const std::size_t n : lengths) {
    std::vector<K> keys(n);
    for (std::size_t i = 0; i < n; ++i) {
      keys[i] = (i % 3 == 0) ? static_cast<K>(rng()) : stored[rng() % stored.size()];
    }
    std::vector<unsigned char> answers(n + 1, 2);
    std::vector<std::size_t> counts(n + 1, 99);
    filter.contains(std::span<const K>(keys),
                    std::span<bool>(reinterpret_cast<bool*>(answers.data()), n));
    filter.count(std::span<const K>(keys), std::span<std::size_t>(counts.data(), n));
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(answers[i] != 0, filter.contains(keys[i])) << "length " << n << " key " << i;
      ASSERT_EQ(counts[i], filter.count(keys[i])) << "length " << n << " key " << i;
    }
    EXPECT_EQ(answers[n], 2) << "wrote past the batch";
    EXPECT_EQ(counts[n], 99u) << "wrote past the batch";
  }
  // No false negatives in one long batch of stored keys.
  std::vector<unsigned char> answers(stored.size());
  filter.contains(std::span<const K>(stored),
                  std::span<bool>(reinterpret_cast<bool*>(answers.data()), stored.size()));
  for (std::size_t i = 0; i < stored.size(); ++i) ASSERT_NE(answers[i], 0) << "stored key " << i;
}

TEST(VectorProbes, FilterBatchesAnswerAsSingleKeys) {
  // The facade takes the vector stage for 64-bit integer keys where the CPU has AVX-512; the same
  // checks elsewhere test the scalar stage.
  for (const unsigned f : {8u, 12u, 13u, 16u}) {
    SCOPED_TRACE(testing::Message() << "f " << f);
    cuckoo::Filter filter{cuckoo::Config{.capacity = 20'000, .fingerprint_bits = f}};
    check_batches_answer_as_single_keys<cuckoo::Filter, std::uint64_t>(filter, f);
    cuckoo::Filter signed_keys{cuckoo::Config{.capacity = 5'000, .fingerprint_bits = f}};
    check_batches_answer_as_single_keys<cuckoo::Filter, std::int64_t>(signed_keys, f + 100);
  }
  cuckoo::Filter b2{cuckoo::Config{.capacity = 10'000, .bucket_size = 2}};
  check_batches_answer_as_single_keys<cuckoo::Filter, std::uint64_t>(b2, 3);
  cuckoo::Filter b8{cuckoo::Config{.capacity = 10'000, .bucket_size = 8}};
  check_batches_answer_as_single_keys<cuckoo::Filter, std::uint64_t>(b8, 4);
}

#if CUCKOO_HAS_X86_VECTOR_PATHS
TEST(VectorProbes, AvxLevelTablesNamedDirectlyAnswerAsSingleKeys) {
  if (!cpu_runs_avx512()) GTEST_SKIP() << "the CPU has no AVX-512";
  cuckoo::BasicFilter<cuckoo::PackedTable<4, 12, Isa::kAvx512>> filter{
      cuckoo::Config{.capacity = 20'000, .fingerprint_bits = 12}};
  check_batches_answer_as_single_keys<decltype(filter), std::uint64_t>(filter, 5);
  cuckoo::BasicConcurrentFilter<cuckoo::concurrent::AtomicPackedTable<4, 12, Isa::kAvx512>>
      concurrent{cuckoo::Config{.capacity = 20'000, .fingerprint_bits = 12}};
  check_batches_answer_as_single_keys<decltype(concurrent), std::uint64_t>(concurrent, 6);
}
#endif

/// The map's batch contains, count and find against its single-key calls, over lengths around
/// the groups (8), the value stage's lag (32) and the depth (64), with some keys stored twice
/// (two values) so that find's several-match path runs too.
template <class MapType>
void check_map_batches_answer_as_single_keys(MapType& map, std::uint64_t seed) {
  using V = typename MapType::value_type;
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> stored;
  for (std::size_t i = 0; i < map.capacity() * 9 / 10; ++i) {
    const std::uint64_t key = rng();
    if (map.insert(key, static_cast<V>(key >> 7))) stored.push_back(key);
  }
  ASSERT_GT(stored.size(), map.capacity() / 2);
  for (std::size_t i = 0; i < stored.size(); i += 11) map.insert(stored[i], V{5});
  const std::size_t lengths[] = {0,  1,  7,  8,  9,   31,  32,  33,  63,   64,  65,
                                 71, 95, 96, 97, 127, 128, 129, 137, 1000, 4099};
  for (const std::size_t n : lengths) {
    std::vector<std::uint64_t> keys(n);
    for (std::size_t i = 0; i < n; ++i)
      keys[i] = (i % 3 == 0) ? rng() : stored[rng() % stored.size()];
    std::vector<unsigned char> answers(n + 1, 2);
    std::vector<std::size_t> counts(n + 1, 99), ends(n + 1, 99);
    std::vector<V> found;
    map.contains(std::span<const std::uint64_t>(keys),
                 std::span<bool>(reinterpret_cast<bool*>(answers.data()), n));
    map.count(std::span<const std::uint64_t>(keys), std::span<std::size_t>(counts.data(), n));
    map.find(std::span<const std::uint64_t>(keys), found, std::span<std::size_t>(ends.data(), n));
    std::size_t begin = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(answers[i] != 0, map.contains(keys[i])) << "length " << n << " key " << i;
      ASSERT_EQ(counts[i], map.count(keys[i])) << "length " << n << " key " << i;
      const std::vector<V> single = map.find(keys[i]);
      ASSERT_EQ(std::vector<V>(found.begin() + static_cast<std::ptrdiff_t>(begin),
                               found.begin() + static_cast<std::ptrdiff_t>(ends[i])),
                single)
          << "length " << n << " key " << i;
      begin = ends[i];
    }
    ASSERT_EQ(begin, found.size());
    EXPECT_EQ(answers[n], 2) << "wrote past the batch";
    EXPECT_EQ(counts[n], 99u) << "wrote past the batch";
    EXPECT_EQ(ends[n], 99u) << "wrote past the batch";
  }
  // Every stored key's own value comes back from one long batch find.
  std::vector<V> found;
  std::vector<std::size_t> ends(stored.size());
  map.find(std::span<const std::uint64_t>(stored), found, std::span<std::size_t>(ends));
  std::size_t begin = 0;
  for (std::size_t i = 0; i < stored.size(); ++i) {
    const auto first = found.begin() + static_cast<std::ptrdiff_t>(begin);
    const auto last = found.begin() + static_cast<std::ptrdiff_t>(ends[i]);
    ASSERT_NE(std::find(first, last, static_cast<V>(stored[i] >> 7)), last) << "stored key " << i;
    begin = ends[i];
  }
}

TEST(VectorProbes, MapBatchesAnswerAsSingleKeys) {
  // The facade: the vector stage where the build's flags have AVX-512, else the scalar one.
  for (const unsigned f : {8u, 12u, 13u}) {
    SCOPED_TRACE(testing::Message() << "f " << f);
    cuckoo::ApproximateMap<std::uint32_t> map{
        cuckoo::Config{.capacity = 20'000, .fingerprint_bits = f}};
    check_map_batches_answer_as_single_keys(map, f + 20);
  }
}

#if CUCKOO_HAS_X86_VECTOR_PATHS
TEST(VectorProbes, Avx512LevelMapsNamedDirectlyAnswerAsSingleKeys) {
  // AVX-512-level maps named directly take the vector stage in every build.
  if (!cpu_runs_avx512()) GTEST_SKIP() << "the CPU has no AVX-512";
  cuckoo::BasicApproximateMap<cuckoo::PackedTable<4, 12, Isa::kAvx512>, std::uint32_t> wide{
      cuckoo::Config{.capacity = 20'000, .fingerprint_bits = 12}};
  check_map_batches_answer_as_single_keys(wide, 41);
  cuckoo::BasicApproximateMap<cuckoo::PackedTable<4, 0, Isa::kAvx512>, std::uint16_t> runtime_f{
      cuckoo::Config{.capacity = 20'000, .fingerprint_bits = 7}};
  check_map_batches_answer_as_single_keys(runtime_f, 42);
  cuckoo::BasicApproximateMap<cuckoo::PackedTable<2, 0, Isa::kAvx512>, std::uint64_t> b2{
      cuckoo::Config{.capacity = 20'000, .fingerprint_bits = 9, .bucket_size = 2}};
  check_map_batches_answer_as_single_keys(b2, 43);
}
#endif

TEST(VectorProbes, ConcurrentFilterBatchesAnswerAsSingleKeys) {
  for (const unsigned f : {8u, 12u, 13u}) {
    SCOPED_TRACE(testing::Message() << "f " << f);
    cuckoo::ConcurrentFilter filter{cuckoo::Config{.capacity = 20'000, .fingerprint_bits = f}};
    check_batches_answer_as_single_keys<cuckoo::ConcurrentFilter, std::uint64_t>(filter, f + 7);
  }
}

}  // namespace
