// tests/support/op_sequence.hpp — bytes read as a structure and a sequence of operations on it,
// checked against an exact model after every step. Shared by the operations fuzz target
// (tests/fuzz/fuzz_ops.cpp), which aborts on a failure, and its replay in the unit tests
// (tests/unit/test_op_sequences.cpp), which also runs inputs drawn from a fixed seed.
//
// The first bytes choose the structure: a Filter (plain b = 2, 4, 8 and any f; semi-sorted;
// blocked; growable), a ConcurrentFilter or an ApproximateMap<uint16_t>, with a small capacity and
// max_kicks so that full tables, kick walks, refused inserts and doublings are all reached from
// short inputs. Each later byte is an operation on keys from a small space (so that duplicates are
// common); ids from kFirstStringId up are passed as strings. The model is a multiset of the keys
// (pairs for the map) whose inserts returned true. The checks are what the library promises:
//   - no false negatives: every key of the model is found (single and batch), counted at least as
//     often as it was stored, and, for the map, found with every value stored with it;
//   - a refused insert changes nothing (the serialized bytes are the same before and after);
//   - erase of a stored key succeeds (keys are erased only while stored: erasing a key never
//     inserted may take another key's entry, as the README says);
//   - a batch insert stores a prefix of its keys and the batch erase removes each stored key;
//   - size() is the model's size; a save and load gives the same bytes and the same answers, and so
//     does a conversion between Filter and ConcurrentFilter, both ways.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuckoo/cuckoo.hpp"

namespace cuckoo::test {

/// Reads the input byte by byte; past its end every read gives 0 and done() is true.
class OpReader {
 public:
  explicit OpReader(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}
  std::uint8_t next() noexcept { return at_ < bytes_.size() ? bytes_[at_++] : 0; }
  bool done() const noexcept { return at_ >= bytes_.size(); }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

inline constexpr unsigned kKeyIds = 64;         // a small key space: duplicates are common
inline constexpr unsigned kFirstStringId = 48;  // ids from here on are passed as strings
inline constexpr std::size_t kMaxBatch = 24;

/// What failed, or empty: thrown inside and caught by run_op_sequence.
struct OpFailure {
  std::string what;
};
[[noreturn]] inline void op_fail(const std::string& what) {
  throw OpFailure{what};
}

inline std::string key_string(unsigned id) {
  return "key-" + std::to_string(id);
}

/// Calls fn(key) with id's key: an integer, or a string from kFirstStringId on.
template <class Fn>
decltype(auto) with_key(unsigned id, Fn&& fn) {
  if (id >= kFirstStringId) return fn(std::string_view(key_string(id)));
  return fn(std::uint64_t{id});
}

/// The loop both structures' checks share: each byte an operation, its arguments the bytes after
/// it. Ops provides insert_one, erase_one, insert_batch, erase_batch (each reading its own
/// arguments), check(when) and reload().
template <class Ops>
void run_operations(Ops& ops, OpReader& in) {
  for (std::size_t done = 0; !in.done(); ++done) {
    switch (in.next() % 8) {
      case 0:
      case 1:
      case 2:
        ops.insert_one(in);
        break;
      case 3:
        ops.erase_one(in);
        break;
      case 4:
        ops.insert_batch(in);
        break;
      case 5:
        ops.erase_batch(in);
        break;
      case 6:
        ops.check("after op " + std::to_string(done));
        break;
      case 7:
        ops.reload();
        break;
    }
  }
  ops.check("at the end");
  ops.reload();
  ops.check("after the final reload");
}

/// The filter checks, for Filter and ConcurrentFilter alike.
template <class F>
class FilterOps {
 public:
  explicit FilterOps(F filter) : filter_(std::move(filter)) {}

  void run(OpReader& in) { run_operations(*this, in); }

 private:
  template <class Ops>
  friend void run_operations(Ops& ops, OpReader& in);
  void insert_one(OpReader& in) {
    const unsigned id = in.next() % kKeyIds;
    const std::vector<std::byte> before = filter_.serialize();
    const bool stored = with_key(id, [&](auto key) { return filter_.insert(key); });
    if (stored) {
      ++model_[id];
      ++size_;
    } else if (filter_.serialize() != before) {
      op_fail("a refused insert of key " + std::to_string(id) + " changed the filter");
    }
    expect_size("insert");
  }
  /// Erases a stored key chosen by the next byte (nothing when none is stored).
  void erase_one(OpReader& in) {
    const std::uint8_t pick = in.next();
    if (model_.empty()) return;
    auto it = std::next(model_.begin(), static_cast<std::ptrdiff_t>(pick % model_.size()));
    const unsigned id = it->first;
    if (!with_key(id, [&](auto key) { return filter_.erase(key); })) {
      op_fail("erase of stored key " + std::to_string(id) + " found nothing");
    }
    if (--it->second == 0) model_.erase(it);
    --size_;
    expect_size("erase");
  }
  void insert_batch(OpReader& in) {
    const std::size_t n = in.next() % kMaxBatch;
    std::vector<std::uint64_t> keys(n);
    for (auto& key : keys) key = in.next() % kFirstStringId;
    const std::vector<std::byte> before = filter_.serialize();
    const std::size_t stored = filter_.insert(std::span<const std::uint64_t>(keys));
    if (stored > n) op_fail("a batch insert reported more keys than it was given");
    for (std::size_t i = 0; i < stored; ++i) ++model_[static_cast<unsigned>(keys[i])];
    size_ += stored;
    if (stored == 0 && n > 0 && filter_.serialize() != before) {
      op_fail("a batch insert that stored nothing changed the filter");
    }
    expect_size("batch insert");
  }
  /// Erases up to (next byte) % kMaxBatch stored integer keys as one batch, copies included.
  void erase_batch(OpReader& in) {
    const std::uint8_t pick = in.next();
    std::vector<std::uint64_t> keys;
    for (const auto& [id, copies] : model_) {
      if (id >= kFirstStringId) continue;
      for (std::size_t c = 0; c < copies && keys.size() < pick % kMaxBatch; ++c) keys.push_back(id);
    }
    std::reverse(keys.begin(), keys.end());  // not in key order
    const std::size_t removed = filter_.erase(std::span<const std::uint64_t>(keys));
    if (removed != keys.size()) {
      op_fail("a batch erase of " + std::to_string(keys.size()) + " stored keys removed " +
              std::to_string(removed));
    }
    for (const std::uint64_t key : keys) {
      if (--model_[static_cast<unsigned>(key)] == 0) model_.erase(static_cast<unsigned>(key));
    }
    size_ -= removed;
    expect_size("batch erase");
  }
  void check(const std::string& when) const { check(filter_, when); }
  void check(const F& filter, const std::string& when) const {
    std::vector<std::uint64_t> ints;
    for (const auto& [id, copies] : model_) {
      const bool found = with_key(id, [&](auto key) { return filter.contains(key); });
      const std::size_t counted = with_key(id, [&](auto key) { return filter.count(key); });
      if (!found || counted < copies) {
        op_fail("key " + std::to_string(id) + " (stored " + std::to_string(copies) +
                " times) is lost " + when + ": contains " + std::to_string(found) + ", count " +
                std::to_string(counted));
      }
      if (id < kFirstStringId) ints.push_back(id);
    }
    const std::unique_ptr<bool[]> found(new bool[ints.size()]);
    const std::span<bool> out(found.get(), ints.size());
    filter.contains(std::span<const std::uint64_t>(ints), out);
    std::vector<std::size_t> counts(ints.size());
    filter.count(std::span<const std::uint64_t>(ints), std::span<std::size_t>(counts));
    for (std::size_t i = 0; i < ints.size(); ++i) {
      if (!out[i] || counts[i] < model_.at(static_cast<unsigned>(ints[i]))) {
        op_fail("the batch lookup lost key " + std::to_string(ints[i]) + " " + when);
      }
    }
    if (filter.size() != size_) {
      op_fail("size() is " + std::to_string(filter.size()) + ", the model holds " +
              std::to_string(size_) + " " + when);
    }
  }
  /// A save and load; and the conversion between Filter and ConcurrentFilter both ways, which
  /// must also give the same bytes, where the filter is one that ConcurrentFilter holds.
  void reload() {
    const std::vector<std::byte> bytes = filter_.serialize();
    F again = F::deserialize(bytes);
    if (again.serialize() != bytes) op_fail("a reloaded filter serializes differently");
    check(again, "after a reload");
    if constexpr (std::is_same_v<F, ConcurrentFilter>) {
      if (ConcurrentFilter(filter_.to_filter()).serialize() != bytes) {
        op_fail("a ConcurrentFilter converted to a Filter and back serializes differently");
      }
    } else if (!filter_.semi_sorted() && !filter_.growable() && !filter_.blocked()) {
      if (ConcurrentFilter(filter_).to_filter().serialize() != bytes) {
        op_fail("a Filter converted to a ConcurrentFilter and back serializes differently");
      }
    }
    filter_ = std::move(again);
  }
  void expect_size(const char* after) const {
    if (filter_.size() != size_) {
      op_fail(std::string("size() is ") + std::to_string(filter_.size()) + " after " + after +
              ", the model holds " + std::to_string(size_));
    }
  }

  F filter_;
  std::map<unsigned, std::size_t> model_;  // key id -> copies stored
  std::size_t size_ = 0;
};

/// The map checks: pairs instead of keys, values of 16 bits (so equal pairs recur).
class MapOps {
 public:
  using Map = cuckoo::ApproximateMap<std::uint16_t>;
  explicit MapOps(Map map) : map_(std::move(map)) {}

  void run(OpReader& in) { run_operations(*this, in); }

 private:
  template <class Ops>
  friend void run_operations(Ops& ops, OpReader& in);
  using Pair = std::pair<unsigned, std::uint16_t>;

  void insert_one(OpReader& in) {
    const unsigned id = in.next() % kKeyIds;
    const auto value = static_cast<std::uint16_t>(in.next() % 4);
    const std::vector<std::byte> before = map_.serialize();
    if (with_key(id, [&](auto key) { return map_.insert(key, value); })) {
      ++model_[{id, value}];
      ++size_;
    } else if (map_.serialize() != before) {
      op_fail("a refused insert of pair (" + std::to_string(id) + ", " + std::to_string(value) +
              ") changed the map");
    }
  }
  void erase_one(OpReader& in) {
    const std::uint8_t pick = in.next();
    if (model_.empty()) return;
    auto it = std::next(model_.begin(), static_cast<std::ptrdiff_t>(pick % model_.size()));
    const unsigned id = it->first.first;  // not a structured binding: the lambda uses them
    const std::uint16_t value = it->first.second;
    if (!with_key(id, [&](auto key) { return map_.erase(key, value); })) {
      op_fail("erase of stored pair (" + std::to_string(id) + ", " + std::to_string(value) +
              ") found nothing");
    }
    if (--it->second == 0) model_.erase(it);
    --size_;
  }
  void insert_batch(OpReader& in) {
    const std::size_t n = in.next() % kMaxBatch;
    std::vector<std::uint64_t> keys(n);
    std::vector<std::uint16_t> values(n);
    for (std::size_t i = 0; i < n; ++i) {
      keys[i] = in.next() % kFirstStringId;
      values[i] = static_cast<std::uint16_t>(in.next() % 4);
    }
    const std::size_t stored =
        map_.insert(std::span<const std::uint64_t>(keys), std::span<const std::uint16_t>(values));
    if (stored > n) op_fail("a batch insert reported more pairs than it was given");
    for (std::size_t i = 0; i < stored; ++i) ++model_[{static_cast<unsigned>(keys[i]), values[i]}];
    size_ += stored;
  }
  void erase_batch(OpReader& in) {
    const std::uint8_t pick = in.next();
    std::vector<std::uint64_t> keys;
    std::vector<std::uint16_t> values;
    for (const auto& [pair, copies] : model_) {
      if (pair.first >= kFirstStringId) continue;
      for (std::size_t c = 0; c < copies && keys.size() < pick % kMaxBatch; ++c) {
        keys.push_back(pair.first);
        values.push_back(pair.second);
      }
    }
    const std::size_t removed =
        map_.erase(std::span<const std::uint64_t>(keys), std::span<const std::uint16_t>(values));
    if (removed != keys.size()) {
      op_fail("a batch erase of " + std::to_string(keys.size()) + " stored pairs removed " +
              std::to_string(removed));
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const Pair pair{static_cast<unsigned>(keys[i]), values[i]};
      if (--model_[pair] == 0) model_.erase(pair);
    }
    size_ -= removed;
  }
  void check(const std::string& when) const { check(map_, when); }
  void check(const Map& map, const std::string& when) const {
    std::map<unsigned, std::vector<std::uint16_t>> stored;
    for (const auto& [pair, copies] : model_) {
      for (std::size_t c = 0; c < copies; ++c) stored[pair.first].push_back(pair.second);
    }
    for (auto& [id, values] : stored) {
      std::vector<std::uint16_t> found = with_key(id, [&](auto key) { return map.find(key); });
      std::sort(found.begin(), found.end());
      std::sort(values.begin(), values.end());
      // Every stored value, as often as it was stored (false matches may add more).
      if (!std::includes(found.begin(), found.end(), values.begin(), values.end())) {
        op_fail("key " + std::to_string(id) + " lost a value " + when);
      }
      if (!with_key(id, [&](auto key) { return map.contains(key); })) {
        op_fail("key " + std::to_string(id) + " is not contained " + when);
      }
    }
    if (map.size() != size_) {
      op_fail("size() is " + std::to_string(map.size()) + ", the model holds " +
              std::to_string(size_) + " " + when);
    }
  }
  void reload() {
    const std::vector<std::byte> bytes = map_.serialize();
    Map again = Map::deserialize(bytes);
    if (again.serialize() != bytes) op_fail("a reloaded map serializes differently");
    check(again, "after a reload");
    map_ = std::move(again);
  }

  Map map_;
  std::map<Pair, std::size_t> model_;
  std::size_t size_ = 0;
};

/// The structure the first bytes choose, always a valid Config.
inline Config op_config(OpReader& in, unsigned kind) {
  Config cfg;
  constexpr unsigned kBucketSizes[] = {2, 4, 8};
  cfg.bucket_size = kBucketSizes[in.next() % 3];
  const std::uint8_t width = in.next();
  cfg.fingerprint_bits = 2 + width % 31;  // 2..32
  cfg.capacity = 1 + in.next() % 160;
  cfg.max_kicks = in.next() % 4 * 30;  // 0 (the two buckets only) to 90
  cfg.seed = 0x243F6A8885A308D3ull + in.next();
  switch (kind) {
    case 1:  // semi-sorted: b = 4, f 4..32
      cfg.semi_sort = true;
      cfg.bucket_size = 4;
      cfg.fingerprint_bits = 4 + width % 29;
      break;
    case 2:  // blocked: its own widths
      cfg.blocked = true;
      cfg.fingerprint_bits = 0;
      cfg.target_fpr = 0.01;
      break;
    case 3:  // growable: base width 11..30, or from the rate; starts tiny and doubles often
      cfg.growable = true;
      cfg.fingerprint_bits = width % 2 == 0 ? 0 : 11 + width % 20;
      cfg.capacity = 1 + cfg.capacity % 12;
      break;
    default:
      break;
  }
  return cfg;
}

/// Runs the input; returns what failed, or an empty string.
inline std::string run_op_sequence(std::span<const std::uint8_t> bytes) {
  OpReader in(bytes);
  const unsigned kind = in.next() % 6;
  const Config cfg = op_config(in, kind);
  const std::string structure =
      "kind " + std::to_string(kind) + ", b = " + std::to_string(cfg.bucket_size) +
      ", f = " + std::to_string(cfg.fingerprint_bits) + ", capacity " +
      std::to_string(cfg.capacity) + ", max_kicks " + std::to_string(cfg.max_kicks) + ": ";
  try {
    if (kind == 4) {
      MapOps(MapOps::Map(cfg)).run(in);
    } else if (kind == 5) {
      FilterOps<ConcurrentFilter>(ConcurrentFilter(cfg)).run(in);
    } else {
      FilterOps<Filter>(Filter(cfg)).run(in);
    }
  } catch (const OpFailure& failure) {
    return structure + failure.what;
  } catch (const std::exception& e) {
    return structure + "unexpected exception: " + e.what();
  }
  return {};
}

}  // namespace cuckoo::test
