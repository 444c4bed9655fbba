// cuckoo/detail/isa_filter.hpp — a filter whose lookup path is compiled for a vector ISA level.
//
// IsaFilter<Inner> is Inner (a BasicFilter over a table whose kIsa is kAvx2 or kAvx512) with its
// entry points redeclared under that level's target attribute (detail/isa.hpp). The redeclared
// lookups and erases are also `flatten`: the key's hash, the addressing and the table's vector
// compare are inlined into one function compiled for the level, as they would be in a build with
// -march=native. Inserts only take the attribute: their hot part does not use the vector compare,
// and inlining the kick walk and path search into every copy would only grow the code.
//
// The facade (cuckoo.hpp) holds these for the table shapes with vector compares and picks one at
// construction when the CPU has the level (active_isa()). Everything else (shape queries, files,
// the table itself) is Inner's, unchanged: an IsaFilter and the portable filter of the same layout
// hold identical bytes and answer identically (tests/unit/test_isa_dispatch.cpp).
//
// Why a macro: an attribute cannot depend on a template parameter, so the member list is written
// once and stamped out once per level.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "cuckoo/detail/isa.hpp"
#include "cuckoo/detail/isa_lookup_members.hpp"
#include "cuckoo/detail/single_key_dispatch.hpp"
#include "cuckoo/hash.hpp"

namespace cuckoo::detail {

template <class Inner, Isa = table_isa<typename Inner::table_type>()>
class IsaFilter;

#if CUCKOO_HAS_X86_VECTOR_PATHS

#define CUCKOO_ISA_FILTER_MEMBERS(TARGET)                                                        \
 public:                                                                                         \
  using Inner::Inner;                                                                            \
  CUCKOO_ISA_LOOKUP_MEMBERS(TARGET)                                                              \
                                                                                                 \
  template <Key K>                                                                               \
  [[TARGET]] bool insert(const K& key) {                                                         \
    return Inner::insert(key);                                                                   \
  }                                                                                              \
  template <Key K>                                                                               \
  [[TARGET, gnu::flatten]] bool erase(const K& key) noexcept {                                   \
    return Inner::erase(key);                                                                    \
  }                                                                                              \
  [[TARGET]] bool insert_hash(std::uint64_t hash) {                                              \
    return Inner::insert_hash(hash);                                                             \
  }                                                                                              \
  [[TARGET, gnu::flatten]] bool erase_hash(std::uint64_t hash) noexcept {                        \
    return Inner::erase_hash(hash);                                                              \
  }                                                                                              \
  template <std::size_t Depth, Key K>                                                            \
  [[TARGET, gnu::flatten]] void contains_pipelined(std::span<const K> keys, std::span<bool> out) \
      const noexcept {                                                                           \
    Inner::template contains_pipelined<Depth>(keys, out);                                        \
  }                                                                                              \
  template <Key K>                                                                               \
  [[TARGET]] std::size_t insert(std::span<const K> keys) {                                       \
    return Inner::insert(keys);                                                                  \
  }                                                                                              \
  template <Key K>                                                                               \
  [[TARGET, gnu::flatten]] std::size_t erase(std::span<const K> keys) noexcept {                 \
    return Inner::erase(keys);                                                                   \
  }

template <class Inner>
class IsaFilter<Inner, Isa::kAvx2> : public Inner {
  CUCKOO_ISA_FILTER_MEMBERS(CUCKOO_TARGET_AVX2)
  using single_key_entries = Avx2Entries;  // lookups and erase flattened, as above
};

template <class Inner>
class IsaFilter<Inner, Isa::kAvx512> : public Inner {
  CUCKOO_ISA_FILTER_MEMBERS(CUCKOO_TARGET_AVX512)
  using single_key_entries = Avx512Entries;  // lookups and erase flattened, as above
};

#undef CUCKOO_ISA_FILTER_MEMBERS

#endif  // CUCKOO_HAS_X86_VECTOR_PATHS

}  // namespace cuckoo::detail
