#include "model/checkpoint/quantized_weights.h"

#include "model/checkpoint/block_fp8.h"
#include "model/checkpoint/integer_codes.h"
#include "model/ops/mxfp4.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace prefix_scorer {
namespace {

enum class Form { kPlain, kBlockFp8, kScaledFp8, kMxfp4, kNvfp4, kPackQuantized, kGptq, kAwq };

struct Found {
  Form form;
  std::string module;  // the name without ".weight": where GPTQ's and AWQ's tensors sit
};

std::string module_of(const std::string& name) {
  const std::string suffix = ".weight";
  const bool is_weight = name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  return is_weight ? name.substr(0, name.size() - suffix.size()) : name;
}

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw std::runtime_error(fmt::format("tensor '{}': {}", name, what));
}

std::optional<Found> find_form(const Checkpoint& c, const std::string& name, const WeightQuantization& q) {
  const std::string module = module_of(name);
  if (const TensorInfo* info = c.find(name)) {
    if (info->dtype != at::kFloat8_e4m3fn) return Found{Form::kPlain, module};
    if (c.find(name + "_scale_inv") != nullptr && q.method == QuantMethod::kBlockFp8) return Found{Form::kBlockFp8, module};
    if (c.find(name + "_scale") != nullptr && q.method == QuantMethod::kCompressedTensors)
      return Found{Form::kScaledFp8, module};
    const char* scales = q.method == QuantMethod::kCompressedTensors ? "_scale" : "_scale_inv";
    throw std::runtime_error(fmt::format("tensor '{}' is float8_e4m3fn without {}", name,
                                         q.method == QuantMethod::kNone ? "a block-FP8 quantization_config in config.json"
                                                                        : "'" + name + scales + "' beside it"));
  }
  if (c.find(name + "_blocks") != nullptr && c.find(name + "_scales") != nullptr) return Found{Form::kMxfp4, module};
  if (c.find(name + "_packed") != nullptr && c.find(name + "_global_scale") != nullptr) return Found{Form::kNvfp4, module};
  if (c.find(name + "_packed") != nullptr) return Found{Form::kPackQuantized, module};
  if (c.find(module + ".qweight") != nullptr) {
    if (q.method == QuantMethod::kGptq) return Found{Form::kGptq, module};
    if (q.method == QuantMethod::kAwq) return Found{Form::kAwq, module};
    fail(name, "stored as qweight without a gptq or awq quantization_config in config.json");
  }
  return std::nullopt;
}

const TensorInfo& part(const Checkpoint& c, const std::string& name, const std::string& part_name) {
  const TensorInfo* info = c.find(part_name);
  if (info == nullptr) fail(name, fmt::format("'{}' is missing beside it", part_name));
  return *info;
}

at::Tensor optional_view(const Checkpoint& c, const std::string& name) {
  return c.find(name) != nullptr ? c.view(name) : at::Tensor();
}

// GPTQ's and AWQ's qweight words [rows, cols], with qzeros and scales beside them.
std::vector<int64_t> qweight_words(const Checkpoint& c, const std::string& name, const std::string& module) {
  part(c, name, module + ".qzeros");
  part(c, name, module + ".scales");
  const std::vector<int64_t>& words = c.find(module + ".qweight")->shape;
  if (words.size() != 2) fail(name, "its qweight is not a matrix");
  return words;
}

// read(form) for tensor `name`, a format's error named with the tensor; `absent` where the checkpoint lacks it.
template <typename T, typename Read>
T by_form(const Checkpoint& c, const std::string& name, const WeightQuantization& q, T absent, Read read) {
  const std::optional<Found> found = find_form(c, name, q);
  if (!found) return absent;
  try {
    return read(*found);
  } catch (const std::invalid_argument& e) {
    fail(name, e.what());
  }
}

std::vector<int64_t> pack_quantized_shape(const Checkpoint& c, const std::string& name) {
  part(c, name, name + "_scale");
  const TensorInfo& shape = part(c, name, name + "_shape");
  if (shape.shape != std::vector<int64_t>{2}) fail(name, "its weight_shape is not [out, in]");
  const at::Tensor values = c.view(name + "_shape").to(at::kLong);
  return {values[0].item<int64_t>(), values[1].item<int64_t>()};
}

// An NVFP4 weight (views of the file) as a stack of one: its codes two a byte [out, in / 2], e4m3 scales
// [out, in / 16], global scale [1].
QuantizedExperts nvfp4_weight(const Checkpoint& c, const std::string& name) {
  part(c, name, name + "_scale");
  const at::Tensor packed = c.view(name + "_packed"), scales = c.view(name + "_scale");
  const at::Tensor global = c.view(name + "_global_scale");
  if (packed.scalar_type() != at::kByte || packed.dim() != 2 || scales.scalar_type() != at::kFloat8_e4m3fn ||
      global.numel() != 1)
    throw std::invalid_argument("NVFP4 needs uint8 codes [out, in / 2], float8_e4m3fn scales and one global scale");
  const int64_t in = packed.size(1) * 2;
  if (in % 16 != 0 || scales.sizes() != at::IntArrayRef({packed.size(0), in / 16}))
    throw std::invalid_argument(fmt::format("NVFP4 codes [{}] need scales [{}, {}], got [{}]", fmt::join(packed.sizes(), ", "),
                                            packed.size(0), in / 16, fmt::join(scales.sizes(), ", ")));
  return {QuantizedExperts::Form::kNvfp4, packed.unsqueeze(0), scales.unsqueeze(0), global.to(at::kFloat).reshape({1}),
          {0, 0}, in};
}

// An FP8 weight's values and scales (views of the file) as blocks: block-FP8's own; compressed-tensors' one scale
// for the tensor, one per row ([out, 1]) or per group of a row's inputs ([out, groups]), or per block (the config
// group's block_structure).
Fp8Weight fp8_blocks(const Checkpoint& c, const std::string& name, const WeightQuantization& q, Form form) {
  const at::Tensor values = c.view(name);
  if (form == Form::kBlockFp8) {
    const at::Tensor scales = c.view(name + "_scale_inv");
    const std::vector<int64_t> grid = block_fp8_scale_shape(values.sizes().vec(), q.fp8_block);
    if (scales.sizes().vec() != grid)
      fail(name + "_scale_inv", fmt::format("shape [{}], expected [{}] for [{}] in blocks of [{}]",
                                            fmt::join(scales.sizes(), ", "), fmt::join(grid, ", "),
                                            fmt::join(values.sizes(), ", "), fmt::join(q.fp8_block, ", ")));
    return {values, scales, q.fp8_block};
  }
  const at::Tensor scale = c.view(name + "_scale");
  const int64_t rows = values.size(0), cols = values.size(1);
  if (scale.numel() == 1) return {values, scale.reshape({1, 1}), {rows, cols}};
  if (scale.dim() == 2 && scale.size(0) == rows && cols % scale.size(1) == 0)
    return {values, scale, {1, cols / scale.size(1)}};
  if (q.fp8_block[0] > 0 && scale.sizes().vec() == block_fp8_scale_shape(values.sizes().vec(), q.fp8_block))
    return {values, scale, q.fp8_block};
  throw std::invalid_argument(fmt::format("weight_scale [{}] is none of a tensor's, a channel's, a group's or a block's "
                                          "for [{}]", fmt::join(scale.sizes(), ", "), fmt::join(values.sizes(), ", ")));
}

}  // namespace

std::optional<std::vector<int64_t>> stored_shape(const Checkpoint& c, const std::string& name,
                                                 const WeightQuantization& q) {
  using Shape = std::optional<std::vector<int64_t>>;
  return by_form(c, name, q, Shape(), [&](const Found& found) -> Shape {
    switch (found.form) {
      case Form::kPlain:
        return c.find(name)->shape;
      case Form::kScaledFp8:
      case Form::kBlockFp8:
        return fp8_blocks(c, name, q, found.form).values.sizes().vec();
      case Form::kMxfp4:
        return mxfp4_dequantized_shape(c.find(name + "_blocks")->shape, c.find(name + "_scales")->shape);
      case Form::kNvfp4: {
        const QuantizedExperts w = nvfp4_weight(c, name);
        return std::vector<int64_t>{w.values.size(1), w.in};
      }
      case Form::kPackQuantized:
        return pack_quantized_shape(c, name);
      case Form::kGptq: {
        const std::vector<int64_t> words = qweight_words(c, name, found.module);
        return std::vector<int64_t>{words[1], words[0] * (32 / q.bits)};
      }
      case Form::kAwq: {
        const std::vector<int64_t> words = qweight_words(c, name, found.module);
        return std::vector<int64_t>{words[1] * 8, words[0]};
      }
    }
    return std::nullopt;
  });
}

at::Tensor stored_tensor(const Checkpoint& c, const std::string& name, const WeightQuantization& q) {
  return by_form(c, name, q, at::Tensor(), [&](const Found& found) -> at::Tensor {
    switch (found.form) {
      case Form::kPlain:
        return c.view(name);
      case Form::kBlockFp8:
      case Form::kScaledFp8: {
        const Fp8Weight w = fp8_blocks(c, name, q, found.form);
        return dequantize_blocks(w.values, w.scales, w.block);
      }
      case Form::kMxfp4:
        return dequantize_mxfp4(c.view(name + "_blocks"), c.view(name + "_scales"));
      case Form::kNvfp4:
        return dequantize_one(nvfp4_weight(c, name), at::kFloat);
      case Form::kPackQuantized:
      case Form::kGptq:
      case Form::kAwq:
        return dequantize(*stored_integer_groups(c, name, q));
    }
    return {};
  });
}

std::optional<IntegerGroups> stored_integer_groups(const Checkpoint& c, const std::string& name,
                                                   const WeightQuantization& q) {
  return by_form(c, name, q, std::optional<IntegerGroups>(), [&](const Found& found) -> std::optional<IntegerGroups> {
    const std::string& m = found.module;
    switch (found.form) {
      case Form::kPackQuantized: {
        const std::vector<int64_t> shape = pack_quantized_shape(c, name);
        // the code width whose words hold a row (4 where both would, at fewer than five inputs)
        const int64_t words = c.find(name + "_packed")->shape.back();
        const int64_t bits = words == (shape[1] * 4 + 31) / 32 ? 4 : 8;
        return read_pack_quantized(c.view(name + "_packed"), c.view(name + "_scale"),
                                   optional_view(c, name + "_zero_point"), optional_view(c, name + "_g_idx"), shape,
                                   bits);
      }
      case Form::kGptq:
        return read_gptq(c.view(m + ".qweight"), c.view(m + ".qzeros"), c.view(m + ".scales"),
                         optional_view(c, m + ".g_idx"), q.bits, q.zeros_minus_one);
      case Form::kAwq:
        return read_awq(c.view(m + ".qweight"), c.view(m + ".qzeros"), c.view(m + ".scales"));
      default:
        return std::nullopt;
    }
  });
}

std::optional<Fp8Weight> stored_fp8(const Checkpoint& c, const std::string& name, const WeightQuantization& q) {
  return by_form(c, name, q, std::optional<Fp8Weight>(), [&](const Found& found) -> std::optional<Fp8Weight> {
    if (found.form != Form::kBlockFp8 && found.form != Form::kScaledFp8) return std::nullopt;
    return fp8_blocks(c, name, q, found.form);
  });
}

std::optional<QuantizedExperts> stored_experts(const Checkpoint& c, const std::string& name,
                                               const WeightQuantization& q) {
  using Kept = std::optional<QuantizedExperts>;
  return by_form(c, name, q, Kept(), [&](const Found& found) -> Kept {
    switch (found.form) {
      case Form::kBlockFp8:
      case Form::kScaledFp8:
        if (c.find(name)->shape.size() != 2) return std::nullopt;
        return one_expert(fp8_blocks(c, name, q, found.form));
      case Form::kMxfp4: {
        const at::Tensor blocks = c.view(name + "_blocks"), scales = c.view(name + "_scales");
        mxfp4_dequantized_shape(blocks.sizes().vec(), scales.sizes().vec());
        if (blocks.scalar_type() != at::kByte || scales.scalar_type() != at::kByte)
          throw std::invalid_argument("MXFP4 blocks and scales must be uint8");
        if (blocks.dim() != 4) return std::nullopt;
        return QuantizedExperts{QuantizedExperts::Form::kMxfp4, blocks, scales, {}, {0, 0}, blocks.size(2) * 32};
      }
      case Form::kNvfp4:
        return nvfp4_weight(c, name);
      case Form::kPackQuantized:
      case Form::kGptq:
      case Form::kAwq: {
        const std::optional<IntegerWeight> codes = integer_weight(*stored_integer_groups(c, name, q), at::kFloat, at::kCPU);
        if (!codes) return std::nullopt;  // groups of unequal sizes: dequantized at load
        return one_expert(*codes);
      }
      case Form::kPlain:
        break;
    }
    return std::nullopt;
  });
}

std::optional<QuantizedExperts> stored_nvfp4(const Checkpoint& c, const std::string& name, const WeightQuantization& q) {
  return by_form(c, name, q, std::optional<QuantizedExperts>(), [&](const Found& found) -> std::optional<QuantizedExperts> {
    if (found.form != Form::kNvfp4) return std::nullopt;
    return nvfp4_weight(c, name);
  });
}

}  // namespace prefix_scorer
