// The experts' checkpoint tensors, as each family stores them (see checkpoint_layout.h).

#include "model/checkpoint/checkpoint_layout.h"

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace prefix_scorer {
namespace {

std::string mixed_forms(int64_t layer) {
  return fmt::format("layer {}: its experts' weights are stored in more than one form (some quantized, some not)", layer);
}

// Stacked experts of layer `i` (checkpoint names after `layer`, as `names` gives them): the router with its bias;
// gate and up [experts, hidden, 2 x ff] in one tensor, interleaved by column, and its bias; down [experts, ff,
// hidden] and its bias. Each is split and transposed to the [experts, out, in] stacks the grouped matmuls take.
void add_stacked_experts(std::vector<WeightSlot>& slots, const MlpSpec& m, const ExpertTraits& names, int64_t h,
                         int64_t i, const std::string& layer) {
  const int64_t e = m.router.experts, ff = m.size;
  const std::string router = layer + names.router + ".", gate_up = layer + names.gate, down = layer + names.down;
  slots.push_back({{router + "weight", {e, h}}, i, [i](ModelWeights& w, const at::Tensor& t) { w.layers[i].router.weight = t; }});
  slots.push_back({{router + "bias", {e}}, i, [i](ModelWeights& w, const at::Tensor& t) { w.layers[i].router.bias = t; }});
  // gpt_oss's MXFP4 keeps [experts, out, in] blocks: gate's and up's rows interleaved
  WeightSlot stacked_gate_up{{gate_up, {e, h, 2 * ff}}, i, [i](ModelWeights& w, const at::Tensor& t) {
                               StackedExperts& x = w.layers[i].experts;
                               x.gate.weight = t.slice(2, 0, t.size(2), 2).transpose(1, 2).contiguous();
                               x.up.weight = t.slice(2, 1, t.size(2), 2).transpose(1, 2).contiguous();
                             }};
  stacked_gate_up.place_kept = [i](ModelWeights& w, const QuantizedExperts& q) {
    StackedExperts& x = w.layers[i].experts;
    x.gate.kept = rows_of(q, 0, 2, w.layers[i].device);
    x.up.kept = rows_of(q, 1, 2, w.layers[i].device);
  };
  slots.push_back(std::move(stacked_gate_up));
  slots.push_back({{gate_up + "_bias", {e, 2 * ff}}, i, [i](ModelWeights& w, const at::Tensor& t) {
                     StackedExperts& x = w.layers[i].experts;
                     x.gate_bias = t.slice(1, 0, t.size(1), 2).contiguous();
                     x.up_bias = t.slice(1, 1, t.size(1), 2).contiguous();
                   }});
  WeightSlot stacked_down{{down, {e, ff, h}}, i, [i](ModelWeights& w, const at::Tensor& t) {
                            w.layers[i].experts.down.weight = t.transpose(1, 2).contiguous();
                          }};
  stacked_down.place_kept = [i](ModelWeights& w, const QuantizedExperts& q) {
    w.layers[i].experts.down.kept = copied_to(q, w.layers[i].device);
  };
  slots.push_back(std::move(stacked_down));
  slots.push_back({{down + "_bias", {e, h}}, i,
                   [i](ModelWeights& w, const at::Tensor& t) { w.layers[i].experts.down_bias = t; }});
}

// `experts` experts of layer `i` stacked by rows: gate's then up's [experts, 2 x ff, hidden] under `gate_up`, down
// [experts, hidden, ff] under `down`.
void add_row_stacked_experts(std::vector<WeightSlot>& slots, int64_t i, const std::string& gate_up,
                             const std::string& down, int64_t experts, int64_t ff, int64_t h) {
  slots.push_back({{gate_up, {experts, 2 * ff, h}}, i, [i, ff](ModelWeights& w, const at::Tensor& t) {
                     w.layers[i].experts.gate.weight = t.narrow(1, 0, ff).contiguous();
                     w.layers[i].experts.up.weight = t.narrow(1, ff, ff).contiguous();
                   }});
  slots.push_back({{down, {experts, h, ff}}, i,
                   [i](ModelWeights& w, const at::Tensor& t) { w.layers[i].experts.down.weight = t; }});
}

// `experts` experts of layer `i` stacked by columns: gate's then up's [experts, hidden, 2 x ff] under `gate_up`, down
// [experts, ff, hidden] under `down`; transposed to the [experts, out, in] stacks the grouped matmuls take.
void add_column_stacked_experts(std::vector<WeightSlot>& slots, int64_t i, const std::string& gate_up,
                                const std::string& down, int64_t experts, int64_t ff, int64_t h) {
  slots.push_back({{gate_up, {experts, h, 2 * ff}}, i, [i, ff](ModelWeights& w, const at::Tensor& t) {
                     w.layers[i].experts.gate.weight = t.narrow(2, 0, ff).transpose(1, 2).contiguous();
                     w.layers[i].experts.up.weight = t.narrow(2, ff, ff).transpose(1, 2).contiguous();
                   }});
  slots.push_back({{down, {experts, ff, h}}, i, [i](ModelWeights& w, const at::Tensor& t) {
                     w.layers[i].experts.down.weight = t.transpose(1, 2).contiguous();
                   }});
}

// The shared expert of `size` beside the routed ones: gate and up (apart, or in the family's gate_up_proj), down,
// their biases where the dense MLP has them, and its sigmoid gate.
void add_shared_expert(LayerLayout& l, int64_t size) {
  const ModelFamily& family = l.family;
  const int64_t h = l.h, i = l.i;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, Linear ExpertWeights::*part, bool bias = false) {
    l.slots.push_back({{l.name(name), std::move(shape)}, i, [i, part, bias](ModelWeights& w, const at::Tensor& t) {
                         Linear& projection = w.layers[i].shared_expert.*part;
                         (bias ? projection.bias : projection.weight) = t;
                       }});
  };
  const bool ungated = l.layer.mlp.ungated_experts;
  const std::string shared = std::string(family.experts.shared) + ".";
  if (family.gate_up_proj != nullptr) {
    l.slots.push_back({{l.name(shared + family.gate_up_proj + ".weight"), {2 * size, h}}, i,
                       [i, size](ModelWeights& w, const at::Tensor& t) {
                         w.layers[i].shared_expert.gate.weight = t.narrow(0, 0, size);
                         w.layers[i].shared_expert.up.weight = t.narrow(0, size, size);
                       }});
  } else {
    if (!ungated) add(shared + family.gate_proj + ".weight", {size, h}, &ExpertWeights::gate);
    add(shared + family.up_proj + ".weight", {size, h}, &ExpertWeights::up);
  }
  add(shared + family.down_proj + ".weight", {h, size}, &ExpertWeights::down);
  if (l.c.mlp_bias) {  // as the dense MLP's (ernie4_5_moe's use_bias)
    if (!ungated) add(shared + "gate_proj.bias", {size}, &ExpertWeights::gate, true);
    add(shared + "up_proj.bias", {size}, &ExpertWeights::up, true);
    add(shared + "down_proj.bias", {h}, &ExpertWeights::down, true);
  }
  if (l.layer.mlp.router.shared_expert_gated)
    l.add(std::string(family.experts.shared) + "_gate.weight", {1, h}, weight_of(&LayerWeights::shared_expert_gate));
}

}  // namespace

void add_experts_beside(LayerLayout& l) {
  const MlpSpec& m = l.layer.experts;
  const int64_t e = m.router.experts, ff = m.size, h = l.h;
  l.add("router.proj.weight", {e, h}, weight_of(&LayerWeights::router));
  l.add("router.scale", {h}, &LayerWeights::router_scale);
  l.add("router.per_expert_scale", {e}, &LayerWeights::expert_scales);
  add_row_stacked_experts(l.slots, l.i, l.name("experts.gate_up_proj"), l.name("experts.down_proj"), e, ff, h);
  l.add("post_feedforward_layernorm_1.weight", {h}, &LayerWeights::dense_out_norm);
  l.add("pre_feedforward_layernorm_2.weight", {h}, &LayerWeights::experts_in_norm);
  l.add("post_feedforward_layernorm_2.weight", {h}, &LayerWeights::experts_out_norm);
}

void add_routed_experts(LayerLayout& l) {
  const MlpSpec& m = l.layer.mlp;
  const ExpertTraits& names = l.family.experts;
  const int64_t h = l.h, i = l.i, ff = m.size;
  if (names.stacked) return add_stacked_experts(l.slots, m, names, h, i, l.name(""));
  l.add(names.router, {m.router.experts, h}, weight_of(&LayerWeights::router));
  l.slots.back().fp32 = names.router_fp32;
  if (names.correction_bias != nullptr && m.router.correction_bias) {
    std::vector<int64_t> shape{m.router.experts};
    if (names.correction_bias_row) shape.insert(shape.begin(), 1);
    l.slots.push_back({{l.name(names.correction_bias), shape}, i,
                       [i](ModelWeights& w, const at::Tensor& t) { w.layers[i].correction_bias = t.reshape({-1}); },
                       nullptr, names.router_fp32 || names.correction_bias_fp32});
  }
  if (names.gate_up_rows)
    add_row_stacked_experts(l.slots, i, l.name(names.gate), l.name(names.down), m.router.experts, ff, h);
  if (names.gate_up_columns)
    add_column_stacked_experts(l.slots, i, l.name(names.gate), l.name(names.down), m.router.experts, ff, h);
  const int64_t in = m.latent_size > 0 ? m.latent_size : h;  // the experts' width
  if (m.latent_size > 0) {
    l.add(std::string(names.latent_in) + ".weight", {in, h}, weight_of(&LayerWeights::latent_in));
    l.add(std::string(names.latent_out) + ".weight", {h, in}, weight_of(&LayerWeights::latent_out));
    if (l.c.mlp_bias) {
      l.add(std::string(names.latent_in) + ".bias", {in}, bias_of(&LayerWeights::latent_in));
      l.add(std::string(names.latent_out) + ".bias", {h}, bias_of(&LayerWeights::latent_out));
    }
  }
  // Expert e's projection, copied into its slice of the layer's stack (made by the first expert read), in the
  // model's dtype or kept as stored.
  const int64_t experts = m.router.experts;
  auto add_expert = [&](const char* name, std::vector<int64_t> shape, int64_t e, ExpertStack StackedExperts::*part) {
    WeightSlot slot{{l.name(fmt::format(fmt::runtime(name), e)), shape}, i, nullptr,
                    [i, e, part, experts, shape](ModelWeights& w, at::ScalarType dtype) {
                      ExpertStack& stack = w.layers[i].experts.*part;
                      if (stack.kept.defined()) throw std::invalid_argument(mixed_forms(i));
                      if (!stack.weight.defined())
                        stack.weight = at::empty({experts, shape[0], shape[1]}, at::TensorOptions(w.layers[i].device).dtype(dtype));
                      return stack.weight.select(0, e);
                    }};
    slot.place_kept = [i, e, part, experts](ModelWeights& w, const QuantizedExperts& one) {
      ExpertStack& stack = w.layers[i].experts.*part;
      if (stack.weight.defined()) throw std::invalid_argument(mixed_forms(i));
      if (!stack.kept.defined()) stack.kept = empty_experts(one, experts, w.layers[i].device);
      set_expert(stack.kept, e, one);
    };
    l.slots.push_back(std::move(slot));
  };
  for (int64_t e = 0; e < m.router.experts && names.saved_one_by_one(); ++e) {
    if (!m.ungated_experts) add_expert(names.gate, {ff, in}, e, &StackedExperts::gate);
    add_expert(names.up, {ff, in}, e, &StackedExperts::up);
    add_expert(names.down, {in, ff}, e, &StackedExperts::down);
  }
  if (m.router.shared_expert_size > 0) add_shared_expert(l, m.router.shared_expert_size);
}

}  // namespace prefix_scorer
