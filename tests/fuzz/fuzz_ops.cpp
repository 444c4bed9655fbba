// libFuzzer target for the structures' operations: each input chooses a structure (every Filter
// kind, ConcurrentFilter, ApproximateMap) and a sequence of inserts, erases, batches, checks and
// reloads, run against an exact model (tests/support/op_sequence.hpp says what is checked). Any
// failure aborts with its message.
//
//   make fuzz      (clang, bounded run over tests/fuzz/ops_corpus)
//
// Inputs it finds that fail go to tests/fuzz/ops_regressions/, which the unit tests replay
// (tests/unit/test_op_sequences.cpp).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/op_sequence.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (const std::string failure = cuckoo::test::run_op_sequence({data, size}); !failure.empty()) {
    std::fprintf(stderr, "fuzz_ops: %s\n", failure.c_str());
    std::abort();
  }
  return 0;
}
