#pragma once
// A native libtorch decoder-only causal LM, loaded from a Hugging Face checkpoint or built as a synthetic shape.

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace prefix_scorer {

struct ModelOptions {
  std::string device = "cpu";
  // Optional: the layers split into contiguous blocks over these devices, balanced by the bytes of the weights each
  // device holds (embeddings on the first, the output layer on the last; overrides `device` for layers).
  std::vector<std::string> layer_devices;
  std::string dtype = "float32";
  uint64_t seed = 0;  // weights of synthetic models
  // Optional: a LoRA adapter folder (peft's adapter_config.json and adapter_model.safetensors) merged into the
  // checkpoint's weights as they load.
  std::string adapter;
  // Optional (> 0): the embeddings and output layer resized to this many tokens, as transformers'
  // resize_token_embeddings does (rows cut; added rows only where the adapter saves the whole tensor).
  int64_t vocab_size = 0;
  // Synthetic models only, for speed: "int4" keeps their projections and routed experts as 4-bit codes in groups
  // along the input (of 128, or the largest of 64 and 32 that divides the input; symmetric), as W4A16 checkpoints keep
  // theirs; "fp8" as float8_e4m3fn in blocks of 128 x 128, as block-FP8 checkpoints do; experts stacked in one tensor
  // (gpt_oss's) as MXFP4 either way; "": plain.
  std::string quantize;
};

// The memory a forward takes to dequantize weights kept quantized, just before their products: the largest
// projection's weight, or the experts a layer routes to, each the bytes of one expert's projections (the largest
// layer's).
struct DequantizeWorkspace {
  int64_t projection_bytes = 0;
  int64_t expert_bytes = 0;
};

// What a model is, as a user reads it: its type and sizes. Heads and head size are the first layer's (some families
// vary them from layer to layer).
struct ModelInfo {
  std::string model_type;  // config.json's (the text model's, for a multimodal checkpoint)
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t max_position_embeddings = 0;
  // The weights a checkpoint of this config holds, as transformers counts them (Model::num_parameters).
  int64_t num_parameters = 0;
  // The bytes the loaded weights hold, and those of them kept in the checkpoint's quantized form (4-bit codes, FP8,
  // MXFP4, NVFP4; projections and routed experts).
  int64_t weight_bytes = 0;
  int64_t quantized_weight_bytes = 0;
};

// Every config.json model_type the native engine runs (the multimodal wrappers whose text model it scores last).
std::vector<std::string> supported_model_types();

// Why the native engine does not read a config.json's quantization_config (its JSON text; "null": none): "" where
// it does, else the reason, naming the key at fault.
std::string quantization_refusal(const std::string& quantization_config_json);

struct ModelConfig;     // the architecture read from config.json (internal: src/model/config/model_config.h)
struct ForwardBatch;    // a batch of token rows (internal: src/model/forward_batch.h)
struct ModelWeights;    // the tensors, per layer on the layer's device (internal)
struct ModelSpec;       // the layer specs the forward walks (internal)
class KvCache;          // what each layer keeps of the tokens seen so far (internal: src/model/cache/kv_cache.h)
struct SharedPrefixes;  // shared prefixes for cascade attention (internal, beside KvCache)
struct ForwardPart;     // one of the batches a forward runs together (internal: src/model/forward_batch.h)

class Model {
 public:
  // `spec` null: the config's layer specs, made here.
  Model(ModelConfig config, std::shared_ptr<const ModelWeights> weights, at::ScalarType dtype,
        std::shared_ptr<const ModelSpec> spec = nullptr);

  // A checkpoint directory (config.json and safetensors).
  static Model load(const std::string& dir, const ModelOptions& options = {});
  // A built-in shape with random weights drawn from options.seed.
  static Model synthetic(const std::string& name, const ModelOptions& options = {});
  // "synthetic:NAME" or a checkpoint directory.
  static Model open(const std::string& spec, const ModelOptions& options = {});

  ModelInfo info() const;
  // The engine's own description of the model: its config and its layer specs (internal).
  const ModelConfig& config() const { return *config_; }
  const ModelSpec& spec() const { return *spec_; }
  at::ScalarType dtype() const { return dtype_; }
  c10::Device layer_device(int64_t layer) const;
  // Whether any layer runs on CUDA.
  bool on_cuda() const;
  // Whether a forward whose batch is mostly padding runs its token-wise ops (projections, norms, MLPs) on the real
  // tokens alone, attention on the padded rows (internal: ModelSpec::token_wise, and no learned positions).
  bool packs_real_tokens() const;
  // The attention kernels this model's forwards take, in words (the benchmark reports them).
  std::string attention_kernels() const;
  // The number of weights a checkpoint of this config holds (tied embeddings once), as transformers counts them: a
  // multimodal checkpoint's vision tower and projector included, though they are not loaded.
  int64_t num_parameters() const;
  // What a forward holds at once to dequantize weights kept quantized (zeros: none are).
  DequantizeWorkspace dequantize_workspace() const;

  // Internal (the scorers call it): runs the batch through every layer and returns float32 log-probabilities
  // [rows, vocab] for the flat positions `score_rows` (int64 indices into batch * len) only. With a cache,
  // attention also covers the cache's slots and the batch's keys and values are appended to it; the cache's batch
  // size must match.
  // With `shared`, each row also attends to its shared prefix by cascade attention (the batch's positions must
  // continue the prefix's). Torch errors (out of memory among them) propagate with the batch's shape added.
  at::Tensor forward(const ForwardBatch& batch, KvCache* cache, const at::Tensor& score_rows,
                     const SharedPrefixes* shared = nullptr) const;
  // Internal: several batches in one forward, each over its own cache and shared prefixes, attending within
  // itself; their token-wise ops run on all their real tokens at once (more than one part: packs_real_tokens
  // models only, scored positions on the CPU and real). Returns each part's log-probabilities, as forward would.
  std::vector<at::Tensor> forward_together(const std::vector<ForwardPart>& parts) const;

 private:
  std::vector<at::Tensor> run_forward(const std::vector<ForwardPart>& parts) const;
  // gpt2's learned position embeddings of the valid `positions` (CPU) on `device`; throws std::invalid_argument
  // for a position past the table.
  at::Tensor position_embeddings(const at::Tensor& positions, const at::Tensor& valid, c10::Device device) const;

  std::shared_ptr<const ModelConfig> config_;
  std::shared_ptr<const ModelWeights> weights_;
  at::ScalarType dtype_;
  std::shared_ptr<const ModelSpec> spec_;
  // float32 on the CPU, one per rope of the spec's: [variants, rotary_dim / 2], a row per rope variant.
  std::vector<at::Tensor> inv_freqs_;
  int64_t rope_variants_ = 1;  // the most variants any rope has
};

}  // namespace prefix_scorer
