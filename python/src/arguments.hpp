// python/src/arguments.hpp — constructor arguments checked with the messages a Python user reads.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuckoo/config.hpp"

namespace cuckoo::python {

namespace py = pybind11;

inline std::size_t checked_capacity(long long capacity) {
  if (capacity <= 0) {
    throw py::value_error("capacity must be a positive number of items, got " +
                          std::to_string(capacity));
  }
  return static_cast<std::size_t>(capacity);
}

/// None is the library's fixed default seed; otherwise an int in [0, 2^64) (not a bool).
inline std::uint64_t checked_seed(const py::object& seed) {
  if (seed.is_none()) return defaults::kSeed;
  if (!PyLong_Check(seed.ptr()) || PyBool_Check(seed.ptr())) {
    throw py::type_error(std::string("seed must be an int in [0, 2**64) or None, not '") +
                         Py_TYPE(seed.ptr())->tp_name + "'");
  }
  const unsigned long long value = PyLong_AsUnsignedLongLong(seed.ptr());
  if (value == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw py::value_error("seed must be in [0, 2**64), got " + py::repr(seed).cast<std::string>());
  }
  return value;
}

}  // namespace cuckoo::python
