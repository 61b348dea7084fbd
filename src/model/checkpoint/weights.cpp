#include "model/checkpoint/weights.h"

#include "model/checkpoint/checkpoint_layout.h"
#include "model/checkpoint/stacked_weights.h"

#include "model/config/layer_spec.h"
#include "model/config/model_family.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <utility>
#include <stdexcept>

namespace prefix_scorer {

OutputLayerNames output_layer_names(const ModelConfig& config) {
  const std::string lm_head = model_family(config.model_type).lm_head;
  return {lm_head + ".weight", lm_head + ".bias"};
}

namespace {

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

int64_t elements(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (const int64_t extent : shape) count *= extent;
  return count;
}

// The temporaries beside an element's dequantized value, in bytes: none where a CPU loop writes it in one pass (FP8;
// integer codes, then `copies` more: experts' once stacked, and once more where act-order's columns are put back);
// about three fp32 values through the ATen ops (MXFP4, NVFP4, any form on a GPU).
int64_t dequantize_temporaries(QuantizedExperts::Form form, c10::Device device, int64_t element, int64_t copies) {
  if (device.is_cpu() && form == QuantizedExperts::Form::kFp8) return 0;
  if (device.is_cpu() && form == QuantizedExperts::Form::kInteger) return copies * element;
  return 12;
}

}  // namespace

std::vector<TensorSpec> expected_tensors(const ModelLayout& layout) {
  std::vector<TensorSpec> specs;
  for (const WeightSlot& slot : layout.slots) specs.push_back(slot.spec);
  return specs;
}

WeightBytes weight_bytes(const ModelConfig& config, const ModelLayout& layout, at::ScalarType dtype) {
  WeightBytes bytes;
  bytes.layers.assign(config.num_layers, 0);
  for (const WeightSlot& slot : layout.slots) {
    const int64_t size = static_cast<int64_t>(c10::elementSize(slot_dtype(slot, dtype))) * elements(slot.spec.shape);
    if (slot.layer < 0) {
      bytes.first += size;
      if (config.tie_word_embeddings && &slot == &layout.slots.front()) bytes.last += size;  // the embeddings' copy
    } else {
      (slot.layer < config.num_layers ? bytes.layers[slot.layer] : bytes.last) += size;
    }
  }
  return bytes;
}

ModelWeights assemble_weights(const ModelConfig& config, const ModelLayout& layout, const TensorSource& source,
                              const std::vector<c10::Device>& layer_devices, at::ScalarType dtype,
                              const KeptForms& kept) {
  if (static_cast<int64_t>(layer_devices.size()) != config.num_layers)
    throw std::invalid_argument(fmt::format("{} layer devices for {} layers", layer_devices.size(), config.num_layers));
  ModelWeights w;
  w.layers.resize(config.num_layers);
  const ModelSpec& spec = layout.spec;
  const ExpertTraits& names = model_family(config.model_type).experts;
  for (int64_t i = 0; i < config.num_layers; ++i) w.layers[i].device = layer_devices[i];
  // An element dequantized takes the model's dtype and its temporaries; the experts' gate, up and down are held
  // together, with one of them's temporaries beside them (about a third of their elements).
  const int64_t e = static_cast<int64_t>(c10::elementSize(dtype));
  std::vector<int64_t> kept_expert_bytes(config.num_layers, 0);
  for (const WeightSlot& slot : layout.slots) {
    if (!is_buffer(slot.spec.name, names)) w.parameters += elements(slot.spec.shape);
    const c10::Device device = layer_devices[std::clamp<int64_t>(slot.layer, 0, config.num_layers - 1)];
    if (slot.projection != nullptr && kept.projection) {
      if (const Linear stored = kept.projection(slot.spec, device, dtype); stored.kept()) {
        Linear& projection = w.layers[slot.layer].*slot.projection;
        projection.integer = stored.integer;
        projection.fp8 = stored.fp8;
        projection.fp4 = stored.fp4;
        const auto form = stored.fp8 ? QuantizedExperts::Form::kFp8
                          : stored.fp4 ? QuantizedExperts::Form::kNvfp4 : QuantizedExperts::Form::kInteger;
        // ATen's integer matmuls take the codes as they are: no workspace
        if (!(stored.integer && stored.integer->kernel_codes.defined()))
          w.dequantize_workspace.projection_bytes =
              std::max(w.dequantize_workspace.projection_bytes,
                       (e + dequantize_temporaries(form, device, e, 0)) * elements(slot.spec.shape));
        w.resident_bytes += stored.bytes();
        w.quantized_bytes += stored.bytes();
        continue;
      }
    }
    if (slot.place_kept && kept.experts) {
      if (const std::optional<QuantizedExperts> stored = kept.experts(slot.spec)) {
        slot.place_kept(w, *stored);
        // one expert's (stacked: each's)
        const int64_t copies = stored->input_order.defined() ? 2 : 1;
        kept_expert_bytes[slot.layer] +=
            (e + dequantize_temporaries(stored->form, device, e, copies) / 3) * stored->values.size(1) * stored->in;
        w.resident_bytes += stored->bytes();
        w.quantized_bytes += stored->bytes();
        continue;
      }
    }
    // Always a copy: a checkpoint's tensor is a view of its file, copied once to its device and dtype.
    at::Tensor placed;
    if (slot.into)
      placed = slot.into(w, slot_dtype(slot, dtype)).copy_(source(slot.spec, device));
    else
      placed = source(slot.spec, device).to(device, slot_dtype(slot, dtype), /*non_blocking=*/false, /*copy=*/true);
    w.resident_bytes += static_cast<int64_t>(placed.nbytes());
    if (!slot.into) slot.place(w, placed);
  }
  for (int64_t i = 0; i < config.num_layers; ++i) {  // per expert: each expert's projections are read one by one
    const int64_t experts = std::max<int64_t>(spec.layers[i].mlp.router.experts, 1);
    const int64_t per_expert = names.saved_one_by_one() ? kept_expert_bytes[i] / experts : kept_expert_bytes[i];
    w.dequantize_workspace.expert_bytes = std::max(w.dequantize_workspace.expert_bytes, per_expert);
  }
  if (config.tie_word_embeddings) {
    w.lm_head.weight = w.embed.to(layer_devices.back());
    if (!w.lm_head.weight.is_same(w.embed)) w.resident_bytes += static_cast<int64_t>(w.lm_head.weight.nbytes());
  }
  for (int64_t i = 0; i < config.num_layers; ++i) {
    stack_projections(w.layers[i], spec.layers[i].attention);
    multiplier_rows(w.layers[i], spec.layers[i]);
  }
  return w;
}

}  // namespace prefix_scorer
