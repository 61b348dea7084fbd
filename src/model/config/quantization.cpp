#include "model/config/quantization.h"

#include "model/config/config_json.h"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <vector>

namespace prefix_scorer {
namespace {

using config_json::get_or;
using nlohmann::json;

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string block_fp8_refusal(const json& q) {
  const auto block = get_or<std::vector<int64_t>>(q, "weight_block_size", {});
  if (block.size() != 2 || block[0] < 1 || block[1] < 1)
    return "fp8 quantization without a weight_block_size of two positive sizes (per-tensor FP8) is not supported; "
           "block-FP8 is";
  const std::string format = get_or<std::string>(q, "fmt", "e4m3");
  if (format != "e4m3") return fmt::format("fp8 format '{}' is not supported (e4m3 is)", format);
  return "";
}

// One config group's weights: integer codes packed into int32 words (pack-quantized), float8_e4m3fn values
// (float-quantized) with scales per group, channel, block or tensor, or NVFP4's 4-bit floats two a byte with an e4m3
// scale per 16 and a global scale (nvfp4-pack-quantized).
std::string compressed_weights_refusal(const std::string& group, const json& scheme, const std::string& format) {
  const json* w = config_json::object_at(scheme, "weights");
  if (w == nullptr) return fmt::format("config group '{}' quantizes no weights", group);
  const std::string type = get_or<std::string>(*w, "type", "int"), strategy = get_or<std::string>(*w, "strategy", "");
  const int64_t bits = get_or<int64_t>(*w, "num_bits", 0);
  const std::string at = fmt::format("config group '{}': ", group);
  if (format == "pack-quantized" && !(type == "int" && (bits == 4 || bits == 8)))
    return at + fmt::format("pack-quantized {} weights of {} bits are not supported (int of 4 or 8 bits are)", type, bits);
  if (format == "float-quantized" && !(type == "float" && bits == 8))
    return at + fmt::format("float-quantized {} weights of {} bits are not supported (float of 8 bits is)", type, bits);
  if (format == "nvfp4-pack-quantized") {
    if (!(type == "float" && bits == 4 && get_or<int64_t>(*w, "group_size", 16) == 16 && get_or<bool>(*w, "symmetric", true)))
      return at + "nvfp4-pack-quantized weights other than symmetric 4-bit floats in groups of 16 are not supported";
    return "";
  }
  if (strategy != "group" && strategy != "channel" && strategy != "tensor" && strategy != "block")
    return at + fmt::format("weight strategy '{}' is not supported (group, channel, tensor and block are)", strategy);
  if (get_or<bool>(*w, "dynamic", false)) return at + "dynamic weight quantization is not supported";
  return "";
}

std::string compressed_tensors_refusal(const json& q) {
  const std::string format = get_or<std::string>(q, "format", "");
  for (const char* key : {"kv_cache_scheme", "transform_config"})
    if (config_json::has_field(q, key)) return fmt::format("compressed-tensors' '{}' is not supported", key);
  if (const json* sparsity = config_json::object_at(q, "sparsity_config"))
    if (get_or<std::string>(*sparsity, "format", "dense") != "dense")
      return "compressed-tensors' sparsity_config (a sparse format) is not supported";
  const json* groups = config_json::object_at(q, "config_groups");
  if (groups == nullptr || groups->empty()) return "compressed-tensors without config_groups is not supported";
  for (const auto& [name, scheme] : groups->items()) {
    const std::string group_format = get_or<std::string>(scheme, "format", format);
    if (group_format != "pack-quantized" && group_format != "float-quantized" && group_format != "nvfp4-pack-quantized")
      return fmt::format("compressed-tensors format '{}' is not supported (pack-quantized, float-quantized and "
                         "nvfp4-pack-quantized are)", group_format);
    if (std::string why = compressed_weights_refusal(name, scheme, group_format); !why.empty()) return why;
  }
  return "";
}

std::string gptq_refusal(const json& q) {
  const int64_t bits = get_or<int64_t>(q, "bits", 4);
  if (bits != 4 && bits != 8) return fmt::format("gptq with {} bits is not supported (4 and 8 are)", bits);
  const std::string format = get_or<std::string>(q, "checkpoint_format", "gptq");
  if (format != "gptq" && format != "gptq_v2")
    return fmt::format("gptq checkpoint_format '{}' is not supported (gptq and gptq_v2 are)", format);
  return "";
}

std::string awq_refusal(const json& q) {
  const std::string version = lowercase(get_or<std::string>(q, "version", "gemm"));
  if (version != "gemm") return fmt::format("awq version '{}' is not supported (gemm is)", version);
  if (get_or<int64_t>(q, "bits", 4) != 4) return "awq with other than 4 bits is not supported";
  if (!get_or<bool>(q, "zero_point", true)) return "awq without zero points is not supported";
  return "";
}

QuantMethod method_of(const std::string& name) {
  if (name == "fp8") return QuantMethod::kBlockFp8;
  if (name == "mxfp4") return QuantMethod::kMxfp4;
  if (name == "compressed-tensors") return QuantMethod::kCompressedTensors;
  if (name == "gptq") return QuantMethod::kGptq;
  if (name == "awq") return QuantMethod::kAwq;
  return QuantMethod::kNone;
}

}  // namespace

std::string unsupported_quantization(const json& q) {
  if (q.is_null()) return "";
  if (!q.is_object()) return "'quantization_config' is not a JSON object";
  const std::string name = get_or<std::string>(q, "quant_method", "");
  switch (method_of(name)) {
    case QuantMethod::kBlockFp8: return block_fp8_refusal(q);
    case QuantMethod::kMxfp4: return "";
    case QuantMethod::kCompressedTensors: return compressed_tensors_refusal(q);
    case QuantMethod::kGptq: return gptq_refusal(q);
    case QuantMethod::kAwq: return awq_refusal(q);
    case QuantMethod::kNone: break;
  }
  return fmt::format("quant_method '{}' is not supported (fp8 with blocks, mxfp4, compressed-tensors, gptq and awq are)",
                     name);
}

std::string quantization_refusal(const std::string& quantization_config_json) {
  const json q = json::parse(quantization_config_json, nullptr, /*allow_exceptions=*/false);
  if (q.is_discarded()) return "'quantization_config' is not valid JSON";
  return unsupported_quantization(q);
}

WeightQuantization parse_quantization(const json& q) {
  if (const std::string why = unsupported_quantization(q); !why.empty())
    throw std::invalid_argument("config.json: " + why);
  WeightQuantization w;
  if (q.is_null()) return w;
  w.config = q.dump();
  w.method = method_of(get_or<std::string>(q, "quant_method", ""));
  if (w.method == QuantMethod::kBlockFp8) {
    const auto block = get_or<std::vector<int64_t>>(q, "weight_block_size", {});
    w.fp8_block = {block[0], block[1]};
  }
  if (w.method == QuantMethod::kCompressedTensors)  // FP8 in blocks: the first group's block_structure
    for (const auto& [name, scheme] : q["config_groups"].items())
      if (const auto block = get_or<std::vector<int64_t>>(scheme["weights"], "block_structure", {});
          block.size() == 2 && w.fp8_block[0] == 0)
        w.fp8_block = {block[0], block[1]};
  if (w.integer_codes()) w.bits = get_or<int64_t>(q, "bits", 4);
  w.zeros_minus_one = w.method == QuantMethod::kGptq && get_or<std::string>(q, "checkpoint_format", "gptq") == "gptq";
  return w;
}

}  // namespace prefix_scorer
