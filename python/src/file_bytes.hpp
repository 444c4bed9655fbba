// python/src/file_bytes.hpp — the file format's bytes between Python and C++: the bytes of
// to_bytes() and pickles out, any contiguous buffer (bytes, bytearray, memoryview) in.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <span>
#include <vector>

namespace cuckoo::python {

namespace py = pybind11;

inline py::bytes to_python_bytes(const std::vector<std::byte>& bytes) {
  return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

/// A buffer's bytes, held for as long as this lives; ValueError unless they are contiguous.
class ContiguousBytes {
 public:
  explicit ContiguousBytes(const py::buffer& data) : info_(data.request()) {
    if (info_.ndim != 1 || info_.strides[0] != info_.itemsize) {
      throw py::value_error("from_bytes needs contiguous bytes");
    }
  }
  std::span<const std::byte> span() const noexcept {
    return {static_cast<const std::byte*>(info_.ptr),
            static_cast<std::size_t>(info_.size * info_.itemsize)};
  }

 private:
  py::buffer_info info_;
};

}  // namespace cuckoo::python
