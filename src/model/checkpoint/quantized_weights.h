#pragma once
// A checkpoint tensor in whichever form the checkpoint stores it, found by the tensors beside its name: as it is;
// float8_e4m3fn with its scales (block-FP8's weight_scale_inv, compressed-tensors' weight_scale); MXFP4 blocks and
// scales (gpt_oss's experts); integer codes packed in words (compressed-tensors' weight_packed beside the weight's
// name, GPTQ's and AWQ's qweight beside its module's). A quantized tensor is dequantized in fp32.

#include "model/checkpoint/checkpoint.h"
#include "model/config/quantization.h"
#include "model/ops/fp8_weight.h"
#include "model/ops/integer_weight.h"
#include "model/ops/quantized_experts.h"

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

namespace prefix_scorer {

// The shape tensor `name` has once dequantized; nullopt when the checkpoint holds it in no form. Throws
// std::runtime_error naming the tensor when its parts do not pair (scales that do not cover it, a missing part).
std::optional<std::vector<int64_t>> stored_shape(const Checkpoint& checkpoint, const std::string& name,
                                                 const WeightQuantization& quantization);

// Tensor `name` (stored_shape found it): a view of the file where stored plainly, else dequantized in fp32.
at::Tensor stored_tensor(const Checkpoint& checkpoint, const std::string& name, const WeightQuantization& quantization);

// Tensor `name` unpacked where the checkpoint stores it as integer codes in groups (a projection's weight kept so);
// nullopt in any other form.
std::optional<IntegerGroups> stored_integer_groups(const Checkpoint& checkpoint, const std::string& name,
                                                   const WeightQuantization& quantization);

// Tensor `name`'s float8_e4m3fn values and scales as blocks (views of the file) where the checkpoint stores it so
// (block-FP8, compressed-tensors' float-quantized); nullopt in any other form.
std::optional<Fp8Weight> stored_fp8(const Checkpoint& checkpoint, const std::string& name,
                                    const WeightQuantization& quantization);

// Tensor `name`'s NVFP4 codes and scales as a stack of one (views of the file) where the checkpoint stores it so
// (compressed-tensors' nvfp4-pack-quantized); nullopt in any other form.
std::optional<QuantizedExperts> stored_nvfp4(const Checkpoint& checkpoint, const std::string& name,
                                             const WeightQuantization& quantization);

// Tensor `name`'s quantized form as routed experts [experts, out, in] (views of the file; a 2-D tensor, one expert's,
// as a stack of one): FP8 in blocks; MXFP4 blocks; 4-bit codes in groups with their inputs in order. nullopt in any
// other form.
std::optional<QuantizedExperts> stored_experts(const Checkpoint& checkpoint, const std::string& name,
                                               const WeightQuantization& quantization);

}  // namespace prefix_scorer
