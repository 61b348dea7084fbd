#include "model/checkpoint/synthetic_quantization.h"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <stdexcept>

namespace prefix_scorer {
namespace {

at::Tensor random_weight(const std::vector<int64_t>& shape) { return at::randn(shape) * 0.02; }

// The largest group of 128, 64 and 32 that divides `cols`; 0: none.
int64_t int4_group(int64_t cols) {
  for (const int64_t group : {128, 64, 32})
    if (cols % group == 0) return group;
  return 0;
}

// gpt_oss's stacked experts [experts, in, out] as MXFP4 blocks [experts, out, in / 32, 16] with scales near 2^-8.
std::optional<QuantizedExperts> random_mxfp4(const std::vector<int64_t>& shape) {
  const int64_t experts = shape[0], in = shape[1], out = shape[2];
  if (in % 32 != 0) return std::nullopt;
  return QuantizedExperts{QuantizedExperts::Form::kMxfp4, at::randint(0, 256, {experts, out, in / 32, 16}, at::kByte),
                          at::randint(117, 121, {experts, out, in / 32}, at::kByte), {}, {0, 0}, in};
}

}  // namespace

KeptForms synthetic_kept_forms(const std::string& form) {
  if (form.empty()) return {};
  KeptForms kept;
  if (form == "int4" || form == "int8") {
    const int64_t bits = form == "int4" ? 4 : 8;
    kept.projection = [bits](const TensorSpec& spec, c10::Device device, at::ScalarType as) {
      Linear stored;  // undefined where no group size divides the inputs: plain
      const int64_t cols = spec.shape.back(), group = bits == 4 ? int4_group(cols) : cols;
      if (group == 0) return stored;
      if (std::optional<IntegerWeight> codes =
              integer_weight(quantize_symmetric(random_weight(spec.shape), group, bits), as, device))
        stored.integer = std::make_shared<const IntegerWeight>(std::move(*codes));
      return stored;
    };
    if (bits == 4)
      kept.experts = [](const TensorSpec& spec) -> std::optional<QuantizedExperts> {
        if (spec.shape.size() == 3) return random_mxfp4(spec.shape);
        const int64_t group = int4_group(spec.shape.back());
        if (group == 0) return std::nullopt;
        return one_expert(*integer_weight(quantize_symmetric(random_weight(spec.shape), group, 4), at::kFloat, at::kCPU));
      };
  } else if (form == "fp8") {
    constexpr std::array<int64_t, 2> kBlock{128, 128};
    kept.projection = [kBlock](const TensorSpec& spec, c10::Device device, at::ScalarType) {
      Fp8Weight w = quantize_fp8_blocks(random_weight(spec.shape), kBlock);
      w.values = w.values.to(device);
      w.scales = w.scales.to(device);
      Linear stored;
      stored.fp8 = std::make_shared<const Fp8Weight>(std::move(w));
      return stored;
    };
    kept.experts = [kBlock](const TensorSpec& spec) -> std::optional<QuantizedExperts> {
      if (spec.shape.size() == 3) return random_mxfp4(spec.shape);
      return one_expert(quantize_fp8_blocks(random_weight(spec.shape), kBlock));
    };
  } else {
    throw std::invalid_argument(fmt::format("quantize '{}' is not a form (int4, int8 and fp8 are)", form));
  }
  return kept;
}

}  // namespace prefix_scorer
