// What a call moves between the host and the devices: counted per call in the stats, the same whatever the number
// of layers (inputs go to each device once a forward, never once a layer).

#include "model/checkpoint/checkpoint_layout.h"
#include "model/checkpoint/weights.h"
#include "model/host_transfers.h"
#include "model/layers/mixer.h"
#include "test_support.h"

#include <gtest/gtest.h>

namespace prefix_scorer::test {
namespace {

// synthetic:NAME's shape with `layers` layers, random weights.
std::shared_ptr<const Model> with_layers(const std::string& name, int64_t layers) {
  ModelConfig config = ModelConfig::synthetic(name);
  config.num_layers = layers;
  if (!config.layer_kinds.empty()) {  // every third layer full, as synthetic:tiny-gemma3 has them
    config.layer_kinds.clear();
    for (int64_t i = 0; i < layers; ++i)
      config.layer_kinds.push_back((i + 1) % 3 == 0 ? LayerKind::kFullAttention : LayerKind::kSlidingAttention);
  }
  if (!config.moe_layers.empty()) config.moe_layers.assign(layers, true);
  at::manual_seed(0);
  auto source = [](const TensorSpec& spec, c10::Device) { return at::randn(spec.shape) * 0.02; };
  auto weights = std::make_shared<const ModelWeights>(
      assemble_weights(config, model_layout(config), source, std::vector<c10::Device>(layers, c10::kCPU), at::kFloat));
  return std::make_shared<const Model>(config, weights, at::kFloat);
}

// Subjects of questions after a shared prefix, each question with four one-token choices.
std::vector<Request> subjects_of_questions() {
  std::vector<Request> requests;
  for (int64_t s = 0; s < 2; ++s) {
    for (int64_t q = 0; q < 6; ++q) {
      TokenIds context;
      for (int64_t i = 0; i < 48 + 5 * q; ++i) context.push_back(1 + (i < 48 ? s * 97 + i : q * 31 + i) % 1000);
      for (int64_t c = 0; c < 4; ++c) requests.push_back({context, {100 + c}});
    }
  }
  return requests;
}

struct Moved {
  int64_t forwards, copies, syncs, bytes_to_device, bytes_to_host;
};

Moved moved_by(const std::string& name, int64_t layers, int64_t cascade_min_prefix_len) {
  PrefixScorerOptions options;
  options.min_prefix_len = 8;
  options.tree_max_branches = 2;  // the questions' prefixes are cached, not packed
  options.cascade_min_prefix_len = cascade_min_prefix_len;
  const auto model = with_layers(name, layers);
  PrefixScorer scorer(model, options);
  const ScoringStats s = scorer.loglikelihood(subjects_of_questions()).stats;
  EXPECT_GT(s.prefixes_prefilled, 0);
  EXPECT_EQ(s.cascade_forwards > 0, cascade_exact(model->spec()) && cascade_min_prefix_len == 0);
  return {s.forwards, s.host_copies, s.host_syncs, s.bytes_to_device, s.bytes_to_host};
}

class HostTransfers : public testing::TestWithParam<const char*> {};

TEST_P(HostTransfers, AreTheSameForTwoLayersAndForSix) {
  for (const int64_t cascade : {int64_t{0}, int64_t{-1}}) {  // cascade, then gather
    const Moved two = moved_by(GetParam(), 2, cascade), six = moved_by(GetParam(), 6, cascade);
    EXPECT_EQ(two.forwards, six.forwards);
    EXPECT_GT(two.copies, 0);
    EXPECT_EQ(two.copies, six.copies) << "cascade_min_prefix_len " << cascade;
    EXPECT_EQ(two.syncs, six.syncs) << "cascade_min_prefix_len " << cascade;
    EXPECT_GT(two.bytes_to_device, 0);
    EXPECT_EQ(two.bytes_to_device, six.bytes_to_device) << "cascade_min_prefix_len " << cascade;
    EXPECT_EQ(two.bytes_to_host, six.bytes_to_host) << "cascade_min_prefix_len " << cascade;
    EXPECT_LE(two.syncs, two.forwards);  // one download per scored batch at most
  }
}

TEST_P(HostTransfers, ThePlainPathMovesAsMuchForTwoLayersAsForSix) {
  const std::vector<Request> requests = subjects_of_questions();
  const ScoringStats two = score_plain(*with_layers(GetParam(), 2), requests).stats;
  const ScoringStats six = score_plain(*with_layers(GetParam(), 6), requests).stats;
  EXPECT_GT(two.host_copies, 0);
  EXPECT_EQ(two.host_copies, six.host_copies);
  EXPECT_EQ(two.host_syncs, six.host_syncs);
}

TEST(HostTransfers, OnlyHostTensorsAreUploaded) {
  EXPECT_NE(message_of<std::invalid_argument>([] { upload(at::empty({2}, at::kMeta), c10::kCPU); })
                .find("upload: the tensor is not on the host"),
            std::string::npos);
}

// tiny: full attention; tiny-gemma3: sliding and full layers, each with its rope, and gathered prefixes only;
// tiny-moe: a mixture of experts in every layer, without a host sync of its own.
INSTANTIATE_TEST_SUITE_P(Shapes, HostTransfers, testing::Values("tiny", "tiny-gemma3", "tiny-moe"));

}  // namespace
}  // namespace prefix_scorer::test
