#include "model/ops/mamba2_scan.h"

#include <limits>

namespace prefix_scorer {
namespace {

// [..., l] -> [..., l, l]: entry (i, j) the sum of x over (j, i] where j <= i (0 on the diagonal), -inf above it:
// the log decay from position j to position i.
at::Tensor segment_sum(const at::Tensor& x) {
  const int64_t l = x.size(-1);
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes.push_back(l);
  const at::Tensor ones = at::ones({l, l}, x.options().dtype(at::kBool));
  const at::Tensor below = at::tril(ones, -1), on_or_below = at::tril(ones, 0);
  const at::Tensor summed = x.unsqueeze(-1).expand(sizes).masked_fill(below.logical_not(), 0).cumsum(-2);
  return summed.masked_fill(on_or_below.logical_not(), -std::numeric_limits<float>::infinity());
}

// Each group's [b, t, groups, n] rows repeated for the heads it serves: [b, t, heads, n], fp32.
at::Tensor per_head(const at::Tensor& grouped, int64_t heads) {
  return grouped.to(at::kFloat).repeat_interleave(heads / grouped.size(2), 2);
}

// [b, t, ...] zero-padded along t to `padded` tokens and cut into [b, chunks, chunk, ...].
at::Tensor into_chunks(const at::Tensor& x, int64_t padded, int64_t chunk) {
  std::vector<int64_t> pad(2 * (x.dim() - 1), 0);
  pad.back() = padded - x.size(1);
  std::vector<int64_t> sizes{x.size(0), padded / chunk, chunk};
  for (int64_t d = 2; d < x.dim(); ++d) sizes.push_back(x.size(d));
  return at::constant_pad_nd(x, pad).reshape(sizes);
}

}  // namespace

std::pair<at::Tensor, at::Tensor> chunked_scan(const ScanInputs& in, const at::Tensor& state, int64_t chunk) {
  const int64_t b = in.x.size(0), t = in.x.size(1), heads = in.x.size(2), head_dim = in.x.size(3);
  const int64_t padded = (t + chunk - 1) / chunk * chunk;
  const at::Tensor x = in.x.to(at::kFloat);
  const at::Tensor skip = in.d.unsqueeze(-1) * into_chunks(x, padded, chunk).reshape({b, padded, heads, head_dim});
  const at::Tensor dt = in.dt.to(at::kFloat);
  const at::Tensor xs = into_chunks(x * dt.unsqueeze(-1), padded, chunk);      // [b, c, l, h, p]
  const at::Tensor bs = into_chunks(per_head(in.b_in, heads), padded, chunk);  // [b, c, l, h, n]
  const at::Tensor cs = into_chunks(per_head(in.c_in, heads), padded, chunk);
  const at::Tensor a = into_chunks(in.a.to(at::kFloat) * dt, padded, chunk).permute({0, 3, 1, 2});  // [b, h, c, l]
  const at::Tensor a_cumsum = a.cumsum(-1);
  // Within each chunk: every position reads every earlier one's input, decayed between them.
  const at::Tensor decay_within = segment_sum(a).exp();  // [b, h, c, l, s]
  const at::Tensor scores = at::einsum("bclhn,bcshn->bclsh", {cs, bs}) * decay_within.permute({0, 2, 3, 4, 1});
  const at::Tensor y_within = at::einsum("bclsh,bcshp->bclhp", {scores, xs});
  // Each chunk's own contribution to the state at its end, then the states at the chunks' starts, carried along.
  const at::Tensor to_end = (a_cumsum.narrow(-1, chunk - 1, 1) - a_cumsum).exp();
  const at::Tensor chunk_states =
      at::einsum("bclhn,bclhp->bchpn", {bs * to_end.permute({0, 2, 3, 1}).unsqueeze(-1), xs});
  const at::Tensor before = state.defined() ? state.to(at::kFloat).unsqueeze(1) : at::zeros_like(chunk_states.narrow(1, 0, 1));
  const at::Tensor stacked = at::cat({before, chunk_states}, 1);  // [b, c + 1, h, p, n]
  const at::Tensor chunk_decay =
      segment_sum(at::constant_pad_nd(a_cumsum.select(-1, chunk - 1), {1, 0})).exp().transpose(1, 3);
  const at::Tensor starts = at::einsum("bzch,bzhpn->bchpn", {chunk_decay, stacked});
  const int64_t chunks = padded / chunk;
  // Each position reads its chunk's starting state with C, decayed to it.
  const at::Tensor y_from_state = at::einsum("bclhn,bchpn->bclhp", {cs, starts.narrow(1, 0, chunks)}) *
                                  a_cumsum.exp().permute({0, 2, 3, 1}).unsqueeze(-1);
  const at::Tensor y = (y_within + y_from_state).reshape({b, padded, heads, head_dim}) + skip;
  return {y.narrow(1, 0, t), starts.select(1, chunks).contiguous()};
}

std::pair<at::Tensor, at::Tensor> scan_step(const ScanInputs& in, const at::Tensor& state) {
  const int64_t b = in.x.size(0), heads = in.x.size(2), head_dim = in.x.size(3);
  const at::Tensor x = in.x.select(1, 0);  // [b, h, p]
  const at::Tensor dt = in.dt.select(1, 0).view({b, heads, 1, 1});
  const int64_t per_group = heads / in.b_in.size(2);
  const at::Tensor b_in = in.b_in.select(1, 0).repeat_interleave(per_group, 1).unsqueeze(2);  // [b, h, 1, n]
  const at::Tensor c_in = in.c_in.select(1, 0).repeat_interleave(per_group, 1).unsqueeze(-1); // [b, h, n, 1]
  const at::Tensor decay = (dt.to(at::kFloat) * in.a.to(at::kFloat).view({1, heads, 1, 1})).exp();
  const at::Tensor taken = dt * b_in * x.unsqueeze(-1);  // [b, h, p, n] in the model dtype
  const at::Tensor before = state.defined() ? state : at::zeros({b, heads, head_dim, b_in.size(-1)}, x.options().dtype(at::kFloat));
  const at::Tensor after = before * decay + taken;
  const at::Tensor out = at::matmul(after.to(x.scalar_type()), c_in).squeeze(-1) + x * in.d.view({1, heads, 1});
  return {out.unsqueeze(1), after};
}

}  // namespace prefix_scorer
