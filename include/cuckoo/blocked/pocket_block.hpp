// cuckoo/blocked/pocket_block.hpp — one 64-byte block of the blocked cuckoo filter: a pocket
// dictionary of up to 43 items, each a (list, remainder) pair, answered from one cache line.
//
// Layout (bit i is bit i % 8 of byte i / 8; every bit used):
//
//     bits    0..142   the header: for each list q = 0..99 in order, one 1 bit per item of that
//                      list, then a 0 bit. 100 zeros and n ≤ 43 ones; the bits above are 0.
//     bits  143..151   511 − t, t the block's overflow threshold in units of 64 values (a zeroed
//                      block has t = 511, above every value)
//     byte   19, 20    c1, c2: items in lists 0..32 and 0..65
//     bytes  21..63    remainders, one byte per slot, slot s in byte 21 + s
//
// An item's value is v = 256·q + r (q < 100, r < 256). Slots hold the items sorted by value, so a
// block's bits are a function of the multiset it holds (undoing a change restores them exactly),
// list q is a run of consecutive slots, and the largest item is in the last slot.
//
// The Prefix filter's pocket dictionary (Even, Even and Morrison, VLDB 2022) has this shape. What
// is ours is the lookup's cost, which decides single-key speed. While a lookup waits for its line,
// every instruction that depends on the line holds a scheduler entry; once those fill, the core
// stops issuing the next keys' loads and lookups stop overlapping, so each instruction after the
// load costs far more than its cycle. Measured on 192 MiB, ns per single-key lookup, one run each:
// two selects over the whole header (about 80 dependent instructions) 177; the same loads with
// 3 / about 20 instructions after them 13 / 42.
//
// So the lists are split into three groups (0..32, 33..65, 66..99) and the block keeps the item
// counts before the second and third (c1, c2, whole bytes): list q's group g starts at header bit
// 33·g + c_g. Every load a lookup makes has an address that depends on q only, so all issue at
// once: c_g's byte, the pair of header words that holds group g's code, and (vector levels) the
// whole line for one compare of r against every remainder. One funnel shift of the pair gives the
// group's unary code (34 zeros + its items; it does not fit only if a group holds more than 29
// items, which at the design load happens with probability about 10^-8, and otherwise only with
// many duplicates), one PDEP the two zeros that bound list q, and list q's bits of the compare
// give the answer: about 25 instructions after the line arrives. A group that does not fit takes
// a slower exact path. The portable level (no PDEP, no vector compare) selects with broadword
// arithmetic and reads the list's remainders with one more load.
//
// At the vector levels a lookup first asks the compare alone whether any slot holds r: with n
// items none does with probability (255/256)^n, 85% at n = 41, and then the answer is no after
// about four instructions behind one branch, where the span's twenty would wait for the line.
// Measured on 192 MiB (blocked_bench, two rounds beside the branch-free form), ns per lookup:
// absent keys single-key 68–72 → 38, batched 15.2–15.6 → 10.7; present keys 66–71 → 64–66 and
// 13.8–14.4 → 14.0–14.2; a coin toss between present and absent, where the branch mispredicts
// for about two keys in five, 72–73 → 61–63 single-key and 17.3–18.3 → 16.6 batched.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cuckoo/detail/endian.hpp"
#include "cuckoo/detail/isa.hpp"

#if CUCKOO_HAS_X86_VECTOR_PATHS
#include <immintrin.h>
#endif

// The BMI/BMI2 and AVX-512BW functions below: forced inline where the translation unit's flags
// enable exactly what they use, otherwise compiled for their level (as isa.hpp's macros do; a TU
// built with -mavx2 alone has AVX2 but not BMI2, one with -mavx512f not AVX-512BW).
#if defined(__AVX2__) && defined(__BMI__) && defined(__BMI2__)
#define CUCKOO_POCKET_BMI_FN CUCKOO_HOT
#elif CUCKOO_HAS_X86_VECTOR_PATHS
#define CUCKOO_POCKET_BMI_FN [[CUCKOO_TARGET_AVX2]] inline
#endif
#if defined(__AVX512BW__) && defined(__AVX512F__) && defined(__AVX2__) && defined(__BMI2__)
#define CUCKOO_POCKET_AVX512_FN CUCKOO_HOT
#elif CUCKOO_HAS_X86_VECTOR_PATHS
#define CUCKOO_POCKET_AVX512_FN [[CUCKOO_TARGET_AVX512]] inline
#endif

namespace cuckoo::detail::pocket {

inline constexpr std::size_t kBlockBytes = 64;
inline constexpr unsigned kSlots = 43;
inline constexpr unsigned kLists = 100;
inline constexpr unsigned kGroups = 3;
/// First list of groups 1 and 2.
inline constexpr unsigned kGroupStride = 33;
inline constexpr unsigned kRemainderBits = 8;
/// Item values are 256·q + r: 25,600 of them.
inline constexpr unsigned kValues = kLists << kRemainderBits;
inline constexpr unsigned kHeaderBits = kLists + kSlots;  // 143
inline constexpr unsigned kThresholdBit = kHeaderBits;    // bits 143..151
inline constexpr unsigned kThresholdBits = 9;
/// The threshold counts values in units of 64 (a quarter of a list): 400 units.
inline constexpr unsigned kThresholdUnitBits = 6;
/// t when nothing has overflowed: above every unit.
inline constexpr unsigned kNoOverflow = (1u << kThresholdBits) - 1;
/// Bytes holding c1 and c2.
inline constexpr std::size_t kCountByte = (kThresholdBit + kThresholdBits) / 8;  // 19
inline constexpr std::size_t kFirstRemainderByte = kBlockBytes - kSlots;         // 21
static_assert(kThresholdBit + kThresholdBits == 8 * kCountByte &&
                  kCountByte + kGroups - 1 == kFirstRemainderByte,
              "header, threshold, counts and remainders fill the line exactly");
static_assert((kValues >> kThresholdUnitBits) < kNoOverflow);

constexpr unsigned list_of(unsigned value) noexcept {
  return value >> kRemainderBits;
}
constexpr unsigned remainder_of(unsigned value) noexcept {
  return value & 0xFFu;
}
/// The unit of the threshold a value falls in.
constexpr unsigned threshold_unit(unsigned value) noexcept {
  return value >> kThresholdUnitBits;
}
/// The group of list q < 100, in arithmetic: GCC turned comparisons into a branch on q, which
/// mispredicts for a third of the keys (measured: 45 against 13 ns per key for the same loads).
constexpr unsigned group_of(unsigned list) noexcept {
  return ((kGroupStride - 1 - list) >> 31) + ((2 * kGroupStride - 1 - list) >> 31);
}
static_assert(group_of(0) == 0 && group_of(32) == 0 && group_of(33) == 1 && group_of(65) == 1 &&
              group_of(66) == 2 && group_of(99) == 2);

inline std::uint64_t load64(const std::byte* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return little_endian(v);
}
inline void store64(std::byte* p, std::uint64_t v) noexcept {
  v = little_endian(v);
  std::memcpy(p, &v, sizeof v);
}
inline unsigned load_byte(const std::byte* p) noexcept {
  return std::to_integer<unsigned>(*p);
}

/// The stored threshold field, 511 − t (bits 143..151: the top 9 bits of bytes 17 and 18).
inline unsigned threshold_field(const std::byte* block) noexcept {
  // Two bytes, which GCC reads with one load.
  return (load_byte(block + 17) | (load_byte(block + 18) << 8)) >> 7;
}

/// t: every item whose first block this is and whose threshold unit is below t is in this block.
inline unsigned threshold(const std::byte* block) noexcept {
  return kNoOverflow - threshold_field(block);
}

/// Whether value v, whose first block this is, may have been given to its second block: its unit
/// is at or above t. As unit + field ≥ 511 from one 16-bit load, three instructions after it,
/// where two byte loads and unit ≥ 511 − field took six (a lookup pays for each after its line;
/// the essay above).
inline bool may_be_in_second(const std::byte* first, unsigned v) noexcept {
  return threshold_unit(v) + threshold_field(first) >= kNoOverflow;
}

/// Everything but the remainders, for changes: header bits 0..63, 64..127, 128..142, the stored
/// threshold field and c1, c2.
struct Tail {
  std::uint64_t w0, w1, w2;
  unsigned threshold_field;
  unsigned counts[kGroups - 1];
};

inline Tail load_tail(const std::byte* block) noexcept {
  const unsigned b16 = load_byte(block + 16), b17 = load_byte(block + 17),
                 b18 = load_byte(block + 18);
  return {load64(block),
          load64(block + 8),
          b16 | ((b17 & 0x7Fu) << 8),
          (b17 >> 7) | (b18 << 1),
          {load_byte(block + kCountByte), load_byte(block + kCountByte + 1)}};
}
inline void store_tail(std::byte* block, const Tail& t) noexcept {
  store64(block, t.w0);
  store64(block + 8, t.w1);
  block[16] = static_cast<std::byte>(t.w2 & 0xFF);
  block[17] = static_cast<std::byte>(((t.w2 >> 8) & 0x7F) | ((t.threshold_field & 1) << 7));
  block[18] = static_cast<std::byte>(t.threshold_field >> 1);
  block[kCountByte] = static_cast<std::byte>(t.counts[0]);
  block[kCountByte + 1] = static_cast<std::byte>(t.counts[1]);
}

/// The items of a block (one header bit each). L: the level whose POPCNT to use (popcount_at).
template <Isa L = Isa::kPortable>
inline unsigned item_count(const Tail& t) noexcept {
  return popcount_at<L>(t.w0) + popcount_at<L>(t.w1) + popcount_at<L>(t.w2);
}

inline void set_threshold(std::byte* block, unsigned t) noexcept {
  Tail tail = load_tail(block);
  tail.threshold_field = kNoOverflow - t;
  store_tail(block, tail);
}

inline std::byte& remainder_byte(std::byte* block, unsigned slot) noexcept {
  return block[kFirstRemainderByte + slot];
}
inline unsigned remainder_at(const std::byte* block, unsigned slot) noexcept {
  return load_byte(block + kFirstRemainderByte + slot);
}

// ---- Select: the position of the k-th set bit of a word (k < popcount) -----------------------

/// Bit position of the j-th set bit of each byte value, for the portable select.
inline constexpr auto kSelectInByte = [] {
  std::array<std::array<std::uint8_t, 8>, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    unsigned j = 0;
    for (unsigned bit = 0; bit < 8; ++bit) {
      if ((byte >> bit) & 1u) table[byte][j++] = static_cast<std::uint8_t>(bit);
    }
  }
  return table;
}();

/// Vigna's broadword select; 64 when x has at most k set bits.
[[gnu::always_inline]] inline unsigned select64_portable(std::uint64_t x, unsigned k) noexcept {
  constexpr std::uint64_t kOnes = 0x0101010101010101ull;
  constexpr std::uint64_t kHighs = 0x8080808080808080ull;
  std::uint64_t s = x - ((x >> 1) & 0x5555555555555555ull);
  s = (s & 0x3333333333333333ull) + ((s >> 2) & 0x3333333333333333ull);
  s = (s + (s >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  const std::uint64_t prefix = s * kOnes;  // byte i: set bits in bytes 0..i
  // Bytes whose prefix is at most k come first; the k-th bit is in the byte after them.
  const std::uint64_t at_most_k = (((k * kOnes) | kHighs) - prefix) & kHighs;
  const auto bytes_before = static_cast<unsigned>(std::popcount(at_most_k));
  if (bytes_before == 8) return 64;
  const auto before = static_cast<unsigned>(((prefix << 8) >> (8 * bytes_before)) & 0xFF);
  return 8 * bytes_before + kSelectInByte[(x >> (8 * bytes_before)) & 0xFF][(k - before) & 7];
}

#if CUCKOO_HAS_X86_VECTOR_PATHS
/// Set bits k and k + 1 of x, as a word holding just those (PDEP).
CUCKOO_POCKET_BMI_FN std::uint64_t two_bits_bmi2(std::uint64_t x, unsigned k) noexcept {
  return _pdep_u64(std::uint64_t{3} << k, x);
}
/// Trailing zeros, 64 for 0, without the branch std::countr_zero may compile to.
CUCKOO_POCKET_BMI_FN unsigned trailing_zeros_bmi(std::uint64_t x) noexcept {
  return static_cast<unsigned>(_tzcnt_u64(x));
}
#endif

/// The set bits k and k + 1 of x, as a word holding just those two (fewer if x has fewer).
template <Isa L>
[[gnu::always_inline]] inline std::uint64_t two_bits(std::uint64_t x, unsigned k) noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS
  if constexpr (L != Isa::kPortable) return two_bits_bmi2(x, k);
#endif
  const unsigned a = select64_portable(x, k), b = select64_portable(x, k + 1);
  return (a < 64 ? std::uint64_t{1} << a : 0) | (b < 64 ? std::uint64_t{1} << b : 0);
}

template <Isa L>
[[gnu::always_inline]] inline unsigned trailing_zeros(std::uint64_t x) noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS
  if constexpr (L != Isa::kPortable) return trailing_zeros_bmi(x);
#endif
  return static_cast<unsigned>(std::countr_zero(x));
}

/// Position of the k-th set bit of a value held in three words (64 + 64 + 15 bits).
inline unsigned select_wide(std::uint64_t w0, std::uint64_t w1, std::uint64_t w2,
                            unsigned k) noexcept {
  const auto n0 = static_cast<unsigned>(std::popcount(w0));
  const unsigned n01 = n0 + static_cast<unsigned>(std::popcount(w1));
  if (k < n0) return select64_portable(w0, k);
  if (k < n01) return 64 + select64_portable(w1, k - n0);
  return 128 + select64_portable(w2, k - n01);
}

/// The slots [begin, end) of list q.
struct Span {
  unsigned begin, end;
};

/// List q's slots by two selects over the whole header: exact for any block, slower.
inline Span list_span_wide(const Tail& t, unsigned q) noexcept {
  const std::uint64_t z0 = ~t.w0, z1 = ~t.w1, z2 = ~t.w2 & 0x7FFF;
  const unsigned end = select_wide(z0, z1, z2, q) - q;
  const unsigned begin = q == 0 ? 0 : select_wide(z0, z1, z2, q - 1) + 1 - q;
  return {begin, end};
}

/// Bytes of x equal to 0, as their high bits; exact (no borrow between bytes).
inline std::uint64_t zero_bytes(std::uint64_t x) noexcept {
  constexpr std::uint64_t kLows = 0x7F7F7F7F7F7F7F7Full;
  return ~(((x & kLows) + kLows) | x | kLows);
}

/// Mask of the low n bytes of a word, n ≤ 8.
inline std::uint64_t low_bytes(unsigned n) noexcept {
  return n >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * n)) - 1;
}

/// Slots of `span` whose remainder is r.
inline unsigned count_in(const std::byte* block, Span span, unsigned r) noexcept {
  unsigned found = 0;
  for (unsigned s = span.begin; s < span.end; ++s) found += remainder_at(block, s) == r ? 1 : 0;
  return found;
}

/// Where list q is, from its group's unary code: the slot of its first item and its length; ok()
/// is false when the group's code does not fit in the 64 bits read.
struct FastSpan {
  unsigned begin, length;
  /// Below 64 exactly when the code fit. Kept as the number, not a bool: a bool member compiled to
  /// a setbe, a spill to the stack and a test on the lookup's path, where the comparison is one
  /// compare-and-branch (present keys 2-5% faster single-key, blocked_bench, three rounds).
  unsigned fit;
  bool ok() const noexcept { return fit < 64; }
};

/// List q's span from loads whose addresses depend on q only (not on the line's contents), so
/// they all issue at once: the group's count byte and the pair of header words holding the
/// group's code (words 0, 1 for groups 0 and 1, words 1, 2 for group 2; group 1's code starts by
/// bit 63 unless group 0 holds more than 30 items).
template <Isa L>
[[gnu::always_inline]] inline FastSpan fast_span(const std::byte* block, unsigned q) noexcept {
  const unsigned group = group_of(q);
  const unsigned k = q - kGroupStride * group;  // list q is the k-th of its group
  const unsigned last = group >> 1;             // 1 for group 2
  const unsigned before = load_byte(block + kCountByte - 1 + group) & (0u - (group != 0 ? 1u : 0u));
  const std::uint64_t lo = load64(block + 8 * last), hi = load64(block + 8 + 8 * last);
  const unsigned shift = kGroupStride * group - 64 * last + before;  // ≤ 63 when it fits
  const unsigned s = shift & 63;
  const std::uint64_t code = (lo >> s) | ((hi << 1) << (63 - s));
  // Zeros of the code shifted up one, so that bit 0 stands for the zero ending list k − 1 (for
  // k = 0, the group's start). List q's ones lie between that word's zeros k and k + 1.
  const std::uint64_t bounds = two_bits<L>(~(code << 1), k);
  const unsigned low = trailing_zeros<L>(bounds);
  const unsigned high = trailing_zeros<L>(bounds & (bounds - 1));
  return {before + low - k, high - low - 1, high | shift};
}

#if CUCKOO_HAS_X86_VECTOR_PATHS
/// The line as two halves: bytes 0..31 and 32..63.
struct Line {
  __m256i lo, hi;
};
CUCKOO_POCKET_BMI_FN Line load_line(const std::byte* block) noexcept {
  return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block)),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32))};
}
CUCKOO_POCKET_BMI_FN void store_line(std::byte* block, const Line& line) noexcept {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(block), line.lo);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(block + 32), line.hi);
}
/// Bit s set where byte 21 + s of a line's byte masks is set: the slots' bits.
CUCKOO_POCKET_BMI_FN std::uint64_t slot_bits(__m256i lo, __m256i hi) noexcept {
  const auto mlo = static_cast<std::uint32_t>(_mm256_movemask_epi8(lo));
  const auto mhi = static_cast<std::uint32_t>(_mm256_movemask_epi8(hi));
  return ((std::uint64_t{mhi} << 32) | mlo) >> kFirstRemainderByte;
}

/// Bit s set where slot s holds remainder r (bits 43.. are header bytes; masked by the caller).
CUCKOO_POCKET_BMI_FN std::uint64_t equal_slots_avx2(const std::byte* block, unsigned r) noexcept {
  const __m256i needle = _mm256_set1_epi8(static_cast<char>(r));
  const Line line = load_line(block);
  return slot_bits(_mm256_cmpeq_epi8(line.lo, needle), _mm256_cmpeq_epi8(line.hi, needle));
}
CUCKOO_POCKET_AVX512_FN std::uint64_t equal_slots_avx512(const std::byte* block,
                                                         unsigned r) noexcept {
  return _mm512_cmpeq_epi8_mask(_mm512_loadu_si512(block),
                                _mm512_set1_epi8(static_cast<char>(r))) >>
         kFirstRemainderByte;
}
/// equal_slots at level L (a vector level).
template <Isa L>
[[gnu::always_inline]] inline std::uint64_t equal_slots(const std::byte* block,
                                                        unsigned r) noexcept {
  return L == Isa::kAvx512 ? equal_slots_avx512(block, r) : equal_slots_avx2(block, r);
}
/// Bit s set where slot s holds a remainder ≤ r (bits 43.. are header bytes; masked by the
/// caller).
CUCKOO_POCKET_BMI_FN std::uint64_t at_most_slots_avx2(const std::byte* block, unsigned r) noexcept {
  const __m256i needle = _mm256_set1_epi8(static_cast<char>(r));
  const Line line = load_line(block);
  // x ≤ r (unsigned) exactly when min(x, r) = x.
  return slot_bits(_mm256_cmpeq_epi8(_mm256_min_epu8(line.lo, needle), line.lo),
                   _mm256_cmpeq_epi8(_mm256_min_epu8(line.hi, needle), line.hi));
}
CUCKOO_POCKET_AVX512_FN std::uint64_t at_most_slots_avx512(const std::byte* block,
                                                           unsigned r) noexcept {
  return _mm512_cmple_epu8_mask(_mm512_loadu_si512(block),
                                _mm512_set1_epi8(static_cast<char>(r))) >>
         kFirstRemainderByte;
}
/// Bits [begin, begin + length) of `equal`, moved down to bit 0 (begin < 64 when the span is
/// ok; masked so that a span that is not stays defined).
CUCKOO_POCKET_BMI_FN std::uint64_t in_span(std::uint64_t equal, unsigned begin,
                                           unsigned length) noexcept {
  return _bzhi_u64(equal >> (begin & 63), length);
}
#endif

/// Where v may be in a block, from the fast path: bit i of `matches` (vector levels) or bit
/// 8i + 7 (portable) set where slot begin + i holds v's remainder within v's list; ok is false
/// when the fast path cannot tell (a group code that does not fit, or at the portable level a list
/// longer than the 8 bytes it reads), and the caller takes the exact path.
struct FastMatch {
  std::uint64_t matches;
  unsigned begin;
  bool ok;
};

template <Isa L>
[[gnu::always_inline]] inline FastMatch fast_match(const std::byte* block, unsigned v) noexcept {
  const unsigned q = list_of(v), r = remainder_of(v);
#if CUCKOO_HAS_X86_VECTOR_PATHS
  if constexpr (L != Isa::kPortable) {
    const std::uint64_t equal = equal_slots<L>(block, r);
    const FastSpan span = fast_span<L>(block, q);
    return {in_span(equal, span.begin, span.length), span.begin, span.ok()};
  }
#endif
  const FastSpan span = fast_span<L>(block, q);
  // 8 bytes from the list's first slot, read from at most byte 56 so as not to leave the line.
  const unsigned first = static_cast<unsigned>(kFirstRemainderByte) + span.begin;
  const unsigned at = first < kBlockBytes - 8 ? first : static_cast<unsigned>(kBlockBytes - 8);
  // An empty list after a full block's last item starts at byte 64: shift = 64, nothing to read.
  const unsigned shift = 8 * (first - at);
  const std::uint64_t word = shift < 64 ? load64(block + at) >> shift : 0;
  const std::uint64_t x = word ^ (r * 0x0101010101010101ull);
  return {zero_bytes(x) & low_bytes(span.length), span.begin, span.ok() && span.length <= 8};
}

/// The slot of the first match of a fast_match that found one.
template <Isa L>
[[gnu::always_inline]] inline unsigned first_match_slot(const FastMatch& m) noexcept {
  const unsigned bit = trailing_zeros<L>(m.matches);
  return m.begin + (L == Isa::kPortable ? bit / 8 : bit);
}

template <Isa L>
[[gnu::always_inline]] inline bool contains(const std::byte* block, unsigned v) noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS
  if constexpr (L != Isa::kPortable) {
    // Where no slot holds r (most absent values), the answer is no before the span is computed;
    // the essay at the top of this file has the arithmetic and the figures. Written out rather
    // than as a test before fast_match: its bool `ok` compiled back into a setbe and two tests
    // on the hit path (the disassembly).
    const unsigned r = remainder_of(v);
    const std::uint64_t equal = equal_slots<L>(block, r);
    if (equal == 0) return false;
    const FastSpan span = fast_span<L>(block, list_of(v));
    if (!span.ok()) [[unlikely]] {
      return count_in(block, list_span_wide(load_tail(block), list_of(v)), r) != 0;
    }
    return in_span(equal, span.begin, span.length) != 0;
  }
#endif
  const FastMatch m = fast_match<L>(block, v);
  if (!m.ok) [[unlikely]] {
    return count_in(block, list_span_wide(load_tail(block), list_of(v)), remainder_of(v)) != 0;
  }
  return m.matches != 0;
}

/// Copies of v in the block, from the fast path where it can tell (as remove<L> finds one), else
/// the exact one. Two selects over the whole header made a count cost 2.4x a lookup.
template <Isa L>
inline unsigned count(const std::byte* block, unsigned v) noexcept {
  const FastMatch m = fast_match<L>(block, v);
  if (!m.ok) [[unlikely]] {
    return count_in(block, list_span_wide(load_tail(block), list_of(v)), remainder_of(v));
  }
  return popcount_at<L>(m.matches);
}

template <Isa L = Isa::kPortable>
inline unsigned size(const std::byte* block) noexcept {
  return item_count<L>(load_tail(block));
}

/// The low n bits of a word, n ≤ 64, without a branch.
inline std::uint64_t low_bits(unsigned n) noexcept {
  return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
}

/// Of each of the three header words, the bits below header position p.
struct WordMasks {
  std::uint64_t w0, w1, w2;
};
inline WordMasks bits_below(unsigned p) noexcept {
  return {low_bits(p < 64 ? p : 64),
          low_bits(p < 64    ? 0
                   : p < 128 ? p - 64
                             : 64),
          low_bits(p < 128 ? 0 : p - 128)};
}

/// Header with the bit at position p removed (bits above it move down one). Without branches: a
/// fast erase runs it on a line just read, where a mispredicted branch would discard the next
/// keys' loads.
inline Tail erase_bit(Tail t, unsigned p) noexcept {
  const auto [keep0, keep1, keep2] = bits_below(p);
  const std::uint64_t down0 = (t.w0 >> 1) | (t.w1 << 63);
  const std::uint64_t down1 = (t.w1 >> 1) | (t.w2 << 63);
  const std::uint64_t down2 = t.w2 >> 1;
  t.w0 = (t.w0 & keep0) | (down0 & ~keep0);
  t.w1 = (t.w1 & keep1) | (down1 & ~keep1);
  t.w2 = (t.w2 & keep2) | (down2 & ~keep2);
  return t;
}

/// Header with a 1 inserted at position p (bits at p and above move up one; the header has room).
/// Without branches, as erase_bit.
inline Tail insert_one(Tail t, unsigned p) noexcept {
  const auto [keep0, keep1, keep2] = bits_below(p);
  const std::uint64_t up0 = t.w0 << 1;
  const std::uint64_t up1 = (t.w1 << 1) | (t.w0 >> 63);
  const std::uint64_t up2 = (t.w2 << 1) | (t.w1 >> 63);
  t.w0 = (t.w0 & keep0) | (up0 & ~keep0) | (p < 64 ? std::uint64_t{1} << p : 0);
  t.w1 = (t.w1 & keep1) | (up1 & ~keep1) | (p - 64 < 64 ? std::uint64_t{1} << (p - 64) : 0);
  t.w2 = ((t.w2 & keep2) | (up2 & ~keep2) | (p - 128 < 64 ? std::uint64_t{1} << (p - 128) : 0)) &
         0x7FFF;
  return t;
}

/// The remainders with slot s's removed: the ones above move down a slot and the last slot
/// becomes 0, as after a memmove (unused slots hold 0). Branch-free over the six words that hold
/// remainders; the header bytes in the lowest (16..20) lie below every slot and stay.
inline void erase_remainder(std::byte* block, unsigned slot) noexcept {
  constexpr unsigned kFirstWord = 2, kWords = kBlockBytes / 8;
  static_assert(8 * kFirstWord <= kFirstRemainderByte && kFirstRemainderByte < 8 * kFirstWord + 8);
  const unsigned at = static_cast<unsigned>(kFirstRemainderByte) + slot;  // byte to remove
  std::uint64_t words[kWords - kFirstWord + 1];
  for (unsigned k = 0; k < kWords - kFirstWord; ++k)
    words[k] = load64(block + 8 * (kFirstWord + k));
  words[kWords - kFirstWord] = 0;
  for (unsigned k = 0; k < kWords - kFirstWord; ++k) {
    const unsigned start = 8 * (kFirstWord + k);
    const unsigned below = at <= start ? 0 : at - start;  // bytes of this word below `at`
    const std::uint64_t keep = low_bytes(below);
    const std::uint64_t down = (words[k] >> 8) | (words[k + 1] << 56);
    store64(block + start, (words[k] & keep) | (down & ~keep));
  }
}

/// The remainders with r inserted at slot s: the ones from s up move up a slot (the last slot's,
/// 0 in a block with room, drops out). Branch-free, as erase_remainder.
inline void insert_remainder(std::byte* block, unsigned slot, unsigned r) noexcept {
  constexpr unsigned kFirstWord = 2, kWords = kBlockBytes / 8;
  const unsigned at = static_cast<unsigned>(kFirstRemainderByte) + slot;  // byte r goes to
  std::uint64_t words[kWords - kFirstWord];
  for (unsigned k = 0; k < kWords - kFirstWord; ++k)
    words[k] = load64(block + 8 * (kFirstWord + k));
  for (unsigned k = 0; k < kWords - kFirstWord; ++k) {
    const unsigned start = 8 * (kFirstWord + k);
    const unsigned below = at <= start ? 0 : at - start;  // bytes of this word below `at`
    const std::uint64_t keep = low_bytes(below);
    // Word 2's lowest byte would come from the header word below; `keep` covers it.
    const std::uint64_t up = (words[k] << 8) | (k == 0 ? 0 : words[k - 1] >> 56);
    store64(block + start, (words[k] & keep) | (up & ~keep));
  }
  block[at] = static_cast<std::byte>(r);
}

/// c1, c2 after an item of list q came (+1) or went (−1): the counts of the groups after q's.
inline void adjust_counts(Tail& t, unsigned q, int delta) noexcept {
  const unsigned group = group_of(q);
  for (unsigned g = 1; g < kGroups; ++g) {
    const int change = group < g ? delta : 0;
    t.counts[g - 1] = static_cast<unsigned>(static_cast<int>(t.counts[g - 1]) + change);
  }
}

#if CUCKOO_HAS_X86_VECTOR_PATHS
// The vector levels' edits: an item's insertion or removal as about 30 vector operations on the
// whole line, no branch and one pair of stores. A single-key erase runs them on a line it has just
// waited for, where every instruction after the load holds back the next keys' loads (see the top
// of this file): with the scalar edits below (about 130 instructions) a single-key erase took 3x
// a lookup; the remainders' shift alone cost 0.7x a lookup as six 64-bit words and nothing as two
// vector permutes.

/// The low half with each byte holding its own index in the line (add 32 for the high half).
CUCKOO_POCKET_BMI_FN __m256i byte_index_lo() noexcept {
  return _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                          21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
}
/// The header bits (0..142) of the low half, as 64-bit lanes.
CUCKOO_POCKET_BMI_FN __m256i header_mask() noexcept {
  return _mm256_setr_epi64x(-1, -1, 0x7FFF, 0);
}
/// Header position p as a bit position in each 64-bit lane of the low half: p − 64·lane (negative
/// for the lanes above p's).
CUCKOO_POCKET_BMI_FN __m256i position_in_lanes(unsigned p) noexcept {
  return _mm256_sub_epi64(_mm256_set1_epi64x(p), _mm256_setr_epi64x(0, 64, 128, 192));
}
/// Per 64-bit lane, the bits below a position_in_lanes n.
CUCKOO_POCKET_BMI_FN __m256i bits_below_in_lanes(__m256i n) noexcept {
  // ~(~0 << n) is the low n bits for 0 ≤ n (a count of 64 or more shifts to 0); a lane that
  // starts above the position (n < 0) keeps none.
  return _mm256_andnot_si256(_mm256_sllv_epi64(_mm256_set1_epi64x(-1), n),
                             _mm256_cmpgt_epi64(n, _mm256_setzero_si256()));
}
/// c1 and c2 (bytes 19 and 20) change by one for each group after q's: the bytes to add or
/// subtract, as a low half.
CUCKOO_POCKET_BMI_FN __m256i count_steps(unsigned q) noexcept {
  const unsigned group = group_of(q);
  return _mm256_setr_epi32(0, 0, 0, 0, static_cast<int>((group < 1 ? 1u : 0u) << 24),
                           static_cast<int>(group < 2 ? 1u : 0u), 0, 0);
}

/// Removes the item in `slot` of list q.
CUCKOO_POCKET_BMI_FN void remove_item_avx2(std::byte* block, unsigned q, unsigned slot) noexcept {
  const unsigned at = static_cast<unsigned>(kFirstRemainderByte) + slot;
  const Line line = load_line(block);
  // Remainders: byte j ≥ at takes byte j + 1; byte 63 takes 0.
  const __m256i mid = _mm256_permute2x128_si256(line.lo, line.hi, 0x21);  // bytes 16..47
  const __m256i top = _mm256_permute2x128_si256(line.hi, line.hi, 0x81);  // bytes 48..63, 0
  const __m256i down_lo = _mm256_alignr_epi8(mid, line.lo, 1);
  const __m256i down_hi = _mm256_alignr_epi8(top, line.hi, 1);
  const __m256i before = _mm256_set1_epi8(static_cast<char>(at - 1));
  const __m256i index = byte_index_lo();
  const __m256i moved_lo = _mm256_cmpgt_epi8(index, before);
  const __m256i moved_hi = _mm256_cmpgt_epi8(_mm256_add_epi8(index, _mm256_set1_epi8(32)), before);
  // Header: bit slot + q goes, the bits above it move down one.
  const __m256i mask = header_mask();
  const __m256i header = _mm256_and_si256(line.lo, mask);
  const __m256i next = _mm256_permute4x64_epi64(header, 0xF9);  // lanes 1, 2, 3, 3 (lane 3 is 0)
  const __m256i down = _mm256_or_si256(_mm256_srli_epi64(header, 1), _mm256_slli_epi64(next, 63));
  const __m256i keep = bits_below_in_lanes(position_in_lanes(slot + q));
  const __m256i new_header =
      _mm256_or_si256(_mm256_and_si256(header, keep), _mm256_andnot_si256(keep, down));
  const __m256i lo = _mm256_sub_epi8(
      _mm256_or_si256(_mm256_andnot_si256(mask, line.lo), new_header), count_steps(q));
  store_line(block, {_mm256_blendv_epi8(lo, down_lo, moved_lo),
                     _mm256_blendv_epi8(line.hi, down_hi, moved_hi)});
}

/// One half of a line with its bytes above `where` taken from `up` and byte `where` set to
/// `value`.
CUCKOO_POCKET_BMI_FN __m256i place_byte(__m256i half, __m256i up, __m256i index, __m256i where,
                                        __m256i value) noexcept {
  const __m256i moved = _mm256_blendv_epi8(half, up, _mm256_cmpgt_epi8(index, where));
  return _mm256_blendv_epi8(moved, value, _mm256_cmpeq_epi8(index, where));
}

/// Puts remainder r of list q into `slot` of a block with room.
CUCKOO_POCKET_BMI_FN void insert_item_avx2(std::byte* block, unsigned q, unsigned slot,
                                           unsigned r) noexcept {
  const unsigned at = static_cast<unsigned>(kFirstRemainderByte) + slot;
  const Line line = load_line(block);
  // Remainders: byte j > at takes byte j − 1, byte at takes r (byte 63, 0 in a block with room,
  // drops out).
  const __m256i below_lo = _mm256_permute2x128_si256(line.lo, line.lo, 0x08);  // 0, bytes 0..15
  const __m256i below_hi = _mm256_permute2x128_si256(line.hi, line.lo, 0x03);  // bytes 16..47
  const __m256i up_lo = _mm256_alignr_epi8(line.lo, below_lo, 15);
  const __m256i up_hi = _mm256_alignr_epi8(line.hi, below_hi, 15);
  const __m256i where = _mm256_set1_epi8(static_cast<char>(at));
  const __m256i index = byte_index_lo(), index_hi = _mm256_add_epi8(index, _mm256_set1_epi8(32));
  const __m256i value = _mm256_set1_epi8(static_cast<char>(r));
  // Header: a 1 at bit slot + q, the bits from there up one.
  const __m256i mask = header_mask();
  const __m256i header = _mm256_and_si256(line.lo, mask);
  const __m256i prev = _mm256_permute4x64_epi64(header, 0x93);  // lanes 3, 0, 1, 2 (lane 3 is 0)
  const __m256i up = _mm256_or_si256(_mm256_slli_epi64(header, 1), _mm256_srli_epi64(prev, 63));
  const __m256i position = position_in_lanes(slot + q);
  const __m256i keep = bits_below_in_lanes(position);
  // The new 1 (a count outside 0..63 shifts it out of the lane).
  const __m256i one = _mm256_sllv_epi64(_mm256_set1_epi64x(1), position);
  const __m256i new_header = _mm256_and_si256(
      _mm256_or_si256(
          _mm256_or_si256(_mm256_and_si256(header, keep), _mm256_andnot_si256(keep, up)), one),
      mask);
  const __m256i lo = _mm256_add_epi8(
      _mm256_or_si256(_mm256_andnot_si256(mask, line.lo), new_header), count_steps(q));
  store_line(block, {place_byte(lo, up_lo, index, where, value),
                     place_byte(line.hi, up_hi, index_hi, where, value)});
}
#endif

/// Puts remainder r of list q into `slot` of a block with room whose tail t was just loaded.
inline void insert_item(std::byte* block, Tail t, unsigned q, unsigned slot, unsigned r) noexcept {
  insert_remainder(block, slot, r);
  t = insert_one(t, slot + q);
  adjust_counts(t, q, +1);
  store_tail(block, t);
}

/// Where v goes in its sorted place: after the items of its list with remainders up to its own.
/// Exact for any block.
inline unsigned add_slot_exact(const std::byte* block, const Tail& t, unsigned v) noexcept {
  const unsigned r = remainder_of(v);
  const Span span = list_span_wide(t, list_of(v));
  unsigned slot = span.begin;
  while (slot < span.end && remainder_at(block, slot) <= r) ++slot;
  return slot;
}

/// The same from the vector levels' fast path (the list's span and one compare of the line), the
/// exact path when the group's code does not fit and at the portable level.
template <Isa L>
[[gnu::always_inline]] inline unsigned add_slot(const std::byte* block, const Tail& t,
                                                unsigned v) noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS
  if constexpr (L != Isa::kPortable) {
    const unsigned r = remainder_of(v);
    const std::uint64_t at_most =
        L == Isa::kAvx512 ? at_most_slots_avx512(block, r) : at_most_slots_avx2(block, r);
    const FastSpan span = fast_span<L>(block, list_of(v));
    if (span.ok()) [[likely]] {
      return span.begin + popcount_at<L>(in_span(at_most, span.begin, span.length));
    }
  }
#endif
  return add_slot_exact(block, t, v);
}

/// Adds v to a block with fewer than kSlots items (whose tail t was just loaded), in its sorted
/// place.
template <Isa L>
[[gnu::always_inline]] inline void add_loaded(std::byte* block, const Tail& t,
                                              unsigned v) noexcept {
  const unsigned slot = add_slot<L>(block, t, v);
#if CUCKOO_HAS_X86_VECTOR_PATHS
  if constexpr (L != Isa::kPortable) {
    insert_item_avx2(block, list_of(v), slot, remainder_of(v));
    return;
  }
#endif
  insert_item(block, t, list_of(v), slot, remainder_of(v));
}

/// Adds v to a block with fewer than kSlots items, in its sorted place.
template <Isa L>
inline void add(std::byte* block, unsigned v) noexcept {
  add_loaded<L>(block, load_tail(block), v);
}

/// Adds v if the block has room (one read of its header for the test and the change); false,
/// changing nothing, if it is full.
template <Isa L>
inline bool try_add(std::byte* block, unsigned v) noexcept {
  const Tail t = load_tail(block);
  if (item_count<L>(t) >= kSlots) return false;
  add_loaded<L>(block, t, v);
  return true;
}

/// Removes the item in `slot` (of list q) from a block whose tail t was just loaded.
inline void remove_item(std::byte* block, Tail t, unsigned q, unsigned slot) noexcept {
  erase_remainder(block, slot);
  t = erase_bit(t, slot + q);
  adjust_counts(t, q, -1);
  store_tail(block, t);
}

/// Removes one copy of v, finding it by the exact (slow) path; false if the block has none.
[[gnu::noinline]] inline bool remove_exact(std::byte* block, unsigned v) noexcept {
  const Tail t = load_tail(block);
  const unsigned q = list_of(v), r = remainder_of(v);
  const Span span = list_span_wide(t, q);
  for (unsigned slot = span.begin; slot < span.end; ++slot) {
    if (remainder_at(block, slot) != r) continue;
    remove_item(block, t, q, slot);
    return true;
  }
  return false;
}

/// Removes the item in `slot` of list q (a caller that knows where the item is: no search).
template <Isa L>
CUCKOO_HOT void remove_at(std::byte* block, unsigned q, unsigned slot) noexcept {
#if CUCKOO_HAS_X86_VECTOR_PATHS
  if constexpr (L != Isa::kPortable) {
    remove_item_avx2(block, q, slot);
    return;
  }
#endif
  remove_item(block, load_tail(block), q, slot);
}

/// Removes one copy of v; false, writing nothing, if the block has none. Finds it as contains<L>
/// does (the first of equal copies: the bytes after are the same whichever goes).
template <Isa L>
CUCKOO_HOT bool remove(std::byte* block, unsigned v) noexcept {
  const FastMatch m = fast_match<L>(block, v);
  if (!m.ok) [[unlikely]] {
    return remove_exact(block, v);
  }
  if (m.matches == 0) return false;
  remove_at<L>(block, list_of(v), first_match_slot<L>(m));
  return true;
}

/// The value in slot `slot` (< size): slots are sorted, so slot n − 1 − k is the k-th largest.
inline unsigned value_at(const std::byte* block, unsigned slot) noexcept {
  const Tail t = load_tail(block);
  const unsigned q = select_wide(t.w0, t.w1, t.w2, slot) - slot;
  return (q << kRemainderBits) | remainder_at(block, slot);
}

}  // namespace cuckoo::detail::pocket
