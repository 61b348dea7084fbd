#pragma once
// The work no exact method can skip, and the device's matmul rate, for model FLOP utilisation (MFU).

#include "prefix_scorer/model.h"
#include "prefix_scorer/types.h"

#include <vector>

namespace prefix_scorer::bench {

// Every distinct token once through every layer's weights (2 x the parameters a token uses: in a mixture-of-experts
// layer the router, its experts_per_token experts and the shared expert), lm_head for every scored position, and
// every distinct token's attention over the keys up to it (within the layer's sliding window, if it has one).
// Distinct tokens are the nodes of the token trie of the forward rows: a shared prefix counts once.
struct FloorWork {
  int64_t unique_tokens = 0;
  int64_t scored_positions = 0;
  double weight_flops = 0.0;
  double attention_flops = 0.0;
  double flops = 0.0;  // the two together
};

FloorWork floor_work(const std::vector<Request>& requests, const Model& model, int64_t max_length);

// Dense matmul FLOP/s on the model's first layer's device and dtype, measured over a few square matmuls.
double matmul_rate(const Model& model);

}  // namespace prefix_scorer::bench
