#include "prefix_scorer/model.h"

#include "prefix_scorer/devices.h"

#include "model/cache/kv_cache.h"
#include "model/checkpoint/checkpoint_layout.h"
#include "model/checkpoint/checkpoint_weights.h"
#include "model/checkpoint/synthetic_quantization.h"
#include "model/checkpoint/weights.h"
#include "model/config/layer_spec.h"
#include "model/config/model_family.h"
#include "model/fault_injection.h"
#include "model/forward_batch.h"
#include "model/forward_inputs.h"
#include "model/host_transfers.h"
#include "model/layers/block_ops.h"
#include "model/layers/mixer.h"
#include "model/layers/mlp.h"
#include "model/ops/attention.h"
#include "model/ops/cast.h"
#include "model/ops/gated_delta_rule.h"
#include "model/ops/linear.h"
#include "model/ops/mamba2_scan.h"
#include "model/ops/rope.h"

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

bool ends_with(const std::string& name, const std::string& suffix) {
  return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
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

std::vector<c10::Device> layer_placement(const ModelOptions& options, const ModelConfig& config,
                                         const ModelLayout& layout, at::ScalarType dtype) {
  std::vector<c10::Device> devices;
  if (options.layer_devices.empty()) devices.push_back(parse_device(options.device));
  for (const auto& name : options.layer_devices) devices.push_back(parse_device(name));
  return place_layers(devices, weight_bytes(config, layout, dtype));
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

// One decoder layer: each block's input normed first (all but olmo2), its output normed (gemma2/3, olmo2),
// scaled (granite) and added to the residual; or both blocks on one normed input, added together (phi).
// Mixers other than attention run a forward of one part (the others are not token-wise: ModelSpec::token_wise).
at::Tensor layer_forward(const LayerSpec& s, const NormSpec& n, const LayerWeights& l, const at::Tensor& x,
                         const std::vector<PartContext>& parts, int64_t index, bool read_later,
                         const at::Tensor& per_layer_input) {
  const at::Tensor normed = norm(x, l.input_norm, l.input_norm_bias, n);
  if (s.mixer == MixerKind::kNone) return x + mlp(s.mlp, l, normed, n);  // a layer of its MLP alone, on its one norm
  const at::Tensor attn = mixer_of(s).forward(s, n, l, normed, {parts, index, read_later});
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

Model::Model(ModelConfig config, std::shared_ptr<const ModelWeights> weights, at::ScalarType dtype,
             std::shared_ptr<const ModelSpec> spec)
    : config_(std::make_shared<const ModelConfig>(std::move(config))),
      weights_(std::move(weights)),
      dtype_(dtype),
      spec_(spec ? std::move(spec) : std::make_shared<const ModelSpec>(model_spec(*config_))) {
  for (const RopeSpec& r : spec_->ropes) {
    inv_freqs_.push_back(rope_variant_frequencies(r.rope, r.head_dim));
    rope_variants_ = std::max(rope_variants_, inv_freqs_.back().size(0));
  }
}

ModelInfo Model::info() const {
  const ModelConfig& c = *config_;
  return {c.model_type,  c.vocab_size, c.hidden_size, c.num_layers, c.layer_head_count(0), c.layer_kv_head_count(0), c.layer_head_dim(0),
          c.max_position_embeddings, num_parameters(), weights_->resident_bytes, weights_->quantized_bytes};
}

c10::Device Model::layer_device(int64_t layer) const { return weights_->layers.at(layer).device; }

bool Model::on_cuda() const {
  return std::any_of(weights_->layers.begin(), weights_->layers.end(),
                     [](const LayerWeights& l) { return l.device.is_cuda(); });
}

int64_t Model::num_parameters() const { return weights_->parameters + weights_->unloaded_parameters; }

DequantizeWorkspace Model::dequantize_workspace() const { return weights_->dequantize_workspace; }

bool Model::packs_real_tokens() const { return spec_->token_wise() && !config_->learned_positions; }

std::string Model::attention_kernels() const {
  if (on_cuda())
    return "torch SDPA, flash or memory-efficient (cuDNN attention off for these forwards); cascade parts by matmuls "
           "with fp32 scores";
  return "torch SDPA (its CPU flash kernel); cascade parts by the fused CPU flash kernel, a decode step's fp32 queries "
         "over their own keys by the CPU decode kernel";
}

Model Model::load(const std::string& dir, const ModelOptions& options) {
  if (!options.quantize.empty())
    throw std::invalid_argument("quantize applies to synthetic models: a checkpoint's weights keep the form it stores");
  ModelConfig config = ModelConfig::from_file(dir);
  const at::ScalarType dtype = parse_dtype(options.dtype);
  CheckpointLoad checkpoint(dir, config, options);  // the config settled: vocabulary and tying as the model has them
  const ModelLayout layout = model_layout(config);
  const auto devices = layer_placement(options, config, layout, dtype);
  auto weights = std::make_shared<const ModelWeights>(checkpoint.weights(config, layout, devices, dtype));
  return Model(std::move(config), std::move(weights), dtype, std::make_shared<const ModelSpec>(layout.spec));
}

Model Model::synthetic(const std::string& name, const ModelOptions& options) {
  ModelConfig config = ModelConfig::synthetic(name);
  const at::ScalarType dtype = parse_dtype(options.dtype);
  const ModelLayout layout = model_layout(config);
  const auto devices = layer_placement(options, config, layout, dtype);
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
  const KeptForms kept = synthetic_kept_forms(options.quantize);
  auto weights = std::make_shared<const ModelWeights>(assemble_weights(config, layout, source, devices, dtype, kept));
  return Model(std::move(config), std::move(weights), dtype, std::make_shared<const ModelSpec>(layout.spec));
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
