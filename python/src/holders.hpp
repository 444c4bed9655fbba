// python/src/holders.hpp — how each Python class reaches its C++ filter (see set_protocol.hpp).
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <utility>

#include "cuckoo/cuckoo.hpp"
#include "object_lock.hpp"

namespace cuckoo::python {

namespace py = pybind11;

/// CuckooFilter: a cuckoo::Filter it owns, or a read-only MappedFilter; one lock per object.
class FilterHolder {
 public:
  using Inner = Filter;

  explicit FilterHolder(Filter filter) : owned_(std::move(filter)) {}
  FilterHolder(MappedFilter mapped, std::string path)
      : mapped_(std::move(mapped)), mapped_path_(std::move(path)) {}

  template <class F>
  decltype(auto) read(F&& f) {
    const ObjectLock::Shared hold(lock_);
    return f(view());
  }
  template <class F>
  decltype(auto) write(F&& f) {
    Filter& filter = writable();
    const ObjectLock::Exclusive hold(lock_);
    return f(filter);
  }
  template <class F>
  decltype(auto) read_batch(F&& f) {
    return lock_.shared_without_gil([&]() -> decltype(auto) { return f(view()); });
  }
  template <class F>
  decltype(auto) write_batch(F&& f) {
    Filter& filter = writable();
    return lock_.exclusive_without_gil([&]() -> decltype(auto) { return f(filter); });
  }

  bool read_only() const noexcept { return mapped_.has_value(); }
  const std::string& mapped_path() const noexcept { return mapped_path_; }
  /// For lookups with the lock held, and for the table view (whose storage never moves for a
  /// fixed-size filter: clear() zeroes it in place).
  const Filter& view() const noexcept { return mapped_ ? mapped_->filter() : *owned_; }

 private:
  Filter& writable() {
    if (mapped_) {
      throw py::type_error("this filter is read-only (mapped from '" + mapped_path_ +
                           "'); copy() it to change it");
    }
    return *owned_;
  }

  std::optional<Filter> owned_;
  std::optional<MappedFilter> mapped_;
  std::string mapped_path_;
  ObjectLock lock_;
};

/// ConcurrentCuckooFilter: safe for any number of threads by itself, so no lock of ours.
class ConcurrentHolder {
 public:
  using Inner = ConcurrentFilter;

  explicit ConcurrentHolder(ConcurrentFilter filter) : filter_(std::move(filter)) {}

  template <class F>
  decltype(auto) read(F&& f) {
    return f(std::as_const(filter_));
  }
  template <class F>
  decltype(auto) write(F&& f) {
    return f(filter_);
  }
  template <class F>
  decltype(auto) read_batch(F&& f) {
    const py::gil_scoped_release unlocked;
    return f(std::as_const(filter_));
  }
  template <class F>
  decltype(auto) write_batch(F&& f) {
    const py::gil_scoped_release unlocked;
    return f(filter_);
  }
  ConcurrentFilter& filter() noexcept { return filter_; }

 private:
  ConcurrentFilter filter_;
};

/// A comparator (amq::Bloom, ...): owned, one lock per object.
template <class T>
class ComparatorHolder {
 public:
  using Inner = T;

  explicit ComparatorHolder(T filter) : filter_(std::move(filter)) {}

  template <class F>
  decltype(auto) read(F&& f) {
    const ObjectLock::Shared hold(lock_);
    return f(std::as_const(filter_));
  }
  template <class F>
  decltype(auto) write(F&& f) {
    const ObjectLock::Exclusive hold(lock_);
    return f(filter_);
  }
  template <class F>
  decltype(auto) read_batch(F&& f) {
    return lock_.shared_without_gil([&]() -> decltype(auto) { return f(std::as_const(filter_)); });
  }
  template <class F>
  decltype(auto) write_batch(F&& f) {
    return lock_.exclusive_without_gil([&]() -> decltype(auto) { return f(filter_); });
  }

 private:
  T filter_;
  ObjectLock lock_;
};

}  // namespace cuckoo::python
