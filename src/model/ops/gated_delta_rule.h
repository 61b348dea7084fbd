#pragma once
// The recurrent mixer of Gated DeltaNet layers (Qwen 3.5 and 3.6, Qwen3-Next, OLMo hybrid) and Kimi Delta Attention
// (Kimi Linear): a causal depthwise convolution over the projected q, k and v, then the gated delta rule. Per value
// head the state S [dk, dv] (fp32) decays by exp(g) each token and is corrected toward the token's value:
// S = e^g S + k (beta (v - k^T e^g S))^T; the output reads it with the query, q^T S. Gated DeltaNet's g is one per
// head; KDA's one per key channel (a row of S each: e^g is then diagonal). q and k are L2-normed and q scaled by
// dk^-1/2 first, in fp32.
//
// Both forms continue from a state: a sequence split anywhere and run in pieces, each from the state the one
// before left, gives what the whole gives (to fp32 rounding): a shared prefix's state is all its suffixes need.

#include <ATen/ATen.h>

#include <cstdint>
#include <utility>

namespace prefix_scorer {

// One token or many: q, k [b, t, k_heads, dk]; v [b, t, v_heads, dv] (v_heads a multiple of k_heads, each q/k head
// serving that many consecutive value heads); g [b, t, v_heads] (log decay, <= 0), or [b, t, v_heads, dk] for a
// decay per key channel (KDA); beta [b, t, v_heads].
struct DeltaRuleInputs {
  at::Tensor q, k, v, g, beta;
};

// The outputs [b, t, v_heads, dv] in v's dtype, and the state after the last token [b, v_heads, dk, dv] fp32.
// `state` is the state before the first token (undefined: zeros).
//
// Chunked (prefill): blocks of `chunk` tokens, each solved at once by a triangular solve (the UT transform), the
// state carried from block to block, as transformers' torch_chunk_gated_delta_rule computes it.
std::pair<at::Tensor, at::Tensor> chunked_gated_delta_rule(const DeltaRuleInputs& in, const at::Tensor& state,
                                                           int64_t chunk = 64);
// Token by token (decode), as transformers' torch_recurrent_gated_delta_rule.
std::pair<at::Tensor, at::Tensor> recurrent_gated_delta_rule(const DeltaRuleInputs& in, const at::Tensor& state);

// The causal depthwise convolution of x [b, channels, t] by weight [channels, taps], then SiLU, in weight's dtype;
// `history` [b, channels, taps - 1] holds the inputs before x (undefined: zeros). Returns the output [b, channels,
// t] in x's dtype and the history after x (its last taps - 1 inputs, earlier history where x is shorter). Where
// `lengths` [b] (int64, on x's device) is defined, row r's history is taken after its first lengths[r] inputs (the
// rest is padding).
std::pair<at::Tensor, at::Tensor> causal_conv1d_silu(const at::Tensor& x, const at::Tensor& weight,
                                                     const at::Tensor& history, const at::Tensor& lengths = {});
// The same with a bias (undefined: none), and without the SiLU where `silu` is false (LFM2's short convolution).
std::pair<at::Tensor, at::Tensor> causal_conv1d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                                const at::Tensor& history, const at::Tensor& lengths, bool silu);

}  // namespace prefix_scorer
