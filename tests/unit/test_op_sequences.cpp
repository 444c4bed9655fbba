// Operation sequences against an exact model (tests/support/op_sequence.hpp): the operations
// fuzzer's seed corpus and every failing input it ever found (tests/fuzz/ops_corpus,
// tests/fuzz/ops_regressions), then inputs drawn from a fixed seed, so that every build runs the
// checks over every structure the fuzzer reaches, not only clang's `make fuzz`.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "support/io_test_support.hpp"
#include "support/op_sequence.hpp"

namespace {

TEST(OpSequences, KeptInputsPass) {
  const std::size_t files = cuckoo::test::for_each_kept_input(
      {"ops_corpus", "ops_regressions"},
      [](const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
        SCOPED_TRACE(path.string());
        const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
        EXPECT_EQ(cuckoo::test::run_op_sequence({data, bytes.size()}), "");
      });
  EXPECT_GE(files, 6u);  // one seed per structure kind
}

// Each structure kind (the first byte) with 1,000 random sequences of up to 600 operation bytes.
TEST(OpSequences, RandomSequencesOfEveryKindPass) {
  std::mt19937_64 rng(20261202);
  for (unsigned kind = 0; kind < 6; ++kind) {
    for (int input = 0; input < 1000; ++input) {
      std::vector<std::uint8_t> bytes(1 + rng() % 600);
      for (auto& byte : bytes) byte = static_cast<std::uint8_t>(rng());
      bytes[0] = static_cast<std::uint8_t>(kind);
      const std::string failure = cuckoo::test::run_op_sequence(bytes);
      ASSERT_EQ(failure, "") << "kind " << kind << ", input " << input;
    }
  }
}

}  // namespace
