// cuckoo/detail/endian.hpp — little-endian conversion (std::byteswap is C++23).
#pragma once

#include <bit>
#include <cstdint>

namespace cuckoo::detail {

/// Host order ↔ little-endian; the identity on little-endian hosts.
constexpr std::uint64_t little_endian(std::uint64_t value) noexcept {
  if constexpr (std::endian::native == std::endian::big) return __builtin_bswap64(value);
  return value;
}
constexpr std::uint32_t little_endian(std::uint32_t value) noexcept {
  if constexpr (std::endian::native == std::endian::big) return __builtin_bswap32(value);
  return value;
}

}  // namespace cuckoo::detail
