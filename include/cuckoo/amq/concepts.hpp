// cuckoo/amq/concepts.hpp — what every approximate-membership filter in this library offers.
//
// The cuckoo filter (cuckoo/filter.hpp) and the paper's comparators (Bloom, blocked Bloom,
// counting Bloom, d-left counting Bloom, quotient filter; cuckoo/amq/*.hpp) share one interface, so
// benchmarks and users can swap them: insert and contains on any Key (hashed once with the same
// seeded XXH3-64), size, memory_bytes, capacity, and erase where the design allows deletion.
// insert returns false only when the filter has no room, and then changes nothing.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>

namespace cuckoo::amq {

/// A filter answering "maybe in the set" / "certainly not" for 64-bit (and other) keys.
template <class F>
concept MembershipFilter = requires(F& filter, const F& cfilter, std::uint64_t key) {
  { filter.insert(key) } -> std::same_as<bool>;
  { cfilter.contains(key) } -> std::same_as<bool>;
  { cfilter.size() } -> std::convertible_to<std::size_t>;
  { cfilter.memory_bytes() } -> std::convertible_to<std::size_t>;
  { cfilter.capacity() } -> std::convertible_to<std::size_t>;
};

/// A membership filter that can also remove one inserted copy of a key.
template <class F>
concept DeletableFilter = MembershipFilter<F> && requires(F& filter, std::uint64_t key) {
  { filter.erase(key) } -> std::same_as<bool>;
};

}  // namespace cuckoo::amq
