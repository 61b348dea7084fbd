#pragma once
// Each family's file returns its model types' traits (model_family.h); registry.cpp lists the files' functions.

#include "model/config/model_family.h"

#include <cstdint>
#include <vector>

namespace prefix_scorer::families {

// The fields every family starts from: Llama's keys and names, with `model_type`.
ModelFamily base(const char* model_type);

// A synthetic shape's sizes as config.json keys (rms_norm_eps 1e-5); the family's traits come from from_json, as for a
// checkpoint.
nlohmann::json shape(const char* model_type, int64_t vocab, int64_t hidden, int64_t intermediate, int64_t layers,
                     int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t max_positions);
// The tiny shape (a vocabulary of 2048, 128 wide, 4 layers of 4 heads of 32 and 2 KV heads, MLPs of 384, tied
// embeddings) as `model_type`.
nlohmann::json tiny_shape(const char* model_type);

// Routed experts saved one by one as mlp.experts.{e}.gate_proj/up_proj/down_proj, beside the router `router`.
void name_experts(ExpertTraits& e, const char* router);
// Mixtral's names: the router and experts' w1 (gate), w3 (up), w2 (down) under block_sparse_moe.
void name_mixtral_experts(ExpertTraits& e);

// DeepSeek V3's router (glm4_moe's too): sigmoid scores plus a correction bias, both kept fp32, choosing within the
// best n_group groups; weights renormalized (norm_topk_prob, on by default; their sum plus 1e-20), times
// routed_scaling_factor, fp32 through the experts' sum; n_shared_experts experts' widths of shared MLP; the first
// first_k_dense_replace layers dense.
void deepseek_router(ExpertTraits& e);
// DeepSeek V3's MoE as its kin configure and name it: deepseek_router, n_routed_experts experts (defaults as given),
// one shared expert's width by default, the router and its correction bias under mlp.gate, the shared experts under
// mlp.shared_experts.
void deepseek_moe(ExpertTraits& e, int64_t experts, int64_t per_token, int64_t size);

}  // namespace prefix_scorer::families
