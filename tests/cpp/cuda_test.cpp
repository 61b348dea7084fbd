// The fixtures on CUDA in bf16 against fp32 on the CPU, and the prefix path against the plain path on CUDA.
// Skipped where this build or machine has no CUDA device.

#include "merge_attention.h"
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

std::vector<Request> fixture_requests(const std::string& name) {
  std::vector<Request> requests;
  for (const auto& row : expected_scores(name)) requests.push_back(row.request);
  return requests;
}

TEST_P(OnCuda, Bfloat16FixturesAgreeWithFloat32) {
  ModelOptions cuda;
  cuda.device = "cuda";
  cuda.dtype = "bfloat16";
  const Model gpu = Model::load(model_dir(GetParam()), cuda);
  const auto expected = expected_scores(GetParam());
  const ScoringResult result = score_plain(gpu, fixture_requests(GetParam()));
  for (size_t i = 0; i < expected.size(); ++i) {
    const double tokens = static_cast<double>(expected[i].request.continuation.size());
    EXPECT_NEAR(result.scores[i].logprob, expected[i].logprob, 5e-2 * tokens) << "request " << i;
  }
  const TokenIds& tokens = expected.front().request.context;
  const at::Tensor want = full_logprobs(Model::load(model_dir(GetParam())), tokens).argmax(-1);
  const at::Tensor got = full_logprobs(gpu, tokens).argmax(-1).cpu();
  EXPECT_GE(got.eq(want).to(at::kFloat).mean().item<double>(), 0.95);  // bf16 may flip a near-tie
}

TEST_P(OnCuda, PrefixPathEqualsPlainPathOnTheDevice) {
  ModelOptions cuda;
  cuda.device = "cuda";
  cuda.layer_devices = {"cuda:0", "cpu"};  // half on the GPU, half offloaded
  const auto model = std::make_shared<const Model>(Model::load(model_dir(GetParam()), cuda));
  std::vector<Request> requests = fixture_requests(GetParam());
  for (const Request& r : fixture_requests(GetParam())) requests.push_back({r.context, {r.continuation.front()}});
  const auto plain = score_plain(*model, requests).scores;
  for (const bool cascade : {false, true}) {
    PrefixScorerOptions options;
    options.min_prefix_len = 4;
    options.cascade_min_prefix_len = cascade ? 0 : -1;
    const auto got = PrefixScorer(model, options).loglikelihood(requests).scores;
    for (size_t i = 0; i < requests.size(); ++i) {
      EXPECT_NEAR(got[i].logprob, plain[i].logprob, 1e-4) << "request " << i << ", cascade " << cascade;
      EXPECT_EQ(got[i].is_greedy, plain[i].is_greedy) << "request " << i;
    }
  }
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
