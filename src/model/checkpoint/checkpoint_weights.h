#pragma once
// A checkpoint folder's weights as a model loads them: checked against the config, an optional LoRA adapter merged,
// the vocabulary optionally resized.

#include "model/checkpoint/weights.h"
#include "prefix_scorer/model.h"

#include <string>
#include <vector>

namespace prefix_scorer {

// The weights of checkpoint `dir` for `config`, with options.adapter merged and, when options.vocab_size is set, the
// embeddings and output layer resized to it as transformers' resize_token_embeddings does (rows cut; rows added
// only where the adapter saves the whole tensor). Updates `config`: its vocab_size, and tie_word_embeddings when the
// adapter unties them. Throws std::runtime_error for a missing or misshapen tensor, std::invalid_argument for an
// adapter or a size that cannot be honoured.
ModelWeights load_checkpoint_weights(const std::string& dir, ModelConfig& config, const ModelOptions& options,
                                     const std::vector<c10::Device>& layer_devices, at::ScalarType dtype);

}  // namespace prefix_scorer
