// python/src/set_protocol.hpp — the Python set protocol every filter class shares.
//
// A Python filter class wraps a C++ filter in a "holder" W that says how to reach it:
//   W::Inner                        the C++ filter type (Filter, ConcurrentFilter, amq::Bloom, ...)
//   w.read(f) / w.write(f)          f(const Inner&) / f(Inner&) with the GIL held
//   w.read_batch(f) / w.write_batch(f)   the same with the GIL released, for batches
// and the functions below build add / in / discard / ... and their batch forms on top, for every
// class alike. What a class offers follows from what its C++ filter can do: discard and remove
// only where it can erase, count only where it can count.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "keys.hpp"

namespace cuckoo::python {

namespace py = pybind11;

/// Raised as cuckoo.FilterFullError (a RuntimeError) by strict inserts and update().
class FilterFull : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class F>
concept Erasing = requires(F& filter, std::uint64_t key) {
  filter.erase(key);
};
template <class F>
concept Counting = requires(const F& filter, std::uint64_t key) {
  filter.count(key);
};

// ---- One run of keys of one kind, through the C++ batch call where the filter has one ----------

template <class F, class K>
std::size_t insert_run(F& filter, std::span<const K> keys) {
  if constexpr (requires { filter.insert(keys); }) {
    return filter.insert(keys);
  } else {
    std::size_t done = 0;
    while (done < keys.size() && filter.insert(keys[done])) ++done;
    return done;
  }
}
template <class F, class K>
void contains_run(const F& filter, std::span<const K> keys, std::span<bool> out) {
  if constexpr (requires { filter.contains(keys, out); }) {
    filter.contains(keys, out);
  } else {
    for (std::size_t i = 0; i < keys.size(); ++i) out[i] = filter.contains(keys[i]);
  }
}
/// out[i] = filter.count(keys[i]): through the filter's batch count where it has one.
template <class F, class K>
void count_run(const F& filter, std::span<const K> keys, std::span<std::int64_t> out) {
  if constexpr (requires(std::span<std::size_t> counts) { filter.count(keys, counts); }) {
    // The batch writes size_t; the array holds int64 (a count is at most 2b, or a stash's).
    std::array<std::size_t, 4096> counts;
    for (std::size_t at = 0; at < keys.size(); at += counts.size()) {
      const std::size_t n = std::min(counts.size(), keys.size() - at);
      filter.count(keys.subspan(at, n), std::span<std::size_t>(counts.data(), n));
      for (std::size_t i = 0; i < n; ++i) out[at + i] = static_cast<std::int64_t>(counts[i]);
    }
  } else {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      out[i] = static_cast<std::int64_t>(filter.count(keys[i]));
    }
  }
}
template <class F, class K>
std::size_t erase_run(F& filter, std::span<const K> keys) {
  if constexpr (requires { filter.erase(keys); }) {
    return filter.erase(keys);
  } else {
    std::size_t removed = 0;
    for (const K& key : keys) removed += filter.erase(key) ? 1 : 0;
    return removed;
  }
}

// ---- The operations, for any holder
// ---------------------------------------------------------------

template <class W>
bool add_one(W& holder, py::handle key, bool strict) {
  const ScalarKey k(key.ptr());
  const bool added =
      holder.write([&](auto& filter) { return k.visit([&](auto v) { return filter.insert(v); }); });
  if (!added && strict) throw FilterFull("the filter is full: the key was not added");
  return added;
}

template <class W>
bool contains_one(W& holder, py::handle key) {
  const ScalarKey k(key.ptr());
  return holder.read(
      [&](const auto& filter) { return k.visit([&](auto v) { return filter.contains(v); }); });
}

template <class W>
bool discard_one(W& holder, py::handle key) {
  const ScalarKey k(key.ptr());
  return holder.write(
      [&](auto& filter) { return k.visit([&](auto v) { return filter.erase(v); }); });
}

template <class W>
std::size_t count_one(W& holder, py::handle key) {
  const ScalarKey k(key.ptr());
  return holder.read(
      [&](const auto& filter) { return k.visit([&](auto v) { return filter.count(v); }); });
}

/// Inserts in order, stopping at the first key that does not fit; returns how many went in.
template <class W>
std::size_t add_batch(W& holder, py::handle keys, bool strict) {
  const KeyBatch batch(keys);
  const std::size_t added = holder.write_batch([&](auto& filter) {
    std::size_t inserted = 0;
    auto run = [&](auto span, std::size_t) {
      const std::size_t n = insert_run(filter, span);
      inserted += n;
      return n == span.size();
    };
    batch.for_each_run(run, run);
    return inserted;
  });
  if (strict && added < batch.size()) {
    throw FilterFull("the filter is full: key " + std::to_string(added) +
                     " of the batch did not fit (the " + std::to_string(added) +
                     " before it were added)");
  }
  return added;
}

template <class W>
py::array_t<bool> contains_batch(W& holder, py::handle keys) {
  const KeyBatch batch(keys);
  py::array_t<bool> answers(batch.shape());
  bool* out = answers.mutable_data();
  holder.read_batch([&](const auto& filter) {
    auto run = [&](auto span, std::size_t position) {
      contains_run(filter, span, std::span<bool>(out + position, span.size()));
      return true;
    };
    batch.for_each_run(run, run);
  });
  return answers;
}

template <class W>
std::size_t discard_batch(W& holder, py::handle keys) {
  const KeyBatch batch(keys);
  return holder.write_batch([&](auto& filter) {
    std::size_t removed = 0;
    auto run = [&](auto span, std::size_t) {
      removed += erase_run(filter, span);
      return true;
    };
    batch.for_each_run(run, run);
    return removed;
  });
}

template <class W>
py::array_t<std::int64_t> count_batch(W& holder, py::handle keys) {
  const KeyBatch batch(keys);
  py::array_t<std::int64_t> counts(batch.shape());
  std::int64_t* out = counts.mutable_data();
  holder.read_batch([&](const auto& filter) {
    auto run = [&](auto span, std::size_t position) {
      count_run(filter, span, std::span<std::int64_t>(out + position, span.size()));
      return true;
    };
    batch.for_each_run(run, run);
  });
  return counts;
}

/// The C++ object behind a Python instance of a class bound with holder W; TypeError if its
/// __init__ never ran (a subclass that forgot super().__init__()).
template <class W>
W& holder_of(PyObject* self) {
  static const py::detail::type_info* const type = py::detail::get_type_info(typeid(W));
  auto* instance = reinterpret_cast<py::detail::instance*>(self);
  const py::detail::value_and_holder value = instance->get_value_and_holder(type, false);
  if (!value || !value.holder_constructed() || value.value_ptr<W>() == nullptr) {
    throw py::type_error(std::string(Py_TYPE(self)->tp_name) +
                         " object is not initialized (did a subclass skip super().__init__()?)");
  }
  return *value.value_ptr<W>();
}

/// `key in filter` straight from the type's sq_contains slot. Through pybind11's dispatcher (which
/// matches overloads and builds argument casters) `in` cost 189 ns against a Python set's 135.
template <class W>
int contains_slot(PyObject* self, PyObject* key) noexcept {
  try {
    return contains_one(holder_of<W>(self), key) ? 1 : 0;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return -1;
}

/// add, in, len, bool, add_many, contains_many, update, capacity, memory_bytes, seed; and clear,
/// discard / remove / discard_many, count / count_many where the C++ filter has them.
template <class W, class... Options>
void bind_set_protocol(py::class_<W, Options...>& cls) {
  using Inner = typename W::Inner;
  cls.def("add", &add_one<W>, py::arg("key"), py::kw_only(), py::arg("strict") = false,
          "Inserts one copy of key. Returns False when there is no room; nothing is lost then. "
          "With strict=True a full filter raises FilterFullError instead.");
  cls.def("__contains__", &contains_one<W>, py::arg("key"),
          "True if key may be in the set; False means it certainly is not.");
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  type->tp_as_sequence->sq_contains = &contains_slot<W>;  // `in` skips the dispatcher
  PyType_Modified(type);
  cls.def(
      "__len__", [](W& holder) { return holder.read([](const auto& f) { return f.size(); }); },
      "Items held (each copy of a duplicate counts).");
  cls.def(
      "__bool__",
      [](W& holder) { return holder.read([](const auto& f) { return f.size() != 0; }); },
      "True when the filter holds at least one item.");
  cls.def("add_many", &add_batch<W>, py::arg("keys"), py::kw_only(), py::arg("strict") = false,
          "Inserts keys (a numpy array or any iterable) in order, with the GIL released, and "
          "stops at the first that does not fit. Returns how many were inserted: keys before that "
          "one are in, it and the keys after it were not added. With strict=True a short batch "
          "raises FilterFullError.");
  cls.def("contains_many", &contains_batch<W>, py::arg("keys"),
          "A numpy bool array: result[i] is keys[i] in self. The shape of a numpy input is kept. "
          "Integer arrays are read in place through the prefetching batch lookup.");
  cls.def(
      "update",
      [](W& holder, py::args iterables) {
        for (py::handle keys : iterables) add_batch(holder, keys, true);
      },
      "Adds every key of every iterable, as set.update. A key that does not fit raises "
      "FilterFullError; the keys before it stay in.");
  if constexpr (requires(Inner & f) { f.clear(); }) {
    cls.def(
        "clear", [](W& holder) { holder.write([](auto& f) { f.clear(); }); },
        "Removes every item; the shape and the seed stay.");
  }
  cls.def_property_readonly(
      "capacity", [](W& holder) { return holder.read([](const auto& f) { return f.capacity(); }); },
      "Items the filter is built to hold (for a growable filter: at its current size).");
  cls.def_property_readonly(
      "memory_bytes",
      [](W& holder) { return holder.read([](const auto& f) { return f.memory_bytes(); }); },
      "Bytes of the table(s).");
  cls.def_property_readonly(
      "seed", [](W& holder) { return holder.read([](const auto& f) { return f.seed(); }); },
      "The hash seed (fixed by default, so filters can be saved and compared).");
  if constexpr (Erasing<Inner>) {
    cls.def("discard", &discard_one<W>, py::arg("key"),
            "Removes one copy of key. Returns False if none matched. Discarding a key that was "
            "never added can remove another key's matching fingerprint: only remove what you "
            "added.");
    cls.def(
        "remove",
        [](W& holder, py::handle key) {
          if (!discard_one(holder, key)) throw py::key_error(py::repr(key).cast<std::string>());
        },
        py::arg("key"), "Removes one copy of key; KeyError if none matched.");
    cls.def("discard_many", &discard_batch<W>, py::arg("keys"),
            "Removes one copy of each key, in order, with the GIL released; returns how many "
            "copies were removed (keys not found are skipped).");
  }
  if constexpr (Counting<Inner>) {
    cls.def("count", &count_one<W>, py::arg("key"),
            "Entries matching key's fingerprint in its buckets: at least the copies of key held.");
    cls.def("count_many", &count_batch<W>, py::arg("keys"),
            "A numpy int64 array of count(key) for each key.");
  }
}

}  // namespace cuckoo::python
