// cuckoo/detail/single_key_dispatch.hpp — the facades' single-key calls, with the key in a
// register.
//
// A facade (cuckoo::Filter) holds one of many compile-time filters in a std::variant and reaches
// it through one indirect call per operation. std::visit with a lambda that captures the key by
// reference makes that call costlier than it looks in a miss-bound loop of single-key lookups:
// the caller stores the key and the lambda on its stack, and the alternative's entry loads the
// lambda's address and then the key back, two dependent loads (store-to-load forwarding, a few
// cycles each) at the head of the chain from the key to the addresses of its buckets, plus four
// instructions per key in the core's window. Measured on a 192 MiB filter (f = 12, b = 4, 95%
// full, 10^7 stored keys, a caller built -O3 -march=native): 39.9-40.1 ns per key through
// std::visit, 35.4 with the key passed by value (README, Performance).
//
// So each single-key operation has a table here with one entry per alternative, each a function
// that takes the variant and the key by value (an integer, a string_view or a byte span: two
// registers at most) and calls the alternative directly. An entry is compiled for its
// alternative's instruction-set level: the entry of an IsaFilter<Inner, L> carries L's target
// attribute and is flattened, so the alternative's lookup (itself compiled for L) is inlined into
// it instead of reached by a second jump; a build without the level in its flags then runs the
// same single function as a native build. Each wrapper names its entries (single_key_entries).
// Inserts take the level but are not flattened, for the reason IsaFilter gives (the kick walk and
// path search would be copied into every entry).
//
// Template parameters of the tables (k*Entries, at the end):
//   V  a std::variant whose alternatives all take the table's operation for the key type
//      (`contains(key)`, `count(key)`, `erase(key)`, `insert(key)`, or a map's `find(key, out)`);
//      entries find their alternative by index, so V may hold one type more than once.
//   R  the key as passed: the result of register_key() below.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <variant>

#include "cuckoo/detail/isa.hpp"
#include "cuckoo/hash.hpp"

namespace cuckoo::detail {

/// The key as a single-key entry takes it: integers and byte spans as they are, everything that
/// converts to std::string_view (std::string, string literals) as a string_view. Every filter
/// hashes a key and its string_view the same (hash_key).
template <Key K>
auto register_key(const K& key) noexcept {
  if constexpr (std::integral<K> || std::same_as<K, std::span<const std::byte>>) {
    return key;
  } else {
    return std::string_view(key);
  }
}

/// The active alternative, which the caller has already chosen by index.
template <std::size_t I, class V>
[[gnu::always_inline]] inline auto& active_alternative(V& variant) noexcept {
  auto* alternative = std::get_if<I>(&variant);
  if (alternative == nullptr) __builtin_unreachable();
  return *alternative;
}

// A macro because an attribute cannot depend on a template parameter: the entries are written
// once and stamped out per level, with the attributes of the lookups (contains, count), of erase
// and of insert.
#define CUCKOO_SINGLE_KEY_ENTRIES(NAME, LOOKUP_ATTRIBUTES, ERASE_ATTRIBUTES, INSERT_ATTRIBUTES) \
  struct NAME {                                                                                 \
    template <std::size_t I, class V, class R>                                                  \
    [[LOOKUP_ATTRIBUTES]] static bool contains(const V& variant, R key) noexcept {              \
      return active_alternative<I>(variant).contains(key);                                      \
    }                                                                                           \
    template <std::size_t I, class V, class R>                                                  \
    [[LOOKUP_ATTRIBUTES]] static std::size_t count(const V& variant, R key) noexcept {          \
      return active_alternative<I>(variant).count(key);                                         \
    }                                                                                           \
    template <std::size_t I, class V, class R, class Out>                                       \
    [[LOOKUP_ATTRIBUTES]] static std::size_t find(const V& variant, R key, Out out) noexcept {  \
      return active_alternative<I>(variant).find(key, out);                                     \
    }                                                                                           \
    template <std::size_t I, class V, class R>                                                  \
    [[ERASE_ATTRIBUTES]] static bool erase(V& variant, R key) noexcept {                        \
      return active_alternative<I>(variant).erase(key);                                         \
    }                                                                                           \
    template <std::size_t I, class V, class R>                                                  \
    [[INSERT_ATTRIBUTES]] static bool insert(V& variant, R key) {                               \
      return active_alternative<I>(variant).insert(key);                                        \
    }                                                                                           \
  };

#define CUCKOO_NO_ATTRIBUTES
/// Entries of alternatives compiled for the build's own flags.
CUCKOO_SINGLE_KEY_ENTRIES(PortableEntries, CUCKOO_NO_ATTRIBUTES, CUCKOO_NO_ATTRIBUTES,
                          CUCKOO_NO_ATTRIBUTES)
#if CUCKOO_HAS_X86_VECTOR_PATHS
#define CUCKOO_FLATTENED_AVX2 CUCKOO_TARGET_AVX2, gnu::flatten
#define CUCKOO_FLATTENED_AVX512 CUCKOO_TARGET_AVX512, gnu::flatten
/// Entries of an IsaFilter, whose lookups and erases are flattened (isa_filter.hpp).
CUCKOO_SINGLE_KEY_ENTRIES(Avx2Entries, CUCKOO_FLATTENED_AVX2, CUCKOO_FLATTENED_AVX2,
                          CUCKOO_TARGET_AVX2)
CUCKOO_SINGLE_KEY_ENTRIES(Avx512Entries, CUCKOO_FLATTENED_AVX512, CUCKOO_FLATTENED_AVX512,
                          CUCKOO_TARGET_AVX512)
/// Entries of a wrapper that flattens its lookups alone (IsaConcurrentFilter: its writers keep
/// their slow paths out of line).
CUCKOO_SINGLE_KEY_ENTRIES(Avx2LookupEntries, CUCKOO_FLATTENED_AVX2, CUCKOO_TARGET_AVX2,
                          CUCKOO_TARGET_AVX2)
CUCKOO_SINGLE_KEY_ENTRIES(Avx512LookupEntries, CUCKOO_FLATTENED_AVX512, CUCKOO_TARGET_AVX512,
                          CUCKOO_TARGET_AVX512)
#undef CUCKOO_FLATTENED_AVX2
#undef CUCKOO_FLATTENED_AVX512
#endif
#undef CUCKOO_NO_ATTRIBUTES
#undef CUCKOO_SINGLE_KEY_ENTRIES

/// The entries of alternative F: those a wrapper compiled for a level names as its
/// `single_key_entries` (IsaFilter, IsaConcurrentFilter, IsaMap, beside the members each one
/// flattens), PortableEntries for everything else.
template <class F>
struct SingleKeyEntriesFor {
  using type = PortableEntries;
};
template <class F>
requires requires {
  typename F::single_key_entries;
}
struct SingleKeyEntriesFor<F> {
  using type = typename F::single_key_entries;
};

// The tables for variant V and key type R, one entry per alternative, indexed by V::index().
// Each is a variable template of its own, so that a facade instantiates only the operations its
// alternatives have (ApproximateMap: contains, count and find).
template <class V, std::size_t I>
using EntriesOf = typename SingleKeyEntriesFor<std::variant_alternative_t<I, V>>::type;

template <class V, class R, std::size_t... I>
constexpr auto contains_entries(std::index_sequence<I...>) {
  return std::array<bool (*)(const V&, R) noexcept, sizeof...(I)>{
      &EntriesOf<V, I>::template contains<I, V, R>...};
}
template <class V, class R, std::size_t... I>
constexpr auto count_entries(std::index_sequence<I...>) {
  return std::array<std::size_t (*)(const V&, R) noexcept, sizeof...(I)>{
      &EntriesOf<V, I>::template count<I, V, R>...};
}
template <class V, class R, class Out, std::size_t... I>
constexpr auto find_entries(std::index_sequence<I...>) {
  return std::array<std::size_t (*)(const V&, R, Out) noexcept, sizeof...(I)>{
      &EntriesOf<V, I>::template find<I, V, R, Out>...};
}
template <class V, class R, std::size_t... I>
constexpr auto erase_entries(std::index_sequence<I...>) {
  return std::array<bool (*)(V&, R) noexcept, sizeof...(I)>{
      &EntriesOf<V, I>::template erase<I, V, R>...};
}
template <class V, class R, std::size_t... I>
constexpr auto insert_entries(std::index_sequence<I...>) {
  return std::array<bool (*)(V&, R), sizeof...(I)>{&EntriesOf<V, I>::template insert<I, V, R>...};
}

template <class V>
using AlternativeIndices = std::make_index_sequence<std::variant_size_v<V>>;
template <class V, class R>
inline constexpr auto kContainsEntries = contains_entries<V, R>(AlternativeIndices<V>{});
template <class V, class R>
inline constexpr auto kCountEntries = count_entries<V, R>(AlternativeIndices<V>{});
/// find(key, out) of the approximate maps: Out is the std::span<value_type> written.
template <class V, class R, class Out>
inline constexpr auto kFindEntries = find_entries<V, R, Out>(AlternativeIndices<V>{});
template <class V, class R>
inline constexpr auto kEraseEntries = erase_entries<V, R>(AlternativeIndices<V>{});
template <class V, class R>
inline constexpr auto kInsertEntries = insert_entries<V, R>(AlternativeIndices<V>{});

/// What std::visit does for a variant left valueless by an exception (never the case for a
/// facade whose constructor returned): throw, which a noexcept caller turns into terminate.
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_valueless() {
  throw std::bad_variant_access();
}

/// V::index(), checked as std::visit checks it.
template <class V>
[[gnu::always_inline]] inline std::size_t checked_index(const V& variant) {
  const std::size_t index = variant.index();
  if (index >= std::variant_size_v<V>) [[unlikely]]
    throw_valueless();
  return index;
}

/// The facades' single-key calls: the key as an entry takes it, to the active alternative's entry.
template <class V, Key K>
bool insert_in(V& variant, const K& key) {
  auto k = register_key(key);
  return kInsertEntries<V, decltype(k)>[checked_index(variant)](variant, k);
}
template <class V, Key K>
bool contains_in(const V& variant, const K& key) noexcept {
  auto k = register_key(key);
  return kContainsEntries<V, decltype(k)>[checked_index(variant)](variant, k);
}
template <class V, Key K>
bool erase_in(V& variant, const K& key) noexcept {
  auto k = register_key(key);
  return kEraseEntries<V, decltype(k)>[checked_index(variant)](variant, k);
}
template <class V, Key K>
std::size_t count_in(const V& variant, const K& key) noexcept {
  auto k = register_key(key);
  return kCountEntries<V, decltype(k)>[checked_index(variant)](variant, k);
}
template <class V, Key K, class Out>
std::size_t find_in(const V& variant, const K& key, Out out) noexcept {
  auto k = register_key(key);
  return kFindEntries<V, decltype(k), Out>[checked_index(variant)](variant, k, out);
}

}  // namespace cuckoo::detail
