// Helpers for the file-format tests: a scratch directory removed afterwards, whole-file I/O, where
// the committed test data lives, and the tools for damaging a file on purpose.
#pragma once

#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "cuckoo/cuckoo.hpp"

namespace cuckoo::test {

/// The repository's tests/ directory (set by tests/CMakeLists.txt).
inline std::filesystem::path tests_source_dir() {
  return CUCKOO_TESTS_SOURCE_DIR;
}

/// A fresh directory under the system temp dir, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<unsigned> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("cuckoo-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::vector<std::byte> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) bytes[i] = static_cast<std::byte>(chars[i]);
  return bytes;
}

/// Calls use(path, bytes) for every committed input in tests/fuzz/<folder> for each folder (the
/// fuzzers' seed corpora and the failing inputs they found; README files are skipped); returns
/// how many there were.
template <class Use>
std::size_t for_each_kept_input(std::initializer_list<const char*> folders, Use&& use) {
  std::size_t files = 0;
  for (const char* folder : folders) {
    for (const auto& entry :
         std::filesystem::directory_iterator(tests_source_dir() / "fuzz" / folder)) {
      const auto name = entry.path().filename().string();
      if (!entry.is_regular_file() || name.starts_with(".") || name.ends_with(".md")) continue;
      ++files;
      use(entry.path(), read_file(entry.path()));
    }
  }
  return files;
}

inline void write_file(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

inline void set_u32(std::vector<std::byte>& file, std::size_t offset, std::uint32_t value) {
  cuckoo::io::detail::store_u32(file.data() + offset, value);
}
inline void set_u64(std::vector<std::byte>& file, std::size_t offset, std::uint64_t value) {
  cuckoo::io::detail::store_u64(file.data() + offset, value);
}
/// Recomputes the trailing checksum, so that the loader's other checks are what refuses a file.
inline void fix_checksum(std::vector<std::byte>& file) {
  if (file.size() < 8) return;
  const std::size_t body = file.size() - 8;
  set_u64(file, body, XXH3_64bits(file.data(), body));
}

/// The format_error message from deserializing `file`, or "" if it loaded.
inline std::string refusal(const std::vector<std::byte>& file) {
  try {
    (void)cuckoo::Filter::deserialize(file);
  } catch (const cuckoo::format_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace cuckoo::test
