// cuckoo/amq/quotient_filter.hpp — the quotient filter (QF) of Bender, Farach-Colton, Johnson,
// Kraner, Kuszmaul, Medjedovic, Montes, Shetty, Spillane and Zadok ("Don't thrash: how to cache
// your hash on flash", PVLDB 2012), configured as in the paper's evaluation (§7: 3 metadata bits
// and a 9-bit remainder per slot, at most 90% full).
//
// Layout. m slots of 3 + r bits, packed end to end and read or written with one unaligned 64-bit
// access each (8 bytes of padding follow the last slot). A slot's low 3 bits are its metadata:
//   occupied      — some stored key has this slot as its home ("canonical") slot; the bit belongs
//                   to the slot, not to the remainder stored in it;
//   continuation  — the remainder here belongs to the same run as the one in the slot before;
//   shifted       — the remainder here is not in its home slot.
// Keys with the same home slot form a run, kept sorted by remainder; runs are stored in home-slot
// order, each starting at or after its home slot, and a maximal sequence of runs with no empty
// slot between them is a cluster. The table is circular: runs and clusters wrap at the end.
//
// Hashing. One XXH3-64 hash per key: the home slot is its high 32 bits range-reduced into [0, m)
// by multiply-shift ((hi·m) >> 32; m ≤ 2^32, no power of two needed), the remainder is its low r
// bits (r ≤ 32), which the home slot never reads. (With m a power of two this is the paper's
// quotienting of a (q + r)-bit fingerprint; the filter never reconstructs fingerprints, so it does
// not need that.)
//
// Operations (after the paper's pseudo-code and its reference implementation's structure). Lookup
// walks back from the home slot to the start of its cluster, then forward run by run, counting
// occupied slots, to the start of its own run, and scans the run. Insert finds the position in the
// run (keeping it sorted) and shifts everything from there to the next empty slot one place right,
// updating the shifted/continuation bits; duplicates are stored as separate copies, so erase
// removes exactly one. Erase shifts the rest of the cluster one place left, clearing shifted bits
// of run starts that return to their home slot. A cluster's length grows quickly with the load,
// which is why the paper caps the load at 90% (§7); insert returns false, changing nothing, once
// the filter holds ⌊0.9·m⌋ items. Every operation's cost is the length of a cluster: no
// allocation, no division.
//
// False positives. A query matches only a stored key with its home slot and its remainder, so
//
//     ε = 1 − (1 − 1/(m·2^r))^n  ≈  α·2^(−r),        α = n/m ≤ 0.9;
//
// sizing for (n, ε) takes m = ⌈n/0.9⌉ and r = ⌈log2(0.9/ε)⌉. check_invariants() decodes the whole
// table (O(m)) and reports the first broken rule; the tests call it after every operation.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cuckoo/amq/common.hpp"
#include "cuckoo/config.hpp"
#include "cuckoo/detail/aligned_buffer.hpp"
#include "cuckoo/detail/endian.hpp"

namespace cuckoo::amq {

/// insert, contains (one key or a batch), erase and seed() come from detail::KeyForwarding.
class QuotientFilter : public detail::KeyForwarding<QuotientFilter> {
 public:
  static constexpr unsigned kMetadataBits = 3;
  static constexpr unsigned kMaxRemainderBits = 32;
  /// The paper's slots: 3 + 9 = 12 bits (§7.1).
  static constexpr unsigned kPaperRemainderBits = 9;
  /// Maximum load, in tenths: ⌊9m/10⌋ items.
  static constexpr unsigned kMaxLoadTenths = 9;

  /// `slot_count` slots (2..2^32) of `remainder_bits` (1..32) plus 3 metadata bits each.
  QuotientFilter(std::uint64_t slot_count, unsigned remainder_bits,
                 std::uint64_t seed = defaults::kSeed)
      : KeyForwarding(seed),
        table_(checked_storage(slot_count, remainder_bits)),
        slot_count_(slot_count),
        remainder_bits_(remainder_bits),
        slot_bits_(remainder_bits + kMetadataBits),
        slot_mask_((std::uint64_t{1} << slot_bits_) - 1),
        remainder_mask_((std::uint64_t{1} << remainder_bits) - 1),
        max_items_(slot_count * kMaxLoadTenths / 10) {}

  /// m = ⌈n / 0.9⌉ slots, r = ⌈log2(0.9 / ε)⌉ bits.
  static QuotientFilter with_capacity(std::size_t capacity, double target_fpr,
                                      std::uint64_t seed = defaults::kSeed) {
    detail::check_capacity("QuotientFilter", capacity);
    detail::check_fpr("QuotientFilter", target_fpr);
    const std::uint64_t slots =
        (std::uint64_t{capacity} * 10 + kMaxLoadTenths - 1) / kMaxLoadTenths;
    const double bits = std::ceil(std::log2(0.1 * kMaxLoadTenths / target_fpr) - 1e-9);
    if (bits > kMaxRemainderBits) {
      detail::invalid("QuotientFilter", "target_fpr " + std::to_string(target_fpr) + " needs " +
                                            std::to_string(static_cast<int>(bits)) +
                                            "-bit remainders; at most " +
                                            std::to_string(kMaxRemainderBits) + " are supported");
    }
    return QuotientFilter(slots < 2 ? 2 : slots, bits < 1 ? 1u : static_cast<unsigned>(bits), seed);
  }

  /// The paper's 12-bit slots (r = 9), as many as fit in `bytes`. `capacity` is not needed to size
  /// this design; capacity() reports ⌊0.9·m⌋, the most it accepts.
  static QuotientFilter with_memory(std::size_t bytes, std::size_t capacity,
                                    std::uint64_t seed = defaults::kSeed) {
    detail::check_capacity("QuotientFilter", capacity);
    const std::size_t usable = detail::whole_cache_lines(bytes);
    const std::uint64_t bits = usable < kPadding ? 0 : std::uint64_t{usable - kPadding} * 8;
    std::uint64_t slots = bits / (kPaperRemainderBits + kMetadataBits);
    if (slots > (std::uint64_t{1} << 32)) slots = std::uint64_t{1} << 32;
    if (slots < 2) {
      detail::invalid("QuotientFilter", "a budget of " + std::to_string(bytes) +
                                            " bytes is too small; the minimum is 64");
    }
    return QuotientFilter(slots, kPaperRemainderBits, seed);
  }

  /// Adds one copy; false, with nothing changed, once the filter holds ⌊0.9·m⌋ items.
  bool insert_hash(std::uint64_t hash) noexcept {
    if (size_ >= max_items_) return false;
    const std::uint64_t quotient = home(hash);
    const std::uint64_t remainder = hash & remainder_mask_;
    const std::uint64_t home_slot = get(quotient);
    std::uint64_t entry = remainder << kMetadataBits;
    if (is_empty(home_slot)) {
      set(quotient, entry | kOccupied);
      ++size_;
      return true;
    }
    const bool run_exists = (home_slot & kOccupied) != 0;
    if (!run_exists) set(quotient, home_slot | kOccupied);
    const std::uint64_t start = run_start(quotient);
    std::uint64_t slot = start;
    if (run_exists) {
      do {  // the first remainder greater than ours, or the end of the run
        if ((get(slot) >> kMetadataBits) > remainder) break;
        slot = next(slot);
      } while ((get(slot) & kContinuation) != 0);
      if (slot == start) {
        set(start, get(start) | kContinuation);  // the old head follows the new one
      } else {
        entry |= kContinuation;
      }
    }
    if (slot != quotient) entry |= kShifted;
    shift_in(slot, entry);
    ++size_;
    return true;
  }

  bool contains_hash(std::uint64_t hash) const noexcept {
    const std::uint64_t quotient = home(hash);
    const std::uint64_t remainder = hash & remainder_mask_;
    if ((get(quotient) & kOccupied) == 0) return false;
    std::uint64_t slot = run_start(quotient);
    do {
      const std::uint64_t stored = get(slot) >> kMetadataBits;
      if (stored >= remainder) return stored == remainder;  // runs are sorted
      slot = next(slot);
    } while ((get(slot) & kContinuation) != 0);
    return false;
  }

  /// Removes one copy of the key's (home slot, remainder); false if there is none. Only erase
  /// what you inserted.
  bool erase_hash(std::uint64_t hash) noexcept {
    const std::uint64_t quotient = home(hash);
    const std::uint64_t remainder = hash & remainder_mask_;
    std::uint64_t home_slot = get(quotient);
    if ((home_slot & kOccupied) == 0) return false;
    std::uint64_t slot = run_start(quotient);
    for (;;) {
      const std::uint64_t stored = get(slot) >> kMetadataBits;
      if (stored == remainder) break;
      if (stored > remainder) return false;
      slot = next(slot);
      if ((get(slot) & kContinuation) == 0) return false;
    }
    const std::uint64_t victim = get(slot);
    const bool was_run_start = is_run_start(victim);
    if (was_run_start && (get(next(slot)) & kContinuation) == 0) {
      home_slot &= ~kOccupied;  // the run held only this remainder: the quotient has no run now
      set(quotient, home_slot);
    }
    shift_out(slot, quotient);
    if (was_run_start) {
      // The element now in `slot` (if it was the run's second) is the run's new head.
      const std::uint64_t moved = get(slot);
      std::uint64_t head = moved;
      if ((head & kContinuation) != 0) head &= ~kContinuation;
      if (slot == quotient && is_run_start(head)) head &= ~kShifted;
      if (head != moved) set(slot, head);
    }
    --size_;
    return true;
  }

  /// Items stored (copies counted).
  std::size_t size() const noexcept { return size_; }
  /// ⌊0.9·m⌋: inserts beyond it return false.
  std::size_t capacity() const noexcept { return static_cast<std::size_t>(max_items_); }
  std::size_t memory_bytes() const noexcept { return table_.size(); }
  std::uint64_t slot_count() const noexcept { return slot_count_; }
  unsigned remainder_bits() const noexcept { return remainder_bits_; }
  double load_factor() const noexcept {
    return static_cast<double>(size_) / static_cast<double>(slot_count_);
  }
  /// ε = 1 − (1 − 1/(m·2^r))^n at the current size.
  double expected_fpr() const noexcept {
    const double cells =
        static_cast<double>(slot_count_) * std::ldexp(1.0, static_cast<int>(remainder_bits_));
    return -std::expm1(static_cast<double>(size_) * std::log1p(-1.0 / cells));
  }

  /// Decodes the whole table and returns the first broken invariant, or "" if there is none:
  /// empty slots hold no bits; every run start pairs, in cluster order, with an occupied home slot
  /// at or before it; continuations follow a run; runs are sorted; a slot is marked shifted
  /// exactly when its remainder is not in its home slot; the slots hold size() remainders.
  /// O(m) and allocating: a test and debugging aid, not for hot paths.
  std::string check_invariants() const {
    const auto at = [](std::uint64_t slot) { return " at slot " + std::to_string(slot); };
    std::uint64_t empty = slot_count_;
    for (std::uint64_t i = 0; i < slot_count_ && empty == slot_count_; ++i) {
      if (is_empty(get(i))) empty = i;
    }
    if (empty == slot_count_) return "no empty slot";
    std::vector<std::uint64_t> pending;  // occupied home slots whose runs have not started yet
    std::size_t next_pending = 0;
    bool in_run = false;
    std::uint64_t run_quotient = 0;
    std::uint64_t previous = 0;
    std::uint64_t stored = 0;
    std::uint64_t i = empty;
    for (std::uint64_t step = 0; step < slot_count_; ++step) {
      i = next(i);
      const std::uint64_t slot = get(i);
      if (is_empty(slot)) {
        if (slot != 0) return "remainder bits in an empty slot" + at(i);
        if (next_pending != pending.size()) {
          return "occupied slot " + std::to_string(pending[next_pending]) +
                 " has no run before the empty slot" + at(i);
        }
        in_run = false;
        continue;
      }
      if ((slot & kOccupied) != 0) pending.push_back(i);
      const std::uint64_t remainder = slot >> kMetadataBits;
      if ((slot & kContinuation) == 0) {
        if (next_pending == pending.size())
          return "a run starts with no occupied home slot" + at(i);
        run_quotient = pending[next_pending++];
        in_run = true;
      } else {
        if (!in_run) return "a continuation follows no run" + at(i);
        if (remainder < previous) return "a run is not sorted" + at(i);
      }
      previous = remainder;
      if (((slot & kShifted) != 0) != (i != run_quotient)) {
        return "wrong shifted bit (home slot " + std::to_string(run_quotient) + ")" + at(i);
      }
      ++stored;
    }
    if (stored != size_) {
      return "the table holds " + std::to_string(stored) + " remainders, size() is " +
             std::to_string(size_);
    }
    return "";
  }

 private:
  friend KeyForwarding;

  static constexpr std::uint64_t kOccupied = 1;
  static constexpr std::uint64_t kContinuation = 2;
  static constexpr std::uint64_t kShifted = 4;
  static constexpr std::size_t kPadding = 8;

  static bool is_empty(std::uint64_t slot) noexcept { return (slot & 7) == 0; }
  static bool is_run_start(std::uint64_t slot) noexcept {
    return (slot & kContinuation) == 0 && (slot & (kOccupied | kShifted)) != 0;
  }
  static bool is_cluster_start(std::uint64_t slot) noexcept { return (slot & 7) == kOccupied; }

  std::uint64_t home(std::uint64_t hash) const noexcept {
    return ((hash >> 32) * slot_count_) >> 32;
  }
  std::uint64_t next(std::uint64_t slot) const noexcept {
    return slot + 1 == slot_count_ ? 0 : slot + 1;
  }
  std::uint64_t prev(std::uint64_t slot) const noexcept {
    return slot == 0 ? slot_count_ - 1 : slot - 1;
  }

  /// Batch lookups prefetch the next keys' home slots.
  CUCKOO_HOT void prefetch_hash(std::uint64_t hash) const noexcept {
    detail::prefetch(slot_address(home(hash)));
  }

  const std::byte* slot_address(std::uint64_t slot) const noexcept {
    return table_.data() + ((slot * slot_bits_) >> 3);
  }
  std::uint64_t get(std::uint64_t slot) const noexcept {
    const std::uint64_t bit = slot * slot_bits_;
    std::uint64_t word;
    std::memcpy(&word, table_.data() + (bit >> 3), sizeof word);
    return cuckoo::detail::little_endian(word) >> (bit & 7) & slot_mask_;
  }
  void set(std::uint64_t slot, std::uint64_t value) noexcept {
    const std::uint64_t bit = slot * slot_bits_;
    std::byte* const address = table_.data() + (bit >> 3);
    std::uint64_t word;
    std::memcpy(&word, address, sizeof word);
    word = cuckoo::detail::little_endian(word);
    word = (word & ~(slot_mask_ << (bit & 7))) | value << (bit & 7);
    word = cuckoo::detail::little_endian(word);
    std::memcpy(address, &word, sizeof word);
  }

  /// The slot where the run of `quotient` starts (or would start): back to the cluster's start,
  /// then forward one run per occupied home slot until `quotient` is reached.
  std::uint64_t run_start(std::uint64_t quotient) const noexcept {
    std::uint64_t home_slot = quotient;
    while ((get(home_slot) & kShifted) != 0) home_slot = prev(home_slot);
    std::uint64_t run = home_slot;
    while (home_slot != quotient) {
      do run = next(run);
      while ((get(run) & kContinuation) != 0);
      do home_slot = next(home_slot);
      while ((get(home_slot) & kOccupied) == 0);
    }
    return run;
  }

  /// Puts `entry` at `slot` and shifts everything up to the next empty slot one place right. The
  /// occupied bits stay with their slots; everything moved is marked shifted.
  void shift_in(std::uint64_t slot, std::uint64_t entry) noexcept {
    std::uint64_t carried = entry;
    for (;;) {
      std::uint64_t displaced = get(slot);
      const bool was_empty = is_empty(displaced);
      if (!was_empty) {
        displaced |= kShifted;
        if ((displaced & kOccupied) != 0) {
          carried |= kOccupied;
          displaced &= ~kOccupied;
        }
      }
      set(slot, carried);
      if (was_empty) return;
      carried = displaced;
      slot = next(slot);
    }
  }

  /// Removes the remainder at `slot` (whose home is `quotient`) and shifts the rest of the cluster
  /// one place left, keeping each slot's occupied bit and clearing the shifted bit of a run start
  /// that lands in its home slot.
  void shift_out(std::uint64_t slot, std::uint64_t quotient) noexcept {
    const std::uint64_t origin = slot;
    std::uint64_t current = get(slot);
    for (std::uint64_t following = next(slot);; following = next(following)) {
      const std::uint64_t moving = get(following);
      const std::uint64_t occupied = current & kOccupied;
      // The load cap leaves an empty slot, so the walk ends before coming round to `origin`.
      if (is_empty(moving) || is_cluster_start(moving) || following == origin) {
        set(slot, occupied);
        return;
      }
      std::uint64_t moved = moving;
      if (is_run_start(moving)) {
        do quotient = next(quotient);
        while ((get(quotient) & kOccupied) == 0);
        if (occupied != 0 && quotient == slot) moved &= ~kShifted;
      }
      set(slot, (moved & ~kOccupied) | occupied);
      slot = following;
      current = moving;
    }
  }

  static std::size_t checked_storage(std::uint64_t slot_count, unsigned remainder_bits) {
    if (slot_count < 2 || slot_count > (std::uint64_t{1} << 32)) {
      detail::invalid("QuotientFilter",
                      "slot_count must be in 2..2^32, got " + std::to_string(slot_count));
    }
    if (remainder_bits == 0 || remainder_bits > kMaxRemainderBits) {
      detail::invalid("QuotientFilter", "remainder_bits must be in 1.." +
                                            std::to_string(kMaxRemainderBits) + ", got " +
                                            std::to_string(remainder_bits));
    }
    const std::uint64_t bytes = (slot_count * (remainder_bits + kMetadataBits) + 7) / 8 + kPadding;
    return static_cast<std::size_t>((bytes + 63) / 64 * 64);
  }

  cuckoo::detail::AlignedBuffer table_;
  std::uint64_t slot_count_;
  unsigned remainder_bits_;
  unsigned slot_bits_;
  std::uint64_t slot_mask_;
  std::uint64_t remainder_mask_;
  std::uint64_t max_items_;
  std::size_t size_ = 0;
};

}  // namespace cuckoo::amq
