// python/src/bindings.hpp — the parts of the cuckoo._cuckoo module, one per file.
#pragma once

#include <pybind11/pybind11.h>

namespace cuckoo::python {

/// CuckooFilter, ConcurrentCuckooFilter and the writer lock (filter_bindings.cpp).
void bind_filters(pybind11::module_& m);
/// The paper's comparators behind the same set protocol (comparator_bindings.cpp).
void bind_comparators(pybind11::module_& m);
/// ApproximateMap, the paper's value association (map_bindings.cpp).
void bind_maps(pybind11::module_& m);

}  // namespace cuckoo::python
