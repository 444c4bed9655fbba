// cuckoo/detail/isa_lookup_members.hpp — the lookup members that every ISA wrapper redeclares.
//
// detail::IsaFilter (isa_filter.hpp) and detail::IsaMap (map/isa_map.hpp) both redeclare their
// Inner's membership lookups under a level's target attribute, flattened, so that the key's hash,
// the addressing and the table's vector compare become one function compiled for that level. The
// six lookups they share (single-key and hashed contains / count, batch contains / count) are
// written here once; each wrapper adds its own members around them. A macro because an attribute
// cannot depend on a template parameter. It stays defined: both wrappers expand it.
#pragma once

#define CUCKOO_ISA_LOOKUP_MEMBERS(TARGET)                                                  \
  template <Key K>                                                                         \
  [[TARGET, gnu::flatten]] bool contains(const K& key) const noexcept {                    \
    return Inner::contains(key);                                                           \
  }                                                                                        \
  template <Key K>                                                                         \
  [[TARGET, gnu::flatten]] std::size_t count(const K& key) const noexcept {                \
    return Inner::count(key);                                                              \
  }                                                                                        \
  [[TARGET, gnu::flatten]] bool contains_hash(std::uint64_t hash) const noexcept {         \
    return Inner::contains_hash(hash);                                                     \
  }                                                                                        \
  [[TARGET, gnu::flatten]] std::size_t count_hash(std::uint64_t hash) const noexcept {     \
    return Inner::count_hash(hash);                                                        \
  }                                                                                        \
  template <Key K>                                                                         \
  [[TARGET, gnu::flatten]] void contains(std::span<const K> keys, std::span<bool> out)     \
      const noexcept {                                                                     \
    Inner::contains(keys, out);                                                            \
  }                                                                                        \
  template <Key K>                                                                         \
  [[TARGET, gnu::flatten]] void count(std::span<const K> keys, std::span<std::size_t> out) \
      const noexcept {                                                                     \
    Inner::count(keys, out);                                                               \
  }
