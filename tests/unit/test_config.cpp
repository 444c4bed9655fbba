// Configuration: documented defaults, derived widths (paper Eq. 6), and every impossible Config
// rejected with std::invalid_argument whose message names the offending field.
#include <gtest/gtest.h>

#include <string>

#include "cuckoo/cuckoo.hpp"

namespace {

void expect_rejected(const cuckoo::Config& cfg, const std::string& field) {
  try {
    cuckoo::Filter filter{cfg};
    ADD_FAILURE() << "accepted a bad config; expected a complaint about " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(Config, DefaultsAreTheDocumentedConstants) {
  const cuckoo::Config cfg;
  EXPECT_EQ(cfg.capacity, cuckoo::defaults::kCapacity);
  EXPECT_EQ(cfg.target_fpr, 0.001);
  EXPECT_EQ(cfg.fingerprint_bits, 0u);
  EXPECT_EQ(cfg.bucket_size, 4u);
  EXPECT_EQ(cfg.max_kicks, 500u);
  EXPECT_EQ(cfg.seed, 0x243F6A8885A308D3ull);
  EXPECT_FALSE(cfg.semi_sort);
  const cuckoo::Filter filter{cfg};
  EXPECT_EQ(filter.fingerprint_bits(), 13u);  // ceil(log2(8 / 0.001)) = ceil(12.97)
  EXPECT_EQ(filter.bucket_size(), 4u);
  EXPECT_EQ(filter.seed(), cfg.seed);
  EXPECT_EQ(filter.capacity(), cfg.capacity);
}

TEST(Config, FingerprintWidthFollowsEquation6) {
  for (unsigned b : {2u, 4u, 8u}) {
    for (double eps : {0.5, 0.1, 0.03, 0.01, 0.001, 1e-4, 1e-6}) {
      const cuckoo::Filter filter{
          cuckoo::Config{.capacity = 100, .target_fpr = eps, .bucket_size = b}};
      const unsigned f = filter.fingerprint_bits();
      EXPECT_LE(2.0 * b / std::ldexp(1.0, static_cast<int>(f)), eps * (1 + 1e-12));
      if (f > 2) {
        EXPECT_GT(2.0 * b / std::ldexp(1.0, static_cast<int>(f - 1)), eps);
      }
    }
  }
  // Exact powers of two must not gain a bit from rounding: 2·4 / 2^-10·... = 2^13 → 13 bits.
  EXPECT_EQ(cuckoo::fingerprint_bits_for(8.0 / 8192.0, 4), 13u);
}

TEST(Config, ExplicitWidthWins) {
  for (unsigned f = 2; f <= 32; ++f) {
    const cuckoo::Filter filter{
        cuckoo::Config{.capacity = 10, .target_fpr = 0.5, .fingerprint_bits = f}};
    EXPECT_EQ(filter.fingerprint_bits(), f);
  }
}

TEST(Config, ImpossibleConfigsAreRejectedWithAMessage) {
  expect_rejected({.capacity = 0}, "capacity");
  expect_rejected({.capacity = std::size_t{1} << 40, .fingerprint_bits = 8, .bucket_size = 2},
                  "capacity");
  expect_rejected({.target_fpr = 0.0}, "target_fpr");
  expect_rejected({.target_fpr = 1.0}, "target_fpr");
  expect_rejected({.target_fpr = -0.1}, "target_fpr");
  expect_rejected({.target_fpr = std::nan("")}, "target_fpr");
  expect_rejected({.target_fpr = 1e-12}, "target_fpr");  // needs 43 bits
  expect_rejected({.fingerprint_bits = 1}, "fingerprint_bits");
  expect_rejected({.fingerprint_bits = 33}, "fingerprint_bits");
  expect_rejected({.bucket_size = 3}, "bucket_size");
  expect_rejected({.bucket_size = 16}, "bucket_size");
  expect_rejected({.bucket_size = 0}, "bucket_size");
  expect_rejected({.max_kicks = (1u << 20) + 1}, "max_kicks");
  expect_rejected({.bucket_size = 2, .semi_sort = true}, "semi_sort");
}

TEST(Config, CompileTimeCoreRejectsAMismatchedConfig) {
  using Core = cuckoo::BasicFilter<cuckoo::PackedTable<4, 12>>;
  EXPECT_THROW(Core(cuckoo::Config{.fingerprint_bits = 13}), std::invalid_argument);
  EXPECT_THROW(Core(cuckoo::Config{.fingerprint_bits = 12, .bucket_size = 2}),
               std::invalid_argument);
  EXPECT_NO_THROW(Core(cuckoo::Config{.fingerprint_bits = 12}));
}

}  // namespace
