#include "floor.h"

#include "model/config/layer_spec.h"
#include "scoring/rows.h"

#include <algorithm>
#include <chrono>
#include <map>

namespace prefix_scorer::bench {

FloorWork floor_work(const std::vector<Request>& requests, const Model& model, int64_t max_length) {
  const ModelConfig& c = model.config();
  int64_t truncated = 0;
  std::vector<ScoringRow> rows = make_rows(requests, c, max_length, true, truncated);
  std::sort(rows.begin(), rows.end(), [](const ScoringRow& a, const ScoringRow& b) { return a.input < b.input; });
  FloorWork w;
  // Every distinct token's query sees itself and the keys before it: as many as its position + 1.
  std::vector<int64_t> keys_seen;
  for (size_t i = 0; i < rows.size(); ++i) {
    size_t shared = 0;
    if (i > 0) {
      const TokenIds &a = rows[i - 1].input, &b = rows[i].input;
      while (shared < std::min(a.size(), b.size()) && a[shared] == b[shared]) ++shared;
    }
    w.unique_tokens += static_cast<int64_t>(rows[i].input.size() - shared);
    w.scored_positions += rows[i].scored;
    for (size_t p = shared; p < rows[i].input.size(); ++p) keys_seen.push_back(static_cast<int64_t>(p + 1));
  }
  // The keys attended over all distinct tokens, through a window (0: none).
  std::map<int64_t, double> keys_by_window;
  auto keys_within = [&](int64_t window) {
    auto [it, added] = keys_by_window.try_emplace(window, 0.0);
    if (added)
      for (const int64_t keys : keys_seen) it->second += static_cast<double>(window > 0 ? std::min(keys, window) : keys);
    return it->second;
  };
  const double h = static_cast<double>(c.hidden_size);
  double params_per_token = 0.0;  // over all layers
  for (const LayerSpec& layer : model.spec().layers) {
    const AttentionSpec& a = layer.attention;
    const MlpSpec& m = layer.mlp;
    const auto heads = static_cast<double>(a.heads);
    if (layer.mixer == MixerKind::kLatentAttention) {  // the query's projections, kv_a, kv_b and o, as transformers
      const LatentSpec& l = layer.latent;
      const auto q_width = static_cast<double>(l.q_width(a.heads));
      params_per_token += (l.q_rank > 0 ? l.q_rank * (h + q_width) : h * q_width) + h * l.latent_width() +
                          l.kv_rank * heads * (l.nope_dim + l.value_dim) + heads * l.value_dim * h;
    } else {
      params_per_token += h * (2.0 * a.q_width() + 2.0 * a.kv_width());  // q and o; k and v
    }
    if (m.kind == MlpKind::kExperts) {  // the router, the experts a token is routed to, the shared expert and its gate
      params_per_token += h * m.router.experts + 3.0 * h * m.size * m.router.per_token;
      if (m.router.shared_expert_size > 0) params_per_token += 3.0 * h * m.router.shared_expert_size + h;
    } else {
      params_per_token += (m.kind == MlpKind::kGated ? 3.0 : 2.0) * h * m.size;  // gate, up, down; or up, down
    }
    // Per head, a query over n keys: q.k for each (2 n head_dim), then the weighted sum of values (2 n head_dim);
    // latent attention's heads as expanded (keys of nope + rope, values of value_dim).
    const double per_key = layer.mixer == MixerKind::kLatentAttention
                               ? 2.0 * heads * (layer.latent.nope_dim + layer.latent.rope_dim + layer.latent.value_dim)
                               : 4.0 * static_cast<double>(a.q_width());
    w.attention_flops += per_key * keys_within(a.window);
  }
  w.weight_flops = 2.0 * params_per_token * w.unique_tokens + 2.0 * h * c.vocab_size * w.scored_positions;
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
