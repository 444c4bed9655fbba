// python/src/module.cpp — cuckoo._cuckoo: the compiled half of `import cuckoo`.
//
// C++ errors become the Python exceptions a user expects: std::invalid_argument → ValueError
// (pybind11's own rule), cuckoo::format_error (a file or byte string that cannot be trusted) →
// ValueError naming the problem, std::system_error → OSError with its errno (FileNotFoundError,
// PermissionError, ...), std::bad_alloc → MemoryError, a full strict insert → FilterFullError,
// a writer lock that did not come in time → LockTimeoutError (a TimeoutError).
#include <pybind11/pybind11.h>

#include <cerrno>
#include <exception>
#include <system_error>

#include "bindings.hpp"
#include "cuckoo/cuckoo.hpp"
#include "keys.hpp"
#include "set_protocol.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_cuckoo, m) {
  m.doc() = "Cuckoo filters (Fan et al., CoNEXT 2014) and their comparators; see help(cuckoo).";
  cuckoo::python::numpy_bool_type() = py::object(py::module_::import("numpy").attr("bool_"))
                                          .release()
                                          .ptr();  // kept for the process

  py::register_exception<cuckoo::python::FilterFull>(m, "FilterFullError", PyExc_RuntimeError);
  py::register_exception<cuckoo::lock_timeout>(m, "LockTimeoutError", PyExc_TimeoutError);
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const cuckoo::format_error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const std::system_error& e) {
      const int code = e.code().category() == std::generic_category() ||
                               e.code().category() == std::system_category()
                           ? e.code().value()
                           : EIO;
      // OSError(errno, text) becomes the matching subclass (FileNotFoundError for ENOENT, ...).
      py::object error = py::reinterpret_borrow<py::object>(PyExc_OSError)(code, e.what());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    }
  });

  m.attr("DEFAULT_SEED") = cuckoo::defaults::kSeed;
  m.attr("DEFAULT_CAPACITY") = cuckoo::defaults::kCapacity;
  m.attr("DEFAULT_ERROR_RATE") = cuckoo::defaults::kTargetFpr;
  m.attr("DEFAULT_BUCKET_SIZE") = cuckoo::defaults::kBucketSize;
  m.attr("DEFAULT_MAX_KICKS") = cuckoo::defaults::kMaxKicks;
  m.attr("DEFAULT_LOCK_WAIT") = std::chrono::duration<double>(cuckoo::kDefaultLockWait).count();

  cuckoo::python::bind_filters(m);
  cuckoo::python::bind_comparators(m);
  cuckoo::python::bind_maps(m);
}
