// bench/evaluation/experiments.hpp — the experiments of cuckoo-bench, one function each. Every
// experiment writes <out_dir>/<name>.csv (see the column lists in the .cpp files) and appends its
// wall time to <out_dir>/meta.txt.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common.hpp"

namespace bench {

// Table 2 / Fig. 2: maximum load factor vs fingerprint bits, b = 4 and 8.
void run_load(const Options& opt);
// Fig. 3: bits per item vs measured false-positive rate, b = 2, 4, 8.
void run_fpr(const Options& opt);
// Fig. 4: bits per item vs target ε, analytic curves and measured points.
void run_space(const Options& opt);

// Table 3 and Figs. 5–8 share one pass per filter and run (fill in chunks, look up along the way,
// then delete until empty); `parts` picks which of their CSVs to measure and write.
enum class Part { kTable3, kLookup, kOccupancy, kInsert, kDelete };
void run_throughput(const Options& opt, const std::vector<Part>& parts);

// Issue 14: a growable filter from 1000 items to scale.growth_final_keys against the two chained
// designs and a fixed filter sized for each checkpoint (growth.csv, growth_doublings.csv).
void run_growth(const Options& opt);

// Renders the plots with gnuplot and writes REPORT.md from whatever CSVs are in out_dir.
void write_report(const Options& opt);

}  // namespace bench
