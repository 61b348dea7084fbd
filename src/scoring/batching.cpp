#include "scoring/batching.h"

#include "model/config/layer_spec.h"
#include "model/layers/mixer.h"
#include "model/forward_batch.h"
#include "scoring/prefix_kv.h"

#include <algorithm>

namespace prefix_scorer {

BatchMemory batch_memory(const Model& model, const PrefixScorerOptions& options) {
  const ModelConfig& c = model.config();
  const auto e = static_cast<int64_t>(c10::elementSize(model.dtype()));
  const bool may_cascade = options.cascade_min_prefix_len >= 0 || options.cascade_min_prefix_len == kCascadeByDevice;
  // Per query head and (query, key) pair: soft-capped scores are formed in the model's dtype, capped, made fp32,
  // masked and softmaxed (about 4 tensors of each); cascade on CUDA keeps fp32 scores, their exponent and its cast;
  // the fused kernels keep only the mask, boolean and additive.
  int64_t per_score = 1 + e;
  if (c.attn_softcap > 0) {
    per_score = 4 * e + 12;
  } else if (model.layer_device(0).is_cuda() && may_cascade && cascade_exact(model.spec())) {
    per_score = 13 + e;
  }
  // Per token fed: the residual stream and its norms, q, k, v and the attention output (about 6 hidden-wide
  // tensors), the MLP's gate, up and their product (3 of its width: the widest of dense, experts chosen and shared).
  // The widest layer sets both; a recurrent mixer's own workspace (mixer_costs) where it is larger.
  int64_t ff = 0, width = c.hidden_size, heads = 0, recurrent = 0, experts = 0, experts_per_token = 0;
  const ModelSpec& spec = model.spec();
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const LayerSpec& layer = spec.layers[i];
    const MlpSpec& m = layer.mlp;
    const int64_t chosen = m.kind == MlpKind::kExperts ? m.router.per_token * m.size + m.router.shared_expert_size : m.size;
    ff = std::max(ff, chosen);
    if (m.kind == MlpKind::kExperts) {
      experts = std::max(experts, m.router.experts);
      experts_per_token = std::max(experts_per_token, m.router.per_token);
    }
    width = std::max(width, layer.attention.q_width());
    const MixerCosts costs = mixer_costs(spec, i, e);
    heads = std::max(heads, costs.score_heads);
    recurrent = std::max(recurrent, costs.workspace_per_token);
  }
  const int64_t per_token = std::max(e * (6 * width + 3 * ff), recurrent);
  // Per row: one scored position's logits and log-probabilities in fp32.
  return {options.max_batch_bytes, kv_bytes(model, 1), per_score * heads, per_token, 8 * c.output_vocab(),
          state_bytes(model), model.dequantize_workspace(), experts, experts_per_token};
}

int64_t forward_bytes(const BatchMemory& memory, int64_t rows, int64_t suffix, int64_t prefix) {
  return rows * ((prefix + suffix) * memory.kv_bytes_per_token + suffix * (prefix + suffix) * memory.bytes_per_score +
                 suffix * memory.bytes_per_fed_token + memory.bytes_per_row + memory.state_bytes_per_row) +
         std::max(memory.dequantize.projection_bytes,
                  std::min(memory.experts, rows * suffix * memory.experts_per_token) * memory.dequantize.expert_bytes);
}

std::vector<std::pair<size_t, size_t>> cut_batches(const std::vector<int64_t>& lengths_descending,
                                                    int64_t max_tokens, int64_t max_rows,
                                                    const std::vector<int64_t>& prefix_lengths,
                                                    const BatchMemory& memory) {
  std::vector<std::pair<size_t, size_t>> batches;
  size_t begin = 0;
  while (begin < lengths_descending.size()) {
    const int64_t longest = std::max<int64_t>(lengths_descending[begin], 1);
    const auto fit = std::max<int64_t>(1, std::min(max_rows, max_tokens / longest));
    size_t end = begin + 1;
    int64_t prefix = prefix_lengths.empty() ? 0 : prefix_lengths[begin];
    while (end < lengths_descending.size() && end - begin < static_cast<size_t>(fit)) {
      const int64_t next_prefix = std::max(prefix, prefix_lengths.empty() ? 0 : prefix_lengths[end]);
      const auto rows = static_cast<int64_t>(end - begin + 1);
      if (!within_memory(memory, rows, longest, next_prefix)) break;
      prefix = next_prefix;
      ++end;
    }
    batches.emplace_back(begin, end);
    begin = end;
  }
  return batches;
}

ForwardBatch make_batch(const std::vector<const TokenIds*>& rows, const std::vector<int64_t>& start_positions,
                        const std::vector<int64_t>& rope_variants) {
  std::vector<PackedRow> packed(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    packed[i].tokens = *rows[i];
    packed[i].rope_variant = rope_variants.empty() ? 0 : rope_variants.at(i);
    for (size_t j = 0; j < rows[i]->size(); ++j)
      packed[i].positions.push_back(start_positions[i] + static_cast<int64_t>(j));
    packed[i].segment.assign(rows[i]->size(), 0);
    packed[i].branch.assign(rows[i]->size(), 0);
  }
  return make_packed_batch(packed);
}

ForwardBatch make_packed_batch(const std::vector<PackedRow>& rows) {
  const auto b = static_cast<int64_t>(rows.size());
  int64_t t = 1;
  bool segments = false, tree = false, variants = false;
  std::vector<int64_t> rope_variant;
  auto nonzero = [](const std::vector<int64_t>& ids) { return std::any_of(ids.begin(), ids.end(), [](int64_t x) { return x != 0; }); };
  for (const PackedRow& row : rows) {
    t = std::max<int64_t>(t, static_cast<int64_t>(row.tokens.size()));
    segments = segments || nonzero(row.segment);
    tree = tree || nonzero(row.branch);
    variants = variants || row.rope_variant != 0;
    rope_variant.push_back(row.rope_variant);
  }
  // Filled element by element here: every element is written (padding: token 0, invalid, the row's last position
  // and segment, trunk), and a tensor no row needs is not made.
  at::Tensor tokens = at::empty({b, t}, at::kLong), positions = at::empty({b, t}, at::kLong);
  at::Tensor valid = at::empty({b, t}, at::kBool);
  at::Tensor segment = segments ? at::empty({b, t}, at::kLong) : at::Tensor();
  at::Tensor branch = tree ? at::empty({b, t}, at::kLong) : at::Tensor();
  int64_t* tok = tokens.data_ptr<int64_t>();
  int64_t* pos = positions.data_ptr<int64_t>();
  bool* val = valid.data_ptr<bool>();
  int64_t* seg = segments ? segment.data_ptr<int64_t>() : nullptr;
  int64_t* br = tree ? branch.data_ptr<int64_t>() : nullptr;
  for (int64_t i = 0; i < b; ++i) {
    const PackedRow& row = rows[i];
    const auto len = static_cast<int64_t>(row.tokens.size());
    for (int64_t j = 0; j < t; ++j) {
      const bool real = j < len;
      const int64_t at = i * t + j, from = real ? j : len - 1;  // padding repeats the row's last token's place
      tok[at] = real ? row.tokens[j] : 0;
      pos[at] = len > 0 ? row.positions[from] : 0;
      val[at] = real;
      if (seg != nullptr) seg[at] = len > 0 ? row.segment[from] : 0;
      if (br != nullptr) br[at] = real ? row.branch[j] : 0;
    }
  }
  return {tokens, positions, valid, segment, branch, variants ? at::tensor(rope_variant, at::kLong) : at::Tensor()};
}

at::Tensor last_positions(const std::vector<int64_t>& lengths, const std::vector<int64_t>& scored, int64_t width) {
  std::vector<int64_t> flat;
  for (size_t i = 0; i < lengths.size(); ++i) {
    for (int64_t j = lengths[i] - scored[i]; j < lengths[i]; ++j) flat.push_back(static_cast<int64_t>(i) * width + j);
  }
  return at::tensor(flat, at::kLong);
}

int64_t count_forward(const ForwardBatch& batch, ScoringStats& stats) {
  const int64_t real = batch.valid.sum().item<int64_t>();
  stats.forwards += 1;
  stats.tokens_computed += real;
  stats.padding_tokens += batch.valid.numel() - real;
  return real;
}

}  // namespace prefix_scorer
