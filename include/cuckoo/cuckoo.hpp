// cuckoo/cuckoo.hpp — the runtime facade: cuckoo::Filter, sized from a Config.
//
//   #include <cuckoo/cuckoo.hpp>
//   cuckoo::Filter filter{cuckoo::Config{.capacity = 1'000'000, .target_fpr = 0.001}};
//   filter.insert("alice");          // false only when no room is found; nothing is lost then
//   filter.contains("alice");        // true: never a false negative
//   filter.erase("alice");
//
// A Filter holds one compile-time-specialised BasicFilter (filter.hpp) chosen from the Config's
// bucket size and fingerprint width: the common widths of the default b = 4 get a table with f
// folded into every shift and mask, the others a table that reads f at run time. The choice is
// made once at construction; each call dispatches once (one indirect jump per call, or per batch
// for the span overloads), never per slot. With semi_sort the table is a SemiSortedTable
// (table/semisort_table.hpp): the same f in one bit less per entry. Users who fix f and b at
// compile time can use BasicFilter<PackedTable<b, f>> directly and skip even that jump.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <variant>

#include "cuckoo/config.hpp"
#include "cuckoo/filter.hpp"
#include "cuckoo/hash.hpp"
#include "cuckoo/sizing.hpp"
#include "cuckoo/table/packed_table.hpp"
#include "cuckoo/table/semisort_table.hpp"

namespace cuckoo {

namespace detail {
// Every table the facade can hold. The fixed-width ones come first so that they win.
// Semi-sorted tables come last (they only match semi_sort layouts): f = 13, the width the default
// ε = 0.001 derives, at compile time, and every other width at run time.
using FilterVariant =
    std::variant<BasicFilter<PackedTable<4, 8>>, BasicFilter<PackedTable<4, 12>>,
                 BasicFilter<PackedTable<4, 16>>, BasicFilter<PackedTable<2>>,
                 BasicFilter<PackedTable<4>>, BasicFilter<PackedTable<8>>,
                 BasicFilter<SemiSortedTable<13>>, BasicFilter<SemiSortedTable<>>>;

template <std::size_t I = 0>
FilterVariant make_filter(const Layout& layout, std::size_t capacity, unsigned max_kicks,
                          std::uint64_t seed) {
  if constexpr (I == std::variant_size_v<FilterVariant>) {
    invalid("no table for this layout");  // unreachable after plan(): every layout has a table
  } else {
    using Alternative = std::variant_alternative_t<I, FilterVariant>;
    using Table = typename Alternative::table_type;
    if (layout.bucket_size == Table::kBucketSize && layout.semi_sort == Table::kSemiSorted &&
        layout.fingerprint_bits >= Table::kMinBits && layout.fingerprint_bits <= Table::kMaxBits &&
        (Table::kFixedBits == 0 || Table::kFixedBits == layout.fingerprint_bits)) {
      return FilterVariant(std::in_place_index<I>, layout, capacity, max_kicks, seed);
    }
    return make_filter<I + 1>(layout, capacity, max_kicks, seed);
  }
}
}  // namespace detail

/// A cuckoo filter whose shape is chosen at run time. Copyable and movable.
class Filter {
 public:
  /// Throws std::invalid_argument naming the field when cfg cannot work.
  explicit Filter(const Config& cfg = {})
      : filter_(detail::make_filter(plan(cfg), cfg.capacity, cfg.max_kicks, cfg.seed)) {}

  /// An empty filter of an exact layout; for loaders. The layout must come from plan() or be
  /// checked like it.
  Filter(const Layout& layout, std::size_t capacity, unsigned max_kicks, std::uint64_t seed)
      : filter_(detail::make_filter(layout, capacity, max_kicks, seed)) {}

  template <Key K>
  bool insert(const K& key) {
    return std::visit([&](auto& f) { return f.insert(key); }, filter_);
  }
  template <Key K>
  bool contains(const K& key) const noexcept {
    return std::visit([&](const auto& f) { return f.contains(key); }, filter_);
  }
  template <Key K>
  bool erase(const K& key) noexcept {
    return std::visit([&](auto& f) { return f.erase(key); }, filter_);
  }
  template <Key K>
  std::size_t count(const K& key) const noexcept {
    return std::visit([&](const auto& f) { return f.count(key); }, filter_);
  }
  bool insert(const char* key) { return insert(std::string_view(key)); }
  bool contains(const char* key) const noexcept { return contains(std::string_view(key)); }
  bool erase(const char* key) noexcept { return erase(std::string_view(key)); }
  std::size_t count(const char* key) const noexcept { return count(std::string_view(key)); }

  /// out[i] = contains(keys[i]) for every i; out.size() must be at least keys.size().
  template <Key K>
  void contains(std::span<const K> keys, std::span<bool> out) const noexcept {
    std::visit([&](const auto& f) { f.contains(keys, out); }, filter_);
  }

  std::size_t size() const noexcept {
    return std::visit([](const auto& f) { return f.size(); }, filter_);
  }
  bool empty() const noexcept { return size() == 0; }
  std::size_t capacity() const noexcept {
    return std::visit([](const auto& f) { return f.capacity(); }, filter_);
  }
  std::uint64_t bucket_count() const noexcept {
    return std::visit([](const auto& f) { return f.bucket_count(); }, filter_);
  }
  std::uint64_t slot_count() const noexcept {
    return std::visit([](const auto& f) { return f.slot_count(); }, filter_);
  }
  double load_factor() const noexcept {
    return std::visit([](const auto& f) { return f.load_factor(); }, filter_);
  }
  unsigned fingerprint_bits() const noexcept {
    return std::visit([](const auto& f) { return f.fingerprint_bits(); }, filter_);
  }
  unsigned bucket_size() const noexcept {
    return std::visit([](const auto& f) { return f.bucket_size(); }, filter_);
  }
  bool semi_sorted() const noexcept { return layout().semi_sort; }
  std::size_t memory_bytes() const noexcept {
    return std::visit([](const auto& f) { return f.memory_bytes(); }, filter_);
  }
  std::uint64_t seed() const noexcept {
    return std::visit([](const auto& f) { return f.seed(); }, filter_);
  }
  unsigned max_kicks() const noexcept {
    return std::visit([](const auto& f) { return f.max_kicks(); }, filter_);
  }
  Layout layout() const noexcept {
    return std::visit([](const auto& f) { return f.layout(); }, filter_);
  }
  void clear() noexcept {
    std::visit([](auto& f) { f.clear(); }, filter_);
  }

  /// The compile-time filter inside, for code that wants to dispatch once for a long loop:
  ///   filter.visit([&](auto& f) { for (auto k : keys) f.insert(k); });
  template <class Visitor>
  decltype(auto) visit(Visitor&& visitor) {
    return std::visit(std::forward<Visitor>(visitor), filter_);
  }
  template <class Visitor>
  decltype(auto) visit(Visitor&& visitor) const {
    return std::visit(std::forward<Visitor>(visitor), filter_);
  }

 private:
  detail::FilterVariant filter_;
};

}  // namespace cuckoo
