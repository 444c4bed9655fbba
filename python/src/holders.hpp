// python/src/holders.hpp — how each Python class reaches its C++ filter (see set_protocol.hpp).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
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

/// ConcurrentCuckooFilter: safe for any number of threads by itself, so no lock of ours. One
/// care of its own: while a Python thread is the filter's sole writer (sole_writer()), another
/// thread's single-key write waits for that session, and must not hold the GIL meanwhile: the
/// session's thread needs it to go on and end the session. So single-key writes release the GIL
/// while any session is begun or beginning, except in the session's own thread (whose writes never
/// wait). The counts are read and changed with the GIL held, so a write that finds none keeps the
/// GIL and no session can begin before it returns.
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
    if (sessions_ != 0 && session_thread_ != std::this_thread::get_id()) {
      const py::gil_scoped_release unlocked;
      return f(filter_);
    }
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

  /// A sole-writer session of this filter (cuckoo.ConcurrentCuckooFilter.sole_writer()), made and
  /// ended on one thread with the GIL held between the steps: begin() counts it and then takes
  /// every stripe with the GIL released (it may wait for writers inside), end() releases them.
  class SoleSession {
   public:
    explicit SoleSession(ConcurrentHolder& holder) : holder_(holder) {}
    SoleSession(const SoleSession&) = delete;
    SoleSession& operator=(const SoleSession&) = delete;
    ~SoleSession() { end_if_here(); }

    void begin() {
      if (writer_) throw std::logic_error("this sole_writer() session has begun already");
      ++holder_.sessions_;
      try {
        const py::gil_scoped_release unlocked;
        writer_.reset(new auto(holder_.filter_.sole_writer()));
      } catch (...) {
        --holder_.sessions_;
        throw;
      }
      thread_ = std::this_thread::get_id();
      outermost_ = holder_.session_thread_ != thread_;
      if (outermost_) holder_.session_thread_ = thread_;
    }
    void end() {
      if (!writer_) return;
      if (thread_ != std::this_thread::get_id()) {
        throw std::logic_error(
            "a sole_writer() session must end on the thread that began it (it holds the "
            "filter's stripes for that thread)");
      }
      end_here();
    }

   private:
    void end_if_here() noexcept {
      if (writer_ && thread_ == std::this_thread::get_id()) end_here();
      // Dropped unended on another thread: a SoleWriter ended off its thread would leave its
      // own thread believing it still holds the stripes. It stays held (other writers wait).
    }
    void end_here() noexcept {
      writer_.reset();
      if (outermost_) holder_.session_thread_ = std::thread::id();
      --holder_.sessions_;
    }

    ConcurrentHolder& holder_;
    std::unique_ptr<ConcurrentFilter::SoleWriter> writer_;
    std::thread::id thread_;
    bool outermost_ = false;
  };

 private:
  ConcurrentFilter filter_;
  std::size_t sessions_ = 0;        // begun or beginning; with the GIL held
  std::thread::id session_thread_;  // the thread of the session that holds the stripes, if any
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
