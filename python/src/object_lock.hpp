// python/src/object_lock.hpp — one readers-writer lock per Python filter object, GIL-aware.
//
// Batch calls release the GIL for their work, so two Python threads can be inside one filter at
// once; a single-thread C++ filter needs them serialized. Each object therefore carries a
// std::shared_mutex: lookups hold it shared, changes exclusive.
//
// No thread ever waits for the lock while it holds the GIL: a call made with the GIL first tries
// the lock, and only if that fails releases the GIL to wait. A thread holding the lock may wait
// for the GIL, but the GIL's holder never waits for the lock, so the two cannot deadlock.
#pragma once

#include <pybind11/pybind11.h>

#include <mutex>
#include <shared_mutex>

namespace cuckoo::python {

class ObjectLock {
 public:
  /// Shared hold taken with the GIL held.
  class Shared {
   public:
    explicit Shared(ObjectLock& lock) : mutex_(lock.mutex_) {
      if (!mutex_.try_lock_shared()) {
        pybind11::gil_scoped_release unlocked;
        mutex_.lock_shared();
      }
    }
    ~Shared() { mutex_.unlock_shared(); }
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;

   private:
    std::shared_mutex& mutex_;
  };
  /// Exclusive hold taken with the GIL held.
  class Exclusive {
   public:
    explicit Exclusive(ObjectLock& lock) : mutex_(lock.mutex_) {
      if (!mutex_.try_lock()) {
        pybind11::gil_scoped_release unlocked;
        mutex_.lock();
      }
    }
    ~Exclusive() { mutex_.unlock(); }
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;

   private:
    std::shared_mutex& mutex_;
  };

  /// Runs f with the GIL released and the lock held shared; the lock is let go before the GIL is
  /// taken back.
  template <class F>
  decltype(auto) shared_without_gil(F&& f) {
    pybind11::gil_scoped_release unlocked;
    std::shared_lock hold(mutex_);
    return f();
  }
  template <class F>
  decltype(auto) exclusive_without_gil(F&& f) {
    pybind11::gil_scoped_release unlocked;
    std::unique_lock hold(mutex_);
    return f();
  }

 private:
  std::shared_mutex mutex_;
};

}  // namespace cuckoo::python
