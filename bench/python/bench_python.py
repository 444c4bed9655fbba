#!/usr/bin/python3
"""bench_python.py - the Python module (``import cuckoo``) against the C++ library, numpy and a
Python set, measured side by side in one run (issue 15's speed targets).

Run with Debian's interpreter (the one the module is built for), the built package on PYTHONPATH:

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python/bench_python.py \\
        --scale default --baseline build/release/bench/cuckoo_python_baseline --out results/python

(``make bench-python`` does exactly this; ``PY_BENCH_SCALE=full`` for the issue's figures).

What it measures, on a filter of f = 12, b = 4 filled to 95 % of its slots (full scale: 192 MiB,
about 1.27e8 keys, 1e7 probes):

  [batch]  ``CuckooFilter.add_many`` of a numpy uint64 array into a fresh filter, per key, against
           the C++ batch insert ``Filter::insert(span)`` of the same keys (python_baseline, a
           subprocess reading the keys this script writes with ``tofile``); ``contains_many`` of
           the probe array (half keys of the filter, half fresh keys, shuffled) against the C++
           ``Filter::contains(span, span<bool>)``. Target: each at most 1.3x the C++ time.
  [numpy]  ``contains_many`` beside ``numpy.isin(probes, sorted_keys)``, beside
           ``sorted_keys[numpy.searchsorted(sorted_keys, probes)] == probes`` (the sorted array of
           the filter's keys, exact answers) and beside ``[k in s for k in probe_list]`` over a
           Python ``set`` of the keys (the probe list made beforehand, not timed).
  [single] ``for k in sample: k in f`` against the same loop over the set, for int keys and for
           str keys (16 hex digits; a second filter and a second set hold the str form of the fill
           keys). The sample is the first probes (half present). Nothing is subtracted: the loop's
           own cost is in both figures; an empty loop over the sample is printed beside them. Each
           str measurement gets freshly made str objects, because CPython caches a str's hash in
           the object and a real lookup usually hashes a new string.
  [memory] ``f.memory_bytes`` beside the set: ``sys.getsizeof(set)`` plus the key objects'
           ``sys.getsizeof``, and the growth of the process's resident memory while building it;
           and the sorted numpy array's bytes.

Scales: tiny (1 MiB, a few seconds: the smoke test), default (16 MiB, about a minute; a table
that size may still sit largely in a server CPU's L3 cache), full (the issue's 192 MiB, 1e7 probes;
about a quarter of an hour and, with the sets, some 15 GB of memory: --skip-set leaves them out,
and a set that would not fit in the memory available is skipped with a note).

Methodology. Keys come from ``numpy.random.default_rng(--seed)``. The machine is shared and noisy,
so every figure is the best of --rounds rounds (default 3), and the contenders of a comparison are
measured one after the other inside each round (their order changing from round to round), so that
drift falls on all of them; the C++ baseline runs once per round (one repetition each),
interleaved with the Python side. The median over rounds is in the CSV and the tables too. Only
ratios taken in one run mean anything. Beside each phase the report prints how many CPUs other
processes used meanwhile (from /proc/stat). The garbage collector is off for the whole run.

Checks (the run fails if one does not hold): the Python filter, built from the same Config and the
same keys in the same order, has the baseline's size and memory and gives the same number of hits
on the probes; no key of the filter is reported absent.

Output: python_bench.md (the command, the build flags, tables) and python_bench.csv in --out.
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

try:
    import cuckoo
except ImportError as error:  # pragma: no cover - a usage error
    sys.exit(f"bench_python: cannot import cuckoo ({error}); put the build's python/ directory on "
             "PYTHONPATH and run Debian's /usr/bin/python3")

FINGERPRINT_BITS = 12
BUCKET_SIZE = 4
#: sizing.hpp's design load for b = 4, f >= 8 on tables past ~10^4 keys: capacity = buckets * b *
#: this gives exactly the bucket count asked for.
DESIGN_LOAD = 0.935


@dataclass
class Scale:
    mib: float          # filter memory
    load: float         # fraction of the slots filled
    probes: int         # keys of the contains_many comparisons
    sample: int         # keys of the single-key loops
    rounds: int


SCALES = {
    "tiny": Scale(mib=1, load=0.95, probes=100_000, sample=20_000, rounds=3),
    "default": Scale(mib=16, load=0.95, probes=1_000_000, sample=100_000, rounds=3),
    "full": Scale(mib=192, load=0.95, probes=10_000_000, sample=1_000_000, rounds=3),
}

# ---- small helpers --------------------------------------------------------------------------------


def now() -> int:
    return time.perf_counter_ns()


START = time.monotonic()


def log(message: str) -> None:
    print(f"[{time.monotonic() - START:6.1f} s] {message}", file=sys.stderr, flush=True)


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def mem_available() -> int:
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


class OthersCpu:
    """How many CPUs processes other than this one (and its children) kept busy meanwhile."""

    def __init__(self) -> None:
        self.tick = os.sysconf("SC_CLK_TCK")
        self.start = self._sample()

    def _sample(self) -> tuple[float, float, float]:
        with open("/proc/stat") as stat:
            fields = [int(x) for x in stat.readline().split()[1:]]
        idle = fields[3] + fields[4]
        busy = sum(fields[:8]) - idle  # user nice system idle iowait irq softirq steal
        times = os.times()
        own = times.user + times.system + times.children_user + times.children_system
        return busy / self.tick, own, time.monotonic()

    def cpus(self) -> float:
        busy, own, wall = self._sample()
        busy0, own0, wall0 = self.start
        return max(0.0, ((busy - busy0) - (own - own0)) / max(wall - wall0, 1e-9))


@dataclass
class Timings:
    """ns per key of each contender, one entry per round."""

    per_key: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, ns: float) -> None:
        self.per_key.setdefault(name, []).append(ns)

    def best(self, name: str) -> float:
        return min(self.per_key[name])

    def median(self, name: str) -> float:
        return statistics.median(self.per_key[name])


def timed(fn, count: int) -> tuple[float, object]:
    """ns per key of one call of fn(), and its result."""
    t0 = now()
    result = fn()
    return (now() - t0) / count, result


def loop_in(sample: list, container) -> int:
    t0 = now()
    for k in sample:
        k in container  # noqa: B015 - the expression is what is measured
    return now() - t0


def loop_empty(sample: list) -> int:
    t0 = now()
    for k in sample:  # noqa: B007
        pass
    return now() - t0


def rotated(items: list, round_index: int) -> list:
    """The contenders in an order that changes from round to round."""
    k = round_index % len(items)
    return items[k:] + items[:k]


def hex_keys(keys: np.ndarray, chunk: int = 1 << 20) -> np.ndarray:
    """Each uint64 as 16 lowercase hex digits, an 'S16' array (built in chunks: small temporaries)."""
    digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    shifts = np.arange(60, -4, -4, dtype=np.uint64)
    out = np.empty((keys.size, 16), dtype=np.uint8)
    for i in range(0, keys.size, chunk):
        part = keys[i:i + chunk]
        out[i:i + part.size] = digits[((part[:, None] >> shifts) & np.uint64(15)).astype(np.uint8)]
    return out.view("S16").ravel()


def fresh_strs(hex_array: np.ndarray) -> list[str]:
    """New str objects (no cached hash) for an 'S16' array."""
    return hex_array.astype("U16").tolist()


def set_of(array: np.ndarray, as_str: bool, chunk: int = 1 << 20) -> set:
    s: set = set()
    for i in range(0, array.size, chunk):
        part = array[i:i + chunk]
        s.update(fresh_strs(part) if as_str else part.tolist())
    return s


def set_memory(s: set, keys: np.ndarray, as_str: bool) -> int:
    """sys.getsizeof(s) plus the sys.getsizeof of every key object in it. Counting 10^8 objects
    one by one takes minutes, so when the set holds exactly the keys of `keys` the key sizes are
    computed from the array (an int's size from its number of 30-bit digits, every hex str the
    same size) and checked against sys.getsizeof on a sample of the set; otherwise they are
    counted."""
    total = sys.getsizeof(s)
    sample = [k for _, k in zip(range(10_000), s)]
    if len(s) == keys.size and sample:
        if as_str:
            each = sys.getsizeof(sample[0])
            if all(sys.getsizeof(k) == each for k in sample):
                return total + each * len(s)
        else:
            digit = sys.getsizeof(1 << 30) - sys.getsizeof(1)
            base = sys.getsizeof(1) - digit

            def size(k: int) -> int:  # CPython gives 0 one digit too
                return base + digit * max(1, -(-k.bit_length() // 30))

            edges = [0, 1, (1 << 30) - 1, 1 << 30, (1 << 60) - 1, 1 << 60, (1 << 64) - 1]
            if all(sys.getsizeof(k) == size(k) for k in sample + edges):
                digits = (keys.size + np.count_nonzero(keys >= np.uint64(1 << 30))
                          + np.count_nonzero(keys >= np.uint64(1 << 60)))
                return total + base * keys.size + digit * int(digits)
    return total + sum(map(sys.getsizeof, s))


def compile_flags(build_dir: Path) -> dict[str, str]:
    """The flags compile_commands.json records for the baseline and for the module."""
    found: dict[str, str] = {}
    path = build_dir / "compile_commands.json"
    if not path.is_file():
        return found
    wanted = {"python_baseline.cpp": "baseline", "filter_bindings.cpp": "module"}
    for entry in json.loads(path.read_text()):
        name = Path(entry["file"]).name
        if name not in wanted or wanted[name] in found:
            continue
        args = entry.get("arguments") or shlex.split(entry["command"])
        flags, skip = [], False
        for arg in args[1:]:
            if skip:
                skip = False
            elif arg in ("-o", "-c", "-isystem", "-I"):
                skip = True
            elif arg.startswith(("-I", "-D", "-o")) and not arg.startswith("-DNDEBUG"):
                continue
            elif arg.startswith("-"):
                flags.append(arg)
        found[wanted[name]] = f"{args[0]} {' '.join(flags)}"
    return found


def module_link_flags(build_dir: Path) -> str:
    """-flto and the like reach the module's link line, not compile_commands.json."""
    link = build_dir / "python" / "CMakeFiles" / "cuckoo_python.dir" / "link.txt"
    if not link.is_file():
        return ""
    args = shlex.split(link.read_text().strip().splitlines()[0])
    return " ".join(a for a in args[1:] if a.startswith("-") and not a.startswith(("-o", "-L", "-l"))
                    and not a.startswith("-Wl,-rpath"))


# ---- the run --------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", choices=sorted(SCALES), default="default")
    parser.add_argument("--baseline", required=True, type=Path,
                        help="the cuckoo_python_baseline program of the same build")
    parser.add_argument("--out", required=True, type=Path, help="writes python_bench.md/.csv here")
    parser.add_argument("--skip-set", action="store_true",
                        help="skip the Python set comparisons (about 10 GB at full scale)")
    parser.add_argument("--rounds", type=int, help="rounds (best of); default by scale")
    parser.add_argument("--seed", type=int, default=20140101, help="numpy default_rng seed")
    parser.add_argument("--workdir", type=Path, help="where the key files go (default: a temp dir)")
    args = parser.parse_args()

    scale = SCALES[args.scale]
    rounds = args.rounds or scale.rounds
    if rounds < 1:
        parser.error("--rounds must be at least 1")
    baseline = args.baseline.resolve()
    if not os.access(baseline, os.X_OK):
        parser.error(f"--baseline {baseline} is not an executable")
    args.out.mkdir(parents=True, exist_ok=True)
    command = " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv])
    if os.environ.get("PYTHONPATH"):
        command = f"PYTHONPATH={shlex.quote(os.environ['PYTHONPATH'])} {command}"
    gc.disable()

    # ---- geometry: the bucket count of `mib` MiB, the capacity that sizes the filter to it -----
    bucket_bits = BUCKET_SIZE * FINGERPRINT_BITS
    buckets = int(scale.mib * (1 << 20) * 8 // bucket_bits)
    buckets -= buckets & 1
    capacity = int(buckets * BUCKET_SIZE * DESIGN_LOAD)
    n = int(scale.load * buckets * BUCKET_SIZE)
    q = scale.probes
    sample_n = min(scale.sample, q)

    def new_filter():
        return cuckoo.CuckooFilter(capacity, fingerprint_bits=FINGERPRINT_BITS,
                                   bucket_size=BUCKET_SIZE)

    probe_filter = new_filter()
    if probe_filter.bucket_count != buckets:
        log(f"note: capacity {capacity} gives {probe_filter.bucket_count} buckets, not {buckets}")
        buckets = probe_filter.bucket_count
        n = int(scale.load * buckets * BUCKET_SIZE)
    filter_bytes = probe_filter.memory_bytes
    del probe_filter

    log(f"bench_python: scale {args.scale}: f={FINGERPRINT_BITS} b={BUCKET_SIZE} capacity={capacity}"
        f" buckets={buckets} ({filter_bytes / 2**20:.1f} MiB), fill {n} keys"
        f" ({scale.load:.0%} of the slots), {q} probes, {sample_n} single keys, best of {rounds}")

    # ---- keys ---------------------------------------------------------------------------------
    t0 = now()
    rng = np.random.default_rng(args.seed)
    fill = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    present = fill[rng.integers(0, n, size=q // 2)]
    absent = rng.integers(0, 2**64, size=q - q // 2, dtype=np.uint64)
    order = rng.permutation(q)
    probes = np.concatenate([present, absent])[order]
    is_present = (order < q // 2)  # by construction; the sorted array gives the exact truth below
    del present, absent, order
    log(f"  keys generated in {(now() - t0) / 1e9:.1f} s")

    rows: list[dict] = []
    checks: list[str] = []
    failures: list[str] = []
    others: dict[str, float] = {}

    def row(group: str, measurement: str, value: float, unit: str, reference: str = "",
            ratio: float | None = None, target: str = "", met: str = "", median: float | None = None,
            count: int | None = None) -> None:
        rows.append({"group": group, "measurement": measurement, "value": value, "unit": unit,
                     "median": median, "reference": reference, "ratio": ratio, "target": target,
                     "met": met, "count": count})

    with tempfile.TemporaryDirectory(prefix="cuckoo_pybench_", dir=args.workdir) as tmp:
        fill_path, probe_path = Path(tmp) / "fill.u64", Path(tmp) / "probes.u64"
        fill.astype("<u8", copy=False).tofile(fill_path)
        probes.astype("<u8", copy=False).tofile(probe_path)

        # ---- phase A: add_many / contains_many against the C++ batch calls ------------------
        log("phase A: batch insert and lookups, Python against C++")
        cpu = OthersCpu()
        batch = Timings()
        cpp_result: dict = {}
        batch_state: dict = {}
        f = None

        def run_cpp() -> None:
            proc = subprocess.run(
                [str(baseline), "--capacity", str(capacity), "--bits", str(FINGERPRINT_BITS),
                 "--bucket-size", str(BUCKET_SIZE), "--fill", str(fill_path),
                 "--probes", str(probe_path), "--reps", "1"],
                capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise SystemExit(f"bench_python: the baseline failed ({proc.returncode}):\n"
                                 f"{proc.stdout}{proc.stderr}")
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            batch.add("cpp insert", result["insert_ns_per_key"])
            batch.add("cpp contains", result["contains_ns_per_key"])
            cpp_result.update(result)

        def run_python() -> None:
            nonlocal f
            f = None  # free the previous table before building the next
            f = new_filter()
            ns, added = timed(lambda: f.add_many(fill), n)
            batch.add("py add_many", ns)
            ns, found = timed(lambda: f.contains_many(probes), q)
            batch.add("py contains_many", ns)
            batch_state.update(added=added, hits=int(found.sum()), answers=found)

        for r in range(rounds):
            for step in rotated([run_cpp, run_python], r):
                step()
            log(f"  round {r + 1}: C++ insert {batch.per_key['cpp insert'][-1]:.1f}, "
                f"add_many {batch.per_key['py add_many'][-1]:.1f}, "
                f"C++ contains {batch.per_key['cpp contains'][-1]:.1f}, "
                f"contains_many {batch.per_key['py contains_many'][-1]:.1f} ns/key")
            if batch_state["added"] != cpp_result["inserted"]:
                failures.append(f"add_many inserted {batch_state['added']} keys, the C++ insert "
                                f"{cpp_result['inserted']}")
            if batch_state["hits"] != cpp_result["probe_hits"]:
                failures.append(f"contains_many found {batch_state['hits']} probes, C++ "
                                f"{cpp_result['probe_hits']}")
        others["batch"] = cpu.cpus()
        answers = batch_state["answers"]
        inserted = int(batch_state["added"])
        if f.memory_bytes != cpp_result["memory_bytes"] or len(f) != cpp_result["size"]:
            failures.append(f"Python filter: {f.memory_bytes} bytes, {len(f)} keys; C++: "
                            f"{cpp_result['memory_bytes']} bytes, {cpp_result['size']} keys")
        missed = int(np.count_nonzero(is_present & ~answers)) if inserted == n else 0
        if missed:
            failures.append(f"contains_many missed {missed} keys of the filter")
        checks.append(f"C++ and Python filters: {len(f)} keys ({len(f) / n:.2%} of the fill"
                      f"{', the insert stopped early' if inserted < n else ''}), load "
                      f"{f.load_factor:.4f}, {f.memory_bytes} bytes, identical probe hits "
                      f"({cpp_result['probe_hits']} of {q}); every fill key found by the C++ "
                      "check, every present probe by contains_many")

        for name, cpp_name, label, cpp_label in (
                ("py add_many", "cpp insert", "add_many(uint64 array)", "Filter::insert(span)"),
                ("py contains_many", "cpp contains", "contains_many(uint64 array)",
                 "Filter::contains(span, span<bool>)")):
            ratio = batch.best(name) / batch.best(cpp_name)
            row("batch", f"C++ {cpp_label}", batch.best(cpp_name), "ns/key",
                median=batch.median(cpp_name), count=n if "insert" in cpp_name else q)
            row("batch", f"Python {label}", batch.best(name), "ns/key", reference=f"C++ {cpp_label}",
                ratio=ratio, target="<= 1.3", met="yes" if ratio <= 1.3 else "no",
                median=batch.median(name), count=n if "add" in name else q)

    # ---- phase B: contains_many beside numpy (the sorted array of the keys) ---------------------
    log("phase B: contains_many beside numpy")
    t0 = now()
    sorted_keys = np.sort(fill)
    log(f"  sorted the keys in {(now() - t0) / 1e9:.1f} s")
    idx = np.minimum(np.searchsorted(sorted_keys, probes), sorted_keys.size - 1)
    truth = sorted_keys[idx] == probes
    del idx
    false_negatives = int(np.count_nonzero(truth & ~answers)) if inserted == n else 0
    if false_negatives:
        failures.append(f"contains_many answered False for {false_negatives} keys of the set")
    negatives = int(np.count_nonzero(~truth))
    fpr = np.count_nonzero(answers & ~truth) / max(negatives, 1)
    checks.append(f"false-positive rate on the {negatives} absent probes: {fpr:.5f} (bound at full "
                  f"load {f.error_rate_bound:.5f})")

    def searchsorted_lookup():
        found = np.searchsorted(sorted_keys, probes)
        np.minimum(found, sorted_keys.size - 1, out=found)
        return sorted_keys[found] == probes

    cpu = OthersCpu()
    numpy_t = Timings()
    contenders = [
        lambda: numpy_t.add("contains_many", timed(lambda: f.contains_many(probes), q)[0]),
        lambda: numpy_t.add("isin", timed(lambda: np.isin(probes, sorted_keys), q)[0]),
        lambda: numpy_t.add("searchsorted", timed(searchsorted_lookup, q)[0]),
    ]
    for r in range(rounds):
        for step in rotated(contenders, r):
            step()
        log(f"  round {r + 1}: " + ", ".join(f"{name} {values[-1]:.1f}" for name, values in
                                            numpy_t.per_key.items()) + " ns/key")
    others["numpy"] = cpu.cpus()
    ref_numpy = "Python contains_many(uint64 array), numpy round"
    row("vs numpy/set", ref_numpy, numpy_t.best("contains_many"), "ns/key",
        median=numpy_t.median("contains_many"), count=q)
    for name, label in (("isin", "numpy.isin(probes, sorted_keys)"),
                        ("searchsorted", "sorted_keys[numpy.searchsorted(sorted_keys, probes)] == "
                                         "probes")):
        row("vs numpy/set", label, numpy_t.best(name), "ns/key", reference=ref_numpy,
            ratio=numpy_t.best(name) / numpy_t.best("contains_many"),
            median=numpy_t.median(name), count=q)
    memory: list[tuple[str, int, str]] = [
        ("CuckooFilter (int keys)", f.memory_bytes, "f.memory_bytes"),
        ("sorted numpy uint64 array", sorted_keys.nbytes, "ndarray.nbytes")]
    sorted_keys = None  # free it before the sets are built
    gc.collect()

    # ---- phase C: int keys against a Python set: `x in f`, and contains_many beside a list
    # comprehension ------------------------------------------------------------------------------
    log("phase C: int keys, the filter beside a Python set")
    use_set = not args.skip_set
    set_note = "skipped (--skip-set)" if args.skip_set else ""
    need = n * 95 + q * 60
    if use_set and need > 0.8 * mem_available():
        use_set = False
        set_note = (f"skipped: a set of {n} ints needs about {need / 2**30:.1f} GiB, "
                    f"{mem_available() / 2**30:.1f} GiB available")
    if set_note:
        log(f"  set comparisons {set_note}")
    sample_int = probes[:sample_n].tolist()
    s = None
    probe_list = None
    if use_set:
        rss0 = rss_bytes()
        t0 = now()
        s = set_of(fill, as_str=False)
        build_s = (now() - t0) / 1e9
        rss_growth = rss_bytes() - rss0
        t0 = now()
        s_bytes = set_memory(s, fill, as_str=False)
        log(f"  int set of {len(s)} keys built in {build_s:.1f} s; getsizeof sum "
            f"{s_bytes / 2**20:.1f} MiB (counted in {(now() - t0) / 1e9:.1f} s), RSS grew "
            f"{rss_growth / 2**20:.1f} MiB")
        memory.append(("Python set of int (getsizeof: set + keys)", s_bytes,
                       "sys.getsizeof(s) + sum of sys.getsizeof(k)"))
        memory.append(("Python set of int (RSS growth while built)", rss_growth,
                       "/proc/self/statm before and after"))
        t0 = now()
        probe_list = probes.tolist()
        checks.append(f"probes.tolist() for the list comprehension (made beforehand, not timed): "
                      f"{(now() - t0) / q:.1f} ns/key")

    cpu = OthersCpu()
    ints = Timings()
    contenders = [
        lambda: ints.add("int in f", loop_in(sample_int, f) / sample_n),
        lambda: ints.add("empty loop (int)", loop_empty(sample_int) / sample_n),
    ]
    if use_set:
        contenders += [
            lambda: ints.add("int in set", loop_in(sample_int, s) / sample_n),
            lambda: ints.add("contains_many", timed(lambda: f.contains_many(probes), q)[0]),
            lambda: ints.add("listcomp", timed(lambda: [k in s for k in probe_list], q)[0]),
        ]
    for r in range(rounds):
        for step in rotated(contenders, r):
            step()
        log(f"  round {r + 1}: " + ", ".join(f"{name} {values[-1]:.1f}" for name, values in
                                            ints.per_key.items()) + " ns/key")
    others["int keys, set"] = cpu.cpus()
    if use_set:
        ref_set = "Python contains_many(uint64 array), set round"
        row("vs numpy/set", ref_set, ints.best("contains_many"), "ns/key",
            median=ints.median("contains_many"), count=q)
        row("vs numpy/set", "[k in s for k in probe_list] (Python set)", ints.best("listcomp"),
            "ns/key", reference=ref_set, ratio=ints.best("listcomp") / ints.best("contains_many"),
            median=ints.median("listcomp"), count=q)
    row("single key", "empty loop `for k in sample: pass` (int)", ints.best("empty loop (int)"),
        "ns/key", median=ints.median("empty loop (int)"), count=sample_n)
    row("single key", "`k in f` loop, int keys", ints.best("int in f"), "ns/key",
        median=ints.median("int in f"), count=sample_n)
    if use_set:
        ratio = ints.best("int in f") / ints.best("int in set")
        row("single key", "`k in s` loop, int keys (Python set)", ints.best("int in set"),
            "ns/key", median=ints.median("int in set"), count=sample_n)
        rows[-2].update(reference="`k in s` loop, int keys (Python set)", ratio=ratio,
                        target="< 1 (beat the set)", met="yes" if ratio < 1 else "no")
    s = None
    probe_list = None
    gc.collect()

    # ---- phase D: `x in f` for str keys -------------------------------------------------------
    log("phase D: str keys, the filter beside a Python set")
    t0 = now()
    fill_hex = hex_keys(fill)
    sample_hex = hex_keys(probes[:sample_n])
    fs = new_filter()
    t1 = now()
    added_str = fs.add_many(fill_hex)
    str_add_ns = (now() - t1) / n
    log(f"  hex keys and the str filter in {(now() - t0) / 1e9:.1f} s ({added_str} keys; add_many "
        f"of an S16 array {str_add_ns:.1f} ns/key)")
    row("batch", "Python add_many(S16 array of hex str keys), the str filter, once", str_add_ns,
        "ns/key", count=n)
    if added_str != n:
        checks.append(f"the str filter took {added_str} of the {n} str keys")
    sample_answers = np.fromiter((k in fs for k in fresh_strs(sample_hex)), bool, sample_n)
    if added_str == n and np.count_nonzero(truth[:sample_n] & ~sample_answers):
        failures.append("`k in f` answered False for a str key of the filter")
    use_str_set = use_set
    need_str = n * 115
    if use_str_set and need_str > 0.8 * mem_available():
        use_str_set = False
        set_note = (f"str set skipped: it needs about {need_str / 2**30:.1f} GiB, "
                    f"{mem_available() / 2**30:.1f} GiB available")
        log(f"  {set_note}")
    ss = None
    if use_str_set:
        rss0 = rss_bytes()
        t0 = now()
        ss = set_of(fill_hex, as_str=True)
        build_ss = (now() - t0) / 1e9
        rss_growth = rss_bytes() - rss0
        ss_bytes = set_memory(ss, fill_hex, as_str=True)
        log(f"  str set built in {build_ss:.1f} s; getsizeof sum {ss_bytes / 2**20:.1f} MiB, RSS "
            f"grew {rss_growth / 2**20:.1f} MiB")
        memory.append(("CuckooFilter (str keys)", fs.memory_bytes, "f.memory_bytes"))
        memory.append(("Python set of str (getsizeof: set + keys)", ss_bytes,
                       "sys.getsizeof(s) + sum of sys.getsizeof(k)"))
        memory.append(("Python set of str (RSS growth while built)", rss_growth,
                       "/proc/self/statm before and after"))
    del fill_hex

    cpu = OthersCpu()
    strs = Timings()
    contenders = [
        lambda: strs.add("str in f", loop_in(fresh_strs(sample_hex), fs) / sample_n),
        lambda: strs.add("empty loop (str)", loop_empty(fresh_strs(sample_hex)) / sample_n),
    ]
    if use_str_set:
        contenders.append(
            lambda: strs.add("str in set", loop_in(fresh_strs(sample_hex), ss) / sample_n))
    for r in range(rounds):
        for step in rotated(contenders, r):
            step()
        log(f"  round {r + 1}: " + ", ".join(f"{name} {values[-1]:.1f}" for name, values in
                                            strs.per_key.items()) + " ns/key")
    others["str keys, set"] = cpu.cpus()
    row("single key", "empty loop `for k in sample: pass` (str)", strs.best("empty loop (str)"),
        "ns/key", median=strs.median("empty loop (str)"), count=sample_n)
    row("single key", "`k in f` loop, str keys", strs.best("str in f"), "ns/key",
        median=strs.median("str in f"), count=sample_n)
    if use_str_set:
        ratio = strs.best("str in f") / strs.best("str in set")
        row("single key", "`k in s` loop, str keys (Python set)", strs.best("str in set"),
            "ns/key", median=strs.median("str in set"), count=sample_n)
        rows[-2].update(reference="`k in s` loop, str keys (Python set)", ratio=ratio,
                        target="< 1 (beat the set)", met="yes" if ratio < 1 else "no")
    ss = None

    filter_memory = f.memory_bytes
    for name, nbytes, how in memory:
        row("memory", name, nbytes, "bytes", reference=how, count=inserted,
            ratio=None if name.startswith("CuckooFilter") else nbytes / filter_memory)

    # ---- report ---------------------------------------------------------------------------------
    build_dir = baseline.parent.parent
    flags = compile_flags(build_dir)
    link = module_link_flags(build_dir)
    write_csv(args.out / "python_bench.csv", rows)
    write_report(args.out / "python_bench.md", command=command, scale_name=args.scale, scale=scale,
                 rounds=rounds, capacity=capacity, buckets=buckets, n=n, q=q, sample_n=sample_n,
                 inserted=inserted, filter_bytes=filter_memory, cpp=cpp_result, flags=flags,
                 link=link, rows=rows, checks=checks, failures=failures, others=others,
                 set_note=set_note, seed=args.seed)
    log(f"wrote {args.out / 'python_bench.md'} and {args.out / 'python_bench.csv'}")
    print((args.out / "python_bench.md").read_text())
    if failures:
        for failure in failures:
            log(f"FAILED: {failure}")
        return 1
    return 0


def fmt(value, digits: int = 2) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def write_csv(path: Path, rows: list[dict]) -> None:
    columns = ["group", "measurement", "value", "unit", "median", "reference", "ratio", "target",
               "met", "count"]
    with open(path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=columns)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: ("" if r[k] is None else
                                 f"{r[k]:.4f}" if isinstance(r[k], float) else r[k])
                             for k in columns})


def machine() -> str:
    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs, Linux {platform.release()}"


def write_report(path: Path, *, command: str, scale_name: str, scale: Scale, rounds: int,
                 capacity: int, buckets: int, n: int, q: int, sample_n: int, inserted: int,
                 filter_bytes: int, cpp: dict, flags: dict, link: str, rows: list[dict],
                 checks: list[str], failures: list[str], others: dict, set_note: str,
                 seed: int) -> None:
    out: list[str] = []
    add = out.append
    add("# Python module speed: `import cuckoo` against C++, numpy and a Python set\n")
    add("```")
    add(command)
    add("```\n")
    add("| | |")
    add("|---|---|")
    add(f"| scale | {scale_name}: f = {FINGERPRINT_BITS}, b = {BUCKET_SIZE}, "
        f"{filter_bytes / 2**20:.1f} MiB ({buckets} buckets, capacity={capacity}), "
        f"{inserted} keys ({inserted / (buckets * BUCKET_SIZE):.1%} of the slots), {q} probes "
        f"(half present), {sample_n} single keys |")
    add(f"| timing | best of {rounds} rounds, contenders interleaved in each round; median in "
        "the CSV; C++ baseline one repetition per round |")
    add(f"| keys | numpy.random.default_rng({seed}) |")
    add(f"| baseline build | `{flags.get('baseline', cpp.get('flags', 'unknown'))}` |")
    add(f"| module build | `{flags.get('module', 'unknown')}` |")
    if link:
        add(f"| module link | `{link}` |")
    add(f"| Python | {platform.python_implementation()} {platform.python_version()} "
        f"(`{sys.executable}`), numpy {np.__version__}, cuckoo from `{Path(cuckoo.__file__).parent}` |")
    add(f"| machine | {machine()} |")
    add("| other load | " + "; ".join(f"{k}: {v:.2f} CPUs busy with other processes"
                                     for k, v in others.items()) + " |")
    add("")
    add("## Issue 15's targets\n")
    add("| measurement | Python | reference | reference value | ratio | target | met |")
    add("|---|---|---|---|---|---|---|")
    by_name = {r["measurement"]: r for r in rows}
    for r in rows:
        if r["target"]:
            reference = by_name.get(r["reference"], {})
            add(f"| {r['measurement']} | {fmt(r['value'])} ns | {r['reference']} | "
                f"{fmt(reference.get('value'))} ns | {fmt(r['ratio'])}x | {r['target']} | "
                f"{r['met']} |")
    for r in rows:
        if r["group"] == "memory" and r["ratio"] and "set" in r["measurement"]:
            add(f"| memory (CuckooFilter.memory_bytes) | {filter_bytes / 2**20:.1f} MiB | "
                f"{r['measurement']} | {r['value'] / 2**20:.1f} MiB | "
                f"{1 / r['ratio']:.3f}x | smaller | {'yes' if r['ratio'] > 1 else 'no'} |")
    add("")
    groups = [("batch", "Batch calls against the C++ library (ns per key)"),
              ("vs numpy/set", "contains_many beside numpy and a Python set (ns per key, exact "
                               "answers for numpy and the set)"),
              ("single key", "One key at a time (ns per call; the loop's own cost is in every "
                             "figure)")]
    for group, title in groups:
        add(f"## {title}\n")
        add("| measurement | ns/key (best) | median | ratio | to |")
        add("|---|---|---|---|---|")
        for r in rows:
            if r["group"] == group:
                add(f"| {r['measurement']} | {fmt(r['value'])} | {fmt(r['median'])} | "
                    f"{fmt(r['ratio']) + 'x' if r['ratio'] is not None else ''} | "
                    f"{r['reference']} |")
        add("")
    add("## Memory\n")
    add("| structure | bytes | bits per key | x the filter | how |")
    add("|---|---|---|---|---|")
    for r in rows:
        if r["group"] == "memory":
            if r["value"]:
                add(f"| {r['measurement']} | {r['value']} ({r['value'] / 2**20:.1f} MiB) | "
                    f"{r['value'] * 8 / inserted:.1f} | "
                    f"{fmt(r['ratio']) if r['ratio'] else '1.00'} | {r['reference']} |")
            else:
                add(f"| {r['measurement']} | | | | {r['reference']} |")
    if set_note:
        add(f"\nPython set comparisons: {set_note}.")
    add("")
    add("## Checks\n")
    for c in checks:
        add(f"- {c}")
    for failure in failures:
        add(f"- **FAILED**: {failure}")
    add("")
    add(f"C++ baseline (last round): `{json.dumps(cpp)}`")
    add("")
    path.write_text("\n".join(out))


if __name__ == "__main__":
    sys.exit(main())
