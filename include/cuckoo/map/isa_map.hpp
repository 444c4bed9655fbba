// cuckoo/map/isa_map.hpp — an approximate map whose lookup path is compiled for a vector ISA level.
//
// IsaMap<Inner> is to BasicApproximateMap what detail::IsaFilter is to BasicFilter
// (detail/isa_filter.hpp): Inner (a map over a table whose kIsa is kAvx2 or kAvx512) with its
// entry points redeclared under that level's target attribute, the lookups and erases also
// `flatten`, so that the key's hash, the addressing, the table's match mask and the value reads
// are one function compiled for the level, as -march=native would compile them. ApproximateMap
// holds these for the table shapes with vector compares and picks one when the CPU has the level
// (active_isa()); a build without -march=native then finds with the vector compare too. Bytes,
// files and answers are those of the portable map of the same layout
// (tests/unit/test_isa_dispatch.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cuckoo/detail/isa.hpp"
#include "cuckoo/detail/isa_lookup_members.hpp"
#include "cuckoo/detail/single_key_dispatch.hpp"
#include "cuckoo/hash.hpp"

namespace cuckoo::detail {

template <class Inner, Isa = table_isa<typename Inner::table_type>()>
class IsaMap;

#if CUCKOO_HAS_X86_VECTOR_PATHS

#define CUCKOO_ISA_MAP_MEMBERS(TARGET)                                                       \
 public:                                                                                     \
  using Inner::Inner;                                                                        \
  using V = typename Inner::value_type;                                                      \
  CUCKOO_ISA_LOOKUP_MEMBERS(TARGET)                                                          \
                                                                                             \
  template <Key K>                                                                           \
  [[TARGET]] bool insert(const K& key, const V& value) {                                     \
    return Inner::insert(key, value);                                                        \
  }                                                                                          \
  template <Key K>                                                                           \
  [[TARGET]] std::vector<V> find(const K& key) const {                                       \
    return Inner::find(key);                                                                 \
  }                                                                                          \
  template <Key K>                                                                           \
  [[TARGET, gnu::flatten]] std::size_t find(const K& key, std::span<V> out) const noexcept { \
    return Inner::find(key, out);                                                            \
  }                                                                                          \
  template <Key K>                                                                           \
  [[TARGET, gnu::flatten]] bool erase(const K& key, const V& value) noexcept {               \
    return Inner::erase(key, value);                                                         \
  }                                                                                          \
  [[TARGET]] bool insert_hash(std::uint64_t hash, const V& value) {                          \
    return Inner::insert_hash(hash, value);                                                  \
  }                                                                                          \
  [[TARGET, gnu::flatten]] std::size_t find_hash(std::uint64_t hash, std::span<V> out)       \
      const noexcept {                                                                       \
    return Inner::find_hash(hash, out);                                                      \
  }                                                                                          \
  [[TARGET, gnu::flatten]] bool erase_hash(std::uint64_t hash, const V& value) noexcept {    \
    return Inner::erase_hash(hash, value);                                                   \
  }                                                                                          \
  template <Key K>                                                                           \
  [[TARGET, gnu::flatten]] void find(std::span<const K> keys, std::vector<V>& values,        \
                                     std::span<std::size_t> ends) const {                    \
    Inner::find(keys, values, ends);                                                         \
  }                                                                                          \
  template <Key K>                                                                           \
  [[TARGET]] std::size_t insert(std::span<const K> keys, std::span<const V> values) {        \
    return Inner::insert(keys, values);                                                      \
  }                                                                                          \
  template <Key K>                                                                           \
  [[TARGET, gnu::flatten]] std::size_t erase(std::span<const K> keys,                        \
                                             std::span<const V> values) noexcept {           \
    return Inner::erase(keys, values);                                                       \
  }

template <class Inner>
class IsaMap<Inner, Isa::kAvx2> : public Inner {
  CUCKOO_ISA_MAP_MEMBERS(CUCKOO_TARGET_AVX2)
  using single_key_entries = Avx2LookupEntries;  // contains, count and find(key, out) flattened
};

#undef CUCKOO_ISA_MAP_MEMBERS

#endif  // CUCKOO_HAS_X86_VECTOR_PATHS

}  // namespace cuckoo::detail
