// cuckoo/concurrent/concurrent_filter.hpp — cuckoo::ConcurrentFilter, the run-time facade of a
// filter that any number of threads may use at once.
//
//   #include <cuckoo/cuckoo.hpp>
//   cuckoo::ConcurrentFilter filter{cuckoo::Config{.capacity = 10'000'000}};
//   // from any thread, at the same time:
//   filter.insert("alice");  filter.contains("bob");  filter.erase("carol");
//   filter.contains(std::span<const std::uint64_t>(keys), std::span<bool>(answers));  // batch
//
// The same Config, the same answers and the same members as cuckoo::Filter (cuckoo.hpp): a key
// lands in the same buckets with the same fingerprint, and the table has the same bits, so a
// ConcurrentFilter converts to and from a Filter by copying its table, and saves to and loads
// from the same files. How it stays correct under concurrency is told in
// basic_concurrent_filter.hpp (optimistic lookups, stripe locks for writers, copy-before-erase
// moves); its cost: a lookup reads one writer-activity word besides its two buckets (twice), and
// its two stripes' version counters too when writers are about; an insert or erase takes one
// stripe lock, or two when the key's first bucket will not do; inside a sole_writer() scope, one
// thread's writes take none. Whole-word buckets (b = 4 with
// f = 8, 12, 16) are compared with AVX2 when the CPU has it, and their batch lookups of integer
// keys, and those of b = 4 with any f, are staged eight keys at once when it has AVX-512
// (isa_concurrent_filter.hpp).
//
// Plain tables only (b = 2, 4, 8, every f from 2 to 32). Semi-sorted tables are not supported:
// a semi-sorted bucket is re-encoded as a whole on every write (its 12-bit index covers all four
// entries), so a write cannot change one entry's bits alone, which this design relies on. A Config
// with semi_sort, or a semi-sorted Filter or file, is refused with std::invalid_argument.
//
// Copying a ConcurrentFilter takes a snapshot (as to_filter()): every stripe of the source is held
// while its table is copied. Moving one while other threads use it is, as for any object, a race.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "cuckoo/concurrent/atomic_packed_table.hpp"
#include "cuckoo/concurrent/basic_concurrent_filter.hpp"
#include "cuckoo/concurrent/isa_concurrent_filter.hpp"
#include "cuckoo/cuckoo.hpp"

namespace cuckoo {

namespace detail {
template <unsigned kSlots, unsigned kBits = 0, Isa kLevel = Isa::kPortable>
using ConcurrentAt = BasicConcurrentFilter<concurrent::AtomicPackedTable<kSlots, kBits, kLevel>>;

// The concurrent counterparts of FilterVariant's plain alternatives: the whole-word shapes and
// b = 4 with a run-time f (the default Config's f = 13) at the AVX-512 level, then the whole-word
// shapes at AVX2 (make_concurrent takes the first the CPU runs), then every shape portable. The
// run-time f compares with SWAR at every level; at AVX-512 its batches of integer keys take the
// eight-key stage (detail/vector_probes.hpp), which is why it is held there.
using ConcurrentVariant = std::variant<
#if CUCKOO_HAS_X86_VECTOR_PATHS
    IsaConcurrentFilter<ConcurrentAt<4, 8, Isa::kAvx512>>,
    IsaConcurrentFilter<ConcurrentAt<4, 12, Isa::kAvx512>>,
    IsaConcurrentFilter<ConcurrentAt<4, 16, Isa::kAvx512>>,
    IsaConcurrentFilter<ConcurrentAt<4, 0, Isa::kAvx512>>,
    IsaConcurrentFilter<ConcurrentAt<4, 8, Isa::kAvx2>>,
    IsaConcurrentFilter<ConcurrentAt<4, 12, Isa::kAvx2>>,
    IsaConcurrentFilter<ConcurrentAt<4, 16, Isa::kAvx2>>,
#endif
    ConcurrentAt<4, 8>, ConcurrentAt<4, 12>, ConcurrentAt<4, 16>, ConcurrentAt<2>, ConcurrentAt<4>,
    ConcurrentAt<8>>;

/// The concurrent filter for `layout` (plain layouts only; checked by the caller).
template <std::size_t I = 0>
std::unique_ptr<ConcurrentVariant> make_concurrent(const Layout& layout, std::size_t capacity,
                                                   unsigned max_kicks, std::uint64_t seed) {
  if constexpr (I == std::variant_size_v<ConcurrentVariant>) {
    invalid("no concurrent table for this layout");
  } else {
    using Table = typename std::variant_alternative_t<I, ConcurrentVariant>::table_type;
    if (table_fits<Table>(layout) && table_isa<Table>() <= active_isa()) {
      return std::make_unique<ConcurrentVariant>(std::in_place_index<I>, layout, capacity,
                                                 max_kicks, seed);
    }
    return make_concurrent<I + 1>(layout, capacity, max_kicks, seed);
  }
}

inline const Config& fixed_config(const Config& cfg) {
  if (cfg.growable) invalid("growable: ConcurrentFilter supports fixed-size tables only");
  return cfg;
}
inline const Filter& fixed_filter(const Filter& filter) {
  if (filter.growable()) invalid("growable: ConcurrentFilter supports fixed-size tables only");
  return filter;
}

inline const Layout& plain_layout(const Layout& layout) {
  if (layout.blocked) invalid("blocked: ConcurrentFilter supports plain tables only");
  if (layout.semi_sort) {
    invalid("semi_sort: ConcurrentFilter supports plain tables only (see concurrent_filter.hpp)");
  }
  return layout;
}
}  // namespace detail

class ConcurrentFilter {
 public:
  /// The compile-time filter inside, for code that dispatches once for a long loop.
  template <class Visitor>
  decltype(auto) visit(Visitor&& visitor) {
    return std::visit(std::forward<Visitor>(visitor), *filter_);
  }
  template <class Visitor>
  decltype(auto) visit(Visitor&& visitor) const {
    return std::visit(std::forward<Visitor>(visitor),
                      static_cast<const detail::ConcurrentVariant&>(*filter_));
  }

  /// Throws std::invalid_argument naming the field when cfg cannot work or asks for semi_sort or
  /// growable.
  explicit ConcurrentFilter(const Config& cfg = {})
      : filter_(detail::make_concurrent(detail::plain_layout(plan(detail::fixed_config(cfg))),
                                        cfg.capacity, cfg.max_kicks, cfg.seed)) {}
  /// An empty filter of an exact (plain) layout.
  ConcurrentFilter(const Layout& layout, std::size_t capacity, unsigned max_kicks,
                   std::uint64_t seed)
      : filter_(detail::make_concurrent(detail::plain_layout(layout), capacity, max_kicks, seed)) {}
  /// A concurrent filter holding exactly what `filter` holds (its table is copied). Throws
  /// std::invalid_argument for a semi-sorted or a growable filter.
  explicit ConcurrentFilter(const Filter& filter)
      : ConcurrentFilter(detail::fixed_filter(filter).layout(), filter.capacity(),
                         filter.max_kicks(), filter.seed()) {
    const auto bytes = filter.visit([](const auto& f) { return f.table().bytes(); });
    visit([&](auto& f) { f.assign_unchecked(bytes, filter.size()); });
  }
  /// A snapshot copy (every stripe of `other` is held while its table is copied).
  ConcurrentFilter(const ConcurrentFilter& other) : ConcurrentFilter(other.to_filter()) {}
  ConcurrentFilter& operator=(const ConcurrentFilter& other) {
    if (this != &other) *this = ConcurrentFilter(other);
    return *this;
  }
  ConcurrentFilter(ConcurrentFilter&&) noexcept = default;
  ConcurrentFilter& operator=(ConcurrentFilter&&) noexcept = default;

  /// A single-thread Filter holding what this one holds at one instant: every stripe is held
  /// while the table is copied, so concurrent writers wait for the copy.
  Filter to_filter() const {
    Filter out(layout(), capacity(), max_kicks(), seed());
    auto bytes = out.visit([](auto& f) { return f.mutable_table().bytes(); });
    const std::size_t items = visit([&](const auto& f) { return f.copy_table_to(bytes); });
    out.visit([&](auto& f) { f.set_size_unchecked(items); });
    return out;
  }

  // ---- Files and byte streams: Filter's format (docs/FORMAT.md), through a snapshot ----------

  /// Saves a snapshot (to_filter()) atomically, as Filter::save; needs the table's size again in
  /// memory for the snapshot.
  void save(const std::filesystem::path& path) const { to_filter().save(path); }
  static ConcurrentFilter load(const std::filesystem::path& path) {
    return ConcurrentFilter(Filter::load(path));
  }
  std::vector<std::byte> serialize() const { return to_filter().serialize(); }
  void serialize(std::ostream& out) const { to_filter().serialize(out); }
  static ConcurrentFilter deserialize(std::span<const std::byte> bytes) {
    return ConcurrentFilter(Filter::deserialize(bytes));
  }
  static ConcurrentFilter deserialize(std::istream& in) {
    return ConcurrentFilter(Filter::deserialize(in));
  }

  // ---- Operations: as Filter's, from any number of threads at once ---------------------------

  // Single-key calls pass the key by value to an entry compiled for the filter's level
  // (detail/single_key_dispatch.hpp), one indirect call each.
  template <Key K>
  bool insert(const K& key) {
    return detail::insert_in(*filter_, key);
  }
  template <Key K>
  bool contains(const K& key) const noexcept {
    return detail::contains_in(*filter_, key);
  }
  template <Key K>
  bool erase(const K& key) noexcept {
    return detail::erase_in(*filter_, key);
  }
  template <Key K>
  std::size_t count(const K& key) const noexcept {
    return detail::count_in(*filter_, key);
  }
  bool insert(const char* key) { return insert(std::string_view(key)); }
  bool contains(const char* key) const noexcept { return contains(std::string_view(key)); }
  bool erase(const char* key) noexcept { return erase(std::string_view(key)); }
  std::size_t count(const char* key) const noexcept { return count(std::string_view(key)); }

  /// out[i] = contains(keys[i]); out.size() must be at least keys.size().
  template <Key K>
  void contains(std::span<const K> keys, std::span<bool> out) const noexcept {
    visit([&](const auto& f) { f.contains(keys, out); });
  }
  /// out[i] = count(keys[i]), each validated as the single-key count is.
  template <Key K>
  void count(std::span<const K> keys, std::span<std::size_t> out) const noexcept {
    visit([&](const auto& f) { f.count(keys, out); });
  }
  /// Inserts keys in order, stops at the first that does not fit; returns how many went in.
  template <Key K>
  std::size_t insert(std::span<const K> keys) {
    return visit([&](auto& f) { return f.insert(keys); });
  }
  /// Erases one copy of each key in order (keys not found are skipped); returns copies removed.
  template <Key K>
  std::size_t erase(std::span<const K> keys) noexcept {
    return visit([&](auto& f) { return f.erase(keys); });
  }

  /// Items held; exact when no writer is inside an operation (e.g. once the threads joined).
  std::size_t size() const noexcept {
    return visit([](const auto& f) { return f.size(); });
  }
  bool empty() const noexcept { return size() == 0; }
  std::size_t capacity() const noexcept {
    return visit([](const auto& f) { return f.capacity(); });
  }
  std::uint64_t bucket_count() const noexcept {
    return visit([](const auto& f) { return f.bucket_count(); });
  }
  std::uint64_t slot_count() const noexcept {
    return visit([](const auto& f) { return f.slot_count(); });
  }
  double load_factor() const noexcept {
    return visit([](const auto& f) { return f.load_factor(); });
  }
  unsigned fingerprint_bits() const noexcept {
    return visit([](const auto& f) { return f.fingerprint_bits(); });
  }
  unsigned bucket_size() const noexcept {
    return visit([](const auto& f) { return f.bucket_size(); });
  }
  bool semi_sorted() const noexcept { return false; }
  /// The instruction-set level of this filter's lookups, as Filter::isa(): for the whole-word
  /// shapes (b = 4 with f = 8, 12 or 16) the best of AVX-512 and AVX2 that this CPU has and
  /// CUCKOO_ISA allows, for b = 4 with any other f AVX-512 where allowed, chosen once at
  /// construction (isa_concurrent_filter.hpp); portable otherwise.
  Isa isa() const noexcept {
    return visit([](const auto& f) {
      return detail::table_isa<typename std::decay_t<decltype(f)>::table_type>();
    });
  }
  /// Table words plus the stripes' versions and counts (16 KiB + 32 KiB at most).
  std::size_t memory_bytes() const noexcept {
    return visit([](const auto& f) { return f.memory_bytes(); });
  }
  std::uint64_t seed() const noexcept {
    return visit([](const auto& f) { return f.seed(); });
  }
  unsigned max_kicks() const noexcept {
    return visit([](const auto& f) { return f.max_kicks(); });
  }
  Layout layout() const noexcept {
    return visit([](const auto& f) { return f.layout(); });
  }
  /// Empties the filter; concurrent operations see it before or after, never half-cleared.
  void clear() noexcept {
    visit([](auto& f) { f.clear(); });
  }

  /// A scope in which the calling thread is this filter's only writer (see sole_writer()).
  using SoleWriter = concurrent::SoleWriter;
  /// Makes the calling thread this filter's only writer while the result lives, for a burst of
  /// writes from one thread (a bulk load, a writer thread beside many readers): its inserts and
  /// erases, single-key and batch, then take no locked instruction; every thread's lookups go on
  /// without waiting; other threads' inserts, erases, clears and snapshots (to_filter, save,
  /// copies) wait until it is destroyed, as for a lock. Destroy it on the thread that made it,
  /// before the filter. Another on the same thread for this filter is a no-op; for another filter
  /// it throws std::logic_error. (A filter that only one thread writes needs none: its first
  /// writer thread holds a bias that does the same until another thread writes; README.)
  ///   { auto writer = filter.sole_writer(); for (auto& key : keys) filter.insert(key); }
  [[nodiscard]] SoleWriter sole_writer() {
    return SoleWriter(
        visit([](auto& f) -> const concurrent::StripedVersions& { return f.stripes(); }));
  }

 private:
  std::unique_ptr<detail::ConcurrentVariant> filter_;  // its alternatives hold atomics: not movable
};

}  // namespace cuckoo
