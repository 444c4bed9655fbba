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
// for the span overloads), never per slot. The shapes with vector compares (b = 4 with f = 8, 12,
// 16 or any run-time f; b = 2) are held at the best instruction-set level the CPU has (AVX-512,
// AVX2 or portable, detail/isa.hpp), each level compiled into every build, so a build without
// -march=native runs the same vector compare as a native one; Filter::isa() tells which. With
// semi_sort the table is a SemiSortedTable (table/semisort_table.hpp): the same f in one bit less
// per entry. Users who fix f and b at compile time can use BasicFilter<PackedTable<b, f>> directly
// and skip even that jump. With Config::growable the filter is a BasicGrowableFilter
// (growable/growable_filter.hpp), which doubles instead of refusing inserts (b = 4 at the CPU's
// level, AVX2 or portable, like the plain shapes); with Config::blocked a
// BasicBlockedFilter (blocked/blocked_filter.hpp), whose lookups read one cache line, at the best
// level the CPU has. Everything below works the same on both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "cuckoo/blocked/blocked_filter.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/detail/isa.hpp"
#include "cuckoo/detail/isa_filter.hpp"
#include "cuckoo/detail/single_key_dispatch.hpp"
#include "cuckoo/filter.hpp"
#include "cuckoo/growable/growable_filter.hpp"
#include "cuckoo/hash.hpp"
#include "cuckoo/sizing.hpp"
#include "cuckoo/table/packed_table.hpp"
#include "cuckoo/table/semisort_table.hpp"

namespace cuckoo {

class MappedFilter;
/// Whether map() reads the whole file once to check its checksum before answering.
enum class ChecksumCheck { kVerify, kSkip };

namespace detail {
/// The facade's filters over plain tables whose pair compare has vector forms (b = 4 with the
/// common fixed widths, and the run-time-width b = 2 and b = 4 tables), at one ISA level.
template <Isa L>
using VectorFilters = std::tuple<
    IsaFilter<BasicFilter<PackedTable<4, 8, L>>>, IsaFilter<BasicFilter<PackedTable<4, 12, L>>>,
    IsaFilter<BasicFilter<PackedTable<4, 16, L>>>, IsaFilter<BasicFilter<PackedTable<2, 0, L>>>,
    IsaFilter<BasicFilter<PackedTable<4, 0, L>>>>;
/// Every table shape at the portable level. The fixed-width ones come first so that they win.
/// Semi-sorted tables come last (they only match semi_sort layouts): f = 13, the width the
/// default ε = 0.001 derives, at compile time, and every other width at run time.
using PortableFilters = std::tuple<
    BasicFilter<PackedTable<4, 8, Isa::kPortable>>, BasicFilter<PackedTable<4, 12, Isa::kPortable>>,
    BasicFilter<PackedTable<4, 16, Isa::kPortable>>, BasicFilter<PackedTable<2, 0, Isa::kPortable>>,
    BasicFilter<PackedTable<4, 0, Isa::kPortable>>, BasicFilter<PackedTable<8, 0, Isa::kPortable>>,
    BasicFilter<SemiSortedTable<13>>, BasicFilter<SemiSortedTable<>>>;
/// The growable filters (Config::growable): b = 2 and 8 compare slot by slot at every level;
/// b = 4 has a vector compare, held at the AVX-512 level (both buckets in one register, and
/// batches stage eight integer keys at once), the AVX2 one and the portable one. A build whose
/// own flags enable a vector level compiles b = 4 at that level unwrapped, as the approximate map
/// does (no out-of-line entry to pay for), and keeps the levels above it wrapped. make_growable
/// picks by bucket size, then level, highest first.
template <unsigned b, Isa L = Isa::kPortable>
using GrowableAt = BasicGrowableFilter<b, Xxh3Hasher, L>;
#if CUCKOO_HAS_X86_VECTOR_PATHS
template <Isa L>
using VectorGrowable4 = std::conditional_t<(kCompiledIsa >= L), GrowableAt<4, kCompiledIsa>,
                                           IsaFilter<GrowableAt<4, L>>>;
using GrowableFilters = std::conditional_t<
    (kCompiledIsa >= Isa::kAvx512),
    std::tuple<GrowableAt<2>, VectorGrowable4<Isa::kAvx512>, GrowableAt<4>, GrowableAt<8>>,
    std::tuple<GrowableAt<2>, VectorGrowable4<Isa::kAvx512>, VectorGrowable4<Isa::kAvx2>,
               GrowableAt<4>, GrowableAt<8>>>;
#else
using GrowableFilters = std::tuple<GrowableAt<2>, GrowableAt<4>, GrowableAt<8>>;
#endif
/// The blocked filter (Config::blocked) at each level, highest first.
#if CUCKOO_HAS_X86_VECTOR_PATHS
using BlockedFilters =
    std::tuple<IsaFilter<BasicBlockedFilter<Isa::kAvx512>>,
               IsaFilter<BasicBlockedFilter<Isa::kAvx2>>, BasicBlockedFilter<Isa::kPortable>>;
#else
using BlockedFilters = std::tuple<BasicBlockedFilter<Isa::kPortable>>;
#endif

template <class... Tuples>
struct VariantOfAll;
template <class... Ts>
struct VariantOfAll<std::tuple<Ts...>> {
  using type = std::variant<Ts...>;
};
template <class... As, class... Bs, class... Rest>
struct VariantOfAll<std::tuple<As...>, std::tuple<Bs...>, Rest...>
    : VariantOfAll<std::tuple<As..., Bs...>, Rest...> {};

// Every filter the facade can hold: the vector levels first, highest first, so that make_filter
// takes the best level the CPU has (active_isa()); then every shape at the portable level; the
// growable filters, then the blocked ones, last.
#if CUCKOO_HAS_X86_VECTOR_PATHS
using FilterVariant = typename VariantOfAll<VectorFilters<Isa::kAvx512>, VectorFilters<Isa::kAvx2>,
                                            PortableFilters, GrowableFilters, BlockedFilters>::type;
#else
using FilterVariant = typename VariantOfAll<PortableFilters, GrowableFilters, BlockedFilters>::type;
#endif
/// Index of the first blocked alternative.
inline constexpr std::size_t kFirstBlocked =
    std::variant_size_v<FilterVariant> - std::tuple_size_v<BlockedFilters>;
/// Index of the first growable alternative: make_filter and the table queries never pick those
/// or the blocked ones after them.
inline constexpr std::size_t kFirstGrowable = kFirstBlocked - std::tuple_size_v<GrowableFilters>;

template <class Table>
constexpr bool table_fits(const Layout& layout) noexcept {
  return layout.bucket_size == Table::kBucketSize && layout.semi_sort == Table::kSemiSorted &&
         layout.fingerprint_bits >= Table::kMinBits && layout.fingerprint_bits <= Table::kMaxBits &&
         (Table::kFixedBits == 0 || Table::kFixedBits == layout.fingerprint_bits);
}

/// The blocked filter for a blocked `layout`, at the highest level the CPU has.
template <std::size_t I = kFirstBlocked, class... TableArgs>
FilterVariant make_blocked(const Layout& layout, std::size_t capacity, unsigned max_kicks,
                           std::uint64_t seed, TableArgs... table_args) {
  using Alternative = std::variant_alternative_t<I, FilterVariant>;
  if constexpr (I + 1 < std::variant_size_v<FilterVariant>) {
    if (table_isa<typename Alternative::table_type>() > active_isa()) {
      return make_blocked<I + 1>(layout, capacity, max_kicks, seed, table_args...);
    }
  }
  return FilterVariant(std::in_place_index<I>, layout, capacity, max_kicks, seed, table_args...);
}

/// The filter for `layout`; `table_args` (external storage, for a mapped file) go to the table.
template <std::size_t I = 0, class... TableArgs>
FilterVariant make_filter(const Layout& layout, std::size_t capacity, unsigned max_kicks,
                          std::uint64_t seed, TableArgs... table_args) {
  if constexpr (I == 0) {
    if (layout.blocked) return make_blocked(layout, capacity, max_kicks, seed, table_args...);
  }
  if constexpr (I == kFirstGrowable) {
    invalid("no table for this layout");  // unreachable after plan(): every layout has a table
  } else {
    using Alternative = std::variant_alternative_t<I, FilterVariant>;
    using Table = typename Alternative::table_type;
    if constexpr (std::is_constructible_v<Alternative, const Layout&, std::size_t, unsigned,
                                          std::uint64_t, TableArgs...>) {
      if (table_fits<Table>(layout) && table_isa<Table>() <= active_isa()) {
        return FilterVariant(std::in_place_index<I>, layout, capacity, max_kicks, seed,
                             table_args...);
      }
    }
    return make_filter<I + 1>(layout, capacity, max_kicks, seed, table_args...);
  }
}

/// Bytes of table storage the filter for `layout` holds (Table::bytes_for of the table
/// make_filter picks), or 0 when no table fits; computed without allocating.
template <std::size_t I = 0>
std::size_t table_bytes_for(const Layout& layout) noexcept {
  if constexpr (I == 0) {
    if (layout.blocked) return BlockedTable<>::bytes_for(layout.bucket_count);
  }
  if constexpr (I == kFirstGrowable) {
    return 0;
  } else {
    using Table = typename std::variant_alternative_t<I, FilterVariant>::table_type;
    if (table_fits<Table>(layout))
      return Table::bytes_for(layout.bucket_count, layout.fingerprint_bits);
    return table_bytes_for<I + 1>(layout);
  }
}
/// The growable filter for bucket size b (already checked), built by `make`.
template <std::size_t I = kFirstGrowable, class Make>
FilterVariant make_growable(unsigned bucket_size, Make&& make) {
  if constexpr (I == kFirstBlocked) {
    invalid("bucket_size must be 2, 4 or 8, got " + std::to_string(bucket_size));
  } else {
    using Alternative = std::variant_alternative_t<I, FilterVariant>;
    if (Alternative::kBucketSize == bucket_size &&
        table_isa<typename Alternative::table_type>() <= active_isa()) {
      return FilterVariant(std::in_place_index<I>, make(std::type_identity<Alternative>{}));
    }
    return make_growable<I + 1>(bucket_size, std::forward<Make>(make));
  }
}

inline FilterVariant make_from_config(const Config& cfg) {
  const Layout layout = plan(cfg);  // checks the Config; a blocked Config gives a blocked layout
  if (!cfg.growable) return make_filter(layout, cfg.capacity, cfg.max_kicks, cfg.seed);
  return make_growable(cfg.bucket_size,
                       [&](auto type) { return typename decltype(type)::type(cfg); });
}
}  // namespace detail

/// A cuckoo filter whose shape is chosen at run time. Copyable and movable.
class Filter {
 public:
  /// Throws std::invalid_argument naming the field when cfg cannot work.
  explicit Filter(const Config& cfg = {}) : filter_(detail::make_from_config(cfg)) {}

  /// An empty growable filter of an exact geometry (checked by the caller, see io/format.hpp);
  /// for loaders. With `storage`, over a table it does not own, as below.
  Filter(const GrowableGeometry& geometry, unsigned bucket_size, std::size_t initial_capacity,
         unsigned max_kicks, std::uint64_t seed)
      : filter_(detail::make_growable(bucket_size, [&](auto type) {
          return typename decltype(type)::type(geometry, initial_capacity, max_kicks, seed);
        })) {}
  Filter(const GrowableGeometry& geometry, unsigned bucket_size, std::size_t initial_capacity,
         unsigned max_kicks, std::uint64_t seed, detail::ExternalStorage storage)
      : filter_(detail::make_growable(bucket_size, [&](auto type) {
          return
              typename decltype(type)::type(geometry, initial_capacity, max_kicks, seed, storage);
        })) {}

  /// An empty filter of an exact layout; for loaders. The layout must come from plan() or be
  /// checked like it.
  Filter(const Layout& layout, std::size_t capacity, unsigned max_kicks, std::uint64_t seed)
      : filter_(detail::make_filter(layout, capacity, max_kicks, seed)) {}

  /// A filter over table storage it does not own (for map()): `storage` must hold
  /// detail::table_bytes_for(layout) bytes and outlive the filter and every copy of it that still
  /// views it. Copying a Filter copies its table into memory it owns. Throws
  /// std::invalid_argument when no table of this layout can view external storage.
  Filter(const Layout& layout, std::size_t capacity, unsigned max_kicks, std::uint64_t seed,
         detail::ExternalStorage storage)
      : filter_(detail::make_filter(layout, capacity, max_kicks, seed, storage)) {}

  // ---- Files and byte streams (defined in cuckoo/io/serialize.hpp, see docs/FORMAT.md) -------

  /// Writes the filter to `path` atomically: a temporary file in the same directory, fsync,
  /// rename, fsync of the directory. On failure the temporary is removed, `path` is untouched
  /// and std::system_error is thrown.
  void save(const std::filesystem::path& path) const;
  /// Reads a filter saved by save() or serialize(); throws cuckoo::format_error naming what is
  /// wrong with a file it cannot trust, std::system_error when the file cannot be read.
  static Filter load(const std::filesystem::path& path);
  /// Opens a saved filter read-only by mapping the file: lookups read the file's pages directly.
  static MappedFilter map(const std::filesystem::path& path,
                          ChecksumCheck check = ChecksumCheck::kVerify);
  std::vector<std::byte> serialize() const;
  void serialize(std::ostream& out) const;
  static Filter deserialize(std::span<const std::byte> bytes);
  static Filter deserialize(std::istream& in);

  // Single-key calls pass the key by value to an entry compiled for the filter's level
  // (detail/single_key_dispatch.hpp), one indirect call each.
  template <Key K>
  bool insert(const K& key) {
    return detail::insert_in(filter_, key);
  }
  template <Key K>
  bool contains(const K& key) const noexcept {
    return detail::contains_in(filter_, key);
  }
  template <Key K>
  bool erase(const K& key) noexcept {
    return detail::erase_in(filter_, key);
  }
  template <Key K>
  std::size_t count(const K& key) const noexcept {
    return detail::count_in(filter_, key);
  }
  bool insert(const char* key) { return insert(std::string_view(key)); }
  bool contains(const char* key) const noexcept { return contains(std::string_view(key)); }
  bool erase(const char* key) noexcept { return erase(std::string_view(key)); }
  std::size_t count(const char* key) const noexcept { return count(std::string_view(key)); }

  // Batches: one dispatch per call, then BasicFilter's prefetching pipeline (filter.hpp). Each
  // gives exactly the answers of the single-key calls made in order.

  /// out[i] = contains(keys[i]) for every i; out.size() must be at least keys.size().
  template <Key K>
  void contains(std::span<const K> keys, std::span<bool> out) const noexcept {
    std::visit([&](const auto& f) { f.contains(keys, out); }, filter_);
  }
  /// out[i] = count(keys[i]) for every i; out.size() must be at least keys.size().
  template <Key K>
  void count(std::span<const K> keys, std::span<std::size_t> out) const noexcept {
    std::visit([&](const auto& f) { f.count(keys, out); }, filter_);
  }
  /// Inserts keys in order and stops at the first that does not fit. Returns how many were
  /// inserted, r: keys[0..r) are in; if r < keys.size(), keys[r] failed and changed nothing, and
  /// the keys after it were not tried.
  template <Key K>
  std::size_t insert(std::span<const K> keys) {
    return std::visit([&](auto& f) { return f.insert(keys); }, filter_);
  }
  /// Erases one copy of each key in order (keys not found are skipped); returns copies removed.
  template <Key K>
  std::size_t erase(std::span<const K> keys) noexcept {
    return std::visit([&](auto& f) { return f.erase(keys); }, filter_);
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
  /// The instruction-set level of this filter's lookups: the highest of portable / AVX2 / AVX-512
  /// that this CPU has (and CUCKOO_ISA allows) for a shape with vector compares, chosen once at
  /// construction (detail/isa.hpp); portable for the other shapes.
  Isa isa() const noexcept {
    return std::visit(
        [](const auto& f) {
          return detail::table_isa<typename std::decay_t<decltype(f)>::table_type>();
        },
        filter_);
  }
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
  /// True for a filter that doubles when full (Config::growable, or loaded from such a file).
  bool growable() const noexcept {
    return filter_.index() >= detail::kFirstGrowable && filter_.index() < detail::kFirstBlocked;
  }
  /// True for a blocked filter (Config::blocked, or loaded from such a file).
  bool blocked() const noexcept { return filter_.index() >= detail::kFirstBlocked; }
  /// Times a growable filter has doubled; 0 for a fixed one.
  unsigned doublings() const noexcept {
    return std::visit(
        [](const auto& f) -> unsigned {
          if constexpr (requires { f.doublings(); }) {
            return f.doublings();
          } else {
            return 0;
          }
        },
        filter_);
  }
  void clear() noexcept {
    std::visit([](auto& f) { f.clear(); }, filter_);
  }
  /// Restarts the kick walk's random choices from `state`. Not saved in files: a loaded filter
  /// starts from its seed, so writers that must stay bit-identical to a reloaded copy (a Redis
  /// replica) reseed from something both sides share before each write.
  void reseed_kick_walk(std::uint64_t state) noexcept {
    std::visit([&](auto& f) { f.reseed_kick_walk(state); }, filter_);
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

// The definitions of Filter's file and stream members.
#include "cuckoo/io/serialize.hpp"  // IWYU pragma: export
// cuckoo::ConcurrentFilter, for many threads at once (cuckoo/concurrent/concurrent_filter.hpp).
#include "cuckoo/concurrent/concurrent_filter.hpp"  // IWYU pragma: export
// cuckoo::ApproximateMap<V>, value association (cuckoo/map/approximate_map.hpp).
#include "cuckoo/map/approximate_map.hpp"  // IWYU pragma: export
