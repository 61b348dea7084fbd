#include "model/weights.h"

#include <fmt/format.h>

#include <map>
#include <stdexcept>

namespace prefix_scorer {
namespace {

std::string layer_name(int64_t layer, const std::string& suffix) {
  return fmt::format("model.layers.{}.{}", layer, suffix);
}

// The checkpoint names of an MoE layer's parts (after "model.layers.N."): mixtral's, or the Qwen MoE ones.
struct MoeNames {
  std::string router;
  std::string gate, up, down;  // of expert e: fmt::format(gate, e)
};

MoeNames moe_names(const ModelConfig& c) {
  if (c.model_type == "mixtral")
    return {"block_sparse_moe.gate.weight", "block_sparse_moe.experts.{}.w1.weight",
            "block_sparse_moe.experts.{}.w3.weight", "block_sparse_moe.experts.{}.w2.weight"};
  return {"mlp.gate.weight", "mlp.experts.{}.gate_proj.weight", "mlp.experts.{}.up_proj.weight",
          "mlp.experts.{}.down_proj.weight"};
}

}  // namespace

std::vector<TensorSpec> expected_tensors(const ModelConfig& c) {
  const int64_t q_out = c.num_heads * c.head_dim;
  const int64_t kv_out = c.num_kv_heads * c.head_dim;
  const int64_t h = c.hidden_size, ff = c.intermediate_size;
  std::vector<TensorSpec> specs{{"model.embed_tokens.weight", {c.vocab_size, h}}};
  for (int64_t i = 0; i < c.num_layers; ++i) {
    auto add = [&](const std::string& suffix, std::vector<int64_t> shape) {
      specs.push_back({layer_name(i, suffix), std::move(shape)});
    };
    if (!c.output_norms_only) add("input_layernorm.weight", {h});
    if (c.fused_projections) {
      add("self_attn.qkv_proj.weight", {q_out + 2 * kv_out, h});
    } else {
      add("self_attn.q_proj.weight", {q_out, h});
      add("self_attn.k_proj.weight", {kv_out, h});
      add("self_attn.v_proj.weight", {kv_out, h});
    }
    add("self_attn.o_proj.weight", {h, q_out});
    if (c.qkv_bias) {
      add("self_attn.q_proj.bias", {q_out});
      add("self_attn.k_proj.bias", {kv_out});
      add("self_attn.v_proj.bias", {kv_out});
    }
    if (c.o_bias) add("self_attn.o_proj.bias", {h});
    if (c.qk_norm) {
      add("self_attn.q_norm.weight", {c.head_dim});
      add("self_attn.k_norm.weight", {c.head_dim});
    }
    if (c.qk_norm_full_width) {
      add("self_attn.q_norm.weight", {q_out});
      add("self_attn.k_norm.weight", {kv_out});
    }
    add("post_attention_layernorm.weight", {h});
    if (c.sandwich_norms) add("pre_feedforward_layernorm.weight", {h});
    if (c.sandwich_norms || c.output_norms_only) add("post_feedforward_layernorm.weight", {h});
    if (c.is_moe_layer(i)) {
      const MoeNames names = moe_names(c);
      const int64_t eff = c.moe_intermediate_size, sff = c.shared_expert_intermediate_size;
      add(names.router, {c.num_experts, h});
      for (int64_t e = 0; e < c.num_experts; ++e) {
        add(fmt::format(fmt::runtime(names.gate), e), {eff, h});
        add(fmt::format(fmt::runtime(names.up), e), {eff, h});
        add(fmt::format(fmt::runtime(names.down), e), {h, eff});
      }
      if (sff > 0) {
        add("mlp.shared_expert.gate_proj.weight", {sff, h});
        add("mlp.shared_expert.up_proj.weight", {sff, h});
        add("mlp.shared_expert.down_proj.weight", {h, sff});
        add("mlp.shared_expert_gate.weight", {1, h});
      }
      continue;
    }
    if (c.fused_projections) {
      add("mlp.gate_up_proj.weight", {2 * ff, h});
    } else {
      add("mlp.gate_proj.weight", {ff, h});
      add("mlp.up_proj.weight", {ff, h});
    }
    add("mlp.down_proj.weight", {h, ff});
    if (c.mlp_bias) {
      add("mlp.gate_proj.bias", {ff});
      add("mlp.up_proj.bias", {ff});
      add("mlp.down_proj.bias", {h});
    }
  }
  specs.push_back({"model.norm.weight", {h}});
  if (!c.tie_word_embeddings) specs.push_back({"lm_head.weight", {c.vocab_size, h}});
  return specs;
}

ModelWeights assemble_weights(const ModelConfig& config, const TensorSource& source,
                              const std::vector<c10::Device>& layer_devices, at::ScalarType dtype) {
  if (static_cast<int64_t>(layer_devices.size()) != config.num_layers)
    throw std::invalid_argument(fmt::format("{} layer devices for {} layers", layer_devices.size(), config.num_layers));
  const c10::Device first = layer_devices.front(), last = layer_devices.back();
  std::map<std::string, TensorSpec> specs;
  for (auto& spec : expected_tensors(config)) specs.emplace(spec.name, spec);
  auto fetch = [&](const std::string& name, c10::Device device) -> at::Tensor {
    auto it = specs.find(name);
    if (it == specs.end()) return {};  // a tensor this config does not use
    return source(it->second, device).to(device, dtype);
  };

  ModelWeights w;
  w.embed = fetch("model.embed_tokens.weight", first);
  for (int64_t i = 0; i < config.num_layers; ++i) {
    const c10::Device d = layer_devices[i];
    auto get = [&](const std::string& suffix) { return fetch(layer_name(i, suffix), d); };
    LayerWeights l;
    l.device = d;
    l.input_norm = get("input_layernorm.weight");
    if (config.sandwich_norms || config.output_norms_only) {  // post_attention_layernorm is on the attention's
      l.attn_out_norm = get("post_attention_layernorm.weight");  // output there
      l.post_norm = get("pre_feedforward_layernorm.weight");      // (none in olmo2)
      l.mlp_out_norm = get("post_feedforward_layernorm.weight");
    } else {
      l.post_norm = get("post_attention_layernorm.weight");
    }
    if (config.fused_projections) {  // rows: q, then k, then v; gate, then up
      const at::Tensor qkv = get("self_attn.qkv_proj.weight"), gate_up = get("mlp.gate_up_proj.weight");
      const int64_t q_out = config.num_heads * config.head_dim, kv_out = config.num_kv_heads * config.head_dim;
      l.q = qkv.narrow(0, 0, q_out);
      l.k = qkv.narrow(0, q_out, kv_out);
      l.v = qkv.narrow(0, q_out + kv_out, kv_out);
      l.gate = gate_up.narrow(0, 0, config.intermediate_size);
      l.up = gate_up.narrow(0, config.intermediate_size, config.intermediate_size);
    } else {
      l.q = get("self_attn.q_proj.weight");
      l.k = get("self_attn.k_proj.weight");
      l.v = get("self_attn.v_proj.weight");
      l.gate = get("mlp.gate_proj.weight");
      l.up = get("mlp.up_proj.weight");
    }
    l.o = get("self_attn.o_proj.weight");
    l.q_bias = get("self_attn.q_proj.bias");
    l.k_bias = get("self_attn.k_proj.bias");
    l.v_bias = get("self_attn.v_proj.bias");
    l.o_bias = get("self_attn.o_proj.bias");
    l.q_norm = get("self_attn.q_norm.weight");
    l.k_norm = get("self_attn.k_norm.weight");
    l.down = get("mlp.down_proj.weight");
    l.gate_bias = get("mlp.gate_proj.bias");
    l.up_bias = get("mlp.up_proj.bias");
    l.down_bias = get("mlp.down_proj.bias");
    if (config.is_moe_layer(i)) {
      const MoeNames names = moe_names(config);
      l.router = get(names.router);
      for (int64_t e = 0; e < config.num_experts; ++e) {
        l.experts.push_back({get(fmt::format(fmt::runtime(names.gate), e)), get(fmt::format(fmt::runtime(names.up), e)),
                             get(fmt::format(fmt::runtime(names.down), e))});
      }
      l.shared_expert = {get("mlp.shared_expert.gate_proj.weight"), get("mlp.shared_expert.up_proj.weight"),
                         get("mlp.shared_expert.down_proj.weight")};
      l.shared_expert_gate = get("mlp.shared_expert_gate.weight");
    }
    w.layers.push_back(std::move(l));
  }
  w.final_norm = fetch("model.norm.weight", last);
  w.lm_head = config.tie_word_embeddings ? w.embed.to(last) : fetch("lm_head.weight", last);
  return w;
}

}  // namespace prefix_scorer
