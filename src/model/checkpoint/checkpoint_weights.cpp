#include "model/checkpoint/checkpoint_weights.h"

#include "model/checkpoint/checkpoint.h"
#include "model/checkpoint/checkpoint_layout.h"
#include "model/checkpoint/lora_adapter.h"
#include "model/checkpoint/quantized_weights.h"
#include "model/config/model_config.h"
#include "model/config/model_family.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <utility>

namespace prefix_scorer {
namespace {

// Where a checkpoint keeps the text model's tensors, by the prefixes that replace the base model's and "lm_head.":
// as a causal LM saves them, under a multimodal model's language model (as the original checkpoints have it, and
// as transformers 5 lays it out), or as the base model alone saves them (GPT-2's original checkpoints). The base
// model's prefix ("model.", "transformer.", "gpt_neox.") is the first part of the embeddings' name.
struct TensorPrefixes {
  std::string base, model, lm_head;
};

TensorPrefixes text_model_prefixes(const Checkpoint& checkpoint, const std::string& embed_name) {
  const std::string base = embed_name.substr(0, embed_name.find('.') + 1);
  const std::string rest = embed_name.substr(base.size());
  for (const TensorPrefixes& p : {TensorPrefixes{base, base, "lm_head."},
                                  TensorPrefixes{base, "language_model." + base, "language_model.lm_head."},
                                  TensorPrefixes{base, "model.language_model.", "lm_head."},
                                  TensorPrefixes{base, "", "lm_head."}})
    if (checkpoint.find(p.model + rest) != nullptr) return p;
  return {base, base, "lm_head."};  // the error then names the tensor as a causal LM holds it
}

// Whether the checkpoint is a multimodal model's, its text model under a language_model prefix.
bool under_language_model(const TensorPrefixes& p) { return p.model != p.base && !p.model.empty(); }

// An adapter of a multimodal checkpoint names the modules of the whole model peft wrapped: its language model under
// model.language_model. (transformers 4.52 and later) or language_model.model. (before), and a vision tower and a
// projector that text never reaches.
AdapterNaming adapter_naming(const TensorPrefixes& p) {
  if (!under_language_model(p)) return {};
  return {{{"model.language_model.", p.base}, {"language_model.model.", p.base}, {"language_model.lm_head.", "lm_head."}},
          {"model.vision_tower.", "vision_tower.", "model.multi_modal_projector.", "multi_modal_projector."}};
}

// The elements of a multimodal checkpoint's parameters outside its language model (the vision tower, the
// projector); the buffers saved beside them (an EMA codebook's, as Apertus 1.5's WavTokenizer encoder keeps it under
// quantizer.codebook.) are not parameters.
int64_t parameters_beside_text_model(const Checkpoint& checkpoint, const TensorPrefixes& p) {
  if (!under_language_model(p)) return 0;
  int64_t total = 0;
  for (const std::string& name : checkpoint.names()) {
    if (name.rfind(p.model, 0) == 0 || name.rfind(p.lm_head, 0) == 0) continue;
    if (name.find("quantizer.codebook.") != std::string::npos) continue;
    int64_t count = 1;
    for (const int64_t size : checkpoint.find(name)->shape) count *= size;
    total += count;
  }
  return total;
}

// The elements of a module's tensors that layers hold and the forward never reads (`module` the start of their names
// after a layer's: deepseek_v32's "self_attn.indexer.", MiniMax M3's "self_attn.index_"), which transformers counts
// among the model's parameters; a block-FP8 weight's scales are not parameters, nor are layers past num_layers.
int64_t parameters_of_unread_module(const Checkpoint& checkpoint, const char* module, int64_t num_layers) {
  if (module == nullptr) return 0;
  const std::string part = "." + std::string(module), scales = "_scale_inv", layers = "layers.";
  int64_t total = 0;
  for (const std::string& name : checkpoint.names()) {
    const size_t at = name.find(part), layer_at = name.find(layers);
    if (at == std::string::npos || layer_at == std::string::npos) continue;
    // multi-token-prediction layers, after the last, are not the model's
    if (std::strtoll(name.c_str() + layer_at + layers.size(), nullptr, 10) >= num_layers) continue;
    if (name.size() > scales.size() && name.compare(name.size() - scales.size(), scales.size(), scales) == 0) continue;
    int64_t count = 1;
    for (const int64_t size : checkpoint.find(name)->shape) count *= size;
    total += count;
  }
  return total;
}

std::string with_prefixes(const TensorPrefixes& p, const std::string& name) {
  for (const auto& [plain, stored] : {std::pair<std::string, std::string>{p.base, p.model}, {"lm_head.", p.lm_head}})
    if (name.rfind(plain, 0) == 0) return stored + name.substr(plain.size());
  return name;
}

}  // namespace

struct CheckpointLoad::Opened {
  std::string dir;
  Checkpoint checkpoint;
  TensorPrefixes prefixes;
  std::optional<LoraAdapter> adapter;
  std::string adapter_dir, embed_name, lm_head_name, output_bias_name;
  bool untie = false;        // the adapter changes one of tied embeddings and output layer: both loaded apart
  bool pruned_head = false;  // an output layer of its own rows, whatever the vocabulary grows or shrinks to
  int64_t stored_vocab = 0;
  // The dense MLPs' module as transformers saves it and as released (ModelFamily::dense_mlp_module_as_released).
  std::string saved_mlp, released_mlp;

  explicit Opened(const std::string& folder) : dir(folder), checkpoint(folder) {}

  // A tensor's name in the checkpoint (an untied output layer read from the embeddings; a dense MLP's as released
  // where the checkpoint lacks it as transformers saves it).
  std::string stored_name(const std::string& name) const {
    const std::string stored = with_prefixes(prefixes, untie && name == lm_head_name ? embed_name : name);
    const size_t at = released_mlp.empty() ? std::string::npos : stored.find(saved_mlp);
    if (at == std::string::npos || checkpoint.find(stored) != nullptr) return stored;
    return std::string(stored).replace(at, saved_mlp.size(), released_mlp);
  }
  // Whether a tensor's rows are the vocabulary's.
  bool by_vocab(const std::string& name) const {
    return name == embed_name || (!pruned_head && (name == lm_head_name || name == output_bias_name));
  }
};

CheckpointLoad::CheckpointLoad(const std::string& dir, ModelConfig& config, const ModelOptions& options)
    : opened_(std::make_unique<Opened>(dir)) {
  Opened& o = *opened_;
  o.embed_name = embeddings_name(config);
  o.prefixes = text_model_prefixes(o.checkpoint, o.embed_name);
  const ModelFamily& family = model_family(config.model_type);
  if (family.dense_mlp_module_as_released != nullptr) {
    o.saved_mlp = fmt::format(".{}.", family.mlp_module);
    o.released_mlp = fmt::format(".{}.", family.dense_mlp_module_as_released);
  }
  o.adapter_dir = options.adapter;
  if (!options.adapter.empty()) o.adapter.emplace(options.adapter, adapter_naming(o.prefixes));
  // An adapter that changes the embeddings or the output layer of a tied model changes only the one it names (as
  // peft's unmerged layers do): the model loads untied, lm_head read from the embeddings.
  const OutputLayerNames output = output_layer_names(config);
  o.lm_head_name = output.weight;
  o.output_bias_name = output.bias;
  o.untie = config.tie_word_embeddings && o.adapter &&
            (o.adapter->changes(o.embed_name) || o.adapter->changes(o.lm_head_name));
  if (o.untie) config.tie_word_embeddings = false;
  o.pruned_head = config.output_vocab_size > 0;
  o.stored_vocab = config.vocab_size;
  if (options.vocab_size > 0 && o.pruned_head && options.vocab_size < config.output_vocab_size)
    throw std::invalid_argument(fmt::format("vocab_size {} is below the pruned output layer's {} rows",
                                            options.vocab_size, config.output_vocab_size));
  if (options.vocab_size > 0) config.vocab_size = options.vocab_size;
}

CheckpointLoad::~CheckpointLoad() = default;

ModelWeights CheckpointLoad::weights(const ModelConfig& config, const ModelLayout& layout,
                                     const std::vector<c10::Device>& layer_devices, at::ScalarType dtype) {
  Opened& o = *opened_;
  for (const WeightSlot& slot : layout.slots) {  // as stored: a vocabulary's rows before any resizing
    const std::string name = o.stored_name(slot.spec.name);
    std::vector<int64_t> expected = slot.spec.shape;
    if (o.by_vocab(slot.spec.name)) expected[0] = o.stored_vocab;
    const std::optional<std::vector<int64_t>> shape = stored_shape(o.checkpoint, name, config.quantization);
    if (!shape)
      throw std::runtime_error(fmt::format("checkpoint '{}' lacks tensor '{}' (expected shape [{}])", o.dir, name,
                                           fmt::join(expected, ", ")));
    if (*shape != expected)
      throw std::runtime_error(fmt::format("checkpoint '{}': tensor '{}' has shape [{}], expected [{}]", o.dir, name,
                                           fmt::join(*shape, ", "), fmt::join(expected, ", ")));
  }

  // A checkpoint tensor at the model's vocabulary: cut to it, or standing for the adapter's whole tensor of that size.
  auto stored = [&](const std::string& name, const std::string& adapted_as) {
    at::Tensor t = stored_tensor(o.checkpoint, o.stored_name(name), config.quantization);
    if (!o.by_vocab(adapted_as) || config.vocab_size == o.stored_vocab) return t;
    if (config.vocab_size < o.stored_vocab) return t.narrow(0, 0, config.vocab_size);
    if (!o.adapter || !o.adapter->replaces(adapted_as))
      throw std::invalid_argument(fmt::format(
          "cannot grow '{}' from {} to {} tokens: transformers fills new rows at random, and {}", adapted_as,
          o.stored_vocab, config.vocab_size,
          o.adapter ? fmt::format("adapter '{}' does not save the whole tensor", o.adapter_dir) : "no adapter saves them"));
    std::vector<int64_t> sizes = t.sizes().vec();
    sizes[0] = config.vocab_size;
    return at::empty(sizes, t.options().device(at::kMeta));
  };
  auto source = [&](const TensorSpec& spec, c10::Device) {
    if (!o.adapter) return stored(spec.name, spec.name);
    if (o.untie && spec.name == o.lm_head_name && !o.adapter->replaces(o.lm_head_name))  // the embeddings, without their update
      return o.adapter->apply(o.lm_head_name, o.adapter->base(o.embed_name, stored(o.embed_name, o.embed_name)));
    return o.adapter->apply(spec.name, stored(spec.name, spec.name), spec.stored_in_out);
  };
  // A projection stored as FP8 or 4-bit codes stays so (copied to its device: the parts are views of the file), and
  // so do routed experts stored as FP8, MXFP4 or 4-bit codes, unless an adapter merges into them or their rows are the
  // vocabulary's.
  auto keeps = [&](const TensorSpec& spec) { return !o.by_vocab(spec.name) && !(o.adapter && o.adapter->changes(spec.name)); };
  KeptForms kept;
  kept.experts = [&](const TensorSpec& spec) {
    return keeps(spec) ? stored_experts(o.checkpoint, o.stored_name(spec.name), config.quantization) : std::nullopt;
  };
  kept.projection = [&](const TensorSpec& spec, c10::Device device, at::ScalarType as) {
    Linear stored;
    if (!keeps(spec)) return stored;
    const std::string name = o.stored_name(spec.name);
    if (std::optional<Fp8Weight> fp8 = stored_fp8(o.checkpoint, name, config.quantization)) {
      fp8->values = fp8->values.to(device, fp8->values.scalar_type(), /*non_blocking=*/false, /*copy=*/true);
      fp8->scales = fp8->scales.to(device, at::kFloat, /*non_blocking=*/false, /*copy=*/true);
      stored.fp8 = std::make_shared<const Fp8Weight>(std::move(*fp8));
    } else if (std::optional<QuantizedExperts> fp4 = stored_nvfp4(o.checkpoint, name, config.quantization)) {
      stored.fp4 = std::make_shared<const QuantizedExperts>(copied_to(*fp4, device));
    } else if (const std::optional<IntegerGroups> groups = stored_integer_groups(o.checkpoint, name, config.quantization)) {
      if (std::optional<IntegerWeight> codes = integer_weight(*groups, as, device))
        stored.integer = std::make_shared<const IntegerWeight>(std::move(*codes));
    }
    return stored;
  };
  ModelWeights weights = assemble_weights(config, layout, source, layer_devices, dtype, kept);
  if (o.adapter) o.adapter->check_all_applied();
  weights.unloaded_parameters = parameters_beside_text_model(o.checkpoint, o.prefixes) +
                                parameters_of_unread_module(o.checkpoint, model_family(config.model_type).indexer,
                                                            config.num_layers);
  return weights;
}

}  // namespace prefix_scorer
