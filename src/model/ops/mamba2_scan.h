#pragma once
// The scan of Mamba2 layers (Granite 4, Nemotron-H, Falcon-H1): per head a state h [head_dim, state_size] (fp32)
// that decays by exp(dt A) each token and takes dt x B^T; the output reads it with C and adds D x:
// h_t = exp(dt_t A) h_{t-1} + dt_t x_t B_t^T, y_t = h_t C_t + D x_t. B and C are shared by groups of heads.
//
// Both forms continue from a state: a sequence split anywhere and run in pieces, each from the state the one
// before left, gives what the whole gives (to fp32 rounding). A token with dt = 0 leaves the state as it is.

#include <ATen/ATen.h>

#include <cstdint>
#include <utility>

namespace prefix_scorer {

// x [b, t, heads, head_dim]; dt [b, t, heads] (the step, softplus already taken, in the model dtype); a [heads]
// (A = -exp(A_log), fp32); b_in and c_in [b, t, groups, state_size] (heads a multiple of groups, each group serving
// that many consecutive heads); d [heads].
struct ScanInputs {
  at::Tensor x, dt, a, b_in, c_in, d;
};

// The outputs [b, t, heads, head_dim] and the state after the last token [b, heads, head_dim, state_size] fp32;
// `state` is the state before the first token (undefined: zeros).
//
// Chunked (prefill): blocks of `chunk` tokens, each solved at once and the state carried from block to block, in
// fp32 throughout (fp32 outputs), as transformers' torch_forward (mamba2_chunk_scan) computes it.
std::pair<at::Tensor, at::Tensor> chunked_scan(const ScanInputs& in, const at::Tensor& state, int64_t chunk);
// One token a row (decode), as transformers' selective_state_update: the state in fp32, the output read in x's
// dtype.
std::pair<at::Tensor, at::Tensor> scan_step(const ScanInputs& in, const at::Tensor& state);

}  // namespace prefix_scorer
