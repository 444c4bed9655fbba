// python/src/keys.hpp — Python objects → the C++ API's keys, one at a time or in batches.
//
// A key is what the C++ filters hash (cuckoo/hash.hpp): a 64-bit integer or a byte string. From
// Python: `int` (and anything with __index__, such as numpy integer scalars) in [−2^63, 2^64) is
// the integer key, negatives as their two's complement (numpy's int64 → uint64 cast); `str` is its
// UTF-8 bytes; `bytes`, `bytearray` and `memoryview` are their bytes. `bool` is refused: a mask
// passed where keys were meant would otherwise be taken as the keys 0 and 1. Python's hash() is
// never used: it is salted per process, and a filter must answer the same in every process.
//
// A batch is read once, with the GIL held, into storage that needs no Python object afterwards
// (numpy integer arrays are viewed in place, without a copy), so the work itself runs with the GIL
// released. Keys of both kinds may be mixed in one iterable; they are handed over as runs of one
// kind, in order, so the answers stay in the caller's order.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cuckoo::python {

namespace py = pybind11;

/// numpy.bool_, looked up once at import (a numpy bool scalar has __index__ but is refused).
PyObject*& numpy_bool_type() noexcept;
/// True for a Python bool or a numpy bool scalar: refused as a key (and as a map's value), since a
/// mask passed by mistake would otherwise be read as the numbers 0 and 1.
bool is_bool(PyObject* object) noexcept;

/// The integer key of a Python int (exact type or subclass other than bool). Throws
/// OverflowError outside [−2^63, 2^64).
std::uint64_t integer_key(PyObject* object);

/// One key, converted with the GIL held; the bytes it views live as long as the object.
class ScalarKey {
 public:
  explicit ScalarKey(PyObject* object);
  ~ScalarKey();
  ScalarKey(const ScalarKey&) = delete;
  ScalarKey& operator=(const ScalarKey&) = delete;

  /// Calls f with the key as std::uint64_t or std::string_view.
  template <class F>
  decltype(auto) visit(F&& f) const {
    if (is_integer_) return f(integer_);
    return f(bytes_);
  }

 private:
  bool is_integer_ = false;
  std::uint64_t integer_ = 0;
  std::string_view bytes_;
  Py_buffer view_{};
  bool holds_view_ = false;
};

/// Many keys, read with the GIL held into storage that the work can use without it.
class KeyBatch {
 public:
  /// Reads a numpy array (integers of any width, S or U strings, objects) or any iterable of keys.
  /// A str or bytes object is refused as a batch (iterating it would add its characters).
  explicit KeyBatch(py::handle keys);
  KeyBatch(const KeyBatch&) = delete;
  KeyBatch& operator=(const KeyBatch&) = delete;

  std::size_t size() const noexcept { return size_; }
  /// The shape of the answer arrays: a numpy input's shape, else (size,).
  const std::vector<py::ssize_t>& shape() const noexcept { return shape_; }

  /// Calls on_integers(std::span<const std::uint64_t>, position) and
  /// on_strings(std::span<const std::string_view>, position) for each run of keys of one kind, in
  /// order; `position` is the index of the run's first key in the batch. Either may return false
  /// to stop. Needs no GIL.
  template <class OnIntegers, class OnStrings>
  void for_each_run(OnIntegers&& on_integers, OnStrings&& on_strings) const {
    for (const Run& run : runs_) {
      const bool go_on =
          run.integers
              ? on_integers(std::span<const std::uint64_t>(integers_ + run.first, run.count),
                            run.position)
              : on_strings(
                    std::span<const std::string_view>(strings_.data() + run.first, run.count),
                    run.position);
      if (!go_on) return;
    }
  }

 private:
  struct Run {
    bool integers;
    std::size_t first;  // index into integers_ or strings_
    std::size_t count;
    std::size_t position;  // index of the run's first key in the batch
  };

  void read_array(py::array array);
  void read_iterable(py::handle keys);
  void add_object(PyObject* object);
  void append(bool integers);
  void finish_strings(const std::vector<std::size_t>& offsets);

  py::object keeper_;  // the numpy array whose memory integers_ or strings_ view
  const std::uint64_t* integers_ = nullptr;
  std::vector<std::uint64_t> own_integers_;
  std::string arena_;  // the bytes of string keys that could not be viewed in place
  std::vector<std::size_t> string_ends_;  // arena_ offsets, one past each string key
  std::vector<std::string_view> strings_;
  std::vector<Run> runs_;
  std::vector<py::ssize_t> shape_;
  std::size_t size_ = 0;
};

}  // namespace cuckoo::python
