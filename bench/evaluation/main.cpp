// cuckoo-bench — reproduces the evaluation of "Cuckoo Filter: Practically Better Than Bloom"
// (Fan et al., CoNEXT 2014) on this machine. One subcommand per table or figure, `all` for every
// one of them followed by the report:
//
//   cuckoo-bench [--scale tiny|default|paper] [--out results] all
//   cuckoo-bench --scale tiny --out /tmp/r load      # one experiment
//   cuckoo-bench --scale tiny --out /tmp/r growth    # issue 14: growable vs chained vs fixed
//   cuckoo-bench --out results report                # plots + REPORT.md from the CSVs there
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "common.hpp"
#include "experiments.hpp"

int main(int argc, char** argv) {
  CLI::App app{"cuckoo-bench: the paper's evaluation (Table 2-3, Fig. 2-8), CSVs, plots, report"};
  app.require_subcommand(1);
  std::string scale = "default";
  std::string out = "results";
  app.add_option("--scale", scale, "tiny (seconds), default (about 5 minutes), paper (hours)")
      ->check(CLI::IsMember({"tiny", "default", "paper"}))
      ->capture_default_str();
  app.add_option("--out", out, "results folder: CSVs, plots, REPORT.md")->capture_default_str();
  unsigned runs = 0;
  app.add_option("--runs", runs,
                 "override the scale's run count of every experiment (quick looks)");

  using bench::Part;
  struct Command {
    const char* name;
    const char* help;
    std::vector<Part> parts;  // for the throughput pass; empty for the others
  };
  const std::vector<Command> commands = {
      {"load", "Table 2 / Fig. 2: max load factor vs fingerprint bits", {}},
      {"fpr", "Fig. 3: bits per item vs measured false-positive rate, b = 2, 4, 8", {}},
      {"space", "Fig. 4: bits per item vs target epsilon, curves and measured points", {}},
      {"table3",
       "Table 3: items, bits/item, FPR, construction speed at equal memory",
       {Part::kTable3}},
      {"lookup", "Fig. 5: lookup throughput vs fraction of positive queries", {Part::kLookup}},
      {"occupancy", "Fig. 6: lookup throughput vs occupancy", {Part::kOccupancy}},
      {"insert", "Fig. 7: insert throughput vs occupancy", {Part::kInsert}},
      {"delete", "Fig. 8: delete-until-empty throughput vs occupancy", {Part::kDelete}},
      {"throughput",
       "Table 3 and Fig. 5-8 in one pass per filter",
       {Part::kTable3, Part::kLookup, Part::kOccupancy, Part::kInsert, Part::kDelete}},
      {"growth", "issue 14: growable filter vs chained filters vs fixed, from 1000 keys up", {}},
      {"report", "render plots and write REPORT.md from the CSVs in --out", {}},
      {"all", "every experiment, then the report", {}},
  };
  for (const auto& c : commands) app.add_subcommand(c.name, c.help);
  CLI11_PARSE(app, argc, argv);

  try {
    bench::Scale chosen = bench::scale_named(scale);
    if (runs != 0) {
      for (auto& r : chosen.load_runs) r = runs;
      chosen.fpr_runs = chosen.throughput_runs = runs;
    }
    const bench::Options opt{chosen, out};
    std::filesystem::create_directories(opt.out_dir);
    const std::string name = app.get_subcommands().front()->get_name();
    if (name != "report") bench::record_meta(opt.out_dir, "scale", scale);
    auto run = [&](const std::string& what) {
      if (what == "load") return bench::run_load(opt);
      if (what == "fpr") return bench::run_fpr(opt);
      if (what == "space") return bench::run_space(opt);
      if (what == "growth") return bench::run_growth(opt);
      if (what == "report") return bench::write_report(opt);
      for (const auto& c : commands) {
        if (what == c.name) return bench::run_throughput(opt, c.parts);
      }
    };
    if (name == "all") {
      // A fresh meta.txt: the report's timings are this run's.
      std::filesystem::remove(opt.out_dir / "meta.txt");
      bench::record_meta(opt.out_dir, "scale", scale);
      for (const char* what : {"load", "fpr", "space", "throughput", "growth", "report"}) run(what);
    } else {
      run(name);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "cuckoo-bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
