// Keys of any bytes: std::string, std::string_view, string literals, embedded NULs, the empty key,
// long keys, and spans of bytes, all hashed consistently.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"

namespace {

TEST(StringKeys, AnyBytesAreKeysAndNoneIsLost) {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 20'000, .target_fpr = 1e-4}};
  std::vector<std::string> keys;
  keys.emplace_back("");
  keys.emplace_back(std::string("a\0b", 3));
  keys.emplace_back(std::string("a\0c", 3));
  keys.emplace_back(std::string(10'000, 'x'));
  for (int i = 0; i < 10'000; ++i) keys.push_back("user:" + std::to_string(i));
  for (const auto& key : keys) ASSERT_TRUE(filter.insert(key));
  for (const auto& key : keys) ASSERT_TRUE(filter.contains(key)) << key.substr(0, 20);
  for (const auto& key : keys) ASSERT_TRUE(filter.contains(std::string_view(key)));
  EXPECT_EQ(filter.size(), keys.size());
  // Removing "a\0b" must not remove "a\0c": the bytes after the NUL count.
  ASSERT_TRUE(filter.erase(std::string("a\0b", 3)));
  EXPECT_TRUE(filter.contains(std::string("a\0c", 3)));
}

TEST(StringKeys, LiteralsViewsStringsAndByteSpansAgree) {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 100}};
  ASSERT_TRUE(filter.insert("alice"));
  EXPECT_TRUE(filter.contains(std::string("alice")));
  EXPECT_TRUE(filter.contains(std::string_view("alice")));
  const std::string alice = "alice";
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(alice.data()),
                                         alice.size());
  EXPECT_TRUE(filter.contains(bytes));
  EXPECT_EQ(filter.count("alice"), 1u);
}

TEST(StringKeys, IntegersAreHashedAsTheir64BitValue) {
  cuckoo::Filter filter{cuckoo::Config{.capacity = 100}};
  ASSERT_TRUE(filter.insert(std::uint64_t{5}));
  EXPECT_TRUE(filter.contains(5));    // int
  EXPECT_TRUE(filter.contains(5u));   // unsigned
  EXPECT_TRUE(filter.contains(5ll));  // long long
}

}  // namespace
