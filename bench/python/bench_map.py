#!/usr/bin/python3
"""cuckoo.ApproximateMap beside a Python dict holding the same pairs: memory and lookup time.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python/bench_map.py --pairs 5000000

Builds a map of --pairs random 64-bit keys with random values of --value-bits, at --pairs capacity
(so about 95% of its slots), and a dict of the same pairs. Times, best of --rounds: insert_many of
all pairs; find_many of --probes stored keys; erase_many of --probes distinct stored pairs (from a
copy of the map made outside the timing); a loop of m.find(k) and one of d.get(k) over the same
--loop keys (Python ints); and reports bits per pair (the map's memory_bytes; the dict's
sys.getsizeof of itself, its keys and its values). Prints a markdown table; compare figures only
within one run (the machine is shared and noisy). The dict needs about 100 bytes per pair.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import cuckoo


def best_of(rounds: int, fn) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5_000_000)
    parser.add_argument("--probes", type=int, default=1_000_000)
    parser.add_argument("--loop", type=int, default=200_000)
    parser.add_argument("--value-bits", type=int, default=16, choices=[8, 16, 32, 64])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20140101)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    dtype = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[args.value_bits]
    keys = rng.integers(0, 2**64, size=args.pairs, dtype=np.uint64)
    values = rng.integers(0, 2**args.value_bits, size=args.pairs, dtype=dtype)
    probe_index = rng.integers(0, args.pairs, size=args.probes)
    probes = keys[probe_index]
    loop_keys = [int(k) for k in probes[: args.loop]]

    def build():
        m = cuckoo.ApproximateMap(args.pairs, value_bits=args.value_bits)
        stored = m.insert_many(keys, values)
        if stored != args.pairs:
            sys.exit(f"bench_map: the map refused pair {stored} below its capacity")
        return m

    insert_s = best_of(args.rounds, build)
    m = build()
    find_many_s = best_of(args.rounds, lambda: m.find_many(probes))
    found, offsets = m.find_many(probes)
    for i in range(0, args.probes, max(1, args.probes // 1000)):  # a map that lost a value
        if values[probe_index[i]] not in found[offsets[i]:offsets[i + 1]]:
            sys.exit(f"bench_map: stored key {probes[i]} lost its value")
    erase_index = rng.choice(args.pairs, size=min(args.probes, args.pairs), replace=False)
    erase_keys, erase_values = keys[erase_index], values[erase_index]
    erase_s = float("inf")
    for _ in range(args.rounds):
        twin = m.copy()
        start = time.perf_counter()
        removed = twin.erase_many(erase_keys, erase_values)
        erase_s = min(erase_s, time.perf_counter() - start)
        if removed != len(erase_index):
            sys.exit(f"bench_map: erase_many removed {removed} of {len(erase_index)} stored pairs")
        del twin
    find = m.find
    find_loop_s = best_of(args.rounds, lambda: [find(k) for k in loop_keys])

    d = dict(zip(keys.tolist(), values.tolist()))
    get = d.get
    get_loop_s = best_of(args.rounds, lambda: [get(k) for k in loop_keys])
    dict_bytes = (sys.getsizeof(d) + sum(map(sys.getsizeof, d.keys()))
                  + sum(map(sys.getsizeof, d.values())))

    per = lambda seconds, count: seconds * 1e9 / count  # noqa: E731 (ns per item)
    print(f"bench_map: {args.pairs} pairs of {args.value_bits}-bit values, f = "
          f"{m.fingerprint_bits}, b = {m.bucket_size}, load {m.load_factor:.3f}, best of "
          f"{args.rounds}")
    print()
    print("| measurement | ApproximateMap | dict |")
    print("| --- | --- | --- |")
    print(f"| bits per pair | {m.memory_bytes * 8 / args.pairs:.1f} | "
          f"{dict_bytes * 8 / args.pairs:.1f} |")
    print(f"| build from numpy arrays, ns per pair | {per(insert_s, args.pairs):.1f} | |")
    print(f"| find_many of {args.probes} stored keys, ns per key | "
          f"{per(find_many_s, args.probes):.1f} | |")
    print(f"| erase_many of {len(erase_index)} stored pairs, ns per pair | "
          f"{per(erase_s, len(erase_index)):.1f} | |")
    print(f"| loop of find(k) / d.get(k), {len(loop_keys)} stored int keys, ns per key | "
          f"{per(find_loop_s, len(loop_keys)):.1f} | {per(get_loop_s, len(loop_keys)):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
