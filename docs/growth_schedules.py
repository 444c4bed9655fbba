#!/usr/bin/python3
"""Can a growable filter meet issue 14's per-doubling memory bound and its rate together?

    python3 docs/growth_schedules.py            # ε = 0.001, b = 4 (f = 13), 17 doublings
    python3 docs/growth_schedules.py --step 0.5 # widths in half bits (see "Fractional widths")
    python3 docs/growth_schedules.py --bare-first  # generation 0 without a marker (see below)

The README's growable section (The bound and its arithmetic) argues that with whole-bit slots the
two cannot both hold at a fixed load at doubling. This searches every whole-bit width schedule
with a load at doubling chosen per generation, which the filter could do (double early).

Model (no deletes). After g doublings the table has S_g = S_0·2^g slots, and it doubles at load
α_g. Entries of generation j compare f + d_j bits when inserted (slots of W_j = f + 1 + d_j bits:
the marker) and lose one per doubling. Let R_g = Σ_j n_j·2^−(d_j − (g − j)) / S_g over the
n_j entries of each generation; a doubling leaves R unchanged (each entry's weight doubles, the
slots double), and generation g adds (α_g − α_{g−1}/2)·S_g entries of weight 2^−d_g, so

    R_g = R_{g−1} + (α_g − α_{g−1}/2)·2^−d_g,    FPR just before doubling g+1 = 2b·2^−f·R_g.

Bounds at every g: FPR ≤ ε, and W_g / α_g ≤ the fixed filter's bits per item + 2 + log2(1 + g)
(the fixed filter: f / 0.935). α_g enters every later R with a positive coefficient
(2^−d_g − 2^−d_{g+1}/2 > 0), so the smallest α_g that meets the memory bound is best for the rate:
the search tries each width with that α (on a grid of 0.0025) and is exhaustive over widths.

A bare generation 0 (--bare-first; the filter's schedule since 2026-12-04). Until the first
doubling every entry has the same length, so generation 0 needs no marker: W_0 = f + d_0 and
weight 2^−d_0, while later generations keep theirs (W_g = f + 1 + d_g). With it, for ε = 0.001,
b = 4, both bounds hold through 17 doublings at loads of at most 96% (without it, no schedule gets
past 10 at 97%). The filter's schedule, W_g = f + 2 + floor(log2(16(g + 1)/15)) (d_0 = 2,
d_g = W_g − f − 1), is evaluated with every doubling at one load: FPR/ε and bits per item over
the bound stay under 1 through 17 doublings at 96% and at 97%.

Fractional widths (--step 0.5, 0.25). A table whose slots differ in width (one side a bit wider
than the other, or a share of wider buckets) spends d_g = k + s bits on average, s in (0, 1): a
share s of the slots has k + 1 bits and the rest k. The model here is the optimistic one: each
entry keeps the bits of the slot it was first placed in, so a share s of a generation has k + 1
bits and weighs 2^−(k+1), the rest 2^−k (weight (1 − s/2)·2^−k); entries moved to a narrower slot
would lose a bit, which only raises R. An older entry must fit the wider slots, not the narrower
(it may sit in either). If a schedule fails in this model, it fails in any table of mixed widths.
The least-α argument above needs weight(d_{g+1}) < 2·weight(d_g), which whole bits always meet but
fractional widths that fall by a bit or more need not; so for steps under a bit the search keeps
widths from falling (d_g ≥ d_{g−1}) and is exhaustive over those schedules only.
"""

from __future__ import annotations

import argparse
import math


def weight(d: float) -> float:
    """The mean of 2^−bits over a generation of average width d above f (optimistic: a share
    frac(d) of its entries keeps the wider slots' bit)."""
    k = math.floor(d + 1e-9)
    share = d - k
    return (1 - share) * 2.0**-k + share * 2.0 ** -(k + 1)


def search(f: int, b: int, eps: float, fixed_bits: float, doublings: int, max_load: float,
           step: float = 1.0, bare_first: bool = False):
    """The longest prefix of generations 0..doublings that some schedule keeps within both bounds,
    as (generations reached, widths d_g, loads α_g)."""
    best = (0, [], [])
    widths_to_try = [i * step for i in range(round(12 / step), -1, -1)]

    def recurse(g, widths, loads, r):
        nonlocal best
        if g > best[0]:
            best = (g, list(widths), list(loads))
        if g > doublings:
            return True
        bound = fixed_bits + 2 + math.log2(1 + g)
        for d in widths_to_try:
            if step < 1 and widths and d < widths[-1]:
                continue  # see "Fractional widths": only non-falling schedules for fractions
            if any(math.floor(widths[j] + 1e-9) - (g - j) > math.ceil(d - 1e-9) for j in range(g)):
                continue  # the wider slots must hold every older entry's remaining bits
            marker = 0 if bare_first and g == 0 else 1
            load = math.ceil((f + marker + d) / bound / 0.0025) * 0.0025  # the memory bound's least
            if load > max_load:
                continue
            prev = loads[-1] / 2 if loads else 0.0
            r_next = r + (load - prev) * weight(d)
            if 2 * b * 2.0**-f * r_next > eps:
                continue
            widths.append(d)
            loads.append(load)
            if recurse(g + 1, widths, loads, r_next):
                return True
            widths.pop()
            loads.pop()
        return False

    recurse(0, [], [], 0.0)
    return best


def evaluate_floor(f: int, b: int, eps: float, fixed_bits: float, doublings: int, load: float):
    """The filter's schedule (bare generation 0, W_g = f + 2 + floor(log2(16(g + 1)/15))) with every
    doubling at `load`: per g, the rate just before the doubling over ε and bits per item over
    issue 14's bound."""
    rows, r = [], 0.0
    for g in range(doublings + 1):
        width = f + 2 + (16 * (g + 1) // 15).bit_length() - 1
        d = width - f if g == 0 else width - f - 1  # bits above f that entries of g compare
        r += (load if g == 0 else load / 2) * 2.0**-d
        bound = fixed_bits + 2 + math.log2(1 + g)
        rows.append((g, width, 2 * b * 2.0**-f * r / eps, width / load / bound))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eps", type=float, default=0.001)
    parser.add_argument("--bucket-size", type=int, default=4)
    parser.add_argument("--doublings", type=int, default=17)
    parser.add_argument("--step", type=float, default=1.0,
                        help="granularity of the average slot width in bits (1, 0.5, 0.25)")
    parser.add_argument("--bare-first", action="store_true",
                        help="generation 0 without a marker (W_0 = f + d_0)")
    args = parser.parse_args()
    f = math.ceil(math.log2(2 * args.bucket_size / args.eps))
    fixed = f / 0.935
    print(f"ε = {args.eps}, b = {args.bucket_size}, f = {f}, fixed filter {fixed:.2f} bits per item,"
          f" widths in steps of {args.step} bit")
    if args.bare_first:
        for load in (0.96, 0.97):
            rows = evaluate_floor(f, args.bucket_size, args.eps, fixed, args.doublings, load)
            print(f"the filter's schedule, every doubling at {load}: g, W_g, FPR/ε, "
                  f"bits per item / bound:")
            print("  " + "; ".join(f"{g} {w} {x:.3f} {m:.3f}" for g, w, x, m in rows))
    for max_load in (0.96, 0.97, 0.975, 0.98, 0.99, 1.0):
        reached, widths, loads = search(f, args.bucket_size, args.eps, fixed, args.doublings,
                                        max_load, args.step, args.bare_first)
        verdict = "both bounds hold" if reached > args.doublings else f"fails at g = {reached}"
        print(f"loads at doubling ≤ {max_load:.3f}: {verdict}; best widths d_g = {widths}, "
              f"loads {[round(x, 4) for x in loads]}")


if __name__ == "__main__":
    main()
