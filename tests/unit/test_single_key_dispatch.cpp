// The facades' single-key calls (detail/single_key_dispatch.hpp: a table of entries per
// operation, the key passed by value) reach the filter the facade holds, with the key it was
// given: for every family of alternative (fixed widths at the CPU's level, run-time widths, b = 2
// and 8, semi-sorted, growable, blocked) and every key type, a Filter driven through its
// single-key calls stays identical, byte for byte and answer for answer, to a twin driven through
// visit() and the compile-time filter inside (std::visit, the dispatch the entries replace).
// ConcurrentFilter, which dispatches the same way, is checked alike, and ApproximateMap's
// single-key lookups (contains, count, find into a span).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cuckoo/cuckoo.hpp"
#include "support/test_support.hpp"

namespace {

/// The same key seen as each key type a caller may pass.
struct KeyForms {
  std::uint64_t integer;
  std::string text;
  std::vector<std::byte> bytes;

  explicit KeyForms(std::uint64_t value)
      : integer(value), text("key-" + std::to_string(value)), bytes(8) {
    for (std::size_t i = 0; i < 8; ++i) bytes[i] = static_cast<std::byte>(value >> (8 * i) ^ 0x5a);
  }
  std::span<const std::byte> span() const { return bytes; }
};

/// Calls op(f, key) on `twin`'s compile-time filter, for each form of the key in turn.
template <class Facade, class Op>
void through_visit(Facade& twin, const KeyForms& key, Op op) {
  twin.visit([&](auto& f) {
    op(f, key.integer);
    op(f, static_cast<int>(key.integer & 0x7fffffff));
    op(f, key.text);
    op(f, std::string_view(key.text));
    op(f, key.span());
  });
}

template <class Facade>
std::vector<std::byte> bytes_of(const Facade& facade) {
  if constexpr (requires { facade.to_filter(); }) {
    return facade.to_filter().serialize();
  } else {
    return facade.serialize();
  }
}

/// Drives `a` through single-key calls and `b` through visit(), alike, and expects the same.
template <class Facade>
void expect_same_as_visit(Facade a, Facade b, std::size_t keys_to_insert) {
  std::vector<KeyForms> stored;
  for (std::uint64_t value : cuckoo::test::random_keys(keys_to_insert, 41)) {
    stored.emplace_back(value);
  }
  bool every_insert_succeeded = true;
  for (const KeyForms& key : stored) {
    std::vector<bool> expected;
    through_visit(b, key, [&](auto& f, const auto& k) { expected.push_back(f.insert(k)); });
    for (bool inserted : expected) every_insert_succeeded = every_insert_succeeded && inserted;
    ASSERT_EQ(a.insert(key.integer), expected[0]);
    ASSERT_EQ(a.insert(static_cast<int>(key.integer & 0x7fffffff)), expected[1]);
    ASSERT_EQ(a.insert(key.text), expected[2]);
    ASSERT_EQ(a.insert(std::string_view(key.text)), expected[3]);
    ASSERT_EQ(a.insert(key.span()), expected[4]);
  }
  ASSERT_EQ(a.size(), b.size());
  ASSERT_TRUE(bytes_of(a) == bytes_of(b)) << "the tables differ after the inserts";

  // Stored and absent keys: the same answers (false positives included), and every stored key
  // found (no false negatives through the new dispatch).
  std::vector<KeyForms> probes = stored;
  for (std::uint64_t value : cuckoo::test::random_keys(2000, 42)) probes.emplace_back(value);
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const KeyForms& key = probes[i];
    std::vector<bool> contains;
    std::vector<std::size_t> counts;
    through_visit(b, key, [&](const auto& f, const auto& k) {
      contains.push_back(f.contains(k));
      counts.push_back(f.count(k));
    });
    ASSERT_EQ(a.contains(key.integer), contains[0]);
    ASSERT_EQ(a.contains(static_cast<int>(key.integer & 0x7fffffff)), contains[1]);
    ASSERT_EQ(a.contains(key.text), contains[2]);
    ASSERT_EQ(a.contains(std::string_view(key.text)), contains[3]);
    ASSERT_EQ(a.contains(key.text.c_str()), contains[2]);
    ASSERT_EQ(a.contains(key.span()), contains[4]);
    ASSERT_EQ(a.count(key.integer), counts[0]);
    ASSERT_EQ(a.count(key.text), counts[2]);
    ASSERT_EQ(a.count(key.span()), counts[4]);
    if (i < stored.size() && every_insert_succeeded) {
      ASSERT_TRUE(a.contains(key.integer) && a.contains(key.text) && a.contains(key.span()));
    }
  }

  // Erase every other stored key in each form: the same results, the same bytes.
  for (std::size_t i = 0; i < stored.size(); i += 2) {
    const KeyForms& key = stored[i];
    std::vector<bool> expected;
    through_visit(b, key, [&](auto& f, const auto& k) { expected.push_back(f.erase(k)); });
    ASSERT_EQ(a.erase(key.integer), expected[0]);
    ASSERT_EQ(a.erase(static_cast<int>(key.integer & 0x7fffffff)), expected[1]);
    ASSERT_EQ(a.erase(key.text), expected[2]);
    ASSERT_EQ(a.erase(std::string_view(key.text)), expected[3]);
    ASSERT_EQ(a.erase(key.span()), expected[4]);
  }
  EXPECT_EQ(a.size(), b.size());
  EXPECT_TRUE(bytes_of(a) == bytes_of(b)) << "the tables differ after the erases";
}

TEST(SingleKeyDispatch, FilterMatchesVisitForEveryFamilyOfTable) {
  const std::vector<cuckoo::Config> configs = {
      {.capacity = 6000, .fingerprint_bits = 12},                    // fixed width, CPU's level
      {.capacity = 6000, .fingerprint_bits = 8},                     // fixed width
      {.capacity = 6000, .fingerprint_bits = 16},                    // fixed width
      {.capacity = 6000, .fingerprint_bits = 10},                    // run-time width, b = 4
      {.capacity = 6000, .fingerprint_bits = 14, .bucket_size = 2},  // b = 2
      {.capacity = 6000, .fingerprint_bits = 9, .bucket_size = 8},   // b = 8
      {.capacity = 6000, .fingerprint_bits = 13, .semi_sort = true},
      {.capacity = 500, .target_fpr = 0.001, .growable = true},  // grows several times
      {.capacity = 500, .target_fpr = 0.001, .bucket_size = 2, .growable = true},
      {.capacity = 500, .target_fpr = 0.001, .bucket_size = 8, .growable = true},
      {.capacity = 6000, .target_fpr = 0.0025, .blocked = true},
  };
  for (const cuckoo::Config& cfg : configs) {
    SCOPED_TRACE(testing::Message() << "b = " << cfg.bucket_size << ", growable " << cfg.growable
                                    << ", blocked " << cfg.blocked << ", semi_sort "
                                    << cfg.semi_sort << ", f = " << cfg.fingerprint_bits);
    // Five forms per key, a fifth of the capacity in keys: about the capacity in items.
    expect_same_as_visit(cuckoo::Filter{cfg}, cuckoo::Filter{cfg}, cfg.growable ? 800 : 1000);
  }
}

TEST(SingleKeyDispatch, ConcurrentFilterMatchesVisitForEveryShape) {
  const std::vector<cuckoo::Config> configs = {
      {.capacity = 6000, .fingerprint_bits = 12},  // whole-word buckets, CPU's level
      {.capacity = 6000, .fingerprint_bits = 8},
      {.capacity = 6000, .fingerprint_bits = 16},
      {.capacity = 6000, .fingerprint_bits = 10},  // run-time width
      {.capacity = 6000, .fingerprint_bits = 14, .bucket_size = 2},
      {.capacity = 6000, .fingerprint_bits = 9, .bucket_size = 8},
  };
  for (const cuckoo::Config& cfg : configs) {
    SCOPED_TRACE(testing::Message()
                 << "b = " << cfg.bucket_size << ", f = " << cfg.fingerprint_bits);
    expect_same_as_visit(cuckoo::ConcurrentFilter{cfg}, cuckoo::ConcurrentFilter{cfg}, 1000);
  }
}

TEST(SingleKeyDispatch, ApproximateMapLookupsMatchVisitForEveryShape) {
  const std::vector<cuckoo::Config> configs = {
      {.capacity = 6000, .fingerprint_bits = 12},  // vector shapes: the CPU's or the build's level
      {.capacity = 6000, .fingerprint_bits = 8},
      {.capacity = 6000, .fingerprint_bits = 16},
      {.capacity = 6000, .fingerprint_bits = 10},
      {.capacity = 6000, .fingerprint_bits = 14, .bucket_size = 2},
      {.capacity = 6000, .fingerprint_bits = 9, .bucket_size = 8},
  };
  for (const cuckoo::Config& cfg : configs) {
    SCOPED_TRACE(testing::Message()
                 << "b = " << cfg.bucket_size << ", f = " << cfg.fingerprint_bits);
    cuckoo::ApproximateMap<std::uint32_t> map{cfg};
    std::vector<KeyForms> stored;
    for (std::uint64_t value : cuckoo::test::random_keys(1500, 43)) stored.emplace_back(value);
    for (const KeyForms& key : stored) {
      const auto value = static_cast<std::uint32_t>(key.integer);
      ASSERT_TRUE(map.insert(key.integer, value));
      ASSERT_TRUE(map.insert(key.text, value + 1));
      ASSERT_TRUE(map.insert(key.span(), value + 2));
    }
    std::vector<KeyForms> probes = stored;
    for (std::uint64_t value : cuckoo::test::random_keys(2000, 44)) probes.emplace_back(value);
    std::array<std::uint32_t, 16> got{};
    std::array<std::uint32_t, 16> want{};
    for (std::size_t i = 0; i < probes.size(); ++i) {
      const KeyForms& key = probes[i];
      std::vector<bool> contains;
      std::vector<std::size_t> counts;
      std::vector<std::vector<std::uint32_t>> found;
      through_visit(map, key, [&](const auto& m, const auto& k) {
        contains.push_back(m.contains(k));
        counts.push_back(m.count(k));
        const std::size_t n = m.find(k, std::span<std::uint32_t>(want));
        found.emplace_back(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(n));
      });
      ASSERT_EQ(map.contains(key.integer), contains[0]);
      ASSERT_EQ(map.contains(key.text), contains[2]);
      ASSERT_EQ(map.contains(key.span()), contains[4]);
      ASSERT_EQ(map.count(key.integer), counts[0]);
      ASSERT_EQ(map.count(std::string_view(key.text)), counts[3]);
      ASSERT_EQ(map.count(key.span()), counts[4]);
      const std::size_t n = map.find(key.text.c_str(), std::span<std::uint32_t>(got));
      ASSERT_EQ(
          std::vector<std::uint32_t>(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(n)),
          found[2]);
      ASSERT_EQ(map.find(key.integer, std::span<std::uint32_t>(got)), found[0].size());
      if (i < stored.size()) {  // every stored pair found (no false negatives)
        const auto value = static_cast<std::uint32_t>(key.integer);
        ASSERT_NE(std::find(found[0].begin(), found[0].end(), value), found[0].end());
        ASSERT_NE(std::find(found[2].begin(), found[2].end(), value + 1), found[2].end());
        ASSERT_NE(std::find(found[4].begin(), found[4].end(), value + 2), found[4].end());
      }
    }
  }
}

}  // namespace
