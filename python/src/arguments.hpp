// python/src/arguments.hpp — constructor arguments checked with the messages a Python user reads,
// and the false-positive arithmetic the classes report.
#pragma once

#include <pybind11/pybind11.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
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

/// The Config of CuckooFilter's, ConcurrentCuckooFilter's and ApproximateMap's arguments; the
/// library's own checks (std::invalid_argument → ValueError) cover the rest.
inline Config make_config(long long capacity, double error_rate, unsigned bucket_size,
                          std::optional<unsigned> fingerprint_bits, const py::object& seed,
                          unsigned max_kicks, bool semi_sort = false, bool growable = false,
                          bool blocked = false) {
  Config cfg;
  cfg.capacity = checked_capacity(capacity);
  cfg.target_fpr = error_rate;
  if (fingerprint_bits) {
    if (*fingerprint_bits == 0) {
      throw py::value_error(
          "fingerprint_bits must be 2..32 (or None to derive it from error_rate)");
    }
    cfg.fingerprint_bits = *fingerprint_bits;
  }
  cfg.bucket_size = bucket_size;
  cfg.semi_sort = semi_sort;
  cfg.seed = checked_seed(seed);
  cfg.growable = growable;
  cfg.blocked = blocked;
  cfg.max_kicks = max_kicks;
  return cfg;
}

/// The chance that an absent key matches at least one of the 2b·load entries of its two buckets,
/// each with probability 2^−f: 1 − (1 − 2^−f)^(2b·load). At load 1, a full table's bound.
inline double table_error_rate(unsigned fingerprint_bits, unsigned bucket_size, double load) {
  const double match = std::ldexp(1.0, -static_cast<int>(fingerprint_bits));
  return 1.0 - std::pow(1.0 - match, 2.0 * bucket_size * load);
}

}  // namespace cuckoo::python
