// python/src/filter_bindings.cpp — cuckoo.CuckooFilter and cuckoo.ConcurrentCuckooFilter.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "bindings.hpp"
#include "cuckoo/cuckoo.hpp"
#include "file_bytes.hpp"
#include "holders.hpp"
#include "set_protocol.hpp"

namespace cuckoo::python {

namespace {

/// A false-positive rate bound of a full table: 1 − (1 − 2^−f)^(2b) for a fixed filter, the
/// growable filter's bound at its current number of doublings (growable_filter.hpp).
double error_rate_bound(const Filter& filter) {
  if (filter.growable()) {
    return filter.visit([](const auto& f) -> double {
      if constexpr (requires { f.base_fingerprint_bits(); }) {
        return growth::fpr_bound(f.bucket_size(), f.base_fingerprint_bits(), f.doublings(),
                                 f.schedule());
      } else {
        return 1.0;  // unreachable: growable() is true only for growable alternatives
      }
    });
  }
  // A blocked filter's rate is its format's (sizing.hpp, blocked_layout::kFprBound).
  if (filter.blocked()) return blocked_layout::kFprBound;
  return table_error_rate(filter.fingerprint_bits(), filter.bucket_size(), 1.0);
}

/// The expected false-positive rate at the filter's current load.
double expected_error_rate(const Filter& filter) {
  return filter.visit([](const auto& f) -> double {
    if constexpr (requires { f.expected_fpr(); }) {
      return f.expected_fpr();
    } else {
      return table_error_rate(f.fingerprint_bits(), f.bucket_size(), f.load_factor());
    }
  });
}

std::vector<std::byte> serialized(FilterHolder& holder) {
  return holder.read_batch([](const Filter& f) { return f.serialize(); });
}

Filter deserialized(const py::buffer& data) {
  const ContiguousBytes bytes(data);
  const py::gil_scoped_release unlocked;
  return Filter::deserialize(bytes.span());
}

/// A writable copy in memory (of a mapped filter too), copied with the lock held shared.
std::unique_ptr<FilterHolder> copy_of(FilterHolder& holder) {
  return std::make_unique<FilterHolder>(
      holder.read_batch([](const Filter& f) { return Filter(f); }));
}

std::string describe(FilterHolder& holder) {
  return holder.read([&](const Filter& f) {
    std::string text = "CuckooFilter(size=" + std::to_string(f.size()) +
                       ", capacity=" + std::to_string(f.capacity()) +
                       ", bucket_size=" + std::to_string(f.bucket_size()) +
                       ", fingerprint_bits=" + std::to_string(f.fingerprint_bits());
    if (f.semi_sorted()) text += ", semi_sort=True";
    if (f.growable()) text += ", growable=True, doublings=" + std::to_string(f.doublings());
    if (f.blocked()) text += ", blocked=True";
    char load[32];
    std::snprintf(load, sizeof load, "%.4f", f.load_factor());
    text +=
        ", load_factor=" + std::string(load) + ", memory_bytes=" + std::to_string(f.memory_bytes());
    if (holder.read_only()) {
      text +=
          ", read_only=True, path=" + py::repr(py::str(holder.mapped_path())).cast<std::string>();
    }
    return text + ")";
  });
}

/// The zero-copy table view behind CuckooFilter.table: holds the filter object, so the memory
/// stays valid while any memoryview of it lives.
struct TableView {
  py::object owner;
  const std::byte* data;
  std::size_t size;
};

}  // namespace

void bind_filters(py::module_& m) {
  py::class_<TableView>(m, "_TableView", py::buffer_protocol()).def_buffer([](TableView& view) {
    return py::buffer_info(const_cast<std::byte*>(view.data), 1,
                           py::format_descriptor<std::uint8_t>::format(), 1,
                           {static_cast<py::ssize_t>(view.size)}, {py::ssize_t{1}},
                           /*readonly=*/true);
  });

  py::class_<FilterHolder> filter(m, "CuckooFilter", R"doc(
A cuckoo filter (Fan et al., CoNEXT 2014): approximate set membership with deletion.

    f = cuckoo.CuckooFilter(1_000_000, 0.001)
    f.add("alice"); "alice" in f            # True: never a false negative
    f.add_many(numpy.arange(10**6, dtype=numpy.uint64))

capacity is the number of items it must hold; error_rate the target false-positive rate, from
which the fingerprint width is derived (f = ceil(log2(2b / error_rate))) unless
fingerprint_bits is given. seed=None is the library's fixed default seed, so two filters built
alike answer alike in every process and can be saved. growable=True makes a filter that doubles
when full instead of refusing, holding error_rate as it grows. blocked=True makes a blocked filter
(cuckoo::Config::blocked): 64-byte blocks, one cache line per lookup for about 95% of keys, about
12.8 bits per item, a false-positive rate fixed by its format at about 0.2% (error_rate must be at
least 0.0025, its default then; bucket_size is not used; not with semi_sort or growable).
error_rate=None is 0.001, or 0.0025 with blocked=True.

Thread safety: each object has a readers-writer lock. Lookups hold it shared, changes exclusive;
batch calls release the GIL while they work. ConcurrentCuckooFilter takes no lock for lookups.
)doc");
  filter.def(py::init([](long long capacity, std::optional<double> error_rate, unsigned bucket_size,
                         std::optional<unsigned> fingerprint_bits, bool semi_sort,
                         const py::object& seed, bool growable, unsigned max_kicks, bool blocked) {
               // The blocked format's rate is its own (and the CLI's `create --blocked` default).
               const double rate =
                   error_rate.value_or(blocked ? blocked_layout::kFprBound : defaults::kTargetFpr);
               return std::make_unique<FilterHolder>(
                   Filter(make_config(capacity, rate, bucket_size, fingerprint_bits, seed,
                                      max_kicks, semi_sort, growable, blocked)));
             }),
             py::arg("capacity") = defaults::kCapacity, py::arg("error_rate") = py::none(),
             py::kw_only(), py::arg("bucket_size") = defaults::kBucketSize,
             py::arg("fingerprint_bits") = py::none(), py::arg("semi_sort") = false,
             py::arg("seed") = py::none(), py::arg("growable") = false,
             py::arg("max_kicks") = defaults::kMaxKicks, py::arg("blocked") = false);
  bind_set_protocol(filter);
  filter.def("__repr__", &describe);
  filter.def("copy", &copy_of, "An independent, writable copy (also of a mapped filter).");
  filter.def("__copy__", &copy_of);
  filter.def(
      "__deepcopy__", [](FilterHolder& holder, const py::object&) { return copy_of(holder); },
      py::arg("memo"));

  // ---- Files and bytes -------------------------------------------------------------------------
  filter.def(
      "save",
      [](FilterHolder& holder, const std::filesystem::path& path) {
        holder.read_batch([&](const Filter& f) { f.save(path); });
      },
      py::arg("path"),
      "Writes the filter in the library's file format, atomically: a temporary file beside it, "
      "fsync, rename. The file opens in C++ and in `cuckoo info`.");
  filter.def_static(
      "load",
      [](const std::filesystem::path& path) {
        const py::gil_scoped_release unlocked;
        return std::make_unique<FilterHolder>(Filter::load(path));
      },
      py::arg("path"),
      "Reads a saved filter. ValueError naming the problem when the file cannot be trusted "
      "(bad magic, checksum, shape, ...); OSError when it cannot be read.");
  filter.def_static(
      "map",
      [](const std::filesystem::path& path, bool verify) {
        const py::gil_scoped_release unlocked;
        return std::make_unique<FilterHolder>(
            MappedFilter(path, verify ? ChecksumCheck::kVerify : ChecksumCheck::kSkip),
            path.string());
      },
      py::arg("path"), py::kw_only(), py::arg("verify") = true,
      "Opens a saved filter read-only by mapping the file: lookups read its pages directly, "
      "nothing is copied. verify=False skips reading the whole file for its checksum. Changes "
      "raise TypeError; copy() gives a writable filter.");
  filter.def(
      "to_bytes", [](FilterHolder& holder) { return to_python_bytes(serialized(holder)); },
      "The filter in the file format, as bytes.");
  filter.def_static(
      "from_bytes",
      [](const py::buffer& data) { return std::make_unique<FilterHolder>(deserialized(data)); },
      py::arg("data"),
      "A filter from to_bytes() output (or a file's bytes); ValueError if damaged.");
  // Pickled as (cuckoo._unpickle, (class, file bytes)): every pickle protocol, and the bytes are
  // the file format. (pybind11's py::pickle needs protocol 2 and aborts the interpreter on 0 / 1;
  // a pybind11 static method cannot itself be pickled by reference, a Python function can.)
  filter.def("__reduce__", [](const py::object& self) {
    FilterHolder& holder = self.cast<FilterHolder&>();
    return py::make_tuple(py::module_::import("cuckoo").attr("_unpickle"),
                          py::make_tuple(py::type::of(self), to_python_bytes(serialized(holder))));
  });

  // ---- Shape and state -------------------------------------------------------------------------
  auto property = [&](const char* name, auto get, const char* doc) {
    filter.def_property_readonly(
        name, [get](FilterHolder& holder) { return holder.read(get); }, doc);
  };
  property(
      "size", [](const Filter& f) { return f.size(); }, "Items held (len(self)).");
  property(
      "bucket_count", [](const Filter& f) { return f.bucket_count(); },
      "Buckets in the table (not a power of two in general; both sides when growable).");
  property(
      "slot_count", [](const Filter& f) { return f.slot_count(); },
      "Entry slots: bucket_count * bucket_size.");
  property(
      "bucket_size", [](const Filter& f) { return f.bucket_size(); },
      "Entries per bucket b (2, 4 or 8).");
  property(
      "fingerprint_bits", [](const Filter& f) { return f.fingerprint_bits(); },
      "Fingerprint width f (for a growable filter: the bits an entry inserted now compares, "
      "one more each time the doublings pass a power of two).");
  property(
      "base_fingerprint_bits",
      [](const Filter& f) {
        return f.visit([](const auto& inner) -> unsigned {
          if constexpr (requires { inner.base_fingerprint_bits(); }) {
            return inner.base_fingerprint_bits();
          } else {
            return inner.fingerprint_bits();
          }
        });
      },
      "The width a growable filter started with (fingerprint_bits for a fixed one).");
  property(
      "semi_sorted", [](const Filter& f) { return f.semi_sorted(); },
      "True for semi-sorted buckets (f bits stored in f - 1).");
  property(
      "load_factor", [](const Filter& f) { return f.load_factor(); }, "size / slot_count.");
  property(
      "max_kicks", [](const Filter& f) { return f.max_kicks(); },
      "Longest displacement walk an insert tries.");
  property(
      "growable", [](const Filter& f) { return f.growable(); },
      "True for a filter that doubles when full.");
  property(
      "blocked", [](const Filter& f) { return f.blocked(); },
      "True for a blocked filter (blocked=True): one cache line per lookup for most keys.");
  property(
      "doublings", [](const Filter& f) { return f.doublings(); },
      "Times a growable filter has doubled (0 for a fixed one).");
  property(
      "error_rate_bound", [](const Filter& f) { return error_rate_bound(f); },
      "The false-positive rate bound of the full table: 1 - (1 - 2**-f)**(2b) for a fixed "
      "filter, the growable filter's bound at its current size, a blocked filter's format rate "
      "(0.0025).");
  property(
      "expected_error_rate", [](const Filter& f) { return expected_error_rate(f); },
      "The expected false-positive rate at the current load (a growable filter reads its "
      "table to sum its entries' widths).");
  filter.def_property_readonly(
      "read_only", [](FilterHolder& holder) { return holder.read_only(); },
      "True for a filter opened with map().");
  filter.def_property_readonly(
      "table",
      [](const py::object& self) {
        FilterHolder& holder = self.cast<FilterHolder&>();
        const Filter& f = holder.view();
        if (f.growable()) {
          PyErr_SetString(PyExc_BufferError,
                          "a growable filter's table moves when it doubles: no zero-copy view "
                          "(to_bytes() copies it)");
          throw py::error_already_set();
        }
        const auto bytes = f.visit([](const auto& inner) { return inner.table().bytes(); });
        py::object view = py::cast(TableView{self, bytes.data(), bytes.size()});
        return py::memoryview(view);
      },
      "The fingerprint table's bytes as a read-only memoryview, zero-copy (the file format's "
      "table section). Fixed-size filters only: a growable table moves when it doubles.");

  // ---- ConcurrentCuckooFilter ----------------------------------------------------------------
  py::class_<ConcurrentHolder> concurrent(m, "ConcurrentCuckooFilter", R"doc(
A cuckoo filter for many threads at once (cuckoo::ConcurrentFilter). Lookups take no lock:
optimistic reads validated by striped version counters, retried when a writer touched the
stripe. Writers lock the two stripes of the buckets they change. Batch calls release the GIL.
Plain tables only: no semi_sort, no growable. Files, bytes and pickles are CuckooFilter's.
)doc");
  concurrent.def(py::init([](long long capacity, double error_rate, unsigned bucket_size,
                             std::optional<unsigned> fingerprint_bits, const py::object& seed,
                             unsigned max_kicks) {
                   return ConcurrentHolder(ConcurrentFilter(make_config(
                       capacity, error_rate, bucket_size, fingerprint_bits, seed, max_kicks)));
                 }),
                 py::arg("capacity") = defaults::kCapacity,
                 py::arg("error_rate") = defaults::kTargetFpr, py::kw_only(),
                 py::arg("bucket_size") = defaults::kBucketSize,
                 py::arg("fingerprint_bits") = py::none(), py::arg("seed") = py::none(),
                 py::arg("max_kicks") = defaults::kMaxKicks);
  bind_set_protocol(concurrent);
  concurrent.def("__repr__", [](ConcurrentHolder& holder) {
    const ConcurrentFilter& f = holder.filter();
    char load[32];
    std::snprintf(load, sizeof load, "%.4f", f.load_factor());
    return "ConcurrentCuckooFilter(size=" + std::to_string(f.size()) +
           ", capacity=" + std::to_string(f.capacity()) +
           ", bucket_size=" + std::to_string(f.bucket_size()) +
           ", fingerprint_bits=" + std::to_string(f.fingerprint_bits()) + ", load_factor=" + load +
           ", memory_bytes=" + std::to_string(f.memory_bytes()) + ")";
  });
  auto snapshot = [](ConcurrentHolder& holder) {
    return holder.read_batch([](const ConcurrentFilter& f) { return f.to_filter(); });
  };
  concurrent.def(
      "to_filter",
      [snapshot](ConcurrentHolder& holder) {
        return std::make_unique<FilterHolder>(snapshot(holder));
      },
      "A CuckooFilter holding what this one holds at one instant.");
  concurrent.def_static(
      "from_filter",
      [](FilterHolder& source) {
        return ConcurrentHolder(
            source.read_batch([](const Filter& f) { return ConcurrentFilter(f); }));
      },
      py::arg("filter"), "A ConcurrentCuckooFilter holding what a CuckooFilter holds.");
  concurrent.def(
      "copy",
      [](ConcurrentHolder& holder) {
        return ConcurrentHolder(
            holder.read_batch([](const ConcurrentFilter& f) { return ConcurrentFilter(f); }));
      },
      "A snapshot copy.");
  concurrent.def(
      "save",
      [snapshot](ConcurrentHolder& holder, const std::filesystem::path& path) {
        const Filter copy = snapshot(holder);
        const py::gil_scoped_release unlocked;
        copy.save(path);
      },
      py::arg("path"), "Saves a snapshot atomically, in CuckooFilter's file format.");
  concurrent.def_static(
      "load",
      [](const std::filesystem::path& path) {
        const py::gil_scoped_release unlocked;
        return ConcurrentHolder(ConcurrentFilter(Filter::load(path)));
      },
      py::arg("path"));
  concurrent.def("to_bytes", [snapshot](ConcurrentHolder& holder) {
    const Filter copy = snapshot(holder);
    return to_python_bytes(copy.serialize());
  });
  concurrent.def_static(
      "from_bytes",
      [](const py::buffer& data) { return ConcurrentHolder(ConcurrentFilter(deserialized(data))); },
      py::arg("data"));
  concurrent.def("__reduce__", [snapshot](const py::object& self) {
    ConcurrentHolder& holder = self.cast<ConcurrentHolder&>();
    return py::make_tuple(
        py::module_::import("cuckoo").attr("_unpickle"),
        py::make_tuple(py::type::of(self), to_python_bytes(snapshot(holder).serialize())));
  });
  py::class_<ConcurrentHolder::SoleSession>(m, "SoleWriterSession", R"doc(
A sole-writer session of a ConcurrentCuckooFilter, from its sole_writer(); use it in a with
statement. Inside, this thread's adds and discards (single-key and batch) take no locked
instruction; other threads' lookups go on; their adds, discards, clears and snapshots wait,
without the GIL, until the session ends. It must end on the thread that began it.
)doc")
      .def(
          "__enter__",
          [](py::object self) {
            self.cast<ConcurrentHolder::SoleSession&>().begin();
            return self;
          },
          "Begins the session: waits (without the GIL) for writers inside, then holds every "
          "stripe.")
      .def(
          "__exit__",
          [](ConcurrentHolder::SoleSession& session, const py::args&) {
            session.end();
            return false;
          },
          "Ends the session (on the thread that began it; RuntimeError on another).");
  concurrent.def(
      "sole_writer",
      [](ConcurrentHolder& holder) {
        return std::make_unique<ConcurrentHolder::SoleSession>(holder);
      },
      py::keep_alive<0, 1>(),
      R"doc(A context manager that makes the calling thread this filter's only writer:
``with f.sole_writer(): f.add_many(keys)``. Inside, the thread's writes take no locked
instruction (a bulk load; a writer thread beside many readers); every thread's lookups go on;
other threads' writes, clears and snapshots wait for it, releasing the GIL. Nested for the same
filter it does nothing; while this thread is another filter's sole writer it raises RuntimeError.)doc");
  auto concurrent_property = [&](const char* name, auto get, const char* doc) {
    concurrent.def_property_readonly(
        name, [get](ConcurrentHolder& holder) { return holder.read(get); }, doc);
  };
  concurrent_property(
      "size", [](const ConcurrentFilter& f) { return f.size(); },
      "Items held; exact when no writer is inside an operation.");
  concurrent_property(
      "bucket_count", [](const ConcurrentFilter& f) { return f.bucket_count(); },
      "Buckets in the table.");
  concurrent_property(
      "slot_count", [](const ConcurrentFilter& f) { return f.slot_count(); }, "Entry slots.");
  concurrent_property(
      "bucket_size", [](const ConcurrentFilter& f) { return f.bucket_size(); },
      "Entries per bucket.");
  concurrent_property(
      "fingerprint_bits", [](const ConcurrentFilter& f) { return f.fingerprint_bits(); },
      "Fingerprint width f.");
  concurrent_property(
      "load_factor", [](const ConcurrentFilter& f) { return f.load_factor(); },
      "size / slot_count.");
  concurrent_property(
      "max_kicks", [](const ConcurrentFilter& f) { return f.max_kicks(); },
      "Longest displacement walk an insert tries.");

  // ---- The writer lock, for cuckoo.locked_update ---------------------------------------------
  py::class_<io::WriterLock>(m, "_WriterLock")
      .def(py::init([](const std::filesystem::path& path, double wait_seconds) {
             const auto wait = std::chrono::milliseconds(
                 static_cast<long long>(std::max(0.0, wait_seconds) * 1000.0));
             const py::gil_scoped_release unlocked;
             return io::WriterLock(path, wait);
           }),
           py::arg("path"), py::arg("wait"))
      .def("release", [](io::WriterLock& lock) { lock.unlock(); });
}

}  // namespace cuckoo::python
