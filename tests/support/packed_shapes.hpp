// Every PackedTable shape a bucket-level test must cover: b ∈ {2, 4, 8} × f ∈ 2..32, with f taken
// at run time (PackedTable<b>) and fixed at compile time (PackedTable<b, f>). The two differ in
// which code runs: fixed byte-aligned widths address buckets by one multiplication, compare whole
// 64-bit words, and (with AVX2) take the shifted-value vector compares.
#pragma once

#include <utility>

#include "cuckoo/table/packed_table.hpp"

namespace cuckoo::test {

/// check.template operator()<PackedTable<b>>(f) for every b and f.
template <class Check>
void for_every_runtime_width(Check&& check) {
  for (unsigned f = 2; f <= 32; ++f) {
    check.template operator()<PackedTable<2>>(f);
    check.template operator()<PackedTable<4>>(f);
    check.template operator()<PackedTable<8>>(f);
  }
}

namespace detail_shapes {
template <unsigned b, class Check, unsigned... offsets>
void fixed_widths(Check& check, std::integer_sequence<unsigned, offsets...>) {
  (check.template operator()<PackedTable<b, offsets + 2>>(offsets + 2), ...);
}
}  // namespace detail_shapes

/// check.template operator()<PackedTable<b, f>>(f) for every b and f.
template <class Check>
void for_every_fixed_width(Check&& check) {
  const auto widths = std::make_integer_sequence<unsigned, 31>{};  // f = 2..32
  detail_shapes::fixed_widths<2>(check, widths);
  detail_shapes::fixed_widths<4>(check, widths);
  detail_shapes::fixed_widths<8>(check, widths);
}

}  // namespace cuckoo::test
