// Run-time ISA dispatch (detail/isa.hpp, detail/isa_filter.hpp): every level this CPU runs gives
// the portable filter's answers and bytes exactly, through inserts up to a full table, failed
// inserts, duplicates, erases and batches; the facade picks the CPU's level for the shapes with
// vector compares and the portable level for the others; CUCKOO_ISA only ever lowers the level.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "cuckoo/detail/isa_filter.hpp"
#include "cuckoo/detail/rng.hpp"

namespace {

using cuckoo::Isa;

template <Isa L, unsigned b, unsigned f>
using Leveled = std::conditional_t<
    L == Isa::kPortable, cuckoo::BasicFilter<cuckoo::PackedTable<b, f, Isa::kPortable>>,
    cuckoo::detail::IsaFilter<cuckoo::BasicFilter<cuckoo::PackedTable<b, f, L>>>>;

/// Drives the filter at level L and the portable one of the same layout through the same
/// operations and requires identical answers, sizes and table bytes after each phase.
template <Isa L, unsigned b, unsigned f>
void check_level_matches_portable(unsigned bits) {
  if (cuckoo::active_isa() < L) GTEST_SKIP() << "this CPU does not run " << cuckoo::isa_name(L);
  const cuckoo::Layout layout{/*bucket_count=*/1000, bits, b, false};
  Leveled<L, b, f> fast(layout, 1000 * b, 500, 0x1234);
  Leveled<Isa::kPortable, b, f> portable(layout, 1000 * b, 500, 0x1234);
  cuckoo::detail::SplitMix64 rng(bits * 16 + b);

  // Fill until inserts fail (atomic failures must agree too), with some duplicates.
  std::vector<std::uint64_t> stored;
  for (int i = 0; i < 1000 * static_cast<int>(b) + 200; ++i) {
    const std::uint64_t key =
        (i % 17 == 0 && !stored.empty()) ? stored[rng() % stored.size()] : rng();
    const bool a = fast.insert(key);
    ASSERT_EQ(a, portable.insert(key)) << "insert " << i;
    if (a) stored.push_back(key);
  }
  ASSERT_EQ(fast.size(), portable.size());
  ASSERT_TRUE(std::ranges::equal(fast.table().bytes(), portable.table().bytes()));

  // No false negatives; the same answers for absent keys and for counts.
  for (const std::uint64_t key : stored) {
    ASSERT_TRUE(fast.contains(key));
    ASSERT_EQ(fast.count(key), portable.count(key));
  }
  std::vector<std::uint64_t> probes(20000);
  for (auto& p : probes) p = rng();
  probes.insert(probes.end(), stored.begin(), stored.end());
  std::vector<char> single(probes.size());
  for (std::size_t i = 0; i < probes.size(); ++i) {
    single[i] = fast.contains(probes[i]);
    ASSERT_EQ(static_cast<bool>(single[i]), portable.contains(probes[i])) << i;
    ASSERT_EQ(fast.contains_hash(probes[i]), portable.contains_hash(probes[i]));
  }
  std::unique_ptr<bool[]> batch(new bool[probes.size()]);
  fast.contains(std::span<const std::uint64_t>(probes),
                std::span<bool>(batch.get(), probes.size()));
  for (std::size_t i = 0; i < probes.size(); ++i) ASSERT_EQ(batch[i], static_cast<bool>(single[i]));
  // Counts: the vector levels count both buckets from one pair mask, the portable one per bucket.
  std::vector<std::size_t> fast_counts(probes.size()), portable_counts(probes.size());
  fast.count(std::span<const std::uint64_t>(probes), std::span<std::size_t>(fast_counts));
  portable.count(std::span<const std::uint64_t>(probes), std::span<std::size_t>(portable_counts));
  ASSERT_EQ(fast_counts, portable_counts);
  for (std::size_t i = 0; i < probes.size(); i += 97)
    ASSERT_EQ(fast_counts[i], fast.count(probes[i]));

  // Erase half one key at a time, the rest as a batch; absent keys as well.
  const std::size_t half = stored.size() / 2;
  for (std::size_t i = 0; i < half; ++i) {
    ASSERT_TRUE(fast.erase(stored[i]));
    ASSERT_TRUE(portable.erase(stored[i]));
  }
  const std::span<const std::uint64_t> rest(stored.data() + half, stored.size() - half);
  ASSERT_EQ(fast.erase(rest), rest.size());
  ASSERT_EQ(portable.erase(rest), rest.size());
  EXPECT_EQ(fast.size(), 0u);
  EXPECT_TRUE(std::ranges::equal(fast.table().bytes(), portable.table().bytes()));
}

#define LEVEL_TESTS(LEVEL, NAME)                              \
  TEST(IsaDispatch, NAME##MatchesPortableB4F8) {              \
    check_level_matches_portable<LEVEL, 4, 8>(8);             \
  }                                                           \
  TEST(IsaDispatch, NAME##MatchesPortableB4F12) {             \
    check_level_matches_portable<LEVEL, 4, 12>(12);           \
  }                                                           \
  TEST(IsaDispatch, NAME##MatchesPortableB4F16) {             \
    check_level_matches_portable<LEVEL, 4, 16>(16);           \
  }                                                           \
  TEST(IsaDispatch, NAME##MatchesPortableB4RuntimeWidths) {   \
    for (unsigned bits : {5u, 9u, 13u, 14u, 15u, 23u}) {      \
      SCOPED_TRACE(bits);                                     \
      check_level_matches_portable<LEVEL, 4, 0>(bits);        \
    }                                                         \
  }                                                           \
  TEST(IsaDispatch, NAME##MatchesPortableB2RuntimeWidths) {   \
    for (unsigned bits : {3u, 7u, 12u, 19u, 28u, 29u, 32u}) { \
      SCOPED_TRACE(bits);                                     \
      check_level_matches_portable<LEVEL, 2, 0>(bits);        \
    }                                                         \
  }

#if CUCKOO_HAS_X86_VECTOR_PATHS
LEVEL_TESTS(Isa::kAvx2, Avx2)
LEVEL_TESTS(Isa::kAvx512, Avx512)
#endif

/// The growable b = 4 filter at level L against the portable one: the same Config grown through
/// doublings from 13- to 31-bit slots (past 30 bits the vector compare gives way to the scalar
/// one), with erases and batches, must hold identical bytes and give identical answers. At
/// AVX-512 the batches read 8, 12 or 16 bytes per bucket as the slots widen (window_bytes): the
/// targets below take them through all three and across each change.
template <Isa L>
void check_growable_level_matches_portable(double target_fpr, std::size_t keys) {
  if (cuckoo::active_isa() < L) GTEST_SKIP() << "this CPU does not run " << cuckoo::isa_name(L);
  using Fast = std::conditional_t<
      L == Isa::kPortable, cuckoo::BasicGrowableFilter<4, cuckoo::Xxh3Hasher, Isa::kPortable>,
      cuckoo::detail::IsaFilter<cuckoo::BasicGrowableFilter<4, cuckoo::Xxh3Hasher, L>>>;
  const cuckoo::Config cfg{.capacity = 500, .target_fpr = target_fpr, .growable = true};
  Fast fast(cfg);
  cuckoo::BasicGrowableFilter<4, cuckoo::Xxh3Hasher, Isa::kPortable> portable(cfg);
  cuckoo::detail::SplitMix64 rng(keys);
  std::vector<std::uint64_t> stored;
  unsigned checked_doublings = 0;
  for (std::size_t i = 0; i < keys; ++i) {
    const std::uint64_t key =
        (i % 13 == 0 && !stored.empty()) ? stored[rng() % stored.size()] : rng();
    const bool a = fast.insert(key);
    ASSERT_EQ(a, portable.insert(key)) << "insert " << i;
    if (a) stored.push_back(key);
    if (fast.doublings() == checked_doublings && i + 1 != keys) continue;
    checked_doublings = fast.doublings();
    SCOPED_TRACE(std::to_string(checked_doublings) + " doublings, slots of " +
                 std::to_string(fast.slot_bits()) + " bits");
    ASSERT_TRUE(std::ranges::equal(fast.table().bytes(), portable.table().bytes()));
    std::vector<std::uint64_t> probes(20000);
    for (auto& p : probes) p = rng();
    probes.insert(probes.end(), stored.end() - std::min<std::size_t>(stored.size(), 5000),
                  stored.end());
    std::size_t hits = 0;
    for (const std::uint64_t p : probes) {
      const bool hit = fast.contains(p);
      ASSERT_EQ(hit, portable.contains(p)) << p;
      ASSERT_EQ(fast.count(p), portable.count(p)) << p;
      hits += hit;
    }
    EXPECT_GE(hits, std::min<std::size_t>(stored.size(), 5000));  // and some false positives
    std::unique_ptr<bool[]> batch(new bool[probes.size()]);
    fast.contains(std::span<const std::uint64_t>(probes),
                  std::span<bool>(batch.get(), probes.size()));
    for (std::size_t j = 0; j < probes.size(); ++j) {
      ASSERT_EQ(batch[j], portable.contains(probes[j])) << j;
    }
  }
  for (const std::uint64_t key : stored) ASSERT_TRUE(fast.contains(key));
  const std::size_t half = stored.size() / 2;
  for (std::size_t i = 0; i < half; ++i) {
    ASSERT_EQ(fast.erase(stored[i]), portable.erase(stored[i]));
  }
  const std::span<const std::uint64_t> rest(stored.data() + half, stored.size() - half);
  ASSERT_EQ(fast.erase(rest), portable.erase(rest));
  EXPECT_EQ(fast.size(), portable.size());
  EXPECT_TRUE(std::ranges::equal(fast.table().bytes(), portable.table().bytes()));
}

#if CUCKOO_HAS_X86_VECTOR_PATHS
TEST(IsaDispatch, GrowableAvx2MatchesPortable) {
  check_growable_level_matches_portable<Isa::kAvx2>(0.01, 100'000);  // 13-bit slots, then wider
  check_growable_level_matches_portable<Isa::kAvx2>(1e-7, 40'000);   // 29, 30, then 31: scalar
}
TEST(IsaDispatch, GrowableAvx512MatchesPortable) {
  check_growable_level_matches_portable<Isa::kAvx512>(0.01, 100'000);
  check_growable_level_matches_portable<Isa::kAvx512>(5e-4, 40'000);  // 16 -> 17 bits: 8 -> 12
  check_growable_level_matches_portable<Isa::kAvx512>(2e-6, 40'000);  // 24 -> 25 bits: 12 -> 16
  check_growable_level_matches_portable<Isa::kAvx512>(1e-7, 40'000);
}
#endif

/// The approximate map at level L against the portable one of the same layout: inserts to a
/// full table (failed ones included), duplicates, single and batched finds, single and batched
/// erases of pairs; the same values in the same order, the same fingerprint and value bytes.
template <Isa L, unsigned b, unsigned f>
void check_map_level_matches_portable(unsigned bits) {
  if (cuckoo::active_isa() < L) GTEST_SKIP() << "this CPU does not run " << cuckoo::isa_name(L);
  using Portable =
      cuckoo::BasicApproximateMap<cuckoo::PackedTable<b, f, Isa::kPortable>, std::uint16_t>;
  using Fast = cuckoo::detail::IsaMap<
      cuckoo::BasicApproximateMap<cuckoo::PackedTable<b, f, L>, std::uint16_t>>;
  const cuckoo::Layout layout{/*bucket_count=*/500, bits, b, false};
  Fast fast(layout, 500 * b, 500, 0x77);
  Portable portable(layout, 500 * b, 500, 0x77);
  cuckoo::detail::SplitMix64 rng(bits * 16 + b);
  std::vector<std::uint64_t> stored;
  for (int i = 0; i < 500 * static_cast<int>(b) + 100; ++i) {
    const std::uint64_t key =
        (i % 11 == 0 && !stored.empty()) ? stored[rng() % stored.size()] : rng();
    const auto value = static_cast<std::uint16_t>(i);
    const bool a = fast.insert(key, value);
    ASSERT_EQ(a, portable.insert(key, value)) << "insert " << i;
    if (a) stored.push_back(key);
  }
  ASSERT_TRUE(std::ranges::equal(fast.table().bytes(), portable.table().bytes()));
  ASSERT_TRUE(std::ranges::equal(fast.value_bytes_span(), portable.value_bytes_span()));
  std::vector<std::uint64_t> probes(5000);
  for (auto& p : probes) p = rng();
  probes.insert(probes.end(), stored.begin(), stored.end());
  std::uint16_t got_fast[16], got_portable[16];
  for (const std::uint64_t p : probes) {
    const std::size_t n = fast.find(p, std::span<std::uint16_t>(got_fast));
    ASSERT_EQ(n, portable.find(p, std::span<std::uint16_t>(got_portable)));
    ASSERT_TRUE(std::equal(got_fast, got_fast + std::min<std::size_t>(n, 16), got_portable));
    ASSERT_EQ(fast.contains(p), portable.contains(p));
  }
  std::vector<std::uint16_t> batch_fast, batch_portable;
  std::vector<std::size_t> ends_fast(probes.size()), ends_portable(probes.size());
  fast.find(std::span<const std::uint64_t>(probes), batch_fast, std::span<std::size_t>(ends_fast));
  portable.find(std::span<const std::uint64_t>(probes), batch_portable,
                std::span<std::size_t>(ends_portable));
  ASSERT_EQ(batch_fast, batch_portable);
  ASSERT_EQ(ends_fast, ends_portable);
  for (std::size_t i = 0; i < stored.size(); i += 2) {
    const std::vector<std::uint16_t> values = portable.find(stored[i]);
    ASSERT_FALSE(values.empty());
    ASSERT_EQ(fast.erase(stored[i], values.front()), portable.erase(stored[i], values.front()));
  }
  // The rest as a batch (a key whose copies are all gone asks for a pair that is not there).
  std::vector<std::uint64_t> rest_keys;
  std::vector<std::uint16_t> rest_values;
  for (std::size_t i = 1; i < stored.size(); i += 2) {
    const std::vector<std::uint16_t> values = portable.find(stored[i]);
    rest_keys.push_back(stored[i]);
    rest_values.push_back(values.empty() ? std::uint16_t{0} : values.front());
  }
  ASSERT_EQ(fast.erase(std::span<const std::uint64_t>(rest_keys),
                       std::span<const std::uint16_t>(rest_values)),
            portable.erase(std::span<const std::uint64_t>(rest_keys),
                           std::span<const std::uint16_t>(rest_values)));
  EXPECT_EQ(fast.size(), portable.size());
  EXPECT_TRUE(std::ranges::equal(fast.table().bytes(), portable.table().bytes()));
}

#if CUCKOO_HAS_X86_VECTOR_PATHS
TEST(IsaDispatch, MapAvx2MatchesPortable) {
  check_map_level_matches_portable<Isa::kAvx2, 4, 12>(12);
  check_map_level_matches_portable<Isa::kAvx2, 4, 8>(8);
  check_map_level_matches_portable<Isa::kAvx2, 4, 16>(16);
  for (unsigned bits : {5u, 13u, 20u}) check_map_level_matches_portable<Isa::kAvx2, 4, 0>(bits);
  for (unsigned bits : {7u, 12u, 29u}) check_map_level_matches_portable<Isa::kAvx2, 2, 0>(bits);
}
#endif

TEST(IsaDispatch, FacadeUsesTheCpuLevelForVectorShapesOnly) {
  const Isa cpu = cuckoo::active_isa();
  std::printf("active ISA level: %s\n", cuckoo::isa_name(cpu).data());
  const cuckoo::Filter b4f12{cuckoo::Config{.capacity = 10000, .fingerprint_bits = 12}};
  EXPECT_EQ(b4f12.isa(), cpu);
  const cuckoo::Filter b4f13{cuckoo::Config{.capacity = 10000}};  // the default ε: f = 13
  EXPECT_EQ(b4f13.isa(), cpu);
  const cuckoo::Filter b2{cuckoo::Config{.capacity = 10000, .bucket_size = 2}};
  EXPECT_EQ(b2.isa(), cpu);
  const cuckoo::Filter b8{cuckoo::Config{.capacity = 10000, .bucket_size = 8}};
  EXPECT_EQ(b8.isa(), Isa::kPortable);
  const cuckoo::Filter semi{cuckoo::Config{.capacity = 10000, .semi_sort = true}};
  EXPECT_EQ(semi.isa(), Isa::kPortable);
  // The approximate maps: the vector shapes at AVX2 (their compares use nothing wider) where the
  // CPU has it, at the build's level where its flags enable AVX2; loaded ones too. Growable
  // b = 4: at the CPU's level (it has an AVX-512 compare and batch stage), or the build's where
  // its flags enable AVX-512.
  const Isa vector_level =
      cuckoo::kCompiledIsa >= Isa::kAvx2 ? cuckoo::kCompiledIsa : std::min(cpu, Isa::kAvx2);
  const Isa growable_level = cuckoo::kCompiledIsa >= Isa::kAvx512 ? cuckoo::kCompiledIsa : cpu;
  const cuckoo::Filter grow4{cuckoo::Config{.capacity = 1000, .growable = true}};
  EXPECT_EQ(grow4.isa(), growable_level);
  const cuckoo::Filter grow2{cuckoo::Config{.capacity = 1000, .bucket_size = 2, .growable = true}};
  EXPECT_EQ(grow2.isa(), Isa::kPortable);
  const cuckoo::ApproximateMap<std::uint32_t> map12{cuckoo::Config{.capacity = 1000}};
  EXPECT_EQ(map12.isa(), vector_level);
  EXPECT_EQ(cuckoo::ApproximateMap<std::uint32_t>::deserialize(map12.serialize()).isa(),
            vector_level);
  const cuckoo::ApproximateMap<std::uint32_t> map8{
      cuckoo::Config{.capacity = 1000, .bucket_size = 8}};
  EXPECT_EQ(map8.isa(), Isa::kPortable);
  // A loaded growable filter takes the CPU's level too.
  EXPECT_EQ(cuckoo::Filter::deserialize(grow4.serialize()).isa(), growable_level);
}

TEST(IsaDispatch, SavedBytesDoNotDependOnTheLevel) {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 5000, .fingerprint_bits = 12}};
  for (std::uint64_t k = 0; k < 5000; ++k) ASSERT_TRUE(filter.insert(k));
  const auto bytes = filter.serialize();
  const cuckoo::Filter loaded = cuckoo::Filter::deserialize(bytes);
  EXPECT_EQ(loaded.isa(), filter.isa());
  EXPECT_EQ(loaded.serialize(), bytes);
  for (std::uint64_t k = 0; k < 5000; ++k) ASSERT_TRUE(loaded.contains(k));
}

// popcount_at writes POPCNT out at the vector levels in builds without -mpopcnt: it must count
// as std::popcount does, at every level this CPU runs (the edges and random words).
TEST(IsaDispatch, PopcountAtEveryLevelIsStdPopcount) {
  cuckoo::detail::SplitMix64 rng(7);
  std::vector<std::uint64_t> words = {0, 1, ~std::uint64_t{0}, std::uint64_t{1} << 63};
  for (int i = 0; i < 1000; ++i) words.push_back(rng() & rng());
  for (const std::uint64_t x : words) {
    const auto expected = static_cast<unsigned>(std::popcount(x));
    ASSERT_EQ(cuckoo::detail::popcount_at<cuckoo::Isa::kPortable>(x), expected) << x;
    if (cuckoo::active_isa() >= cuckoo::Isa::kAvx2) {
      ASSERT_EQ(cuckoo::detail::popcount_at<cuckoo::Isa::kAvx2>(x), expected) << x;
    }
    if (cuckoo::active_isa() >= cuckoo::Isa::kAvx512) {
      ASSERT_EQ(cuckoo::detail::popcount_at<cuckoo::Isa::kAvx512>(x), expected) << x;
    }
  }
}

TEST(IsaDispatch, EnvironmentOnlyLowersTheLevel) {
  const char* saved = std::getenv("CUCKOO_ISA");
  const std::string restore = saved ? saved : "";
  ::unsetenv("CUCKOO_ISA");
  const Isa cpu = cuckoo::detail::detect_cpu_isa();
  ::setenv("CUCKOO_ISA", "portable", 1);
  EXPECT_EQ(cuckoo::detail::detect_cpu_isa(), Isa::kPortable);
  ::setenv("CUCKOO_ISA", "avx2", 1);
  EXPECT_EQ(cuckoo::detail::detect_cpu_isa(), std::min(cpu, Isa::kAvx2));
  ::setenv("CUCKOO_ISA", "avx512", 1);
  EXPECT_EQ(cuckoo::detail::detect_cpu_isa(), cpu);  // never more than the CPU has
  ::setenv("CUCKOO_ISA", "sse9", 1);
  EXPECT_EQ(cuckoo::detail::detect_cpu_isa(), cpu);  // unknown names change nothing
  if (saved) {
    ::setenv("CUCKOO_ISA", restore.c_str(), 1);
  } else {
    ::unsetenv("CUCKOO_ISA");
  }
}

}  // namespace
