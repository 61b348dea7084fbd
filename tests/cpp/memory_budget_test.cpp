// The memory budget (forward_bytes) against what a forward after cached prefixes really allocates, measured by the
// CPU allocator's own reports: the estimate bounds the peak and is not far above it, by cascade and by gather, and
// with weights kept quantized (dequantized into a workspace before their products).

#include "model/config/model_config.h"
#include "model/device_memory.h"
#include "model/forward_batch.h"
#include "scoring/batching.h"
#include "scoring/cascade_or_gather.h"
#include "scoring/prefix_kv.h"
#include "test_support.h"

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <gtest/gtest.h>

#include <mutex>

namespace prefix_scorer::test {
namespace {

// The CPU allocator reports every allocation and free to this while it is installed: the bytes live, and the peak.
class PeakMemory : public c10::MemoryReportingInfoBase {
 public:
  void reportMemoryUsage(void*, int64_t size, size_t, size_t, c10::Device device) override {
    if (!device.is_cpu()) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    live_ += size;
    peak_ = std::max(peak_, live_);
  }
  bool memoryProfilingEnabled() const override { return true; }
  int64_t peak() const { return peak_; }

 private:
  std::mutex mutex_;
  int64_t live_ = 0, peak_ = 0;
};

// The peak bytes `run` allocates on the CPU, from every thread it runs on.
template <typename Run>
int64_t peak_bytes_of(Run run) {
  const auto peak = std::make_shared<PeakMemory>();
  {
    const c10::DebugInfoGuard guard(c10::DebugInfoKind::PROFILER_STATE, peak);
    run();
  }
  return peak->peak();
}

struct Case {
  const char* model;
  int64_t rows, suffix, prefix;
  bool cascade;
  const char* quantize = "";  // ModelOptions::quantize
};

class MemoryBudget : public testing::TestWithParam<Case> {};

TEST_P(MemoryBudget, BoundsWhatAForwardAfterAPrefixAllocates) {
  const Case c = GetParam();
  ModelOptions model_options;
  model_options.quantize = c.quantize;
  const Model model = Model::synthetic(c.model, model_options);
  EXPECT_EQ(model.dequantize_workspace().projection_bytes > 0, std::string(c.quantize) == "fp8");
  TokenIds prefix(c.prefix);
  for (int64_t i = 0; i < c.prefix; ++i) prefix[i] = 1 + i % 500;
  const EntryPtr entry = prefilled(model, prefix);
  std::vector<TokenIds> suffixes(c.rows);
  std::vector<const TokenIds*> inputs;
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int64_t i = 0; i < c.suffix; ++i) suffixes[r].push_back(1 + (r * 7 + i) % 500);
    inputs.push_back(&suffixes[r]);
  }
  const ForwardBatch batch = make_batch(inputs, std::vector<int64_t>(c.rows, c.prefix));
  const at::Tensor score_rows = last_positions(std::vector<int64_t>(c.rows, c.suffix),
                                               std::vector<int64_t>(c.rows, 1), c.suffix);
  PrefixScorerOptions options;
  options.cascade_min_prefix_len = c.cascade ? 0 : -1;
  const std::vector<const PrefixEntry*> prefixes(c.rows, entry.get());
  ScoringStats stats;
  const int64_t peak = peak_bytes_of([&] { forward_after(model, options, prefixes, batch, score_rows, stats); });
  EXPECT_EQ(stats.cascade_forwards, c.cascade ? 1 : 0);
  const int64_t estimate = forward_bytes(batch_memory(model, options), c.rows, c.suffix, c.prefix);
  // Measured: the estimate 1.4 to 1.7 times the peak by gather, 1.9 to 2.5 by cascade (which holds each distinct
  // prefix once where the estimate counts it per row); the former estimate (keys, values and masks only) was below
  // the peak (8.5 MB against 9.2 MB for the first case; 41% of it for gemma2's soft-capped scores).
  EXPECT_GE(estimate, peak) << "estimate " << estimate << ", peak " << peak;
  EXPECT_LE(estimate, 3 * peak) << "estimate " << estimate << ", peak " << peak;
}

// On the CPU the default budget follows the machine: a quarter of the memory available, never under 1 GiB. The
// available memory moves between readings while other tests run beside this one: 512 MiB of slack either way.
TEST(DefaultBudget, OnTheCpuAQuarterOfTheAvailableMemoryAtLeastOneGib) {
  const int64_t gib = int64_t{1} << 30, slack = int64_t{512} << 20;
  const int64_t before = host_memory_bytes("MemAvailable");
  const int64_t budget = default_batch_bytes(c10::Device(c10::kCPU));
  const int64_t after = host_memory_bytes("MemAvailable");
  ASSERT_GT(before, 0) << "no MemAvailable in /proc/meminfo";
  EXPECT_GE(budget, std::max(gib, std::min(before, after) / 4 - slack));
  EXPECT_LE(budget, std::max(gib, std::max(before, after) / 4 + slack));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MemoryBudget,
    testing::Values(Case{"tiny", 8, 64, 256, false}, Case{"tiny", 8, 64, 256, true}, Case{"tiny", 2, 256, 512, false},
                    Case{"tiny", 2, 256, 512, true}, Case{"tiny-gemma2", 4, 96, 128, false},
                    Case{"small", 4, 128, 384, false}, Case{"small", 4, 128, 384, true},
                    // one short row: the dequantized weights (a projection's; all experts of a layer) are most of it
                    Case{"small", 1, 4, 16, false, "fp8"}, Case{"tiny-moe", 1, 4, 16, false, "fp8"}));

}  // namespace
}  // namespace prefix_scorer::test
