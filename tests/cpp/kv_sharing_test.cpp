// Layers that read an earlier layer's keys and values (kv_shared_layers, as Gemma 3n and Gemma 4 have them): they
// compute and hold none, and every path (cached prefixes, cascade, gather, generation) gives the plain forward's
// numbers.

#include "test_support.h"

#include "model/checkpoint/checkpoint_layout.h"
#include "model/config/layer_spec.h"
#include "model/layers/mixer.h"

#include <gtest/gtest.h>

namespace prefix_scorer::test {
namespace {

ModelConfig with_shared_layers(const std::string& shape, int64_t shared) {
  ModelConfig c = ModelConfig::synthetic(shape);
  c.kv_shared_layers = shared;
  c.validate();
  return c;
}

// Random weights for `config` on the CPU (norms the identity, projections drawn at a scale that makes scores differ).
std::shared_ptr<const Model> random_model(const ModelConfig& config) {
  at::manual_seed(7);
  auto source = [&config](const TensorSpec& spec, c10::Device device) {
    const auto options = at::TensorOptions().device(device).dtype(at::kFloat);
    if (spec.shape.size() == 1) return config.norm_plus_one ? at::zeros(spec.shape, options) : at::ones(spec.shape, options);
    return at::randn(spec.shape, options) * 0.05;
  };
  const std::vector<c10::Device> devices(config.num_layers, c10::kCPU);
  auto weights = std::make_shared<const ModelWeights>(assemble_weights(config, model_layout(config), source, devices, at::kFloat));
  return std::make_shared<const Model>(config, weights, at::kFloat);
}

// Two few-shot-like contexts, each with several questions and one- and two-token continuations.
std::vector<Request> shared_prefix_requests() {
  std::vector<Request> requests;
  for (int64_t subject = 0; subject < 2; ++subject) {
    TokenIds prefix;
    for (int64_t i = 0; i < 40; ++i) prefix.push_back(3 + (i * 17 + subject * 5) % 900);
    for (int64_t q = 0; q < 4; ++q) {
      TokenIds context = prefix;
      for (int64_t i = 0; i <= q + 3; ++i) context.push_back(50 + (q * 31 + i * 7) % 800);
      requests.push_back({context, {100 + q}});
      requests.push_back({context, {200 + q, 300 + q}});
    }
  }
  return requests;
}

TEST(KvSharing, SharedLayersReadTheLastEarlierLayerOfTheirKind) {
  const ModelSpec llama = model_spec(with_shared_layers("tiny", 2));  // 4 full layers
  EXPECT_EQ(llama.layers[0].attention.kv_layer, 0);
  EXPECT_EQ(llama.layers[1].attention.kv_layer, 1);
  EXPECT_EQ(llama.layers[2].attention.kv_layer, 1);
  EXPECT_EQ(llama.layers[3].attention.kv_layer, 1);
  // tiny-gemma3: layers 0, 1 and 3 slide, 2 attends in full.
  const ModelSpec gemma3 = model_spec(with_shared_layers("tiny-gemma3", 1));
  EXPECT_EQ(gemma3.layers[3].attention.kv_layer, 1);
  EXPECT_EQ(gemma3.layers[2].attention.kv_layer, 2);
  // Layer 2 (full) would have no earlier full layer to read; and some layer must compute keys and values.
  EXPECT_THROW(with_shared_layers("tiny-gemma3", 2), std::invalid_argument);
  EXPECT_THROW(with_shared_layers("tiny", 4), std::invalid_argument);
}

TEST(KvSharing, SharedLayersHaveNoKeyOrValueProjectionAndHoldNoKeys) {
  const ModelConfig config = with_shared_layers("tiny", 2);
  int64_t k_projections = 0;
  for (const TensorSpec& t : expected_tensors(model_layout(config)))
    k_projections += t.name.find("k_proj.weight") != std::string::npos ? 1 : 0;
  EXPECT_EQ(k_projections, 2);
  const auto model = random_model(config);
  EXPECT_EQ(kv_bytes(*model, 1), 2 * 2 * config.num_kv_heads * config.head_dim * 4);  // two layers' keys and values
  KvCache cache(config.num_layers);
  const TokenIds tokens{5, 6, 7, 8, 9};
  model->forward(make_batch({&tokens}, {0}), &cache, at::zeros({1}, at::kLong));
  EXPECT_FALSE(cache.layer(1).empty());
  EXPECT_TRUE(cache.layer(2).empty());
  EXPECT_TRUE(cache.layer(3).empty());
}

TEST(KvSharing, EveryPathGivesThePlainNumbers) {
  for (const char* shape : {"tiny", "tiny-gemma3"}) {  // cascade applies to the first; the second's windows gather
    const auto model = random_model(with_shared_layers(shape, shape == std::string("tiny") ? 2 : 1));
    const std::vector<Request> requests = shared_prefix_requests();
    const std::vector<Score> plain = score_plain(*model, requests).scores;
    // The cached prefix and the layers computed again after it agree with computing everything at once.
    TokenIds whole = requests[3].context;
    whole.push_back(requests[3].continuation[0]);
    const at::Tensor full = full_logprobs(*model, whole);
    const TokenIds head(whole.begin(), whole.begin() + 30), tail(whole.begin() + 30, whole.end());
    KvCache cache(model->config().num_layers);
    model->forward(make_batch({&head}, {0}), &cache, at::zeros({1}, at::kLong));
    const auto rest = static_cast<int64_t>(tail.size());
    const at::Tensor after = model->forward(make_batch({&tail}, {30}), &cache, at::arange(rest, at::kLong));
    EXPECT_LT((after - full.narrow(0, 30, rest)).abs().max().item<double>(), 1e-5) << shape;
    for (const int64_t cascade : {0, -1}) {
      PrefixScorerOptions options;
      options.min_prefix_len = 2;
      options.cascade_min_prefix_len = cascade;
      PrefixScorer scorer(model, options);
      const ScoringResult got = scorer.loglikelihood(requests);
      expect_same_scores(got.scores, plain, std::string(shape) + (cascade == 0 ? " cascade" : " gather"));
      EXPECT_GT(got.stats.prefixes_prefilled + got.stats.trees_packed, 0) << shape;
      if (cascade == 0 && cascade_exact(model->spec())) EXPECT_GT(got.stats.cascade_forwards, 0) << shape;
    }
    // Generation: rows sharing a prefix decode as each prompt does alone.
    std::vector<GenerationRequest> prompts;
    for (size_t i = 0; i < 3; ++i) prompts.push_back({requests[2 * i].context, 5, {}, {}});
    PrefixScorerOptions options;
    options.min_prefix_len = 2;
    options.cascade_min_prefix_len = 0;
    const GenerationResult together = PrefixScorer(model, options).generate(prompts);
    for (size_t i = 0; i < prompts.size(); ++i)
      EXPECT_EQ(together.generations[i].tokens, PrefixScorer(model).generate({prompts[i]}).generations[0].tokens)
          << shape << " prompt " << i;
  }
}

}  // namespace
}  // namespace prefix_scorer::test
