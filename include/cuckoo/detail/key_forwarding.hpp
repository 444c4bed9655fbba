// cuckoo/detail/key_forwarding.hpp — the single-key members every cuckoo filter offers, over the
// hash-level operations it declares.
//
// A filter hashes a key once, with its own seeded hasher (hash.hpp), and does everything else on
// the 64-bit hash: the hash-level calls (insert_hash, contains_hash, ...) serve callers that hash
// keys themselves, and the key-level ones below everybody else. They are one line each and were
// written out in every filter; here they are written once. A filter F derives from
// KeyForwarding<F> (CRTP: resolved at compile time and inlined, no virtual call) and declares
//
//     const Hash& hasher() const noexcept;
//     bool insert_hash(std::uint64_t hash);
//     bool contains_hash(std::uint64_t hash) const noexcept;
//     bool erase_hash(std::uint64_t hash) noexcept;
//     std::size_t count_hash(std::uint64_t hash) const noexcept;
//
// and gets insert(key), contains(key), erase(key) and count(key), each only where its hash-level
// call exists with that signature (ApproximateMap, whose inserts and erases take a value, gets
// contains and count). A filter with batch overloads of the same names brings these into scope
// with using-declarations. The comparators of amq/ have their own, amq::detail::KeyForwarding,
// which also holds the hasher and the batch lookup.
//
// The constraints name the filter through a defaulted template parameter (Self), not Derived
// itself, so that they are checked at the call, when the filter is complete: clang 14 checked them
// at the using-declarations, inside the still incomplete filter, and refused every call.
//
// The members are plain inline functions, not forced: forcing them made GCC keep a large
// contains_hash (the blocked filter's) out of line in the caller, where it had inlined it through
// the small forwarder. A filter that needs its lookup forced into every caller declares its own
// contains (BasicConcurrentFilter does), which hides this one.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>

#include "cuckoo/hash.hpp"

namespace cuckoo::detail {

template <class Derived>
class KeyForwarding {
 public:
  /// Adds one copy of key. False, with the filter unchanged, when it cannot (no room, or past a
  /// growable filter's documented limit).
  template <Key K, class Self = Derived>
  requires requires(Self& filter, std::uint64_t hash) {
    { filter.insert_hash(hash) } -> std::same_as<bool>;
  }
  bool insert(const K& key) { return self().insert_hash(hash_key(self().hasher(), key)); }

  /// True if key may be in the set; false means it certainly is not.
  template <Key K>
  bool contains(const K& key) const noexcept {
    return self().contains_hash(hash_key(self().hasher(), key));
  }

  /// Removes one copy of key's fingerprint; false if none of key's places holds it. Erasing a key
  /// that was never inserted may remove a colliding item's fingerprint: only erase what you
  /// inserted.
  template <Key K, class Self = Derived>
  requires requires(Self& filter, std::uint64_t hash) {
    { filter.erase_hash(hash) } -> std::same_as<bool>;
  }
  bool erase(const K& key) noexcept { return self().erase_hash(hash_key(self().hasher(), key)); }

  /// Fingerprints matching key's in its places: the copies inserted, plus any false matches.
  template <Key K>
  std::size_t count(const K& key) const noexcept {
    return self().count_hash(hash_key(self().hasher(), key));
  }

 protected:
  KeyForwarding() = default;

 private:
  Derived& self() noexcept { return static_cast<Derived&>(*this); }
  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
};

}  // namespace cuckoo::detail
