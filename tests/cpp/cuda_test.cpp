// The fixtures on CUDA in bf16 against fp32 on the CPU, and the prefix path against the plain path on CUDA.
// Skipped where this build or machine has no CUDA device.

#include "model/config/model_config.h"
#include "model/layers/mixer.h"
#include "model/ops/merge_attention.h"
#include "test_support.h"

#include <gtest/gtest.h>

namespace prefix_scorer::test {
namespace {

class OnCuda : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device in this build or machine";
  }
};

TEST_P(OnCuda, Bfloat16FixturesAgreeWithFloat32) {
  ModelOptions cuda;
  cuda.device = "cuda";
  cuda.dtype = "bfloat16";
  expect_bfloat16_agrees_with_fixture(Model::load(model_dir(GetParam()), cuda), GetParam());
}

TEST_P(OnCuda, PrefixPathEqualsPlainPathOnTheDevice) {
  ModelOptions cuda;
  cuda.device = "cuda";
  cuda.layer_devices = {"cuda:0", "cpu"};  // half on the GPU, half offloaded
  const auto model = std::make_shared<const Model>(Model::load(model_dir(GetParam()), cuda));
  std::vector<Request> requests = fixture_requests(GetParam());
  for (const Request& r : fixture_requests(GetParam())) requests.push_back({r.context, {r.continuation.front()}});
  const auto plain = score_plain(*model, requests).scores;
  // Both attention paths over cached prefixes whose layers sit on two devices (trees off, so that every shared
  // prefix is cached), then trees on.
  for (const bool cascade : {false, true}) {
    for (const int64_t trees : {0, 8}) {
      PrefixScorerOptions options;
      options.min_prefix_len = 4;
      options.tree_max_branches = trees;
      options.cascade_min_prefix_len = cascade ? 0 : -1;
      const ScoringResult got = PrefixScorer(model, options).loglikelihood(requests);
      const std::string what = std::string(cascade ? "cascade" : "gather") + (trees ? ", trees" : "");
      expect_same_scores(got.scores, plain, what, 1e-4);
      if (trees) {
        EXPECT_GT(got.stats.trees_packed, 0) << what;
      } else {
        EXPECT_GT(got.stats.prefixes_prefilled, 0) << what;
        if (cascade) EXPECT_GT(cascade_exact(model->spec()) ? got.stats.cascade_forwards
                                                            : got.stats.cascade_fallbacks, 0) << what;
      }
    }
  }
}

// "cuda" names its device's index; the cascade default resolves to gather; a forward leaves torch's choice of
// attention kernels as it found it.
TEST(OnCudaDefaults, DevicesCascadeAndTheAttentionSetting) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device in this build or machine";
  ModelOptions cuda;
  cuda.device = "cuda";
  const auto model = std::make_shared<const Model>(Model::synthetic("tiny", cuda));
  EXPECT_TRUE(model->layer_device(0).has_index());
  const PrefixScorer scorer(model, PrefixScorerOptions{});
  EXPECT_EQ(scorer.options().cascade_min_prefix_len, -1);
  const bool cudnn = at::globalContext().userEnabledCuDNNSDP();
  score_plain(*model, {{{1, 2, 3}, {4}}});
  EXPECT_EQ(at::globalContext().userEnabledCuDNNSDP(), cudnn);
}

TEST(OnCudaKernels, MergeAttentionEqualsItsReference) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device in this build or machine";
  at::manual_seed(3);
  const at::Tensor out_a = at::randn({3, 4, 17, 32}), out_b = at::randn({3, 4, 17, 32});
  at::Tensor lse_a = at::randn({3, 4, 17, 1}) * 5, lse_b = at::randn({3, 4, 17, 1}) * 5;
  lse_a.index_put_({0}, -1e30);  // a part with no visible key
  for (const auto dtype : {at::kFloat, at::kBFloat16}) {
    const at::Tensor want = merge_attention_reference(out_a, lse_a, out_b, lse_b, dtype).to(at::kFloat);
    const at::Tensor got =
        merge_attention(out_a.cuda(), lse_a.cuda(), out_b.cuda(), lse_b.cuda(), dtype).cpu().to(at::kFloat);
    const double tolerance = dtype == at::kFloat ? 1e-5 : 2e-2;
    EXPECT_TRUE(at::allclose(got, want, tolerance, tolerance)) << "dtype " << dtype;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OnCuda, testing::ValuesIn(fixture_models()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace prefix_scorer::test
