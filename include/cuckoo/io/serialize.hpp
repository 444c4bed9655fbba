// cuckoo/io/serialize.hpp — saving, loading and mapping filters (format: docs/FORMAT.md).
//
//   filter.save("users.cf");                          // atomic: old file or new file, never half
//   auto filter = cuckoo::Filter::load("users.cf");   // format_error if the file can't be trusted
//   auto mapped = cuckoo::Filter::map("users.cf");    // read-only; lookups read the mapped file
//   mapped->contains("alice");
//   std::vector<std::byte> bytes = filter.serialize();
//   auto copy = cuckoo::Filter::deserialize(bytes);
//
// Loading reads the table straight into the new filter's storage, hashing each chunk as it
// arrives, so a filter needs its own size in memory plus one chunk, never twice. Nothing is
// allocated before the header has been validated and, for files, seekable streams and byte
// buffers, before the input is known to hold exactly the bytes the header promises. A stream whose
// length is unknown (a pipe) is buffered as it arrives, so its memory is bounded by the data
// actually sent, at the price of one copy.
//
// Included by cuckoo/cuckoo.hpp; nothing else needs to be included. It brings in
// cuckoo/io/file_lock.hpp too (at the end): the writer lock and update_file, for files that more
// than one writer changes.
//
// Included on its own, it works too: cuckoo.hpp comes first, and includes this file back at the
// point where its declarations are needed, before the concurrent filter and the map, which use
// them. That is why this header has an include guard after that line instead of #pragma once:
// #pragma once would let the inner include be skipped, and the map would then be parsed before
// the functions it calls.
#include "cuckoo/cuckoo.hpp"

#ifndef CUCKOO_IO_SERIALIZE_HPP
#define CUCKOO_IO_SERIALIZE_HPP

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuckoo/io/format.hpp"
#include "cuckoo/io/posix_file.hpp"

namespace cuckoo {

namespace io {

/// What inspect() finds in a file whose header is valid.
struct FileInfo {
  FileHeader header;
  std::uint64_t stored_checksum = 0;
  std::uint64_t computed_checksum = 0;
  bool checksum_ok() const noexcept { return stored_checksum == computed_checksum; }
};

namespace detail {

// Chunk size for streaming: large enough for few system calls, small enough to hash while the
// chunk is still in cache.
inline constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

/// Streaming XXH3-64 (seed 0) of a file's bytes.
class Checksum {
 public:
  Checksum() : state_(XXH3_createState()) {
    if (state_ == nullptr) throw std::bad_alloc();
    XXH3_64bits_reset(state_.get());
  }
  void update(std::span<const std::byte> bytes) noexcept {
    XXH3_64bits_update(state_.get(), bytes.data(), bytes.size());
  }
  std::uint64_t digest() const noexcept { return XXH3_64bits_digest(state_.get()); }

 private:
  struct Free {
    void operator()(XXH3_state_t* state) const noexcept { XXH3_freeState(state); }
  };
  std::unique_ptr<XXH3_state_t, Free> state_;
};

inline std::size_t table_bytes_for_layout(const Layout& layout) noexcept {
  return cuckoo::detail::table_bytes_for(layout);
}

/// Whether the table this build uses for `layout` can answer from storage it does not own.
template <std::size_t I = 0>
bool table_views_external(const Layout& layout) noexcept {
  using cuckoo::detail::FilterVariant;
  if constexpr (I == 0) {
    if (layout.blocked) return true;
  }
  if constexpr (I == cuckoo::detail::kFirstGrowable) {
    return false;
  } else {
    using Table = typename std::variant_alternative_t<I, FilterVariant>::table_type;
    if (cuckoo::detail::table_fits<Table>(layout)) {
      return std::is_constructible_v<Table, std::uint64_t, unsigned,
                                     cuckoo::detail::ExternalStorage>;
    }
    return table_views_external<I + 1>(layout);
  }
}

inline FileHeader header_of(const Filter& filter) {
  FileHeader header;
  header.layout = filter.layout();
  header.max_kicks = filter.max_kicks();
  header.seed = filter.seed();
  header.item_count = filter.size();
  header.capacity = filter.capacity();
  header.table_bytes = filter.visit([](const auto& f) { return f.table().bytes().size(); });
  filter.visit([&](const auto& f) {
    if constexpr (requires { f.geometry(); }) {
      header.version = kGrowableFormatVersion;
      header.growable = true;
      header.doublings = f.doublings();
      header.schedule = f.schedule();
      header.stash_count = static_cast<std::uint32_t>(f.stash().size());
      header.capacity = f.initial_capacity();
    }
  });
  if (header.layout.blocked) header.version = kBlockedFormatVersion;
  return header;
}

/// The stash of a growable filter as a file stores it (empty for fixed filters).
inline std::vector<std::byte> stash_bytes_of(const Filter& filter) {
  std::vector<std::byte> out;
  filter.visit([&](const auto& f) {
    if constexpr (requires { f.stash(); }) {
      out.resize(f.stash().size() * kStashEntryBytes);
      for (std::size_t i = 0; i < f.stash().size(); ++i) {
        io::detail::store_u64(out.data() + i * kStashEntryBytes, f.stash()[i].first);
        io::detail::store_u32(out.data() + i * kStashEntryBytes + 8, f.stash()[i].value);
      }
    }
  });
  return out;
}

/// Decodes and checks a stash read from a file and hands it to the (growable) filter.
inline void restore_stash(Filter& filter, const FileHeader& header,
                          std::span<const std::byte> bytes) {
  std::vector<StashedEntry> entries(header.stash_count);
  const std::uint64_t side_buckets = header.layout.bucket_count / 2;
  const unsigned width =
      growth::slot_bits(header.layout.fingerprint_bits, header.doublings, header.schedule);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::byte* at = bytes.data() + i * kStashEntryBytes;
    entries[i] = {io::detail::load_u64(at), io::detail::load_u32(at + 8)};
    if (entries[i].first >= side_buckets || entries[i].value == 0 ||
        (width < 32 && entries[i].value >> width != 0) || io::detail::load_u32(at + 12) != 0) {
      io::detail::refuse("stash entry " + std::to_string(i) + " out of range");
    }
  }
  filter.visit([&](auto& f) {
    if constexpr (requires { f.set_stash_unchecked(entries); }) f.set_stash_unchecked(entries);
  });
}

/// An empty filter of the header's shape; `storage` (a mapped table) when given.
template <class... Storage>
Filter filter_for(const FileHeader& header, Storage... storage) {
  if (header.growable) {
    return Filter(header.geometry(), header.layout.bucket_size,
                  static_cast<std::size_t>(header.capacity), header.max_kicks, header.seed,
                  storage...);
  }
  return Filter(header.layout, static_cast<std::size_t>(header.capacity), header.max_kicks,
                header.seed, storage...);
}

/// Writes the whole file to `sink(std::span<const std::byte>)`.
template <class Sink>
void write_filter(const Filter& filter, Sink&& sink) {
  Checksum checksum;
  const auto header = encode_header(header_of(filter));
  checksum.update(header);
  sink(std::span<const std::byte>(header));
  auto table = filter.visit([](const auto& f) { return f.table().bytes(); });
  for (std::size_t at = 0; at < table.size(); at += kChunkBytes) {
    const auto chunk = table.subspan(at, std::min(kChunkBytes, table.size() - at));
    checksum.update(chunk);
    sink(chunk);
  }
  const std::vector<std::byte> stash = stash_bytes_of(filter);
  if (!stash.empty()) {
    checksum.update(stash);
    sink(std::span<const std::byte>(stash));
  }
  std::array<std::byte, kChecksumBytes> trailer{};
  io::detail::store_u64(trailer.data(), checksum.digest());
  sink(std::span<const std::byte>(trailer));
}

/// Refuses a table whose bytes its type cannot decode safely (for tables with an encoding
/// invariant, which then provide `bool valid_encoding() const`; plain packed tables have none),
/// and, unless the caller skips the checksum (a mapping that must not read the whole file), a
/// header whose item count is not what the table holds (check_item_count).
inline void check_table_contents(const Filter& filter,
                                 ChecksumCheck check = ChecksumCheck::kVerify) {
  const bool valid = filter.visit([](const auto& f) {
    if constexpr (requires { f.table().valid_encoding(); }) {
      return static_cast<bool>(f.table().valid_encoding());
    } else {
      return true;
    }
  });
  if (!valid) io::detail::refuse("table contents are not a valid encoding");
  if (check == ChecksumCheck::kSkip) return;
  filter.visit([](const auto& f) { check_item_count(f); });
}

/// Reads a whole filter through `read(std::span<std::byte>) -> bytes read` (short only at the
/// end). `total_bytes` is the input's length, or -1 when unknown.
template <class Read>
Filter read_filter(Read&& read, std::int64_t total_bytes) {
  std::array<std::byte, kHeaderBytes> header_bytes{};
  const std::size_t header_read = read(std::span<std::byte>(header_bytes));
  const FileHeader header = decode_header(
      std::span<const std::byte>(header_bytes.data(), header_read), table_bytes_for_layout);
  check_is_filter(header);
  if (total_bytes >= 0) check_file_bytes(header, static_cast<std::uint64_t>(total_bytes));
  Checksum checksum;
  checksum.update(header_bytes);

  const auto read_exactly = [&](std::span<std::byte> out) {
    if (read(out) != out.size()) {
      io::detail::refuse("truncated: the input ends inside the table (" +
                         std::to_string(header.table_bytes) + " bytes promised)");
    }
    checksum.update(out);
  };
  std::optional<Filter> filter;
  if (total_bytes >= 0) {
    // The length is known to match: read straight into the table's own storage.
    filter.emplace(filter_for(header));
    auto table = filter->visit([](auto& f) { return f.mutable_table().bytes(); });
    for (std::size_t at = 0; at < table.size(); at += kChunkBytes) {
      read_exactly(table.subspan(at, std::min(kChunkBytes, table.size() - at)));
    }
  } else {
    // Unknown length: never trust table_bytes for an allocation; grow with the data received.
    std::vector<std::byte> buffered;
    while (buffered.size() < header.table_bytes) {
      const std::size_t at = buffered.size();
      buffered.resize(at + std::min<std::uint64_t>(kChunkBytes, header.table_bytes - at));
      read_exactly(std::span<std::byte>(buffered).subspan(at));
    }
    filter.emplace(filter_for(header));
    auto table = filter->visit([](auto& f) { return f.mutable_table().bytes(); });
    std::memcpy(table.data(), buffered.data(), table.size());
  }
  std::vector<std::byte> stash(static_cast<std::size_t>(header.stash_bytes()));
  if (!stash.empty()) read_exactly(stash);

  std::array<std::byte, kChecksumBytes> trailer{};
  if (read(std::span<std::byte>(trailer)) != trailer.size()) {
    io::detail::refuse("truncated: the checksum is missing");
  }
  if (total_bytes < 0) {
    std::array<std::byte, 1> extra{};
    if (read(std::span<std::byte>(extra)) != 0) {
      io::detail::refuse("unexpected bytes after the checksum");
    }
  }
  check_checksum(io::detail::load_u64(trailer.data()), checksum.digest());
  filter->visit(
      [&](auto& f) { f.set_size_unchecked(static_cast<std::size_t>(header.item_count)); });
  restore_stash(*filter, header, stash);
  check_table_contents(*filter);
  return std::move(*filter);
}

/// A read(std::span<std::byte>) -> bytes read over `bytes` in memory, for the readers above.
inline auto span_reader(std::span<const std::byte> bytes) {
  return [bytes, at = std::size_t{0}](std::span<std::byte> out) mutable {
    const std::size_t n = std::min(out.size(), bytes.size() - at);
    if (n != 0) std::memcpy(out.data(), bytes.data() + at, n);
    at += n;
    return n;
  };
}

/// Calls reader(read, total) over an istream: seekable streams report their remaining length as
/// total, others -1.
template <class Reader>
auto read_stream(std::istream& in, Reader&& reader) {
  std::int64_t total = -1;
  const auto start = in.tellg();
  if (start != std::istream::pos_type(-1) && in.seekg(0, std::ios::end)) {
    const auto end = in.tellg();
    in.seekg(start);
    if (end != std::istream::pos_type(-1) && in) total = static_cast<std::int64_t>(end - start);
  }
  in.clear();
  return reader(
      [&](std::span<std::byte> out) -> std::size_t {
        in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
        if (in.bad()) throw std::ios_base::failure("cuckoo: reading the filter stream failed");
        return static_cast<std::size_t>(in.gcount());
      },
      total);
}

inline Filter read_filter(std::istream& in) {
  return read_stream(in, [](auto&& read, std::int64_t total) { return read_filter(read, total); });
}

/// The header of a memory-mapped file, validated with its length and, with kVerify, its checksum;
/// `check_kind(header)` refuses the wrong kind of file (a map for a filter, or the reverse) first.
template <class CheckKind>
FileHeader checked_mapping(std::span<const std::byte> bytes, ChecksumCheck check,
                           CheckKind&& check_kind) {
  const FileHeader header =
      decode_header(bytes.first(std::min(bytes.size(), kHeaderBytes)), table_bytes_for_layout);
  check_kind(header);
  check_file_bytes(header, bytes.size());
  if (check == ChecksumCheck::kVerify) {
    const auto checked = bytes.first(bytes.size() - kChecksumBytes);
    check_checksum(load_u64(checked.data() + checked.size()),
                   XXH3_64bits(checked.data(), checked.size()));
  }
  return header;
}

[[noreturn]] inline void rethrow_naming(const std::filesystem::path& path, const format_error& e) {
  throw format_error(path.string() + ": " + e.what());
}

}  // namespace detail

/// Validates a file's header and length and computes its checksum without building the filter
/// (for `cuckoo info`). Throws format_error if the header or length is wrong; a checksum mismatch
/// is reported in the result.
inline FileInfo inspect(const std::filesystem::path& path) {
  try {
    FileDescriptor fd = open_for_reading(path);
    const std::int64_t size = regular_file_size(fd.get(), path);
    std::array<std::byte, kHeaderBytes> header_bytes{};
    const std::size_t got = read_fully(fd.get(), header_bytes, path);
    FileInfo info;
    info.header = decode_header(std::span<const std::byte>(header_bytes.data(), got),
                                detail::table_bytes_for_layout);
    if (size >= 0) check_file_bytes(info.header, static_cast<std::uint64_t>(size));
    detail::Checksum checksum;
    checksum.update(header_bytes);
    std::vector<std::byte> chunk(detail::kChunkBytes);
    for (std::uint64_t left =
             info.header.table_bytes + info.header.stash_bytes() + info.header.values_bytes();
         left > 0;) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
      if (read_fully(fd.get(), std::span(chunk).first(want), path) != want) {
        io::detail::refuse("truncated: the input ends inside the table");
      }
      checksum.update(std::span(chunk).first(want));
      left -= want;
    }
    std::array<std::byte, kChecksumBytes> trailer{};
    if (read_fully(fd.get(), trailer, path) != trailer.size()) {
      io::detail::refuse("truncated: the checksum is missing");
    }
    info.stored_checksum = io::detail::load_u64(trailer.data());
    info.computed_checksum = checksum.digest();
    return info;
  } catch (const format_error& e) {
    detail::rethrow_naming(path, e);
  }
}

}  // namespace io

/// A filter answering from a read-only memory-mapped file (Filter::map). Move-only; the file
/// stays mapped while it lives. Use it like a const Filter: `mapped->contains(key)`. Copying the
/// Filter (`cuckoo::Filter copy = *mapped;`) gives an ordinary in-memory, writable filter.
class MappedFilter {
 public:
  MappedFilter(const std::filesystem::path& path, ChecksumCheck check) : file_(path) {
    try {
      const auto bytes = file_.bytes();
      const io::FileHeader header = io::detail::checked_mapping(bytes, check, io::check_is_filter);
      std::byte* table = file_.data_for_reading_only() + io::kHeaderBytes;
      const auto table_bytes = static_cast<std::size_t>(header.table_bytes);
      if (header.growable || io::detail::table_views_external(header.layout)) {
        filter_.emplace(
            io::detail::filter_for(header, detail::ExternalStorage{table, table_bytes}));
        views_file_ = true;
      } else {  // a table kind that cannot view external storage: copy it into memory
        filter_.emplace(io::detail::filter_for(header));
        auto storage = filter_->visit([](auto& f) { return f.mutable_table().bytes(); });
        std::memcpy(storage.data(), table, storage.size());
      }
      filter_->visit(
          [&](auto& f) { f.set_size_unchecked(static_cast<std::size_t>(header.item_count)); });
      io::detail::restore_stash(*filter_, header,
                                bytes.subspan(io::kHeaderBytes + table_bytes,
                                              static_cast<std::size_t>(header.stash_bytes())));
      io::detail::check_table_contents(*filter_, check);
      file_.advise_random();
    } catch (const format_error& e) {
      io::detail::rethrow_naming(path, e);
    }
  }

  const Filter& filter() const noexcept { return *filter_; }
  const Filter& operator*() const noexcept { return *filter_; }
  const Filter* operator->() const noexcept { return &*filter_; }
  /// True when lookups read the mapped file itself (every table kind that supports it).
  bool views_file() const noexcept { return views_file_; }

 private:
  io::MappedFile file_;  // declared first: unmapped after the filter viewing it is gone
  std::optional<Filter> filter_;
  bool views_file_ = false;
};

// ---- Filter's members ---------------------------------------------------------------------------

inline void Filter::save(const std::filesystem::path& path) const {
  io::AtomicFileWriter writer(path);
  io::detail::write_filter(*this, [&](std::span<const std::byte> bytes) { writer.write(bytes); });
  writer.commit();
}

inline Filter Filter::load(const std::filesystem::path& path) {
  io::FileDescriptor fd = io::open_for_reading(path);
  try {
    return io::detail::read_filter(
        [&](std::span<std::byte> out) { return io::read_fully(fd.get(), out, path); },
        io::regular_file_size(fd.get(), path));
  } catch (const format_error& e) {
    io::detail::rethrow_naming(path, e);
  }
}

inline MappedFilter Filter::map(const std::filesystem::path& path, ChecksumCheck check) {
  return MappedFilter(path, check);
}

inline std::vector<std::byte> Filter::serialize() const {
  std::vector<std::byte> out;
  out.reserve(static_cast<std::size_t>(io::detail::header_of(*this).file_bytes()));
  io::detail::write_filter(*this, [&](std::span<const std::byte> bytes) {
    out.insert(out.end(), bytes.begin(), bytes.end());
  });
  return out;
}

inline void Filter::serialize(std::ostream& out) const {
  io::detail::write_filter(*this, [&](std::span<const std::byte> bytes) {
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  });
  if (!out) throw std::ios_base::failure("cuckoo: writing the filter stream failed");
}

inline Filter Filter::deserialize(std::span<const std::byte> bytes) {
  return io::detail::read_filter(io::detail::span_reader(bytes),
                                 static_cast<std::int64_t>(bytes.size()));
}

inline Filter Filter::deserialize(std::istream& in) {
  return io::detail::read_filter(in);
}

}  // namespace cuckoo

// Many writers of one file: io::WriterLock and update_file (they use the members defined above).
#include "cuckoo/io/file_lock.hpp"  // IWYU pragma: export

#endif  // CUCKOO_IO_SERIALIZE_HPP
