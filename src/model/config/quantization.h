#pragma once
// config.json's quantization_config: how the checkpoint stores its projections. The loader finds each projection's
// form by the tensors beside its name (checkpoint/quantized_weights.h); what it needs of the config is here.

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace prefix_scorer {

enum class QuantMethod {
  kNone,
  kBlockFp8,           // quant_method "fp8" with weight_block_size (DeepSeek, Qwen, MiniMax, GLM)
  kMxfp4,              // "mxfp4" (gpt_oss's experts)
  kCompressedTensors,  // "compressed-tensors": pack-quantized integers, float-quantized FP8, nvfp4-pack-quantized
  kGptq,               // "gptq": integer codes packed along the input, zero points packed along the output
  kAwq,                // "awq" gemm: as GPTQ's, each word's nibbles in AWQ's order, no g_idx
};

struct WeightQuantization {
  QuantMethod method = QuantMethod::kNone;
  std::array<int64_t, 2> fp8_block{0, 0};  // block-FP8's [rows, cols] sharing a scale
  int64_t bits = 0;                        // GPTQ's and AWQ's code width (compressed-tensors' is read from shapes)
  bool zeros_minus_one = false;            // GPTQ v1 stores each zero point minus one (v2 does not)
  std::string config;                      // quantization_config as config.json gives it (JSON; written back as is)

  bool integer_codes() const { return method == QuantMethod::kGptq || method == QuantMethod::kAwq; }
};

// Why the engine does not read quantization_config `q` ("" where it does), naming the key at fault.
std::string unsupported_quantization(const nlohmann::json& q);

// The same for quantization_config as JSON text (include/prefix_scorer/model.h; malformed JSON refused by name).
std::string quantization_refusal(const std::string& quantization_config_json);

// quantization_config `q` (null: none) as the loader reads it; throws std::invalid_argument with
// unsupported_quantization's reason for one it does not read.
WeightQuantization parse_quantization(const nlohmann::json& q);

}  // namespace prefix_scorer
