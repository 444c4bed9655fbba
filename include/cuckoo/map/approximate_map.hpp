// cuckoo/map/approximate_map.hpp — cuckoo::ApproximateMap<V>: value association (paper §6) sized
// from a Config, with files (format version 3, docs/FORMAT.md).
//
//   #include <cuckoo/cuckoo.hpp>
//   cuckoo::ApproximateMap<std::uint32_t> shard_of{cuckoo::Config{.capacity = 10'000'000}};
//   shard_of.insert("alice", 7);         // false only when no room is found; nothing changes then
//   shard_of.find("alice");              // {7}, plus a rare extra value from a colliding key
//   shard_of.erase("alice", 7);          // removes exactly the pair stored
//
// The algorithms and their arithmetic are in basic_approximate_map.hpp. As with Filter, the table
// is chosen once from the Config's bucket size and fingerprint width (the common b = 4 widths at
// compile time, every other f at run time); growable and semi-sorted maps are refused.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <istream>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "cuckoo/config.hpp"
#include "cuckoo/io/format.hpp"
#include "cuckoo/io/posix_file.hpp"
#include "cuckoo/io/serialize.hpp"
#include "cuckoo/map/basic_approximate_map.hpp"
#include "cuckoo/map/isa_map.hpp"
#include "cuckoo/sizing.hpp"
#include "cuckoo/table/packed_table.hpp"

namespace cuckoo {

template <class V>
class MappedApproximateMap;

namespace detail {
/// The map over each table shape at ISA level L: f = 12 first (the common width), then the other
/// fixed b = 4 widths, then the run-time widths.
template <class V, Isa L, template <class> class Wrap>
using MapsAt = std::tuple<Wrap<BasicApproximateMap<PackedTable<4, 12, L>, V>>,
                          Wrap<BasicApproximateMap<PackedTable<4, 8, L>, V>>,
                          Wrap<BasicApproximateMap<PackedTable<4, 16, L>, V>>,
                          Wrap<BasicApproximateMap<PackedTable<2, 0, L>, V>>,
                          Wrap<BasicApproximateMap<PackedTable<4, 0, L>, V>>>;
template <class M>
using Unwrapped = M;
// IsaMap through a one-parameter alias: its second parameter has a default, which GCC accepts for
// a `template <class> class` argument and clang (14, Debian's) does not.
template <class M>
using WrappedInIsaMap = IsaMap<M>;
// The shapes with vector compares, then every shape portable; make_map takes the first that fits
// the layout and the CPU. A build whose own flags enable AVX2 (-march=native) compiles the vector
// shapes at its level, as it did before the run-time choice (a single-key find through IsaMap's
// out-of-line entry measured 8% slower there); any other x86 build holds them at AVX2 (also for
// AVX-512 CPUs, as the growable filter: one level keeps the number of map types down).
#if CUCKOO_HAS_X86_VECTOR_PATHS
template <class V>
using VectorMaps =
    std::conditional_t<(kCompiledIsa >= Isa::kAvx2), MapsAt<V, kCompiledIsa, Unwrapped>,
                       MapsAt<V, Isa::kAvx2, WrappedInIsaMap>>;
template <class V>
using ApproximateMapVariant = typename VariantOfAll<
    VectorMaps<V>, MapsAt<V, Isa::kPortable, Unwrapped>,
    std::tuple<BasicApproximateMap<PackedTable<8, 0, Isa::kPortable>, V>>>::type;
#else
template <class V>
using ApproximateMapVariant = typename VariantOfAll<
    MapsAt<V, Isa::kPortable, Unwrapped>,
    std::tuple<BasicApproximateMap<PackedTable<8, 0, Isa::kPortable>, V>>>::type;
#endif

/// The first alternative whose table fits `layout` and the CPU, built from `args`.
template <class V, std::size_t I = 0, class... Args>
ApproximateMapVariant<V> make_map(const Layout& layout, const Args&... args) {
  using Alternative = std::variant_alternative_t<I, ApproximateMapVariant<V>>;
  using Table = typename Alternative::table_type;
  if (table_fits<Table>(layout) && table_isa<Table>() <= active_isa()) {
    return ApproximateMapVariant<V>(std::in_place_index<I>, layout, args...);
  }
  if constexpr (I + 1 < std::variant_size_v<ApproximateMapVariant<V>>) {
    return make_map<V, I + 1>(layout, args...);
  } else {
    invalid("no approximate-map table for this layout");
  }
}
}  // namespace detail

/// A map from keys to values in a few bits per key that may return extra values but never misses
/// a stored pair (see basic_approximate_map.hpp). V: trivially copyable; copyable and movable.
template <class V>
class ApproximateMap {
 public:
  using value_type = V;

  /// Throws std::invalid_argument naming the field when cfg cannot work (growable and semi-sorted
  /// maps included).
  explicit ApproximateMap(const Config& cfg = {})
      : map_(detail::make_map<V>(detail::approximate_map_layout(cfg), cfg.capacity, cfg.max_kicks,
                                 cfg.seed)) {}
  /// An empty map of an exact layout; for loaders.
  ApproximateMap(const Layout& layout, std::size_t capacity, unsigned max_kicks, std::uint64_t seed)
      : map_(detail::make_map<V>(layout, capacity, max_kicks, seed)) {}
  /// A map over storage it does not own (for map()); both must outlive it.
  ApproximateMap(const Layout& layout, std::size_t capacity, unsigned max_kicks, std::uint64_t seed,
                 detail::ExternalStorage table, detail::ExternalStorage values)
      : map_(detail::make_map<V>(layout, capacity, max_kicks, seed, table, values)) {}

  // ---- Files (format version 3) -----------------------------------------------------------------
  void save(const std::filesystem::path& path) const;
  static ApproximateMap load(const std::filesystem::path& path);
  static MappedApproximateMap<V> map(const std::filesystem::path& path,
                                     ChecksumCheck check = ChecksumCheck::kVerify);
  std::vector<std::byte> serialize() const;
  void serialize(std::ostream& out) const;
  static ApproximateMap deserialize(std::span<const std::byte> bytes);
  static ApproximateMap deserialize(std::istream& in);

  // ---- Single keys ------------------------------------------------------------------------------
  template <Key K>
  bool insert(const K& key, const V& value) {
    return std::visit([&](auto& m) { return m.insert(key, value); }, map_);
  }
  template <Key K>
  std::vector<V> find(const K& key) const {
    return std::visit([&](const auto& m) { return m.find(key); }, map_);
  }
  /// Writes up to out.size() values and returns how many matched (0 .. 2b); never allocates.
  /// (This and the single-key contains and count pass the key by value to an entry compiled for
  /// the map's level: detail/single_key_dispatch.hpp.)
  template <Key K>
  std::size_t find(const K& key, std::span<V> out) const noexcept {
    return detail::find_in(map_, key, out);
  }
  template <Key K>
  bool erase(const K& key, const V& value) noexcept {
    return std::visit([&](auto& m) { return m.erase(key, value); }, map_);
  }
  template <Key K>
  bool contains(const K& key) const noexcept {
    return detail::contains_in(map_, key);
  }
  template <Key K>
  std::size_t count(const K& key) const noexcept {
    return detail::count_in(map_, key);
  }
  bool insert(const char* key, const V& value) { return insert(std::string_view(key), value); }
  std::vector<V> find(const char* key) const { return find(std::string_view(key)); }
  std::size_t find(const char* key, std::span<V> out) const noexcept {
    return find(std::string_view(key), out);
  }
  bool erase(const char* key, const V& value) noexcept {
    return erase(std::string_view(key), value);
  }
  bool contains(const char* key) const noexcept { return contains(std::string_view(key)); }
  std::size_t count(const char* key) const noexcept { return count(std::string_view(key)); }

  // ---- Batches: one dispatch, then the prefetching pipeline -------------------------------------
  template <Key K>
  void contains(std::span<const K> keys, std::span<bool> out) const noexcept {
    std::visit([&](const auto& m) { m.contains(keys, out); }, map_);
  }
  /// out[i] = count(keys[i]): the entries matching key i's fingerprint.
  template <Key K>
  void count(std::span<const K> keys, std::span<std::size_t> out) const noexcept {
    std::visit([&](const auto& m) { m.count(keys, out); }, map_);
  }
  /// key i's values are values[ends[i − 1] .. ends[i]) (ends[−1] = 0); see BasicApproximateMap.
  template <Key K>
  void find(std::span<const K> keys, std::vector<V>& values, std::span<std::size_t> ends) const {
    std::visit([&](const auto& m) { m.find(keys, values, ends); }, map_);
  }
  /// Inserts pairs in order and stops at the first that does not fit; returns how many went in.
  template <Key K>
  std::size_t insert(std::span<const K> keys, std::span<const V> values) {
    return std::visit([&](auto& m) { return m.insert(keys, values); }, map_);
  }
  /// Erases pairs in order, skipping those not stored; returns how many were removed.
  template <Key K>
  std::size_t erase(std::span<const K> keys, std::span<const V> values) noexcept {
    return std::visit([&](auto& m) { return m.erase(keys, values); }, map_);
  }

  // ---- Shape and state --------------------------------------------------------------------------
  std::size_t size() const noexcept {
    return visit([](const auto& m) { return m.size(); });
  }
  bool empty() const noexcept { return size() == 0; }
  std::size_t capacity() const noexcept {
    return visit([](const auto& m) { return m.capacity(); });
  }
  std::uint64_t bucket_count() const noexcept {
    return visit([](const auto& m) { return m.bucket_count(); });
  }
  std::uint64_t slot_count() const noexcept {
    return visit([](const auto& m) { return m.slot_count(); });
  }
  double load_factor() const noexcept {
    return visit([](const auto& m) { return m.load_factor(); });
  }
  unsigned fingerprint_bits() const noexcept {
    return visit([](const auto& m) { return m.fingerprint_bits(); });
  }
  unsigned bucket_size() const noexcept {
    return visit([](const auto& m) { return m.bucket_size(); });
  }
  static constexpr unsigned value_bytes() noexcept { return sizeof(V); }
  /// The instruction-set level of this map's lookups: for a shape with vector compares, AVX2 on a
  /// CPU that has it (and CUCKOO_ISA allows), chosen at construction, or the level of the build's
  /// flags where those enable AVX2 already; portable otherwise.
  Isa isa() const noexcept {
    return visit([](const auto& m) {
      return detail::table_isa<typename std::decay_t<decltype(m)>::table_type>();
    });
  }
  /// Fingerprints plus values.
  std::size_t memory_bytes() const noexcept {
    return visit([](const auto& m) { return m.memory_bytes(); });
  }
  std::size_t fingerprint_memory_bytes() const noexcept {
    return visit([](const auto& m) { return m.fingerprint_memory_bytes(); });
  }
  std::size_t value_memory_bytes() const noexcept {
    return visit([](const auto& m) { return m.value_memory_bytes(); });
  }
  std::uint64_t seed() const noexcept {
    return visit([](const auto& m) { return m.seed(); });
  }
  unsigned max_kicks() const noexcept {
    return visit([](const auto& m) { return m.max_kicks(); });
  }
  Layout layout() const noexcept {
    return visit([](const auto& m) { return m.layout(); });
  }
  void clear() noexcept {
    visit([](auto& m) { m.clear(); });
  }

  template <class Visitor>
  decltype(auto) visit(Visitor&& visitor) {
    return std::visit(std::forward<Visitor>(visitor), map_);
  }
  template <class Visitor>
  decltype(auto) visit(Visitor&& visitor) const {
    return std::visit(std::forward<Visitor>(visitor), map_);
  }

 private:
  detail::ApproximateMapVariant<V> map_;
};

namespace io::detail {

template <class V>
FileHeader header_of(const ApproximateMap<V>& map) {
  FileHeader header;
  header.version = kApproximateMapFormatVersion;
  header.kind = kKindApproximateMap;
  header.layout = map.layout();
  header.max_kicks = map.max_kicks();
  header.seed = map.seed();
  header.item_count = map.size();
  header.capacity = map.capacity();
  header.table_bytes = map.fingerprint_memory_bytes();
  header.value_bytes = sizeof(V);
  return header;
}

/// The map's regions in file order: its table, then its values.
template <class V>
std::array<std::span<const std::byte>, 2> regions_of(const ApproximateMap<V>& map) {
  return map.visit([](const auto& m) {
    return std::array<std::span<const std::byte>, 2>{m.table().bytes(), m.value_bytes_span()};
  });
}
template <class V>
std::array<std::span<std::byte>, 2> regions_of(ApproximateMap<V>& map) {
  return map.visit([](auto& m) {
    return std::array<std::span<std::byte>, 2>{m.mutable_table().bytes(), m.mutable_value_bytes()};
  });
}

template <class V, class Sink>
void write_map(const ApproximateMap<V>& map, Sink&& sink) {
  Checksum checksum;
  const auto header = encode_header(header_of(map));
  checksum.update(header);
  sink(std::span<const std::byte>(header));
  for (const auto region : regions_of(map)) {
    for (std::size_t at = 0; at < region.size(); at += kChunkBytes) {
      const auto chunk = region.subspan(at, std::min(kChunkBytes, region.size() - at));
      checksum.update(chunk);
      sink(chunk);
    }
  }
  std::array<std::byte, kChecksumBytes> trailer{};
  store_u64(trailer.data(), checksum.digest());
  sink(std::span<const std::byte>(trailer));
}

/// Refuses, for ApproximateMap<V>, a header that is a filter or holds values of another width.
template <class V>
void check_is_map_of(const FileHeader& header) {
  if (!header.is_map()) refuse("a filter, not an approximate map: open it with cuckoo::Filter");
  if (header.value_bytes != sizeof(V)) {
    refuse("values are " + std::to_string(header.value_bytes) + " bytes wide; this map holds " +
           std::to_string(sizeof(V)) + "-byte values");
  }
}

/// Reads a whole map as read_filter reads a filter: straight into its storage when the input's
/// length is known and matches, buffered as it arrives otherwise.
template <class V, class Read>
ApproximateMap<V> read_map(Read&& read, std::int64_t total_bytes) {
  std::array<std::byte, kHeaderBytes> header_bytes{};
  const std::size_t header_read = read(std::span<std::byte>(header_bytes));
  const FileHeader header = decode_header(
      std::span<const std::byte>(header_bytes.data(), header_read), table_bytes_for_layout);
  check_is_map_of<V>(header);
  if (total_bytes >= 0) check_file_bytes(header, static_cast<std::uint64_t>(total_bytes));
  Checksum checksum;
  checksum.update(header_bytes);
  const auto read_exactly = [&](std::span<std::byte> out) {
    if (read(out) != out.size()) refuse("truncated: the input ends inside the table or values");
    checksum.update(out);
  };
  const auto make = [&] {
    return ApproximateMap<V>(header.layout, static_cast<std::size_t>(header.capacity),
                             header.max_kicks, header.seed);
  };
  std::optional<ApproximateMap<V>> map;
  if (total_bytes >= 0) {
    map.emplace(make());
    for (const auto region : regions_of(*map)) {
      for (std::size_t at = 0; at < region.size(); at += kChunkBytes) {
        read_exactly(region.subspan(at, std::min(kChunkBytes, region.size() - at)));
      }
    }
  } else {
    // Unknown length: allocate only as data arrives, never from the header's promises.
    const std::uint64_t body = header.table_bytes + header.values_bytes();
    std::vector<std::byte> buffered;
    while (buffered.size() < body) {
      const std::size_t at = buffered.size();
      buffered.resize(at + std::min<std::uint64_t>(kChunkBytes, body - at));
      read_exactly(std::span<std::byte>(buffered).subspan(at));
    }
    map.emplace(make());
    std::size_t at = 0;
    for (const auto region : regions_of(*map)) {
      std::memcpy(region.data(), buffered.data() + at, region.size());
      at += region.size();
    }
  }
  std::array<std::byte, kChecksumBytes> trailer{};
  if (read(std::span<std::byte>(trailer)) != trailer.size()) {
    refuse("truncated: the checksum is missing");
  }
  if (total_bytes < 0) {
    std::array<std::byte, 1> extra{};
    if (read(std::span<std::byte>(extra)) != 0) refuse("unexpected bytes after the checksum");
  }
  check_checksum(load_u64(trailer.data()), checksum.digest());
  map->visit([&](auto& m) { m.set_size_unchecked(static_cast<std::size_t>(header.item_count)); });
  map->visit([](const auto& m) { check_item_count(m); });
  return std::move(*map);
}

}  // namespace io::detail

/// A map answering from a read-only memory-mapped file (ApproximateMap::map): fingerprints and
/// values are both read from the file's pages. Use it like a const ApproximateMap.
template <class V>
class MappedApproximateMap {
 public:
  MappedApproximateMap(const std::filesystem::path& path, ChecksumCheck check) : file_(path) {
    try {
      const io::FileHeader header =
          io::detail::checked_mapping(file_.bytes(), check, io::detail::check_is_map_of<V>);
      std::byte* table = file_.data_for_reading_only() + io::kHeaderBytes;
      const auto table_bytes = static_cast<std::size_t>(header.table_bytes);
      map_.emplace(header.layout, static_cast<std::size_t>(header.capacity), header.max_kicks,
                   header.seed, detail::ExternalStorage{table, table_bytes},
                   detail::ExternalStorage{table + table_bytes,
                                           static_cast<std::size_t>(header.values_bytes())});
      map_->visit(
          [&](auto& m) { m.set_size_unchecked(static_cast<std::size_t>(header.item_count)); });
      if (check == ChecksumCheck::kVerify)
        map_->visit([](const auto& m) { io::check_item_count(m); });
      file_.advise_random();
    } catch (const format_error& e) {
      io::detail::rethrow_naming(path, e);
    }
  }

  const ApproximateMap<V>& operator*() const noexcept { return *map_; }
  const ApproximateMap<V>* operator->() const noexcept { return &*map_; }

 private:
  io::MappedFile file_;  // declared first: unmapped after the map viewing it is gone
  std::optional<ApproximateMap<V>> map_;
};

// ---- ApproximateMap's file members
// ----------------------------------------------------------------

template <class V>
void ApproximateMap<V>::save(const std::filesystem::path& path) const {
  io::AtomicFileWriter writer(path);
  io::detail::write_map(*this, [&](std::span<const std::byte> bytes) { writer.write(bytes); });
  writer.commit();
}

template <class V>
ApproximateMap<V> ApproximateMap<V>::load(const std::filesystem::path& path) {
  io::FileDescriptor fd = io::open_for_reading(path);
  try {
    return io::detail::read_map<V>(
        [&](std::span<std::byte> out) { return io::read_fully(fd.get(), out, path); },
        io::regular_file_size(fd.get(), path));
  } catch (const format_error& e) {
    io::detail::rethrow_naming(path, e);
  }
}

template <class V>
MappedApproximateMap<V> ApproximateMap<V>::map(const std::filesystem::path& path,
                                               ChecksumCheck check) {
  return MappedApproximateMap<V>(path, check);
}

template <class V>
std::vector<std::byte> ApproximateMap<V>::serialize() const {
  std::vector<std::byte> out;
  out.reserve(static_cast<std::size_t>(io::detail::header_of(*this).file_bytes()));
  io::detail::write_map(*this, [&](std::span<const std::byte> bytes) {
    out.insert(out.end(), bytes.begin(), bytes.end());
  });
  return out;
}

template <class V>
void ApproximateMap<V>::serialize(std::ostream& out) const {
  io::detail::write_map(*this, [&](std::span<const std::byte> bytes) {
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  });
  if (!out) throw std::ios_base::failure("cuckoo: writing the map stream failed");
}

template <class V>
ApproximateMap<V> ApproximateMap<V>::deserialize(std::span<const std::byte> bytes) {
  return io::detail::read_map<V>(io::detail::span_reader(bytes),
                                 static_cast<std::int64_t>(bytes.size()));
}

template <class V>
ApproximateMap<V> ApproximateMap<V>::deserialize(std::istream& in) {
  return io::detail::read_stream(
      in, [](auto&& read, std::int64_t total) { return io::detail::read_map<V>(read, total); });
}

}  // namespace cuckoo
