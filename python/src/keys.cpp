// python/src/keys.cpp — see keys.hpp.
#include "keys.hpp"

#include <cstring>
#include <string>

namespace cuckoo::python {

namespace {

constexpr const char* kKeyTypes = "str, bytes, bytearray, memoryview or int";

[[noreturn]] void throw_type(const char* what, PyObject* object) {
  throw py::type_error(std::string(what) + " '" + Py_TYPE(object)->tp_name + "': keys are " +
                       kKeyTypes);
}

/// UTF-8 of one UCS-4 code point; false for a surrogate or a value past U+10FFFF.
bool append_utf8(std::string& out, std::uint32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    if (c >= 0xD800 && c <= 0xDFFF) return false;
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x110000) {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool is_bool(PyObject* object) noexcept {
  return PyBool_Check(object) ||
         (numpy_bool_type() != nullptr &&
          PyObject_TypeCheck(object, reinterpret_cast<PyTypeObject*>(numpy_bool_type())));
}

PyObject*& numpy_bool_type() noexcept {
  static PyObject* type = nullptr;
  return type;
}

std::uint64_t integer_key(PyObject* object) {
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(object, &overflow);
  if (overflow == 0) {
    if (value == -1 && PyErr_Occurred()) throw py::error_already_set();
    return static_cast<std::uint64_t>(value);  // two's complement for negatives
  }
  if (overflow > 0) {
    const unsigned long long big = PyLong_AsUnsignedLongLong(object);
    if (!(big == static_cast<unsigned long long>(-1) && PyErr_Occurred())) return big;
    PyErr_Clear();
  }
  PyErr_SetString(PyExc_OverflowError, "int key out of range: integer keys are in [-2**63, 2**64)");
  throw py::error_already_set();
}

ScalarKey::ScalarKey(PyObject* object) {
  if (PyLong_Check(object) && !PyBool_Check(object)) {
    is_integer_ = true;
    integer_ = integer_key(object);
  } else if (PyUnicode_Check(object)) {
    Py_ssize_t length = 0;
    const char* data = PyUnicode_AsUTF8AndSize(object, &length);
    if (data == nullptr) throw py::error_already_set();  // UnicodeEncodeError (lone surrogate)
    bytes_ = std::string_view(data, static_cast<std::size_t>(length));
  } else if (PyBytes_Check(object)) {
    bytes_ = std::string_view(PyBytes_AS_STRING(object),
                              static_cast<std::size_t>(PyBytes_GET_SIZE(object)));
  } else if (PyByteArray_Check(object)) {
    bytes_ = std::string_view(PyByteArray_AS_STRING(object),
                              static_cast<std::size_t>(PyByteArray_GET_SIZE(object)));
  } else if (PyMemoryView_Check(object)) {
    if (PyObject_GetBuffer(object, &view_, PyBUF_SIMPLE) != 0) {
      PyErr_Clear();
      throw py::value_error("memoryview key: only C-contiguous memory can be a key");
    }
    holds_view_ = true;
    bytes_ =
        std::string_view(static_cast<const char*>(view_.buf), static_cast<std::size_t>(view_.len));
  } else if (is_bool(object)) {
    throw py::type_error("bool is not a key (a mask passed for keys?); use int(x) for 0 or 1");
  } else if (PyIndex_Check(object)) {  // numpy integer scalars and other int-like types
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(object));
    if (!index) throw py::error_already_set();
    is_integer_ = true;
    integer_ = integer_key(index.ptr());
  } else {
    throw_type("unsupported key type", object);
  }
}

ScalarKey::~ScalarKey() {
  if (holds_view_) PyBuffer_Release(&view_);
}

KeyBatch::KeyBatch(py::handle keys) {
  if (PyUnicode_Check(keys.ptr()) || PyBytes_Check(keys.ptr()) || PyByteArray_Check(keys.ptr())) {
    throw py::type_error(std::string("a batch of keys must be a collection, not one ") +
                         Py_TYPE(keys.ptr())->tp_name + " (use add() / `in` for a single key)");
  }
  if (py::isinstance<py::array>(keys)) {
    read_array(py::reinterpret_borrow<py::array>(keys));
  } else {
    read_iterable(keys);
    shape_ = {static_cast<py::ssize_t>(size_)};
  }
}

/// Counts the key just stored (in own_integers_ or string_ends_) into the runs.
void KeyBatch::append(bool integers) {
  const std::size_t first = (integers ? own_integers_.size() : string_ends_.size()) - 1;
  if (!runs_.empty() && runs_.back().integers == integers) {
    ++runs_.back().count;
  } else {
    runs_.push_back(Run{integers, first, 1, size_});
  }
  ++size_;
}

void KeyBatch::add_object(PyObject* object) {
  if (PyLong_Check(object) && !PyBool_Check(object)) {  // the common case first, without a call
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(object, &overflow);
    if (overflow == 0 && !(value == -1 && PyErr_Occurred())) {
      own_integers_.push_back(static_cast<std::uint64_t>(value));
      append(true);
      return;
    }
  }
  const ScalarKey key(object);
  key.visit([&](auto value) {
    if constexpr (std::is_same_v<decltype(value), std::uint64_t>) {
      own_integers_.push_back(value);
      append(true);
    } else {
      arena_.append(value);
      string_ends_.push_back(arena_.size());
      append(false);
    }
  });
}

void KeyBatch::read_iterable(py::handle keys) {
  if (PyList_Check(keys.ptr()) || PyTuple_Check(keys.ptr())) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(keys.ptr());
    own_integers_.reserve(static_cast<std::size_t>(n));
    // Items are read by index each time: a key's conversion runs no Python code that could
    // change the list (only __index__ of an exotic int-like type could, and then the length is
    // re-read).
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(keys.ptr()); ++i) {
      py::object item = py::reinterpret_borrow<py::object>(PySequence_Fast_GET_ITEM(keys.ptr(), i));
      add_object(item.ptr());
    }
  } else {
    py::object iterator = py::reinterpret_steal<py::object>(PyObject_GetIter(keys.ptr()));
    if (!iterator) {
      PyErr_Clear();
      throw py::type_error(std::string("keys must be an iterable or a numpy array, not '") +
                           Py_TYPE(keys.ptr())->tp_name + "'");
    }
    while (true) {
      py::object item = py::reinterpret_steal<py::object>(PyIter_Next(iterator.ptr()));
      if (!item) {
        if (PyErr_Occurred()) throw py::error_already_set();
        break;
      }
      add_object(item.ptr());
    }
  }
  integers_ = own_integers_.data();
  finish_strings(string_ends_);
}

void KeyBatch::finish_strings(const std::vector<std::size_t>& ends) {
  strings_.reserve(ends.size());
  std::size_t begin = 0;
  for (const std::size_t end : ends) {
    strings_.emplace_back(arena_.data() + begin, end - begin);
    begin = end;
  }
}

void KeyBatch::read_array(py::array array) {
  shape_.assign(array.shape(), array.shape() + array.ndim());
  const char kind = array.dtype().kind();
  const auto count = static_cast<std::size_t>(array.size());
  if (kind == 'i' || kind == 'u') {
    const py::dtype wide = py::dtype(kind == 'i' ? "int64" : "uint64");
    // int64 and uint64 C-contiguous arrays are read in place; anything else is converted once,
    // as numpy's astype (sign-extending signed widths, so -1 of any width is 2^64 - 1).
    py::array flat = array;
    if (!array.dtype().is(wide) || !(array.flags() & py::array::c_style)) {
      flat = py::array(py::module_::import("numpy").attr("ascontiguousarray")(array, wide));
    }
    keeper_ = flat;
    integers_ = static_cast<const std::uint64_t*>(flat.data());
    if (count != 0) runs_.push_back(Run{true, 0, count, 0});
    size_ = count;
  } else if (kind == 'S') {
    py::array flat = py::module_::import("numpy").attr("ascontiguousarray")(array);
    keeper_ = flat;
    const auto width = static_cast<std::size_t>(flat.itemsize());
    const char* data = static_cast<const char*>(flat.data());
    strings_.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {  // numpy's S items drop trailing NUL bytes
      std::size_t length = width;
      const char* item = data + i * width;
      while (length > 0 && item[length - 1] == '\0') --length;
      strings_.emplace_back(item, length);
    }
    if (count != 0) runs_.push_back(Run{false, 0, count, 0});
    size_ = count;
  } else if (kind == 'U') {
    py::array flat = py::module_::import("numpy").attr("ascontiguousarray")(array);
    const std::size_t width = static_cast<std::size_t>(flat.itemsize()) / 4;
    const char* data = static_cast<const char*>(flat.data());
    std::vector<std::size_t> ends;
    ends.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {  // numpy's U items drop trailing NULs too
      std::size_t length = width;
      auto code_at = [&](std::size_t j) {
        std::uint32_t c;
        std::memcpy(&c, data + (i * width + j) * 4, 4);
        return c;
      };
      while (length > 0 && code_at(length - 1) == 0) --length;
      for (std::size_t j = 0; j < length; ++j) {
        if (!append_utf8(arena_, code_at(j))) {
          throw py::value_error("key " + std::to_string(i) +
                                " of the U array is not valid Unicode (a lone surrogate?)");
        }
      }
      ends.push_back(arena_.size());
    }
    finish_strings(ends);
    if (count != 0) runs_.push_back(Run{false, 0, count, 0});
    size_ = count;
  } else if (kind == 'O') {
    read_iterable(array.attr("ravel")());
  } else if (kind == 'b') {
    throw py::type_error("a bool array is not keys (a mask passed for keys?)");
  } else {
    throw py::type_error("numpy arrays of dtype " + std::string(py::str(array.dtype())) +
                         " are not keys: keys are integers, S or U strings, or objects (cast "
                         "with astype(numpy.uint64) if the values are integers)");
  }
}

}  // namespace cuckoo::python
