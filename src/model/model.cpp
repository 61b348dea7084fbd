#include "prefix_scorer/model.h"

#include "prefix_scorer/devices.h"

#include "model/cast.h"
#include "model/attention.h"
#include "model/checkpoint_weights.h"
#include "model/linear.h"
#include "model/fault_injection.h"
#include "model/forward_batch.h"
#include "model/forward_inputs.h"
#include "model/gated_delta_rule.h"
#include "model/mamba2_scan.h"
#include "model/host_transfers.h"
#include "model/kv_cache.h"
#include "model/layer_spec.h"
#include "model/model_family.h"
#include "model/rope.h"
#include "model/weights.h"

#include <c10/core/InferenceMode.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace prefix_scorer {
namespace {

// Llama's RMSNorm scales the normalized input, cast back to its dtype, by w; OLMo 2's by w in fp32; Gemma's by
// (1 + w) in fp32. An undefined weight is a norm the family does not have.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, const NormSpec& n) {
  if (!weight.defined()) return x;
  // In fp32 all three are x * rsqrt(mean(x^2) + eps) * w', the same products as torch's rms_norm: one op, not seven.
  // (q and k normed together scale by per-head weights [heads, head_dim]: those multiply after it.)
  if (x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat) {
    const at::Tensor w = n.plus_one ? weight + 1 : weight;
    if (w.dim() > 1) return at::rms_norm(x, {x.size(-1)}, std::nullopt, n.eps) * w;
    return at::rms_norm(x, {x.size(-1)}, w, n.eps);
  }
  // Other dtypes as transformers: x * rsqrt(mean(x^2) + eps) in fp32 (torch's rms_norm: one op where the five it
  // stands for are a launch each), then the weight as each family applies it: most after rounding to x's dtype,
  // which rms_norm of x itself does (computing in fp32, rounding once).
  if (!n.plus_one && !n.weight_in_fp32) return weight * at::rms_norm(x, {x.size(-1)}, std::nullopt, n.eps);
  const at::Tensor normalized = at::rms_norm(cast(x, at::kFloat), {x.size(-1)}, std::nullopt, n.eps);
  if (n.plus_one) return cast(normalized * (cast(weight, at::kFloat) + 1), x.scalar_type());
  return cast(cast(weight, at::kFloat) * normalized, x.scalar_type());
}

bool ends_with(const std::string& name, const std::string& suffix) {
  return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Tensors saved with the weights that are buffers in transformers, whose parameter count leaves them out: Gemma 4's
// per-layer scalar, xIELU's beta and eps, and a router's correction bias unless the family's is a parameter.
bool is_buffer(const std::string& name, const ExpertTraits& experts) {
  return ends_with(name, "layer_scalar") || ends_with(name, "act_fn.beta") || ends_with(name, "act_fn.eps") ||
         (experts.correction_bias != nullptr && !experts.correction_bias_parameter &&
          ends_with(name, experts.correction_bias));
}

// Scales that start at one, as transformers initializes them (Gemma 4's layer scalar, router and expert scales).
bool is_scale(const std::string& name) { return ends_with(name, "layer_scalar") || ends_with(name, "scale"); }

// A parameter's value as transformers initializes it, where that is a constant that is not a norm's one or a bias's
// zero: xIELU's (alpha_p 0.8 and alpha_n 0.8 - beta through softplus, beta 0.5, eps -1e-6).
std::optional<double> initial_value(const std::string& name) {
  const auto inverse_softplus = [](double y) { return std::log(std::expm1(y)); };
  if (ends_with(name, "act_fn.alpha_p")) return inverse_softplus(0.8);
  if (ends_with(name, "act_fn.alpha_n")) return inverse_softplus(0.3);
  if (ends_with(name, "act_fn.beta")) return 0.5;
  if (ends_with(name, "act_fn.eps")) return -1e-6;
  if (ends_with(name, "linear_attn.norm.weight")) return 1.0;  // a plain RMSNorm's weight in a (1 + w) model
  return std::nullopt;
}

// A constant as transformers makes its embedding scales: a float32 tensor, then in `like`'s dtype.
at::Tensor scale_in_dtype(double value, const at::Tensor& like) {
  return at::scalar_tensor(static_cast<float>(value), like.options().dtype(at::kFloat)).to(like.scalar_type());
}

// An RMSNorm without weight, in fp32 then back to x's dtype (Gemma 4's value norm).
at::Tensor unit_rms_norm(const at::Tensor& x, double eps) {
  return cast(at::rms_norm(cast(x, at::kFloat), {x.size(-1)}, std::nullopt, eps), x.scalar_type());
}

// LayerNorm over the last dimension, its bias if any; in fp32 with the weight before rounding back where the family
// computes so (cohere), and always where the weights are per head ([heads, 1, dim]: q and k normed together).
at::Tensor layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const NormSpec& n) {
  if (!n.weight_in_fp32 && weight.dim() == 1) return at::layer_norm(x, {x.size(-1)}, weight, bias, n.eps);
  at::Tensor y = at::layer_norm(cast(x, at::kFloat), {x.size(-1)}, std::nullopt, std::nullopt, n.eps) *
                 cast(weight, at::kFloat);
  if (bias.defined()) y = y + cast(bias, at::kFloat);
  return cast(y, x.scalar_type());
}

// A block's norm, and the q/k norms: LayerNorm (starcoder2's with biases, cohere's without), else RMSNorm.
at::Tensor norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const NormSpec& n) {
  if (n.layer_norm) return layer_norm(x, weight, bias, n);
  return rms_norm(x, weight, n);
}
at::Tensor norm(const at::Tensor& x, const at::Tensor& weight, const NormSpec& n) { return norm(x, weight, {}, n); }

// xIELU as transformers' Python path computes it: alpha_p x^2 + beta x for x > 0, else
// (expm1(min(x, eps)) - x) alpha_n + beta x, with alpha_p = softplus(a_p) and alpha_n = beta + softplus(a_n).
at::Tensor xielu(const at::Tensor& x, const LayerWeights& l) {
  const at::Tensor alpha_p = at::softplus(l.xielu_alpha_p);
  const at::Tensor alpha_n = l.xielu_beta + at::softplus(l.xielu_alpha_n);
  const at::Tensor linear = l.xielu_beta * x;
  return at::where(x > 0, alpha_p * x * x + linear, (at::expm1(at::minimum(x, l.xielu_eps)) - x) * alpha_n + linear);
}

at::Tensor activate(const at::Tensor& x, Activation activation) {
  switch (activation) {
    case Activation::kXielu:
      throw std::logic_error("xielu reads its layer's parameters: call xielu()");
    case Activation::kGeluTanh:
      return at::gelu(x, "tanh");
    case Activation::kGelu:
      return at::gelu(x);
    case Activation::kRelu2:
      return at::relu(x).square();
    case Activation::kSilu:
      break;
  }
  return at::silu(x);
}

// A block's output times granite's residual_multiplier (a Python float in transformers).
at::Tensor scale_residual(const at::Tensor& x, double multiplier) { return multiplier == 1 ? x : x * multiplier; }

// cap * tanh(x / cap), or x for cap 0.
at::Tensor soft_cap(const at::Tensor& x, double cap) { return cap > 0 ? at::tanh(x / cap) * cap : x; }

// An attention head or output gate's factor from its projection: sigmoid, or softplus in fp32 rounded back.
at::Tensor gate_factor(const AttentionSpec& a, const at::Tensor& projected) {
  if (!a.gate_softplus) return at::sigmoid(projected);
  return cast(at::softplus(cast(projected, at::kFloat)), projected.scalar_type());
}

std::vector<c10::Device> layer_placement(const ModelOptions& options, const ModelConfig& config,
                                         at::ScalarType dtype) {
  std::vector<c10::Device> devices;
  if (options.layer_devices.empty()) devices.push_back(parse_device(options.device));
  for (const auto& name : options.layer_devices) devices.push_back(parse_device(name));
  return place_layers(devices, weight_bytes(config, dtype));
}

// cuDNN attention builds a plan for every new shape, and nearly every forward here has a new one (0.6 s for a first
// call against 0.26 s warm on an H200): for a forward on CUDA, torch's SDPA picks among flash and memory-efficient
// attention instead. The setting is the process's: the first of concurrent forwards turns it off, and the last
// to end restores what it found (a guard per forward that saved and restored on its own would leave it off, or
// turn it back on under another forward, when forwards overlap).
class WithoutCuDNNAttention {
 public:
  explicit WithoutCuDNNAttention(bool on_cuda) : active_(on_cuda) {
    if (!active_) return;
    const std::lock_guard<std::mutex> lock(mutex());
    if (forwards()++ == 0) {
      was_enabled() = at::globalContext().userEnabledCuDNNSDP();
      at::globalContext().setSDPUseCuDNN(false);
    }
  }
  ~WithoutCuDNNAttention() {
    if (!active_) return;
    const std::lock_guard<std::mutex> lock(mutex());
    if (--forwards() == 0) at::globalContext().setSDPUseCuDNN(was_enabled());
  }
  WithoutCuDNNAttention(const WithoutCuDNNAttention&) = delete;
  WithoutCuDNNAttention& operator=(const WithoutCuDNNAttention&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int64_t& forwards() {  // CUDA forwards running now, under mutex()
    static int64_t n = 0;
    return n;
  }
  static bool& was_enabled() {  // the setting the first of them found
    static bool enabled = false;
    return enabled;
  }
  bool active_;
};

// A layer's queries [b, heads, t, head_dim] and, for a layer with keys and values of its own, its keys and values
// [b, kv_heads, t, head_dim]: views of one matmul over the stacked weights, normed (q/k norms) and rotated. q and k
// are normed and rotated together as one [b, t, heads + kv_heads, head_dim] view, unless normed over their whole
// widths (olmo2). A layer that reads another layer's keys and values projects q alone.
struct Projections {
  at::Tensor q, k, v;
};

// `projected` is [b, t, width], the input's projection by l.qkv (l.q for a layer that projects q alone).
Projections project(const AttentionSpec& a, const NormSpec& n, const LayerWeights& l, const at::Tensor& projected,
                    bool own_kv, const DeviceInputs& in) {
  const int64_t b = projected.size(0), t = projected.size(1);
  // layers without rope (smollm3's, gpt2's) attend without rotated positions
  auto rotate = [&](const at::Tensor& x) { return a.rope >= 0 ? apply_rotary(x, in.rotary.at(a.rope)) : x; };
  auto heads = [&](const at::Tensor& x, int64_t count) { return x.view({b, t, count, a.head_dim}); };
  // [b, t, count, head_dim] as [b, count, t, head_dim]: for one query a row (a decode step) the same memory, one
  // view instead of a transpose.
  auto head_major = [&](const at::Tensor& x, int64_t count) {
    return t == 1 ? x.view({b, count, 1, a.head_dim}) : x.transpose(1, 2);
  };
  const bool per_head_norm_before = a.qk_norm == QkNorm::kPerHead && !a.qk_norm_after_rope;
  const bool per_head_norm_after = a.qk_norm == QkNorm::kPerHead && a.qk_norm_after_rope;
  if (!own_kv) {
    at::Tensor q = projected;
    if (a.qk_norm == QkNorm::kFullWidth) q = norm(q, l.q_norm, n);
    q = heads(q, a.heads);
    if (per_head_norm_before) q = norm(q, l.q_norm, n);
    q = rotate(q);
    if (per_head_norm_after) q = norm(q, l.q_norm, n);
    return {head_major(q, a.heads), {}, {}};
  }
  at::Tensor qkv = projected;
  if (l.qkv_scale.defined()) qkv = (qkv * l.qkv_scale).to(projected.scalar_type());  // the keys times their multiplier
  if (a.qk_norm == QkNorm::kFullWidth) {
    const std::vector<at::Tensor> parts = qkv.split_with_sizes({a.q_width(), a.kv_width(), a.kv_width()}, -1);
    const at::Tensor q = heads(norm(parts[0], l.q_norm, n), a.heads);
    const at::Tensor k = heads(norm(parts[1], l.k_norm, n), a.kv_heads);
    return {head_major(rotate(q), a.heads), head_major(rotate(k), a.kv_heads), head_major(heads(parts[2], a.kv_heads), a.kv_heads)};
  }
  // [b, heads + kv_heads (+ kv_heads), t, head_dim], head-major from the start: q and k, and v (its own heads, or
  // the keys' before their norm and rotation where values are keys)
  const int64_t all = a.heads + a.kv_heads * (a.keys_as_values ? 1 : 2);
  if (qkv.size(-1) != all * a.head_dim)
    throw std::logic_error(fmt::format("forward: a stacked projection of {} values for {} heads of {}", qkv.size(-1), all,
                                       a.head_dim));
  if (!qkv.is_contiguous()) qkv = qkv.contiguous();  // (a matmul's output is)
  const at::Tensor by_head = qkv.as_strided({b, all, t, a.head_dim}, {t * all * a.head_dim, a.head_dim, all * a.head_dim, 1},
                                            qkv.storage_offset());
  at::Tensor qk = by_head, v;
  if (a.keys_as_values) {
    v = by_head.narrow(1, a.heads, a.kv_heads);
  } else {
    const std::vector<at::Tensor> qk_v = by_head.split_with_sizes({a.heads + a.kv_heads, a.kv_heads}, 1);
    qk = qk_v[0];
    v = qk_v[1];
  }
  const at::Tensor qk_norm = a.qk_norm == QkNorm::kPerHead ? l.qk_norm.unsqueeze(1) : at::Tensor();  // [heads, 1, dim]
  if (per_head_norm_before) qk = norm(qk, qk_norm, n);
  if (a.rope >= 0) qk = apply_rotary(qk, in.rotary.at(a.rope), /*head_major=*/true);
  if (per_head_norm_after) qk = norm(qk, qk_norm, n);
  if (a.value_norm) v = unit_rms_norm(v, n.eps);
  const std::vector<at::Tensor> q_k = qk.split_with_sizes({a.heads, a.kv_heads}, 1);
  return {q_k[0], q_k[1], v};
}

// [b, heads, t, width] as [b, t, heads * width]: one view where its memory is token-major already (as attention
// kernels leave it, and always for t = 1), else a copy.
at::Tensor token_major(const at::Tensor& x) {
  const int64_t b = x.size(0), heads = x.size(1), t = x.size(2), width = x.size(3);
  const bool in_place = x.stride(3) == 1 && x.stride(1) == width && (t == 1 || x.stride(2) == heads * width) &&
                        (b == 1 || x.stride(0) == t * heads * width);
  if (in_place) return x.as_strided({b, t, heads * width}, {t * heads * width, heads * width, 1}, x.storage_offset());
  return x.transpose(1, 2).reshape({b, t, heads * width});
}

// Queries `q` [b, heads, t, width] of a layer over `kv`, the keys and values of the forward's tokens (after the
// cache's), and over the rows' shared prefixes' (`prefix`) by cascade when there are some.
at::Tensor attend_cached(const AttentionSpec& a, const at::Tensor& q, const LayerCache& produced,
                         const LayerCache* prefix, const DeviceInputs& in, const at::Tensor& sinks) {
  const LayerCache kv = produced.to(q.device());
  const FoldedMask& mask = in.mask(a.window, mask_group(q, a.kv_heads));
  const ScoreOptions scores{a.scale, a.softcap, sinks};
  if (prefix == nullptr) return attend(q, kv.keys(), kv.values(), mask, scores);
  const LayerCache shared = prefix->to(q.device());
  return attend_cascade(q, kv.keys(), kv.values(), mask, shared.keys(), shared.values(), in.groups, scores);
}

const LayerCache* shared_prefix(const SharedPrefixes* shared, int64_t layer) {
  return shared == nullptr ? nullptr : &shared->layers[layer];
}

// Keeps a layer's keys and values `fresh` in produced[index], after the cache's rows' when there is a cache.
void keep_produced(LayerCache fresh, KvCache* cache, int64_t index, std::vector<LayerCache>& produced) {
  produced[index] = std::move(fresh);
  if (cache == nullptr) return;
  cache->append_layer(index, produced[index]);
  produced[index] = cache->layer(index);
}

// The attention heads of one part of a forward, token-major [.., heads * head_dim] (its real tokens alone where the
// forward packs them), from `projected`, its tokens' share of the layer's projection. A layer with keys and values
// of its own computes them (after the cache's, when there is one) into produced[index]; a KV-shared layer takes
// those of its kv_layer from there, and from the shared prefixes at that layer. They are kept there only while a
// later layer reads them (`read_later`).
at::Tensor attend_part(const AttentionSpec& a, const NormSpec& n, const LayerWeights& l, const at::Tensor& h,
                       const at::Tensor& projected, const PartContext& part, int64_t index, bool read_later,
                       const std::vector<at::Tensor>& state) {
  const DeviceInputs& in = *part.in;
  const bool own_kv = a.kv_layer == index;
  Projections p = project(a, n, l, padded(projected, in), own_kv, in);
  if (in.query_scale.defined()) p.q = p.q * in.query_scale;
  if (own_kv) keep_produced({{p.k, p.v}, state}, part.cache, index, *part.produced);
  at::Tensor heads =
      attend_cached(a, p.q, part.produced->at(a.kv_layer), shared_prefix(part.shared, a.kv_layer), in, l.sinks);
  if (own_kv && !read_later) (*part.produced)[index] = {};
  // (a head-gated model never packs its tokens: h is [b, t, hidden] here)
  if (a.head_gate) heads = heads * gate_factor(a, linear(h, l.head_gate)).transpose(1, 2).unsqueeze(-1);
  return real_only(token_major(heads), in);
}

// Self-attention of one layer over its normed input `h` ([b, t, hidden], or [1, n, hidden] packed): q, k and v
// projected together for every part of the forward, each part attending within itself; returns the output
// projection's result.
at::Tensor attention(const AttentionSpec& a, const NormSpec& n, const LayerWeights& l, const at::Tensor& h,
                     const std::vector<PartContext>& parts, int64_t index, bool read_later,
                     const std::vector<at::Tensor>& state = {}) {
  const at::Tensor projected = a.kv_layer == index ? linear(h, l.qkv) : linear(h, l.q);
  at::Tensor by_token;
  if (parts.size() == 1) {
    by_token = attend_part(a, n, l, h, projected, parts.front(), index, read_later, state);
  } else {
    std::vector<at::Tensor> each;
    for (const PartContext& part : parts)
      each.push_back(attend_part(a, n, l, h, projected.narrow(1, part.in->first, part.in->real_count), part, index,
                                 read_later, state));
    by_token = at::cat(each, 1);
  }
  if (a.output_gate) by_token = by_token * gate_factor(a, linear(h, l.attn_gate));
  return linear(by_token, l.o);
}

// The width expanded keys and values take together (see expanded_latents).
int64_t expanded_width(const LatentSpec& m) { return std::max(m.nope_dim + m.rope_dim, m.value_dim); }

// Whether a latent-attention forward costs fewer multiply-adds expanded than absorbed: expanding costs kv_b_proj
// over every key it reads (`keys`), absorbing costs it over every query (`queries`), and a (query, key) pair costs
// 2 expanded_width expanded against 2 (kv_rank + rope) absorbed. So a prefill (as many queries as keys) and many
// rows' queries over one shared prefix expand; decode steps and a few queries over long caches absorb.
bool cheaper_expanded(const LatentSpec& m, int64_t queries, int64_t keys, int64_t pairs) {
  const int64_t per_token = m.kv_rank * (m.nope_dim + m.value_dim);
  return keys * per_token + pairs * 2 * expanded_width(m) < queries * per_token + pairs * 2 * m.latent_width();
}

// x [b, heads, t, in] times each head's matrix of `per_head` [heads, in, out]: [b, heads, t, out], as one batched
// matmul over the heads (the weights read once, whatever b).
at::Tensor by_head(const at::Tensor& x, const at::Tensor& per_head) {
  const int64_t b = x.size(0), heads = x.size(1), t = x.size(2);
  const at::Tensor out = at::bmm(x.transpose(0, 1).reshape({heads, b * t, x.size(3)}), per_head);
  return out.view({heads, b, t, out.size(2)}).transpose(0, 1);
}

// Latents [n, 1, s, kv_rank + rope_dim] expanded as transformers expands them, by each head's key and value rows of
// kv_b_proj: keys [n, heads, s, nope + rope] (the rotated part shared) and values [n, heads, s, value], the narrower
// of the two padded with zeros to the other's width (the fused kernels take one width; zeros add nothing to q . k,
// and the padded values' outputs are dropped).
LayerCache expanded_latents(const LatentSpec& m, const LayerWeights& l, const at::Tensor& latents) {
  const int64_t n = latents.size(0), s = latents.size(2), heads = l.key_up.size(0), width = expanded_width(m);
  const at::Tensor nope = latents.narrow(-1, 0, m.kv_rank);  // [n, 1, s, kv_rank]
  auto per_head = [&](const at::Tensor& rows) {  // rows [heads, out, kv_rank]: [n, heads, s, out]
    return linear(nope, {rows.view({-1, m.kv_rank}), {}}).view({n, s, heads, rows.size(1)}).transpose(1, 2);
  };
  const at::Tensor rope = latents.narrow(-1, m.kv_rank, m.rope_dim).expand({-1, heads, -1, -1});
  const at::Tensor keys = at::cat({per_head(l.key_up), rope}, -1);
  const at::Tensor values = per_head(l.value_up);
  return {{at::constant_pad_nd(keys, {0, width - keys.size(-1)}), at::constant_pad_nd(values, {0, width - m.value_dim})},
          {}};
}

// Multi-head latent attention (see LatentSpec) over the normed input `h` [b, t, hidden]: one matmul gives the query's
// input and the latent; the latent's first kv_rank values normed (epsilon 1e-6, as DeepSeek's norms without one
// given), its last rope_dim rotated, kept as one key [b, 1, t, kv_rank + rope_dim]. Then attention in the cheaper
// of two exact forms (cheaper_expanded): absorbed, each head's unrotated query in the latent's space beside its
// rotated part, over the latents as keys and values, the output's first kv_rank values expanded by each head's
// value rows; or expanded, the latents (the forward's and its shared prefixes') expanded to each head's keys and
// values, as transformers computes it. Then o_proj.
at::Tensor latent_attention(const LayerSpec& s, const LayerWeights& l, const at::Tensor& h, const DeviceInputs& in,
                            KvCache* cache, const SharedPrefixes* shared, int64_t index,
                            std::vector<LayerCache>& produced) {
  const AttentionSpec& a = s.attention;
  const LatentSpec& m = s.latent;
  const int64_t b = h.size(0), t = h.size(1);
  const NormSpec latent_norm;
  const int64_t q_in = m.q_rank > 0 ? m.q_rank : m.q_width(a.heads);
  const std::vector<at::Tensor> parts =
      linear(h, l.qkv).split_with_sizes({q_in, m.kv_rank, m.rope_dim}, -1);
  const at::Tensor q = (m.q_rank > 0 ? linear(rms_norm(parts[0], l.q_a_norm, latent_norm), l.q) : parts[0])
                           .view({b, t, a.heads, m.nope_dim + m.rope_dim});
  const RotaryTables& rotary = in.rotary.at(a.rope);
  const at::Tensor q_rope = apply_rotary(q.narrow(-1, m.nope_dim, m.rope_dim), rotary).transpose(1, 2);
  const at::Tensor k_rope = apply_rotary(parts[2].view({b, t, 1, m.rope_dim}), rotary);
  keep_produced({{at::cat({rms_norm(parts[1], l.kv_a_norm, latent_norm).unsqueeze(2), k_rope}, -1).transpose(1, 2)}, {}},
                cache, index, produced);
  const LayerCache kv = std::move(produced[index]);
  produced[index] = {};
  const at::Tensor q_nope = q.narrow(-1, 0, m.nope_dim).transpose(1, 2);
  auto scaled = [&](const at::Tensor& query) { return in.query_scale.defined() ? query * in.query_scale : query; };
  const LayerCache* prefix = shared_prefix(shared, index);
  const int64_t slots = kv.slots(), prefix_slots = prefix == nullptr ? 0 : prefix->slots();
  const int64_t prefix_keys = prefix == nullptr ? 0 : prefix->keys().size(0) * prefix_slots;
  at::Tensor heads;  // [b, heads, t, value_dim]
  const LatentForm form = latent_form();
  if (form == LatentForm::kCheaper ? cheaper_expanded(m, b * t, b * slots + prefix_keys, b * t * (slots + prefix_slots))
                                   : form == LatentForm::kExpanded) {
    const at::Tensor query =
        at::constant_pad_nd(at::cat({q_nope, q_rope}, -1), {0, expanded_width(m) - m.nope_dim - m.rope_dim});
    AttentionSpec expanded = a;
    expanded.kv_heads = a.heads;
    const LayerCache shared_expanded =
        prefix == nullptr ? LayerCache() : expanded_latents(m, l, prefix->keys().to(h.device()));
    heads = attend_cached(expanded, scaled(query), expanded_latents(m, l, kv.keys().to(h.device())),
                          prefix == nullptr ? nullptr : &shared_expanded, in, {})
                .narrow(-1, 0, m.value_dim);
  } else {
    const at::Tensor query = at::cat({by_head(q_nope, l.key_up), q_rope}, -1);
    const at::Tensor latents = attend_cached(a, scaled(query), kv, prefix, in, {});
    heads = by_head(latents.narrow(-1, 0, m.kv_rank), l.value_up.transpose(1, 2));
  }
  return linear(heads.transpose(1, 2).reshape({b, t, a.heads * m.value_dim}), l.o);
}

// A Gated DeltaNet layer over its normed input `h` [b, t, hidden]: q, k and v projected and convolved (causal,
// SiLU), the gated delta rule (gated_delta_rule.h) with beta = sigmoid(b) (times beta_scale) and the log decay
// g = -exp(A_log) softplus(a + dt_bias) in fp32, each value head's output RMS-normed (times its weight, in the model
// dtype) and gated by SiLU of z (in fp32), then out_proj. Each row continues from `before` (its state and
// convolution history; empty: zeros) and leaves in `after` the state and history at its last real token: padding
// (at a row's end) gets g = 0 and beta = 0, which leave a state as it is, and the history is taken before it.
at::Tensor gated_delta_net(const DeltaNetSpec& d, const LayerWeights& l, const at::Tensor& h, const DeviceInputs& in,
                           const std::vector<at::Tensor>& before, LayerCache& after) {
  const int64_t b = h.size(0), t = h.size(1);
  const at::Tensor state = before.empty() ? at::Tensor() : before[0], history = before.empty() ? at::Tensor() : before[1];
  const auto [mixed, history_after] =
      causal_conv1d_silu(linear(h, l.delta_qkv).transpose(1, 2), l.delta_conv, history, in.row_lengths);
  const std::vector<at::Tensor> qkv =
      mixed.transpose(1, 2).split_with_sizes({d.key_width(), d.key_width(), d.value_width()}, -1);
  at::Tensor g = -l.delta_a_log.to(at::kFloat).exp() *
                 at::softplus(linear(h, l.delta_a).to(at::kFloat) + l.delta_dt_bias);
  at::Tensor beta = at::sigmoid(linear(h, l.delta_b));
  if (d.beta_scale != 1) beta = beta * d.beta_scale;
  if (in.token_valid.defined()) {
    const at::Tensor real = in.token_valid.unsqueeze(-1);
    g = g * real;
    beta = beta * real.to(beta.scalar_type());
  }
  const DeltaRuleInputs rule{qkv[0].reshape({b, t, d.key_heads, d.key_dim}),
                             qkv[1].reshape({b, t, d.key_heads, d.key_dim}),
                             qkv[2].reshape({b, t, d.value_heads, d.value_dim}), g, beta};
  // One token a row (a decode step) token by token, as transformers steps; else in chunks.
  const auto [out, state_after] = t == 1 ? recurrent_gated_delta_rule(rule, state) : chunked_gated_delta_rule(rule, state);
  after = {{}, {state_after, history_after}};
  const at::Tensor z = linear(h, l.delta_z).view({b, t, d.value_heads, d.value_dim});
  const at::Tensor normed = l.delta_norm * unit_rms_norm(out, d.norm_eps);
  return linear((normed * at::silu(z.to(at::kFloat))).to(h.scalar_type()).reshape({b, t, d.value_width()}), l.o);
}

// LFM2's short convolution over its normed input `h` [b, t, hidden]: B, C and x projected, B * x convolved (causal,
// no activation) from `before` (its history; empty: zeros), times C, then out_proj; `after` takes the history at
// each row's last real token.
at::Tensor short_conv(const LayerWeights& l, const at::Tensor& h, const DeviceInputs& in,
                      const std::vector<at::Tensor>& before, LayerCache& after) {
  const std::vector<at::Tensor> bcx = linear(h, l.conv_in).chunk(3, -1);
  const auto [convolved, history_after] = causal_conv1d((bcx[0] * bcx[2]).transpose(1, 2), l.conv, l.conv_bias,
                                                        before.empty() ? at::Tensor() : before[0], in.row_lengths, false);
  after = {{}, {history_after}};
  return linear(bcx[1] * convolved.transpose(1, 2), l.o);
}

// Mamba2's output y [b, t, heads, head_dim] and its gate z, as Mamba2Gate says: RMS-normed over each group of heads'
// values in fp32, SiLU(z) taken in fp32 before or after; [b, t, inner] in y's dtype.
at::Tensor gated_group_norm(const Mamba2Spec& m, const at::Tensor& y, const at::Tensor& z, const at::Tensor& weight) {
  const int64_t b = y.size(0), t = y.size(1);
  if (m.gate == Mamba2Gate::kGateOnly) return (y * at::silu(z)).reshape({b, t, m.inner()});
  auto grouped_norm = [&](const at::Tensor& x) {
    return unit_rms_norm(x.reshape({b, t, m.groups, -1}), m.norm_eps).reshape({b, t, m.inner()});
  };
  const at::Tensor gate = at::silu(z.to(at::kFloat)).reshape({b, t, m.inner()});
  const at::Tensor values = y.to(at::kFloat).reshape({b, t, m.inner()});
  switch (m.gate) {
    case Mamba2Gate::kNormThenGate:
      return (weight * grouped_norm(values) * gate).to(y.scalar_type());
    case Mamba2Gate::kGateThenNormFp32Weight:
      return (weight * grouped_norm(values * gate)).to(y.scalar_type());
    default:  // the weight in y's dtype, after the cast (Granite 4, Nemotron-H)
      return weight * grouped_norm(values * gate).to(y.scalar_type());
  }
}

// A Mamba2 layer over its normed input `h` [b, t, hidden]: z, x, B, C and dt projected, x, B and C convolved (causal,
// SiLU), dt = softplus(dt + dt_bias) clamped to [dt_min, dt_max] (transformers clamps in its chunked prefill alone;
// here a one-token suffix after a prefix's state scores as the full forward does, and a decode step departs from
// transformers' only where dt falls outside the clamp), the scan (mamba2_scan.h) from `before` (its state and
// convolution history; empty: zeros), the gated group norm, then out_proj. `after` takes the state and history at
// each row's last real token: padding (at a row's end) gets dt = 0, which leaves a state as it is. One token a row
// after a state (a decode step) is one recurrent step, as transformers steps; else the chunked scan.
at::Tensor mamba2(const Mamba2Spec& m, const LayerWeights& l, const at::Tensor& h, const DeviceInputs& in,
                  const std::vector<at::Tensor>& before, LayerCache& after) {
  const int64_t b = h.size(0), t = h.size(1);
  const at::Tensor state = before.empty() ? at::Tensor() : before[0], history = before.empty() ? at::Tensor() : before[1];
  at::Tensor projected = linear(m.in_multiplier != 1 ? h * m.in_multiplier : h, l.mamba_in);
  if (l.mamba_mup.defined()) projected = projected * l.mamba_mup;
  const std::vector<at::Tensor> zxbcdt = projected.split_with_sizes({m.inner(), m.conv_channels(), m.heads}, -1);
  const auto [convolved, history_after] =
      causal_conv1d(zxbcdt[1].transpose(1, 2), l.mamba_conv, l.mamba_conv_bias, history, in.row_lengths, true);
  const int64_t group_width = m.groups * m.state_size;
  const std::vector<at::Tensor> xbc = convolved.transpose(1, 2).split_with_sizes({m.inner(), group_width, group_width}, -1);
  const bool step = t == 1 && state.defined();
  at::Tensor dt = at::softplus(zxbcdt[2] + l.mamba_dt_bias);
  dt = m.dt_max > 0 ? dt.clamp(m.dt_min, m.dt_max) : dt.clamp_min(m.dt_min);
  if (in.token_valid.defined()) dt = dt * in.token_valid.unsqueeze(-1).to(dt.scalar_type());
  const ScanInputs scan{xbc[0].reshape({b, t, m.heads, m.head_dim}), dt, -l.mamba_a_log.to(at::kFloat).exp(),
                        xbc[1].reshape({b, t, m.groups, m.state_size}), xbc[2].reshape({b, t, m.groups, m.state_size}),
                        l.mamba_d};
  const auto [y, state_after] = step ? scan_step(scan, state) : chunked_scan(scan, state, m.chunk);
  after = {{}, {state_after, history_after}};
  const at::Tensor normed = gated_group_norm(m, y, zxbcdt[0].reshape({b, t, m.heads, m.head_dim}), l.mamba_norm);
  return linear(normed.to(h.scalar_type()), l.mamba_out);
}

// A recurrent layer's state before a forward's tokens: the cache's rows' (the tokens it holds), else each row's
// shared prefix's, else none (zeros).
std::vector<at::Tensor> state_before(const DeviceInputs& in, KvCache* cache, const SharedPrefixes* shared,
                                     int64_t index) {
  if (cache != nullptr && !cache->layer(index).empty()) return cache->layer(index).state;
  if (shared != nullptr) return shared->layers[index].rows(in.row_prefix).state;
  return {};
}

// A recurrent layer from its state before; its state after goes into the cache, replacing the one before.
at::Tensor recurrent_layer(const LayerSpec& s, const LayerWeights& l, const at::Tensor& h,
                           const DeviceInputs& in, KvCache* cache, const SharedPrefixes* shared, int64_t index) {
  const std::vector<at::Tensor> before = state_before(in, cache, shared, index);
  LayerCache after;
  const at::Tensor out = s.mixer == MixerKind::kShortConv ? short_conv(l, h, in, before, after)
                         : s.mixer == MixerKind::kMamba2  ? mamba2(s.mamba, l, h, in, before, after)
                                                          : gated_delta_net(s.delta, l, h, in, before, after);
  if (cache != nullptr) cache->append_layer(index, after);
  return out;
}

// Falcon-H1's mixers side by side on one normed input: Mamba2 (its state from state_before) and attention (its input
// times attention_in_multiplier), each output times its multiplier, added. The Mamba2 state after goes into the
// layer's cache with attention's keys and values.
at::Tensor attention_and_mamba2(const LayerSpec& s, const NormSpec& n, const LayerWeights& l, const at::Tensor& h,
                                const DeviceInputs& in, KvCache* cache, const SharedPrefixes* shared, int64_t index,
                                std::vector<LayerCache>& produced, bool read_later) {
  LayerCache after;
  const at::Tensor mamba = mamba2(s.mamba, l, h, in, state_before(in, cache, shared, index), after);
  const at::Tensor attention_in = s.attention_in_multiplier != 1 ? h * s.attention_in_multiplier : h;
  const at::Tensor attended = attention(s.attention, n, l, attention_in, {{&in, cache, shared, &produced}}, index,
                                       read_later, after.state);
  return mamba * s.mamba_out_multiplier + attended * s.attention_out_multiplier;
}

// gpt_oss's clamped SwiGLU: (clamp(up, ±limit) + 1) * g * sigmoid(alpha * g), g = min(gate, limit).
at::Tensor clamped_swiglu(const MlpSpec& m, const at::Tensor& gate, const at::Tensor& up) {
  const at::Tensor g = gate.clamp_max(m.swiglu_limit);
  return (up.clamp(-m.swiglu_limit, m.swiglu_limit) + 1) * (g * at::sigmoid(g * m.swiglu_alpha));
}

// Each (token, choice) row's bias of its expert: the [experts, out] biases gathered by the sorted rows' experts.
at::Tensor expert_bias(const at::Tensor& bias, const at::Tensor& sorted_experts) {
  return bias.defined() ? bias.index_select(0, sorted_experts) : bias;
}

at::Tensor plus(const at::Tensor& x, const at::Tensor& bias) { return bias.defined() ? x + bias : x; }

at::Tensor expert_forward(const MlpSpec& m, const ExpertWeights& e, const at::Tensor& x) {
  if (m.ungated_experts)
    return linear(activate(linear(x, e.up), m.activation), e.down);
  const at::Tensor gate = activate(linear(x, e.gate), m.activation);
  return linear(gate * linear(x, e.up), e.down);
}

// The experts a router chooses for each token [tokens, per_token] and their weights, as RouterSpec describes.
std::pair<at::Tensor, at::Tensor> route(const RouterSpec& r, const LayerWeights& l, const at::Tensor& router_in,
                                        at::ScalarType dtype) {
  at::Tensor logits = r.fp32_logits ? linear(router_in.to(at::kFloat), l.router) : linear(router_in, l.router);
  if (r.logit_softcap > 0) logits = soft_cap(logits.to(at::kFloat), r.logit_softcap);
  at::Tensor weights, chosen;
  if (r.scores == RouterScores::kSoftmaxOfChosen || r.scores == RouterScores::kFp32SoftmaxOfChosen) {
    std::tie(weights, chosen) = logits.topk(r.per_token, -1);  // the top logits, then a softmax over them
    return {chosen, r.scores == RouterScores::kSoftmaxOfChosen ? at::softmax(weights, -1)
                                                                 : at::softmax(weights.to(at::kFloat), -1).to(dtype)};
  }
  const at::Tensor scores = r.scores == RouterScores::kSigmoid         ? at::sigmoid(logits.to(at::kFloat))
                            : r.scores == RouterScores::kSoftmaxInDtype ? at::softmax(logits, -1)
                                                                        : at::softmax(logits.to(at::kFloat), -1);
  at::Tensor choice = r.correction_bias ? scores + l.correction_bias : scores;
  if (r.groups > 1) {  // only the experts of the groups whose two best choice scores sum highest
    const int64_t tokens = choice.size(0), per_group = r.experts / r.groups;
    const at::Tensor grouped = choice.view({tokens, r.groups, per_group});
    const at::Tensor best_groups = std::get<1>(std::get<0>(grouped.topk(2, -1)).sum(-1).topk(r.groups_chosen, -1));
    const at::Tensor kept = at::zeros({tokens, r.groups}, choice.options().dtype(at::kBool)).scatter_(1, best_groups, true);
    // the other groups' experts out of the choice: -inf, or 0 as Mistral 4's router (whose softmax scores are >= 0)
    const double out = r.scores == RouterScores::kSoftmaxInDtype ? 0.0 : -std::numeric_limits<double>::infinity();
    choice = grouped.masked_fill(kept.logical_not().unsqueeze(-1), out).view({tokens, r.experts});
  }
  if (r.correction_bias || r.groups > 1) {
    chosen = std::get<1>(choice.topk(r.per_token, -1));
    weights = scores.gather(1, chosen);
  } else {
    std::tie(weights, chosen) = scores.topk(r.per_token, -1);
  }
  if (r.normalize) {
    at::Tensor sum = weights.sum(-1, true);
    if (r.norm_epsilon != 0) sum = sum + r.norm_epsilon;
    if (r.norm_floor != 0) sum = sum.clamp_min(r.norm_floor);
    weights = weights / sum;
  }
  if (r.scaling != 1 && !r.scaled_after_sum) weights = weights * r.scaling;
  if (r.expert_scales) weights = weights * l.expert_scales.index_select(0, chosen.reshape(-1)).view(chosen.sizes());
  return {chosen, r.weights_fp32 ? weights : weights.to(dtype)};
}

// A mixture of experts: each token goes through the experts its router chooses (route), weighted by their routing
// weights. The (token, choice) pairs are sorted by expert and each projection runs as one grouped matmul over the
// experts' runs of rows, whose bounds stay on the device: no host sync (torch's grouped kernel on sm90/sm100 in
// bf16; its fallback elsewhere, which reads the bounds on the host itself). A shared expert, gated or not, adds
// its output to theirs.
// `routed` is what the router reads: the experts' input, or (Gemma 4) the residual before their norm.
at::Tensor mixture(const MlpSpec& m, const LayerWeights& l, const at::Tensor& g, const at::Tensor& routed,
                   const NormSpec& n) {
  const RouterSpec& r = m.router;
  const at::Tensor x = g.reshape({-1, g.size(-1)});
  at::Tensor router_in = routed.reshape({-1, routed.size(-1)});
  if (r.scaled_input)
    router_in = unit_rms_norm(router_in, n.eps) * l.router_scale * std::pow(static_cast<double>(x.size(-1)), -0.5);
  const auto [chosen, weights] = route(r, l, router_in, x.scalar_type());
  const auto [sorted_experts, order] = at::sort(chosen.reshape(-1), /*stable=*/true, /*dim=*/0, /*descending=*/false);
  const at::Tensor run_ends =
      at::searchsorted(sorted_experts, at::arange(r.experts, sorted_experts.options()), /*out_int32=*/true,
                       /*right=*/true);
  const at::Tensor tokens = at::div(order, r.per_token, "floor");
  const at::Tensor experts_in = m.latent_size > 0 ? linear(x, l.latent_in) : x;
  const at::Tensor rows = experts_in.index_select(0, tokens);
  const StackedExperts& e = l.experts;
  const at::Tensor up = plus(at::_grouped_mm(rows, e.up.transpose(1, 2), run_ends), expert_bias(e.up_bias, sorted_experts));
  at::Tensor hidden;
  if (m.ungated_experts) {
    hidden = activate(up, m.activation);
  } else {
    const at::Tensor gate =
        plus(at::_grouped_mm(rows, e.gate.transpose(1, 2), run_ends), expert_bias(e.gate_bias, sorted_experts));
    hidden = m.swiglu_limit > 0 ? clamped_swiglu(m, gate, up) : activate(gate, m.activation) * up;
  }
  const at::Tensor y = plus(at::_grouped_mm(hidden, e.down.transpose(1, 2), run_ends),
                            expert_bias(e.down_bias, sorted_experts)) *
                       weights.reshape(-1).index_select(0, order).unsqueeze(1);
  // Routing weights kept fp32 add the experts' outputs up in fp32, rounded once (transformers' fp32 buffer).
  at::Tensor out = r.weights_fp32 ? at::zeros_like(experts_in, at::kFloat).index_add_(0, tokens, y.to(at::kFloat)).to(x.scalar_type())
                                  : at::zeros_like(experts_in).index_add_(0, tokens, y.to(x.scalar_type()));
  if (m.latent_size > 0) out = linear(out, l.latent_out);
  if (r.scaled_after_sum && r.scaling != 1) out = out * r.scaling;
  if (r.shared_expert_size > 0) {
    const at::Tensor shared = expert_forward(m, l.shared_expert, x);
    out = out + (r.shared_expert_gated ? at::sigmoid(linear(x, l.shared_expert_gate)) * shared : shared);
  }
  return out.view(g.sizes());
}

at::Tensor mlp(const MlpSpec& m, const LayerWeights& l, const at::Tensor& g, const NormSpec& n) {
  switch (m.kind) {
    case MlpKind::kExperts:
      return mixture(m, l, g, g, n);
    case MlpKind::kUngated: {
      const at::Tensor up = linear(g, l.up);
      return linear(m.activation == Activation::kXielu ? xielu(up, l) : activate(up, m.activation), l.down);
    }
    case MlpKind::kGated:
      break;
    case MlpKind::kNone:
      throw std::logic_error("mlp: the layer has no MLP");
  }
  const std::vector<at::Tensor> gate_up = linear(g, l.gate_up).chunk(2, -1);  // one matmul
  const at::Tensor gate = m.gate_multiplier != 1 ? gate_up[0] * m.gate_multiplier : gate_up[0];
  const at::Tensor out = linear(activate(gate, m.activation) * gate_up[1], l.down);
  return m.down_multiplier != 1 ? out * m.down_multiplier : out;
}

// One decoder layer: each block's input normed first (all but olmo2), its output normed (gemma2/3, olmo2),
// scaled (granite) and added to the residual; or both blocks on one normed input, added together (phi).
// Mixers other than attention run a forward of one part (the others are not token-wise: ModelSpec::token_wise).
at::Tensor layer_forward(const LayerSpec& s, const NormSpec& n, const LayerWeights& l, const at::Tensor& x,
                         const std::vector<PartContext>& parts, int64_t index, bool read_later,
                         const at::Tensor& per_layer_input) {
  const at::Tensor normed = norm(x, l.input_norm, l.input_norm_bias, n);
  if (s.mixer == MixerKind::kNone) return x + mlp(s.mlp, l, normed, n);  // a layer of its MLP alone, on its one norm
  const DeviceInputs& in = *parts.front().in;
  KvCache* cache = parts.front().cache;
  const SharedPrefixes* shared = parts.front().shared;
  std::vector<LayerCache>& produced = *parts.front().produced;
  const at::Tensor attn = s.mamba_beside ? attention_and_mamba2(s, n, l, normed, in, cache, shared, index, produced, read_later)
                          : s.mixer == MixerKind::kLatentAttention
                              ? latent_attention(s, l, normed, in, cache, shared, index, produced)
                          : s.mixer != MixerKind::kAttention
                              ? recurrent_layer(s, l, normed, in, cache, shared, index)
                              : attention(s.attention, n, l, normed, parts, index, read_later);
  if (s.parallel) {  // the MLP on its own norm's output, or on the input norm's
    const at::Tensor mlp_in = s.pre_mlp_norm ? norm(x, l.post_norm, l.post_norm_bias, n) : normed;
    return attn + mlp(s.mlp, l, mlp_in, n) + x;
  }
  const at::Tensor y = x + scale_residual(rms_norm(attn, l.attn_out_norm, n), s.residual_multiplier);
  if (s.mlp.kind == MlpKind::kNone) return y;  // a layer of its mixer alone
  at::Tensor out = mlp(s.mlp, l, norm(y, l.post_norm, l.post_norm_bias, n), n);
  if (s.experts_beside)
    out = rms_norm(out, l.dense_out_norm, n) +
          rms_norm(mixture(s.experts, l, rms_norm(y, l.experts_in_norm, n), y, n), l.experts_out_norm, n);
  at::Tensor z = y + scale_residual(rms_norm(out, l.mlp_out_norm, n), s.residual_multiplier);
  if (s.per_layer_input) {
    const at::Tensor gated = activate(linear(z, l.per_layer_gate), s.mlp.activation) * per_layer_input;
    z = z + rms_norm(linear(gated, l.per_layer_projection), l.per_layer_norm, n);
  }
  return s.scalar ? z * l.scalar : z;
}

// Gemma 4's per-layer inputs [b, t, layers, width]: the tokens' rows of the per-layer table (times sqrt(width)),
// and the embeddings projected (times hidden^-1/2) and normed, added and scaled by 1/sqrt(2), as transformers
// computes them in the model dtype.
at::Tensor per_layer_inputs(const ModelWeights& w, const ModelSpec& spec, const NormSpec& n, const at::Tensor& tokens,
                            const at::Tensor& embedded) {
  const int64_t b = embedded.size(0), t = embedded.size(1), width = spec.per_layer_input_size;
  const auto layers = static_cast<int64_t>(spec.layers.size());
  const at::Tensor by_token = w.per_layer_embed.index_select(0, tokens).view({b, t, layers, width}) *
                              scale_in_dtype(std::sqrt(static_cast<double>(width)), embedded);
  const double projection_scale = std::pow(static_cast<double>(embedded.size(-1)), -0.5);
  const at::Tensor projected = (linear(embedded, w.per_layer_model_projection) * projection_scale)
                                   .view({b, t, layers, width});
  return (rms_norm(projected, w.per_layer_projection_norm, n) + by_token) * std::pow(2.0, -0.5);
}

}  // namespace

Model::Model(ModelConfig config, std::shared_ptr<const ModelWeights> weights, at::ScalarType dtype)
    : config_(std::make_shared<const ModelConfig>(std::move(config))),
      weights_(std::move(weights)),
      dtype_(dtype),
      spec_(std::make_shared<const ModelSpec>(model_spec(*config_))) {
  for (const RopeSpec& r : spec_->ropes) {
    inv_freqs_.push_back(rope_variant_frequencies(r.rope, r.head_dim));
    rope_variants_ = std::max(rope_variants_, inv_freqs_.back().size(0));
  }
}

ModelInfo Model::info() const {
  const ModelConfig& c = *config_;
  return {c.model_type,  c.vocab_size, c.hidden_size, c.num_layers, c.layer_head_count(0), c.layer_kv_head_count(0), c.layer_head_dim(0),
          c.max_position_embeddings, num_parameters()};
}

c10::Device Model::layer_device(int64_t layer) const { return weights_->layers.at(layer).device; }

bool Model::on_cuda() const {
  return std::any_of(weights_->layers.begin(), weights_->layers.end(),
                     [](const LayerWeights& l) { return l.device.is_cuda(); });
}

int64_t Model::num_parameters() const {
  int64_t total = 0;
  const ExpertTraits& experts = model_family(config_->model_type).experts;
  for (const TensorSpec& spec : expected_tensors(*config_)) {
    if (is_buffer(spec.name, experts)) continue;
    int64_t count = 1;
    for (const int64_t size : spec.shape) count *= size;
    total += count;
  }
  return total + weights_->unloaded_parameters;
}

bool Model::packs_real_tokens() const { return spec_->token_wise() && !config_->learned_positions; }

std::string Model::attention_kernels() const {
  if (on_cuda())
    return "torch SDPA, flash or memory-efficient (cuDNN attention off for these forwards); cascade parts by matmuls "
           "with fp32 scores";
  return "torch SDPA (its CPU flash kernel); cascade parts by the fused CPU flash kernel, a decode step's fp32 queries "
         "over their own keys by the CPU decode kernel";
}

Model Model::load(const std::string& dir, const ModelOptions& options) {
  ModelConfig config = ModelConfig::from_file(dir);
  const at::ScalarType dtype = parse_dtype(options.dtype);
  const auto devices = layer_placement(options, config, dtype);
  auto weights = std::make_shared<const ModelWeights>(load_checkpoint_weights(dir, config, options, devices, dtype));
  return Model(std::move(config), std::move(weights), dtype);
}

Model Model::synthetic(const std::string& name, const ModelOptions& options) {
  ModelConfig config = ModelConfig::synthetic(name);
  const at::ScalarType dtype = parse_dtype(options.dtype);
  const auto devices = layer_placement(options, config, dtype);
  at::manual_seed(options.seed);
  auto source = [&config](const TensorSpec& spec, c10::Device device) {
    const auto opts = at::TensorOptions().device(device).dtype(at::kFloat);
    if (const std::optional<double> value = initial_value(spec.name)) return at::full(spec.shape, *value, opts);
    if (spec.shape.size() == 1) {  // norms (1-D weights) start as the identity (w = 1, or 0 in (1 + w)), biases at zero
      const bool is_norm = ends_with(spec.name, ".weight");
      return (is_norm && !config.norm_plus_one) || is_scale(spec.name) ? at::ones(spec.shape, opts)
                                                                      : at::zeros(spec.shape, opts);
    }
    return at::randn(spec.shape, opts) * 0.02;
  };
  auto weights = std::make_shared<const ModelWeights>(assemble_weights(config, source, devices, dtype));
  return Model(std::move(config), std::move(weights), dtype);
}

Model Model::open(const std::string& spec, const ModelOptions& options) {
  const std::string prefix = "synthetic:";
  if (spec.rfind(prefix, 0) == 0) return synthetic(spec.substr(prefix.size()), options);
  return load(spec, options);
}

at::Tensor Model::forward(const ForwardBatch& batch, KvCache* cache, const at::Tensor& score_rows,
                          const SharedPrefixes* shared) const {
  return forward_together({{&batch, cache, score_rows, shared}}).front();
}

std::vector<at::Tensor> Model::forward_together(const std::vector<ForwardPart>& parts) const {
  try {
    testing::forward_fault_point();
    return run_forward(parts);
  } catch (c10::Error& e) {  // out of memory among them: say which forward, keep the type
    std::vector<std::string> shapes;
    for (const ForwardPart& p : parts) {
      const ForwardBatch& batch = *p.batch;
      shapes.push_back(fmt::format("{} rows x {} tokens after {} cached slots, scoring {} positions",
                                   batch.tokens.size(0), batch.tokens.dim() > 1 ? batch.tokens.size(1) : 0,
                                   p.cache == nullptr ? 0 : p.cache->slots(), p.score_rows.numel()));
    }
    e.add_context(fmt::format("in a forward of {}", fmt::join(shapes, ", with ")));
    throw;
  }
}

at::Tensor Model::position_embeddings(const at::Tensor& positions, const at::Tensor& valid, c10::Device device) const {
  const int64_t table = config_->max_position_embeddings;
  const at::Tensor seen = positions.masked_select(valid);
  if (seen.numel() > 0 && (seen.max().item<int64_t>() >= table || seen.min().item<int64_t>() < 0))
    throw std::invalid_argument(fmt::format(
        "forward: position {} is outside the model's {} learned positions (max_position_embeddings); score or "
        "generate at most {} tokens a sequence", seen.max().item<int64_t>(), table, table));
  // Padding takes position 0: its output is never read.
  return weights_->position_embed.index_select(0, upload(positions.masked_fill(valid.logical_not(), 0).reshape({-1}), device));
}

std::vector<at::Tensor> Model::run_forward(const std::vector<ForwardPart>& parts) const {
  c10::InferenceMode inference;
  const WithoutCuDNNAttention attention_kernels(on_cuda());
  if (parts.empty()) throw std::invalid_argument("forward: no batch to run");
  const bool together = parts.size() > 1;
  if (together && !packs_real_tokens())
    throw std::invalid_argument("forward: batches run together need a model whose layers are token-wise");

  std::deque<PartInputs> prepared;  // a deque: parts stay where they are as more are made
  int64_t packed_tokens = 0;
  for (const ForwardPart& part : parts) {
    prepared.emplace_back(*this, inv_freqs_, rope_variants_, part, together, packed_tokens);
    packed_tokens += prepared.back().token_count();
  }

  const LayerWeights& first = weights_->layers.front();
  std::vector<at::Tensor> ids;  // every part's tokens, the real ones alone where it packs them
  for (const PartInputs& p : prepared) {
    const at::Tensor all_ids = on_host(p.part().batch->tokens).reshape({-1});
    ids.push_back(p.real_index().defined() ? all_ids.index_select(0, p.real_index()) : all_ids);
  }
  const at::Tensor token_ids = upload(together ? at::cat(ids) : ids.front(), first.device);
  const PartInputs& only = prepared.front();  // (what only one part may have: per-layer inputs, learned positions)
  at::Tensor x = weights_->embed.index_select(0, token_ids);
  x = only.real_index().defined() ? x.unsqueeze(0) : x.view({only.rows(), only.len(), config_->hidden_size});
  if (config_->scale_embeddings) x = x * scale_in_dtype(std::sqrt(static_cast<double>(config_->hidden_size)), x);
  const at::Tensor by_layer =
      spec_->per_layer_input_size > 0 ? per_layer_inputs(*weights_, *spec_, spec_->norm, token_ids, x) : at::Tensor();
  if (config_->embedding_multiplier != 1) x = x * config_->embedding_multiplier;
  if (config_->learned_positions)
    x = x + position_embeddings(only.positions(), only.valid(), first.device).view(x.sizes());
  // Which layers' keys and values a later (KV-shared) layer reads.
  std::vector<bool> read_later(config_->num_layers, false);
  for (int64_t i = 0; i < config_->num_layers; ++i) {
    const int64_t source = spec_->layers[i].attention.kv_layer;
    if (source != i) read_later[source] = true;
  }
  for (int64_t i = 0; i < config_->num_layers; ++i) {
    const LayerWeights& layer = weights_->layers[i];
    if (x.device() != layer.device) x = x.to(layer.device);
    const at::Tensor per_layer_input = by_layer.defined() ? by_layer.select(2, i).to(layer.device) : by_layer;
    std::vector<PartContext> contexts;
    for (PartInputs& p : prepared)
      contexts.push_back({&p.on(layer.device), p.part().cache, p.part().shared, &p.produced()});
    x = layer_forward(spec_->layers[i], spec_->norm, layer, x, contexts, i, read_later[i], per_layer_input);
  }
  std::vector<at::Tensor> scored;
  std::vector<int64_t> counts;
  for (const PartInputs& p : prepared) {
    p.record_slots();
    scored.push_back(together ? p.scored() + p.first() : p.scored());
    counts.push_back(p.scored().numel());
  }
  const at::Tensor score_index = together ? at::cat(scored) : scored.front();
  const at::Tensor rows = x.reshape({-1, config_->hidden_size})
                             .index_select(0, score_index.device().is_cpu() ? upload(score_index, x.device())
                                                                            : score_index.to(x.device()));
  at::Tensor logits =
      linear(norm(rows, weights_->final_norm, weights_->final_norm_bias, spec_->norm), weights_->lm_head);
  if (config_->logits_scaling != 1) logits = logits / config_->logits_scaling;
  if (config_->lm_head_multiplier != 1) logits = logits * config_->lm_head_multiplier;
  logits = soft_cap(logits, config_->final_softcap);
  const at::Tensor logprobs = at::log_softmax(cast(logits, at::kFloat), -1);
  if (!together) return {logprobs};
  return logprobs.split_with_sizes(counts);
}

}  // namespace prefix_scorer
