#include "floor.h"

#include "scoring/rows.h"

#include <algorithm>
#include <chrono>

namespace prefix_scorer::bench {

FloorWork floor_work(const std::vector<Request>& requests, const Model& model, int64_t max_length) {
  const ModelConfig& c = model.config();
  int64_t truncated = 0;
  std::vector<ScoringRow> rows = make_rows(requests, c.vocab_size, c.window(max_length), true, truncated);
  std::sort(rows.begin(), rows.end(), [](const ScoringRow& a, const ScoringRow& b) { return a.input < b.input; });
  FloorWork w;
  // Over every distinct token: the keys its query sees (itself and those before it), in full-attention layers and
  // in sliding-window ones.
  double keys_full = 0.0, keys_windowed = 0.0;
  for (size_t i = 0; i < rows.size(); ++i) {
    size_t shared = 0;
    if (i > 0) {
      const TokenIds &a = rows[i - 1].input, &b = rows[i].input;
      while (shared < std::min(a.size(), b.size()) && a[shared] == b[shared]) ++shared;
    }
    w.unique_tokens += static_cast<int64_t>(rows[i].input.size() - shared);
    w.scored_positions += rows[i].scored;
    for (size_t p = shared; p < rows[i].input.size(); ++p) {
      const auto keys = static_cast<int64_t>(p + 1);
      keys_full += static_cast<double>(keys);
      keys_windowed += static_cast<double>(c.sliding_window > 0 ? std::min(keys, c.sliding_window) : keys);
    }
  }
  const double h = static_cast<double>(c.hidden_size);
  const double projections = h * c.head_dim * (2.0 * c.num_heads + 2.0 * c.num_kv_heads);
  double params_per_token = 0.0, keys_attended = 0.0;  // over all layers
  for (int64_t l = 0; l < c.num_layers; ++l) {
    params_per_token += projections;
    if (c.is_moe_layer(l)) {  // the router, the experts a token is routed to, and the shared expert with its gate
      params_per_token += h * c.num_experts + 3.0 * h * c.moe_intermediate_size * c.experts_per_token;
      if (c.shared_expert_intermediate_size > 0) params_per_token += 3.0 * h * c.shared_expert_intermediate_size + h;
    } else {
      params_per_token += (c.gated_mlp ? 3.0 : 2.0) * h * c.intermediate_size;  // gate, up, down; or up, down
    }
    keys_attended += c.layer_window(l) > 0 ? keys_windowed : keys_full;
  }
  w.weight_flops = 2.0 * params_per_token * w.unique_tokens + 2.0 * h * c.vocab_size * w.scored_positions;
  // Per head, a query over n keys: q.k for each (2 n head_dim), then the weighted sum of values (2 n head_dim).
  w.attention_flops = 4.0 * c.num_heads * c.head_dim * keys_attended;
  w.flops = w.weight_flops + w.attention_flops;
  return w;
}

double matmul_rate(const Model& model) {
  const c10::Device device = model.layer_device(0);
  const int64_t n = device.is_cuda() ? 8192 : 1024, reps = device.is_cuda() ? 20 : 4;
  const auto options = at::TensorOptions().device(device).dtype(model.dtype());
  const at::Tensor a = at::randn({n, n}, options), b = at::randn({n, n}, options);
  at::matmul(a, b).sum().item<double>();  // warm up, and wait for the device
  const auto start = std::chrono::steady_clock::now();
  at::Tensor sink = at::zeros({}, options);
  for (int64_t i = 0; i < reps; ++i) sink = sink + at::matmul(a, b)[0][0];
  sink.item<double>();  // waits for the device
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return 2.0 * static_cast<double>(n) * n * n * reps / seconds;
}

}  // namespace prefix_scorer::bench
