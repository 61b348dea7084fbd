#include "model/forward_inputs.h"

#include "model/config/layer_spec.h"
#include "model/layers/mixer.h"
#include "model/config/model_config.h"
#include "model/fault_injection.h"
#include "model/host_transfers.h"
#include "model/ops/cast.h"

#include <algorithm>
#include <tuple>

namespace prefix_scorer {
namespace {

// A forward's real tokens, read on the host without an op: their flat indexes, and each flat position's place among
// them (-1 at padding).
struct RealTokens {
  std::vector<int64_t> index, place;
};

RealTokens real_tokens_of(const at::Tensor& valid) {
  const at::Tensor flat = (valid.scalar_type() == at::kBool ? valid : valid.to(at::kBool)).contiguous();
  const bool* is_real = flat.data_ptr<bool>();
  RealTokens real;
  real.place.resize(flat.numel(), -1);
  for (int64_t i = 0; i < flat.numel(); ++i) {
    if (!is_real[i]) continue;
    real.place[i] = static_cast<int64_t>(real.index.size());
    real.index.push_back(i);
  }
  return real;
}

// The queries' factor by position as transformers computes it (PositionQueryScale): in fp32, then the model dtype
// unless the product is taken in fp32.
at::Tensor position_query_scale(const PositionQueryScale& s, const at::Tensor& positions, at::ScalarType dtype) {
  const at::Tensor p = positions.clamp_min(0).to(at::kFloat);  // padding's positions may be negative
  const at::Tensor steps = at::floor((p + static_cast<double>(s.offset)) / static_cast<double>(s.divisor));
  const at::Tensor scale = at::log1p(steps) * s.beta + 1;
  return (s.product_in_fp32 ? scale : scale.to(dtype)).unsqueeze(1).unsqueeze(-1);
}

// The rows' real tokens as recurrent layers take them: valid [b, t] (int64, 1 at a real token) and lengths [b], both
// undefined when every token is real. A state runs along a whole row, so a row holds one sequence, padded at its end.
std::pair<at::Tensor, at::Tensor> recurrent_rows(const ForwardBatch& batch, const std::string& model_type) {
  if (batch.segment.defined() || batch.branch.defined())
    throw std::invalid_argument(fmt::format(
        "forward: {}'s recurrent layers take one sequence a row: a batch of packed segments or branches would carry "
        "one state across them", model_type));
  const at::Tensor valid = batch.valid.to(at::kCPU, at::kLong);
  const int64_t t = valid.size(1);
  const at::Tensor steps = at::arange(t, at::kLong).unsqueeze(0);
  at::Tensor lengths = valid.sum(1);
  if (!valid.equal(steps.lt(lengths.unsqueeze(1)).to(at::kLong)))
    throw std::invalid_argument(fmt::format(
        "forward: {}'s recurrent layers need each row's padding at its end; a row has padding before a real token",
        model_type));
  switch (testing::state_fault()) {
    case testing::StateFault::kOneTokenLate:
      lengths = (lengths + 1).clamp_max(t);
      break;
    case testing::StateFault::kPaddingLetIn:
      lengths.fill_(t);
      break;
    case testing::StateFault::kNone:
      break;
  }
  if (lengths.eq(t).all().item<bool>()) return {};
  return {steps.lt(lengths.unsqueeze(1)).to(at::kLong), lengths};
}

}  // namespace

// A token-wise op's output [.., width] as attention takes it, [rows, len, width]: where the forward packs its real
// tokens, scattered to their places with zeros at padding (never attended to, their outputs never read).
at::Tensor padded(const at::Tensor& x, const DeviceInputs& in) {
  if (!in.real_tokens.defined()) return x;
  const int64_t width = x.size(-1);
  return at::zeros({in.rows * in.len, width}, x.options())
      .index_copy_(0, in.real_tokens, x.reshape({-1, width}))
      .view({in.rows, in.len, width});
}

// Attention's output [rows, len, width] as the token-wise ops after it take it: the real tokens alone, [1, n,
// width], where the forward packs them.
at::Tensor real_only(const at::Tensor& x, const DeviceInputs& in) {
  if (!in.real_tokens.defined()) return x;
  return x.reshape({-1, x.size(-1)}).index_select(0, in.real_tokens).unsqueeze(0);
}

PartInputs::PartInputs(const Model& model, const std::vector<at::Tensor>& inv_freqs, int64_t rope_variants,
                       const ForwardPart& part, bool together, int64_t first)
    : model_(model), inv_freqs_(inv_freqs), part_(part), first_(first) {
  const ModelConfig& config = model.config();
  const ModelSpec& spec = model.spec();
  const ForwardBatch& batch = *part.batch;
  KvCache* cache = part.cache;
  const SharedPrefixes* shared = part.shared;
  if (batch.tokens.dim() != 2 || batch.positions.sizes() != batch.tokens.sizes() ||
      batch.valid.sizes() != batch.tokens.sizes())
    throw std::invalid_argument("forward: tokens, positions and valid must be [batch, len] tensors of one shape");
  b_ = batch.tokens.size(0);
  t_ = batch.tokens.size(1);
  const int64_t b = b_, t = t_;
  if (cache != nullptr && cache->num_layers() != config.num_layers)
    throw std::invalid_argument(fmt::format("forward: cache has {} layers, model has {}", cache->num_layers(),
                                            config.num_layers));
  if (cache != nullptr && cache->slots() > 0 && cache->positions().size(0) != b)
    throw std::invalid_argument(fmt::format("forward: cache holds {} rows, batch has {}",
                                            cache->positions().size(0), b));
  for (const at::Tensor* packing : {&batch.segment, &batch.branch}) {
    if (packing->defined() && packing->sizes() != batch.tokens.sizes())
      throw std::invalid_argument("forward: segment and branch must be [batch, len] tensors of the tokens' shape");
  }
  packed_ = batch.segment.defined() || batch.branch.defined();
  if (spec.has_recurrent_layers())
    std::tie(state_valid_, state_lengths_) = recurrent_rows(batch, config.model_type);
  if (batch.rope_variant.defined()) {  // [b] int64 on the CPU; undefined: every row takes variant 0
    variants_ = batch.rope_variant.to(at::kCPU, at::kLong);
    if (variants_.dim() != 1 || variants_.size(0) != b)
      throw std::invalid_argument("forward: rope_variant must be a [batch] tensor");
    if (b > 0 && (variants_.min().item<int64_t>() < 0 || variants_.max().item<int64_t>() >= rope_variants))
      throw std::invalid_argument(fmt::format("forward: rope variant {} of a model with {} (longrope has 2)",
                                              variants_.max().item<int64_t>(), rope_variants));
  }
  positions_ = on_host(batch.positions);
  valid_ = on_host(batch.valid);
  if (batch.segment.defined()) keys_.query_segment = keys_.key_segment = on_host(batch.segment);
  if (batch.branch.defined()) keys_.query_branch = keys_.key_branch = on_host(batch.branch);
  key_positions_ = positions_;
  key_valid_ = valid_;
  if (cache != nullptr && cache->slots() > 0) {
    key_positions_ = at::cat({cache->positions(), positions_}, 1);
    key_valid_ = at::cat({cache->valid(), valid_}, 1);
    const at::Tensor cached = at::zeros_like(cache->positions());
    if (keys_.key_segment.defined()) keys_.key_segment = at::cat({cached - 1, keys_.query_segment}, 1);
    if (keys_.key_branch.defined()) keys_.key_branch = at::cat({cached, keys_.query_branch}, 1);
  }
  // A batch of whole unpadded sequences needs no mask in full-attention layers: plain causal attention, on
  // torch's fastest kernels. Sliding-window layers always need theirs.
  const RealTokens real = real_tokens_of(valid_);
  const auto real_count = static_cast<int64_t>(real.index.size());
  const bool all_real = real_count == b * t;
  causal_ = (cache == nullptr || cache->slots() == 0) && shared == nullptr && !packed_ && all_real;
  // Where padding is most of the batch (rows of very different lengths), or parts run together, the token-wise
  // ops run on the real tokens alone: the scored positions among them.
  scored_ = part.score_rows;
  if ((together || (!all_real && 2 * real_count <= b * t && model.packs_real_tokens())) && scored_.device().is_cpu() &&
      scored_.scalar_type() == at::kLong) {
    const at::Tensor scored_rows = scored_.contiguous();
    std::vector<int64_t> places;
    for (int64_t j = 0; j < scored_rows.numel(); ++j) {
      const int64_t at_row = scored_rows.data_ptr<int64_t>()[j];
      places.push_back(at_row >= 0 && at_row < b * t ? real.place[at_row] : -1);
    }
    const bool scores_real = std::all_of(places.begin(), places.end(), [](int64_t place) { return place >= 0; });
    if (together && !scores_real) throw std::invalid_argument("forward: a batch run together scores a padding token");
    if (scores_real) {
      real_index_ = at::tensor(real.index, at::kLong);
      scored_ = at::tensor(places, at::kLong);
    }
  }
  if (together && !real_index_.defined())
    throw std::invalid_argument("forward: batches run together must give their scored positions on the CPU, as int64");
  if (shared != nullptr) {
    if (!cascade_exact(spec))
      throw std::invalid_argument(
          "forward: cascade attention does not support this model (a sliding window or soft-capping)");
    if (shared->row_prefix.size(0) != b || static_cast<int64_t>(shared->layers.size()) != config.num_layers)
      throw std::invalid_argument("forward: shared prefixes do not match the batch or the model");
    int64_t stacked = 0;  // the prefixes' slots, in the layers that keep slots
    for (const LayerCache& layer : shared->layers) stacked = std::max(stacked, layer.slots());
    groups_ = prefix_groups(shared->lengths, shared->row_prefix, stacked);
  }
  produced_.resize(config.num_layers);
}

// Per device, once a forward: the part's positions, validity, segments and prefix groups in one copy, the masks
// built from them there (never a mask built on the host and copied), the rotary tables.
const DeviceInputs& PartInputs::on(c10::Device device) {
  for (const DeviceInputs& in : per_device_) {
    if (in.device == device) return in;
  }
  const SharedPrefixes* shared = part_.shared;
  // one dtype for one copy to a device (on the CPU they stay as they are)
  auto as_long = [&](const at::Tensor& t) { return t.defined() && !device.is_cpu() ? cast(t, at::kLong) : t; };
  const std::vector<at::Tensor> on = upload_together(
      {positions_, key_positions_, as_long(key_valid_), keys_.query_segment, keys_.key_segment,
       keys_.query_branch, keys_.key_branch, groups_.slot_rows, groups_.row_slot, as_long(groups_.key_valid),
       variants_, state_valid_, state_lengths_, shared == nullptr ? at::Tensor() : shared->row_prefix,
       real_index_},
      device);
  const at::Tensor& device_positions = on[0];
  const at::Tensor device_key_valid = cast(on[2], at::kBool);
  const PackedKeys device_keys{on[3], on[4], on[5], on[6]};
  auto mask_for = [&](int64_t window) {
    if (packed_) return packed_attention_mask(device_positions, on[1], device_key_valid, window, device_keys);
    if (causal_ && window == 0) return at::Tensor();
    return attention_mask(device_positions, on[1], device_key_valid, window);
  };
  DeviceInputs in;
  in.device = device;
  in.dtype = model_.dtype();
  in.token_valid = on[11].defined() ? cast(on[11], at::kFloat) : on[11];
  in.row_lengths = on[12];
  in.row_prefix = on[13];
  in.real_tokens = on[14];
  in.rows = b_;
  in.len = t_;
  in.first = first_;
  in.real_count = token_count();
  in.rotary.resize(model_.spec().ropes.size());
  const std::vector<at::Tensor> inv_freqs = upload_together(inv_freqs_, device);  // every rope's, in one copy
  for (const LayerSpec& layer : model_.spec().layers) {
    const AttentionSpec& a = layer.attention;
    const bool has_plain = std::any_of(in.plain_masks.begin(), in.plain_masks.end(),
                                       [&](const auto& m) { return m.first == a.window; });
    if (!has_plain) in.plain_masks.emplace_back(a.window, mask_for(a.window));
    if (a.rope < 0 || in.rotary[a.rope].cos.defined()) continue;
    const at::Tensor& by_variant = inv_freqs[a.rope];  // a row's variant picks its row here
    const at::Tensor inv_freq = by_variant.size(0) > 1 && on[10].defined() ? by_variant.index_select(0, on[10])
                                                                            : by_variant[0];
    in.rotary[a.rope] =
        rotary_tables(inv_freq, device_positions, model_.dtype(), model_.spec().ropes[a.rope].rope.attention_factor);
  }
  if (model_.spec().query_scale.beta != 0)
    in.query_scale = position_query_scale(model_.spec().query_scale, device_positions, model_.dtype());
  if (shared != nullptr) {
    const at::Tensor key_valid = cast(on[9], at::kBool);
    const at::Tensor additive = device.is_cpu() ? additive_mask(key_valid, model_.dtype()) : at::Tensor();
    in.groups = {groups_.rows_per_prefix, on[7], on[8], key_valid, additive, groups_.rows_in_slots};
  }
  per_device_.push_back(std::move(in));
  return per_device_.back();
}

void PartInputs::record_slots() const {
  if (part_.cache == nullptr) return;
  at::Tensor reachable = valid_;
  if (keys_.query_segment.defined()) reachable = reachable.logical_and(keys_.query_segment.eq(0));
  if (keys_.query_branch.defined()) reachable = reachable.logical_and(keys_.query_branch.eq(0));
  part_.cache->append_slots(positions_, reachable);
}

}  // namespace prefix_scorer
