// detail::run_prefetch_pipeline, the loop under every batch call: each key is staged once and
// stepped once, in order, with the probe its own stage returned; a key's stage comes Depth keys
// before its step (fewer only where the batch ends); a step that returns false stops the batch
// there. Every depth the filters and comparators use, and batch sizes around it.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuckoo/detail/prefetch_pipeline.hpp"

namespace {

struct PipelineTrace {
  std::vector<std::size_t> staged;   // keys in the order they were staged
  std::vector<std::size_t> stepped;  // keys in the order they were stepped
  std::vector<bool> stage_seen;
  bool probe_mismatch = false;
  bool stepped_before_staged = false;
  std::size_t least_lead = SIZE_MAX, most_lead = 0;  // keys staged ahead of a step, over steps
  std::size_t least_lead_key = SIZE_MAX;
};

// Runs the pipeline over n keys, stopping at `stop_at` (n: never), and records what it did.
template <std::size_t Depth>
PipelineTrace run_traced(std::size_t n, std::size_t stop_at, std::size_t& returned) {
  PipelineTrace t;
  t.stage_seen.assign(n, false);
  std::size_t highest_staged_plus_one = 0;
  returned = cuckoo::detail::run_prefetch_pipeline<Depth>(
      n,
      [&](std::size_t i) {
        t.staged.push_back(i);
        if (i < n) t.stage_seen[i] = true;
        if (i + 1 > highest_staged_plus_one) highest_staged_plus_one = i + 1;
        return std::uint64_t{i} * 0x9E3779B97F4A7C15ull;  // a probe that names its key
      },
      [&](std::size_t i, std::uint64_t probe) {
        t.stepped.push_back(i);
        if (probe != std::uint64_t{i} * 0x9E3779B97F4A7C15ull) t.probe_mismatch = true;
        if (i >= n || !t.stage_seen[i]) t.stepped_before_staged = true;
        const std::size_t lead = highest_staged_plus_one - 1 - i;
        // Near the end fewer keys are left to stage; only steps with Depth keys after them have
        // the full lead to check.
        if (i + Depth < n && lead < t.least_lead) {
          t.least_lead = lead;
          t.least_lead_key = i;
        }
        if (lead > t.most_lead) t.most_lead = lead;
        return i != stop_at;
      });
  return t;
}

template <std::size_t Depth>
void check_pipeline_at_all_sizes() {
  SCOPED_TRACE(testing::Message() << "Depth " << Depth);
  const std::size_t sizes[] = {0, 1, Depth - 1, Depth, Depth + 1, 2 * Depth + 3, 1000};
  for (std::size_t n : sizes) {
    SCOPED_TRACE(testing::Message() << "n = " << n);
    std::size_t returned = 0;
    const PipelineTrace t = run_traced<Depth>(n, n, returned);
    EXPECT_EQ(returned, n);
    ASSERT_EQ(t.staged.size(), n) << "every key is staged exactly once";
    ASSERT_EQ(t.stepped.size(), n) << "every key is stepped exactly once";
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(t.staged[i], i) << "stages run in key order";
      EXPECT_EQ(t.stepped[i], i) << "steps run in key order";
    }
    EXPECT_FALSE(t.probe_mismatch) << "a step gets the probe its own key's stage returned";
    EXPECT_FALSE(t.stepped_before_staged);
    EXPECT_LE(t.most_lead, Depth) << "no key is staged more than Depth ahead";
    if (t.least_lead != SIZE_MAX) {
      EXPECT_GE(t.least_lead, Depth) << "key " << t.least_lead_key << " was staged too late";
    }

    // A step that returns false ends the batch there: no later step, no stage past the end.
    for (std::size_t stop : {std::size_t{0}, n / 2, n == 0 ? 0 : n - 1}) {
      if (stop >= n) continue;
      const PipelineTrace s = run_traced<Depth>(n, stop, returned);
      EXPECT_EQ(returned, stop);
      ASSERT_EQ(s.stepped.size(), stop + 1);
      EXPECT_EQ(s.stepped.back(), stop);
      for (std::size_t k : s.staged) EXPECT_LT(k, n);
    }
  }
}

TEST(PrefetchPipeline, EveryDepthInUse) {
  check_pipeline_at_all_sizes<1>();
  check_pipeline_at_all_sizes<2>();
  check_pipeline_at_all_sizes<8>();
  check_pipeline_at_all_sizes<16>();
  check_pipeline_at_all_sizes<32>();
  check_pipeline_at_all_sizes<64>();
}

}  // namespace
