// python/src/comparator_bindings.cpp — the paper's comparators (cuckoo/amq/*.hpp) from Python:
// BloomFilter, BlockedBloomFilter, CountingBloomFilter, DLeftCountingBloomFilter, QuotientFilter.
// Each is sized as the C++ with_capacity(capacity, error_rate, seed) sizes it and offers the
// cuckoo filter's set protocol (set_protocol.hpp); discard / remove where the design can delete.
// They have no file format: no save, load or pickling.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>

#include "arguments.hpp"
#include "bindings.hpp"
#include "cuckoo/amq/blocked_bloom.hpp"
#include "cuckoo/amq/bloom.hpp"
#include "cuckoo/amq/counting_bloom.hpp"
#include "cuckoo/amq/dleft_counting_bloom.hpp"
#include "cuckoo/amq/quotient_filter.hpp"
#include "cuckoo/config.hpp"
#include "holders.hpp"
#include "set_protocol.hpp"

namespace cuckoo::python {

namespace {

template <class T>
void bind_comparator(py::module_& m, const char* name, const char* doc) {
  using Holder = ComparatorHolder<T>;
  py::class_<Holder> cls(m, name, doc);
  cls.def(py::init([](long long capacity, double error_rate, const py::object& seed) {
            return std::make_unique<Holder>(
                T::with_capacity(checked_capacity(capacity), error_rate, checked_seed(seed)));
          }),
          py::arg("capacity") = defaults::kCapacity, py::arg("error_rate") = defaults::kTargetFpr,
          py::kw_only(), py::arg("seed") = py::none());
  bind_set_protocol(cls);
  cls.def("__reduce_ex__", [name](const py::object&, int) -> py::object {
    throw py::type_error(std::string("cannot pickle ") + name +
                         ": the comparators have no file format (CuckooFilter has)");
  });
  cls.def("__repr__", [name](Holder& holder) {
    return holder.read([&](const T& f) {
      return std::string(name) + "(size=" + std::to_string(f.size()) +
             ", capacity=" + std::to_string(f.capacity()) +
             ", memory_bytes=" + std::to_string(f.memory_bytes()) + ")";
    });
  });
}

}  // namespace

void bind_comparators(py::module_& m) {
  bind_comparator<amq::Bloom>(
      m, "BloomFilter", "A standard Bloom filter: k bits set per key, optimal k. No deletes.");
  bind_comparator<amq::BlockedBloom>(
      m, "BlockedBloomFilter",
      "A blocked Bloom filter: all k bits in one 64-byte block. No deletes.");
  bind_comparator<amq::CountingBloom>(
      m, "CountingBloomFilter", "A counting Bloom filter: 4-bit saturating counters; deletes.");
  bind_comparator<amq::DLeftCountingBloom>(
      m, "DLeftCountingBloomFilter",
      "A d-left counting Bloom filter (Bonomi et al.): 4 subtables of fingerprint cells; deletes.");
  bind_comparator<amq::QuotientFilter>(
      m, "QuotientFilter", "A quotient filter (Bender et al.): 3 metadata bits per slot; deletes.");
}

}  // namespace cuckoo::python
