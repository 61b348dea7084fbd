#pragma once
// A checkpoint folder's weights as a model loads them: checked against the config, an optional LoRA adapter merged,
// the vocabulary optionally resized.

#include "model/checkpoint/weights.h"
#include "prefix_scorer/model.h"

#include <memory>
#include <string>
#include <vector>

namespace prefix_scorer {

// A checkpoint folder opened for one load, in two steps: opening settles the config the model will have, whose
// layout (checkpoint_layout.h) is then made once and read by `weights`.
class CheckpointLoad {
 public:
  // Opens checkpoint `dir` and options.adapter, and settles `config`: tie_word_embeddings off where the adapter
  // unties them, vocab_size as options.vocab_size sets it. Throws std::invalid_argument for an adapter or a size that
  // cannot be honoured.
  CheckpointLoad(const std::string& dir, ModelConfig& config, const ModelOptions& options);
  ~CheckpointLoad();

  // The weights of `layout` (the settled config's), each tensor checked against the checkpoint's, options.adapter
  // merged, and the embeddings and output layer resized as transformers' resize_token_embeddings does (rows cut;
  // rows added only where the adapter saves the whole tensor). Throws std::runtime_error for a missing or misshapen
  // tensor.
  ModelWeights weights(const ModelConfig& config, const ModelLayout& layout,
                       const std::vector<c10::Device>& layer_devices, at::ScalarType dtype);

 private:
  struct Opened;
  std::unique_ptr<Opened> opened_;
};

}  // namespace prefix_scorer
