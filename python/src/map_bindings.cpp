// python/src/map_bindings.cpp — cuckoo.ApproximateMap: the paper's value association (§6).
//
// One Python class over cuckoo::ApproximateMap<V> for V = uint8, uint16, uint32 and uint64,
// chosen by value_bits at construction and by the file's value width when loading. The C++ map
// behind an object never changes type, so the variant is visited without the lock; the lock (a
// readers-writer lock per object, as CuckooFilter's) guards the map itself.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "arguments.hpp"
#include "bindings.hpp"
#include "cuckoo/cuckoo.hpp"
#include "file_bytes.hpp"
#include "keys.hpp"
#include "object_lock.hpp"
#include "set_protocol.hpp"

namespace cuckoo::python {

namespace {

using AnyMap = std::variant<ApproximateMap<std::uint8_t>, ApproximateMap<std::uint16_t>,
                            ApproximateMap<std::uint32_t>, ApproximateMap<std::uint64_t>>;
using AnyMapped = std::variant<std::unique_ptr<MappedApproximateMap<std::uint8_t>>,
                               std::unique_ptr<MappedApproximateMap<std::uint16_t>>,
                               std::unique_ptr<MappedApproximateMap<std::uint32_t>>,
                               std::unique_ptr<MappedApproximateMap<std::uint64_t>>>;

/// Calls f with a value-initialized V of the width named in bytes (1, 2, 4 or 8).
template <class F>
decltype(auto) with_value_type(std::size_t value_bytes, F&& f) {
  switch (value_bytes) {
    case 1:
      return f(std::uint8_t{});
    case 2:
      return f(std::uint16_t{});
    case 4:
      return f(std::uint32_t{});
    case 8:
      return f(std::uint64_t{});
    default:
      throw py::value_error("value width " + std::to_string(value_bytes) +
                            " bytes: cuckoo.ApproximateMap holds unsigned integers of 1, 2, 4 "
                            "or 8 bytes (maps of other value types are C++ only)");
  }
}

/// The map of a Python ApproximateMap: owned, or read-only over a mapped file.
class MapHolder {
 public:
  explicit MapHolder(AnyMap map) : owned_(std::move(map)) {}
  MapHolder(AnyMapped mapped, std::string path)
      : mapped_(std::move(mapped)), mapped_path_(std::move(path)) {}

  /// f(const ApproximateMap<V>&); no lock taken.
  template <class F>
  decltype(auto) visit(F&& f) const {
    if (mapped_) {
      return std::visit([&](const auto& m) -> decltype(auto) { return f(**m); }, *mapped_);
    }
    return std::visit([&](const auto& m) -> decltype(auto) { return f(m); }, *owned_);
  }
  /// f(ApproximateMap<V>&); TypeError for a mapped map. No lock taken.
  template <class F>
  decltype(auto) visit_writable(F&& f) {
    if (mapped_) {
      throw py::type_error("this map is read-only (mapped from '" + mapped_path_ +
                           "'); copy() it to change it");
    }
    return std::visit([&](auto& m) -> decltype(auto) { return f(m); }, *owned_);
  }

  // The holder interface of set_protocol.hpp, whose membership and count calls the map shares:
  // f(const ApproximateMap<V>&) or f(ApproximateMap<V>&), with the lock held shared or exclusive;
  // the _batch forms with the GIL released.
  template <class F>
  decltype(auto) read(F&& f) {
    const ObjectLock::Shared hold(lock_);
    return visit(f);
  }
  template <class F>
  decltype(auto) write(F&& f) {
    return visit_writable([&](auto& m) -> decltype(auto) {
      const ObjectLock::Exclusive hold(lock_);
      return f(m);
    });
  }
  template <class F>
  decltype(auto) read_batch(F&& f) {
    return lock_.shared_without_gil([&]() -> decltype(auto) { return visit(f); });
  }

  ObjectLock& lock() noexcept { return lock_; }
  bool read_only() const noexcept { return mapped_.has_value(); }
  const std::string& mapped_path() const noexcept { return mapped_path_; }

 private:
  std::optional<AnyMap> owned_;
  std::optional<AnyMapped> mapped_;
  std::string mapped_path_;
  ObjectLock lock_;
};

// ---- Values: Python ints in [0, 2^bits) ---------------------------------------------------------

[[noreturn]] void value_out_of_range(const std::string& value, unsigned bits) {
  const std::string message = "value " + value + " out of range: this map's values are in [0, 2**" +
                              std::to_string(bits) + ")";
  PyErr_SetString(PyExc_OverflowError, message.c_str());
  throw py::error_already_set();
}

template <class V>
V checked_value(py::handle value) {
  PyObject* object = value.ptr();
  if (is_bool(object)) {
    throw py::type_error("a value must be an int, not bool");
  }
  if (!PyIndex_Check(object)) {
    throw py::type_error(std::string("a value must be an int, not '") + Py_TYPE(object)->tp_name +
                         "'");
  }
  const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(object));
  if (!index) throw py::error_already_set();
  const unsigned long long v = PyLong_AsUnsignedLongLong(index.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    value_out_of_range(py::repr(index).cast<std::string>(), 8 * sizeof(V));
  }
  if (v > std::numeric_limits<V>::max()) {
    value_out_of_range(std::to_string(v), 8 * sizeof(V));
  }
  return static_cast<V>(v);
}

/// The values of a batch as V, one per key: a numpy integer array (checked for range as a whole,
/// then cast once) or any iterable of ints.
template <class V>
std::vector<V> checked_values(py::handle values, std::size_t expected) {
  if (PyUnicode_Check(values.ptr()) || PyBytes_Check(values.ptr())) {
    throw py::type_error("values must be a numpy integer array or an iterable of ints");
  }
  std::vector<V> out;
  if (py::isinstance<py::array>(values)) {
    const auto array = py::reinterpret_borrow<py::array>(values);
    const char kind = array.dtype().kind();
    if (kind == 'i' || kind == 'u') {
      if (static_cast<std::size_t>(array.size()) != expected) {
        throw py::value_error("values has " + std::to_string(array.size()) + " elements for " +
                              std::to_string(expected) + " keys");
      }
      if (expected == 0) return out;
      const py::object low = array.attr("min")();
      const py::object high = array.attr("max")();
      if (low.cast<py::int_>() < py::int_(0)) {
        value_out_of_range(py::str(low).cast<std::string>(), 8 * sizeof(V));
      }
      if (high.cast<py::int_>() > py::int_(std::numeric_limits<V>::max())) {
        value_out_of_range(py::str(high).cast<std::string>(), 8 * sizeof(V));
      }
      const auto cast =
          py::array_t<V, py::array::c_style | py::array::forcecast>::ensure(array.attr("ravel")());
      if (!cast) throw py::error_already_set();
      out.assign(cast.data(), cast.data() + cast.size());
      return out;
    }
    if (kind != 'O') {
      throw py::type_error("values must be integers, not a numpy array of dtype " +
                           py::str(array.dtype()).cast<std::string>());
    }
  }
  out.reserve(expected);
  for (const py::handle item : py::iter(values)) {
    out.push_back(checked_value<V>(item));
    if (out.size() > expected) break;
  }
  if (out.size() != expected) {
    throw py::value_error(std::string("values has ") +
                          (out.size() > expected ? "more" : std::to_string(out.size())) +
                          " elements for " + std::to_string(expected) + " keys");
  }
  return out;
}

// ---- Construction and files --------------------------------------------------------------------

AnyMap make_map(const Config& cfg, unsigned value_bits) {
  if (value_bits != 8 && value_bits != 16 && value_bits != 32 && value_bits != 64) {
    throw py::value_error("value_bits must be 8, 16, 32 or 64, got " + std::to_string(value_bits));
  }
  return with_value_type(value_bits / 8,
                         [&](auto v) { return AnyMap(ApproximateMap<decltype(v)>(cfg)); });
}

/// The value width, in bytes, to load a map's file or bytes with: the header's, or 4 when the
/// header is not a valid map header (ApproximateMap<uint32_t>'s loader then says what is wrong: a
/// filter's file, a damaged header, ...). Widths Python does not hold are refused by name.
std::size_t loader_width(std::span<const std::byte> header_bytes) {
  try {
    const io::FileHeader header =
        io::decode_header(header_bytes.first(std::min(header_bytes.size(), io::kHeaderBytes)),
                          io::detail::table_bytes_for_layout);
    if (header.is_map()) return header.value_bytes;
  } catch (const format_error&) {
  }
  return sizeof(std::uint32_t);
}

std::size_t loader_width(const std::filesystem::path& path) {
  std::array<std::byte, io::kHeaderBytes> header{};
  const io::FileDescriptor fd = io::open_for_reading(path);
  const std::size_t got = io::read_fully(fd.get(), header, path);
  return loader_width(std::span<const std::byte>(header.data(), got));
}

std::unique_ptr<MapHolder> load_map(const std::filesystem::path& path) {
  const std::size_t width = loader_width(path);
  const py::gil_scoped_release unlocked;
  return with_value_type(width, [&](auto v) {
    return std::make_unique<MapHolder>(AnyMap(ApproximateMap<decltype(v)>::load(path)));
  });
}

std::unique_ptr<MapHolder> mapped_map(const std::filesystem::path& path, bool verify) {
  const std::size_t width = loader_width(path);
  const ChecksumCheck check = verify ? ChecksumCheck::kVerify : ChecksumCheck::kSkip;
  const py::gil_scoped_release unlocked;
  return with_value_type(width, [&](auto v) {
    using V = decltype(v);
    return std::make_unique<MapHolder>(
        AnyMapped(std::make_unique<MappedApproximateMap<V>>(path, check)), path.string());
  });
}

std::unique_ptr<MapHolder> map_from_bytes(const py::buffer& data) {
  const ContiguousBytes contiguous(data);
  const std::span<const std::byte> bytes = contiguous.span();
  const std::size_t width = loader_width(bytes);
  const py::gil_scoped_release unlocked;
  return with_value_type(width, [&](auto v) {
    return std::make_unique<MapHolder>(AnyMap(ApproximateMap<decltype(v)>::deserialize(bytes)));
  });
}

py::bytes map_bytes(MapHolder& holder) {
  return to_python_bytes(holder.lock().shared_without_gil(
      [&] { return holder.visit([](const auto& m) { return m.serialize(); }); }));
}

std::unique_ptr<MapHolder> copy_of(MapHolder& holder) {
  return holder.lock().shared_without_gil([&] {
    return holder.visit([](const auto& m) { return std::make_unique<MapHolder>(AnyMap(m)); });
  });
}

// ---- Single keys
// ---------------------------------------------------------------------------------

bool map_insert_one(MapHolder& holder, py::handle key, py::handle value, bool strict) {
  const ScalarKey k(key.ptr());
  const bool inserted = holder.write([&](auto& m) {
    using V = typename std::decay_t<decltype(m)>::value_type;
    const V v = checked_value<V>(value);
    return k.visit([&](auto kv) { return m.insert(kv, v); });
  });
  if (!inserted && strict) throw FilterFull("the map is full: the pair was not inserted");
  return inserted;
}

py::list map_find_one(MapHolder& holder, py::handle key) {
  const ScalarKey k(key.ptr());
  std::array<std::uint64_t, 16> found{};
  const std::size_t n = holder.read([&](const auto& m) {
    using V = typename std::decay_t<decltype(m)>::value_type;
    std::array<V, 16> values{};  // 2b ≤ 16 matches
    const std::size_t matched = k.visit([&](auto kv) { return m.find(kv, std::span<V>(values)); });
    for (std::size_t i = 0; i < matched; ++i) found[i] = values[i];
    return matched;
  });
  py::list out;
  for (std::size_t i = 0; i < n; ++i) out.append(py::int_(found[i]));
  return out;
}

bool map_erase_one(MapHolder& holder, py::handle key, py::handle value) {
  const ScalarKey k(key.ptr());
  return holder.write([&](auto& m) {
    using V = typename std::decay_t<decltype(m)>::value_type;
    const V v = checked_value<V>(value);
    return k.visit([&](auto kv) { return m.erase(kv, v); });
  });
}

// ---- Batches
// -------------------------------------------------------------------------------------

std::size_t map_insert_batch(MapHolder& holder, py::handle keys, py::handle values, bool strict) {
  const KeyBatch batch(keys);
  const std::size_t inserted = holder.visit_writable([&](auto& m) {
    using V = typename std::decay_t<decltype(m)>::value_type;
    const std::vector<V> checked = checked_values<V>(values, batch.size());
    return holder.lock().exclusive_without_gil([&] {
      std::size_t done = 0;
      auto run = [&](auto span, std::size_t position) {
        const std::size_t n =
            m.insert(span, std::span<const V>(checked.data() + position, span.size()));
        done += n;
        return n == span.size();
      };
      batch.for_each_run(run, run);
      return done;
    });
  });
  if (strict && inserted < batch.size()) {
    throw FilterFull("the map is full: pair " + std::to_string(inserted) +
                     " of the batch did not fit (the " + std::to_string(inserted) +
                     " before it were inserted)");
  }
  return inserted;
}

/// Erases (keys[i], values[i]) in order, with the GIL released; returns how many were found.
std::size_t map_erase_batch(MapHolder& holder, py::handle keys, py::handle values) {
  const KeyBatch batch(keys);
  return holder.visit_writable([&](auto& m) {
    using V = typename std::decay_t<decltype(m)>::value_type;
    const std::vector<V> checked = checked_values<V>(values, batch.size());
    return holder.lock().exclusive_without_gil([&] {
      std::size_t erased = 0;
      auto run = [&](auto span, std::size_t position) {
        erased += m.erase(span, std::span<const V>(checked.data() + position, span.size()));
        return true;
      };
      batch.for_each_run(run, run);
      return erased;
    });
  });
}

py::tuple map_find_batch(MapHolder& holder, py::handle keys) {
  const KeyBatch batch(keys);
  return holder.visit([&](const auto& m) {
    using V = typename std::decay_t<decltype(m)>::value_type;
    std::vector<V> values;
    py::array_t<std::int64_t> offsets(static_cast<py::ssize_t>(batch.size() + 1));
    std::int64_t* offset = offsets.mutable_data();
    offset[0] = 0;
    holder.lock().shared_without_gil([&] {
      std::vector<V> run_values;
      std::vector<std::size_t> run_ends;
      auto run = [&](auto span, std::size_t position) {
        run_ends.resize(span.size());
        m.find(span, run_values, std::span<std::size_t>(run_ends));
        const std::size_t base = values.size();
        if (base == 0) {
          values.swap(run_values);  // one run (all integer keys, the usual batch): no copy
        } else {
          values.insert(values.end(), run_values.begin(), run_values.end());
        }
        for (std::size_t i = 0; i < span.size(); ++i) {
          offset[position + i + 1] = static_cast<std::int64_t>(base + run_ends[i]);
        }
        return true;
      };
      batch.for_each_run(run, run);
    });
    py::array_t<V> found(static_cast<py::ssize_t>(values.size()));
    std::copy(values.begin(), values.end(), found.mutable_data());
    return py::make_tuple(found, offsets);
  });
}

std::string describe(MapHolder& holder) {
  return holder.read([&](const auto& m) {
    char load[32];
    std::snprintf(load, sizeof load, "%.4f", m.load_factor());
    std::string text = "ApproximateMap(size=" + std::to_string(m.size()) +
                       ", capacity=" + std::to_string(m.capacity()) +
                       ", value_bits=" + std::to_string(8 * m.value_bytes()) +
                       ", bucket_size=" + std::to_string(m.bucket_size()) +
                       ", fingerprint_bits=" + std::to_string(m.fingerprint_bits()) +
                       ", load_factor=" + load +
                       ", memory_bytes=" + std::to_string(m.memory_bytes());
    if (holder.read_only()) {
      text +=
          ", read_only=True, path=" + py::repr(py::str(holder.mapped_path())).cast<std::string>();
    }
    return text + ")";
  });
}

}  // namespace

void bind_maps(py::module_& m) {
  py::class_<MapHolder> cls(m, "ApproximateMap", R"doc(
Value association (the cuckoo filter paper's section 6): a map from keys to small integer values in
a few bits per key, which never misses a stored pair but may return extra values.

    shard_of = cuckoo.ApproximateMap(10_000_000, 0.001, value_bits=16)
    shard_of.insert("alice", 7)       # False only when no room is found; nothing changes then
    shard_of.find("alice")            # [7]: every value stored with the key, plus rarely another's
    shard_of.erase("alice", 7)        # removes exactly that pair

Each entry is a fingerprint in a cuckoo filter's table plus a value of value_bits (8, 16, 32 or 64)
in an array beside it. find(key) returns the values of every entry in the key's two buckets whose
fingerprint matches: all values stored with key, and on average 2*b*load / (2**f - 1) values of
other keys (about 0.002 for f = 12, b = 4); an absent key gets a value only at that rate.
Values come back in slot order, so store values that can be checked when that matters.

capacity, error_rate, bucket_size, fingerprint_bits, seed and max_kicks size the table as for
CuckooFilter (no semi_sort, growable or blocked tables). Thread safety as CuckooFilter: a
readers-writer lock per object; batch calls release the GIL.
)doc");
  cls.def(py::init([](long long capacity, double error_rate, unsigned value_bits,
                      unsigned bucket_size, std::optional<unsigned> fingerprint_bits,
                      const py::object& seed, unsigned max_kicks) {
            const Config cfg =
                make_config(capacity, error_rate, bucket_size, fingerprint_bits, seed, max_kicks);
            return std::make_unique<MapHolder>(make_map(cfg, value_bits));
          }),
          py::arg("capacity") = defaults::kCapacity, py::arg("error_rate") = defaults::kTargetFpr,
          py::kw_only(), py::arg("value_bits") = 32, py::arg("bucket_size") = defaults::kBucketSize,
          py::arg("fingerprint_bits") = py::none(), py::arg("seed") = py::none(),
          py::arg("max_kicks") = defaults::kMaxKicks);

  // ---- Single keys
  // -------------------------------------------------------------------------------
  cls.def("insert", &map_insert_one, py::arg("key"), py::arg("value"), py::kw_only(),
          py::arg("strict") = false,
          "Stores the pair (key, value). False when there is no room (nothing changes then); with "
          "strict=True a full map raises FilterFullError instead. A key may be stored with several "
          "values, and a pair more than once.");
  cls.def("find", &map_find_one, py::arg("key"),
          "The values of every entry matching key (a list of ints): every value stored with key "
          "and not erased, plus rarely a value of another key whose fingerprint matches.");
  cls.def("erase", &map_erase_one, py::arg("key"), py::arg("value"),
          "Removes one entry matching key whose value is value; False if there is none. Erasing a "
          "pair that was never inserted can remove another key's matching entry: only erase what "
          "you inserted.");
  cls.def("__contains__", &contains_one<MapHolder>, py::arg("key"),
          "True if key may have a value; False means it certainly has none.");
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  type->tp_as_sequence->sq_contains = &contains_slot<MapHolder>;  // `in` skips the dispatcher
  PyType_Modified(type);
  cls.def("count", &count_one<MapHolder>, py::arg("key"),
          "Entries matching key: at least the number of pairs stored with key.");
  cls.def(
      "__len__", [](MapHolder& h) { return h.read([](const auto& x) { return x.size(); }); },
      "Pairs held (each copy of a duplicate counts).");
  cls.def(
      "__bool__", [](MapHolder& h) { return h.read([](const auto& x) { return !x.empty(); }); },
      "True when the map holds at least one pair.");
  cls.def(
      "clear", [](MapHolder& h) { h.write([](auto& x) { x.clear(); }); },
      "Removes every pair; the shape and the seed stay.");

  // ---- Batches ---------------------------------------------------------------------------------
  cls.def(
      "insert_many", &map_insert_batch, py::arg("keys"), py::arg("values"), py::kw_only(),
      py::arg("strict") = false,
      "Stores (keys[i], values[i]) in order, with the GIL released, and stops at the first pair "
      "that does not fit. keys as for CuckooFilter.add_many; values a numpy integer array or "
      "an iterable of ints, one per key. Returns how many pairs were stored (with "
      "strict=True a short batch raises FilterFullError).");
  cls.def("contains_many", &contains_batch<MapHolder>, py::arg("keys"),
          "A numpy bool array: result[i] is keys[i] in self (the shape of a numpy input is kept).");
  cls.def("erase_many", &map_erase_batch, py::arg("keys"), py::arg("values"),
          "Erases the pairs (keys[i], values[i]) in order, one entry each, through the "
          "prefetching batch erase with the GIL released; returns how many were found (pairs not "
          "found are skipped). values as for insert_many.");
  cls.def("count_many", &count_batch<MapHolder>, py::arg("keys"),
          "A numpy int64 array of count(key) for each key (the shape of a numpy input is kept).");
  cls.def("find_many", &map_find_batch, py::arg("keys"),
          "(values, offsets): the values of key i (keys in flattened order) are "
          "values[offsets[i]:offsets[i + 1]], exactly what find(keys[i]) returns. values has the "
          "map's value dtype, offsets is int64 with len(keys) + 1 entries. Integer keys go "
          "through the prefetching batch lookup, with the GIL released.");

  // ---- Copies, files and bytes
  // -------------------------------------------------------------------
  cls.def("__repr__", &describe);
  cls.def("copy", &copy_of, "An independent, writable copy (also of a mapped map).");
  cls.def("__copy__", &copy_of);
  cls.def(
      "__deepcopy__", [](MapHolder& h, const py::object&) { return copy_of(h); }, py::arg("memo"));
  cls.def(
      "save",
      [](MapHolder& holder, const std::filesystem::path& path) {
        holder.lock().shared_without_gil(
            [&] { holder.visit([&](const auto& x) { x.save(path); }); });
      },
      py::arg("path"),
      "Writes the map in the library's file format (version 3: fingerprints, then values), "
      "atomically. The file opens in C++ (cuckoo::ApproximateMap<V>) and in `cuckoo info`.");
  cls.def_static("load", &load_map, py::arg("path"),
                 "Reads a saved map of any value width (8, 16, 32 or 64 bits). ValueError naming "
                 "the problem when the file cannot be trusted or is a filter's; OSError when it "
                 "cannot be read.");
  cls.def_static("map", &mapped_map, py::arg("path"), py::kw_only(), py::arg("verify") = true,
                 "Opens a saved map read-only by mapping the file: lookups read its pages. "
                 "verify=False skips the checksum. Changes raise TypeError; copy() is writable.");
  cls.def("to_bytes", &map_bytes, "The map in the file format, as bytes.");
  cls.def_static("from_bytes", &map_from_bytes, py::arg("data"),
                 "A map from to_bytes() output (or a file's bytes); ValueError if damaged.");
  cls.def("__reduce__", [](const py::object& self) {
    return py::make_tuple(py::module_::import("cuckoo").attr("_unpickle"),
                          py::make_tuple(py::type::of(self), map_bytes(self.cast<MapHolder&>())));
  });

  // ---- Shape and state
  // ---------------------------------------------------------------------------
  auto property = [&](const char* name, auto get, const char* doc) {
    cls.def_property_readonly(
        name, [get](MapHolder& holder) { return holder.read(get); }, doc);
  };
  property(
      "size", [](const auto& x) { return x.size(); }, "Pairs held (len(self)).");
  property(
      "capacity", [](const auto& x) { return x.capacity(); }, "Pairs the map is built to hold.");
  property(
      "bucket_count", [](const auto& x) { return x.bucket_count(); }, "Buckets in the table.");
  property(
      "slot_count", [](const auto& x) { return x.slot_count(); }, "Entry slots.");
  property(
      "bucket_size", [](const auto& x) { return x.bucket_size(); }, "Entries per bucket b.");
  property(
      "fingerprint_bits", [](const auto& x) { return x.fingerprint_bits(); },
      "Fingerprint width f.");
  property(
      "value_bits", [](const auto& x) { return 8 * x.value_bytes(); },
      "Bits per value: 8, 16, 32 or 64.");
  property(
      "load_factor", [](const auto& x) { return x.load_factor(); }, "size / slot_count.");
  property(
      "max_kicks", [](const auto& x) { return x.max_kicks(); },
      "Longest displacement walk an insert tries.");
  property(
      "seed", [](const auto& x) { return x.seed(); }, "The hash seed.");
  property(
      "memory_bytes", [](const auto& x) { return x.memory_bytes(); },
      "Bytes of the fingerprint table and the value array.");
  property(
      "fingerprint_memory_bytes", [](const auto& x) { return x.fingerprint_memory_bytes(); },
      "Bytes of the fingerprint table alone (what a membership lookup reads).");
  property(
      "value_memory_bytes", [](const auto& x) { return x.value_memory_bytes(); },
      "Bytes of the value array.");
  property(
      "expected_error_rate",
      [](const auto& x) {
        return table_error_rate(x.fingerprint_bits(), x.bucket_size(), x.load_factor());
      },
      "The chance that an absent key gets at least one value, at the current load.");
  cls.def_property_readonly(
      "value_dtype",
      [](MapHolder& holder) {
        return holder.visit([](const auto& x) {
          return py::dtype::of<typename std::decay_t<decltype(x)>::value_type>();
        });
      },
      "The numpy dtype of find_many's values (uint8, uint16, uint32 or uint64).");
  cls.def_property_readonly(
      "read_only", [](MapHolder& holder) { return holder.read_only(); },
      "True for a map opened with map().");
}

}  // namespace cuckoo::python
