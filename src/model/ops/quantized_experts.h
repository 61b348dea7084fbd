#pragma once
// One projection of a layer's routed experts [experts, out, in] kept as the checkpoint stores it (block-FP8 as
// DeepSeek ships its experts, MXFP4 as gpt_oss does, NVFP4 and integer codes as compressed-tensors releases do), at
// its bytes on disk. A forward dequantizes only the experts it routes to, into a workspace just before their grouped
// matmul: to the values the checkpoint's weight dequantized at load has. (A projection's NVFP4 weight is a stack of
// one: Linear::fp4.)

#include "model/ops/fp8_weight.h"
#include "model/ops/integer_weight.h"

#include <ATen/ATen.h>

#include <array>
#include <cstdint>

namespace prefix_scorer {

struct QuantizedExperts {
  enum class Form { kNone, kFp8, kMxfp4, kNvfp4, kInteger };
  Form form = Form::kNone;
  at::Tensor values;  // kFp8: float8_e4m3fn [experts, out, in]; kMxfp4: uint8 blocks [experts, out, in / 32, 16];
                      // kNvfp4: uint8 [experts, out, in / 2], two E2M1 codes a byte (the even input's low);
                      // kInteger: uint8 [experts, out, ceil(in / 2)] 4-bit codes two a byte (the even input's
                      // low), or [experts, out, in] 8-bit codes, each expert's inputs sorted by group
  at::Tensor scales;  // kFp8: fp32 [experts, out blocks, in blocks]; kMxfp4: uint8 exponents [experts, out, in / 32];
                      // kNvfp4: float8_e4m3fn [experts, out, in / 16]; kInteger: fp32 [experts, out, groups]
  at::Tensor zeros;   // kInteger: fp32 zero points [experts, out, groups]; kNvfp4: fp32 global scales [experts] (each
                      // weight is its code times its group's scale over the global scale); else undefined
  std::array<int64_t, 2> block{0, 0};  // kFp8: its blocks; kInteger: {1, the group}
  int64_t in = 0;                      // the inputs
  int64_t bits = 0;                    // kInteger: 4 or 8
  at::Tensor input_order;  // kInteger act-order: int64 [experts, in], input_order[e][j] the input whose codes are
                           // expert e's column j (undefined: every expert's inputs in order)

  bool defined() const { return form != Form::kNone; }
  int64_t experts() const { return values.size(0); }
  int64_t bytes() const;
};

// One expert's weight as a stack of one (views of its parts): FP8 values with their block scales; integer codes as
// an IntegerWeight keeps them (bytes, inputs sorted by group).
QuantizedExperts one_expert(const Fp8Weight& w);
QuantizedExperts one_expert(const IntegerWeight& w);

// Stacks of `experts` experts of `like`'s form and shapes on `device`, to be filled expert by expert (set_expert).
QuantizedExperts empty_experts(const QuantizedExperts& like, int64_t experts, c10::Device device);

// Copies `one` (a stack of one) into expert `e` of `stack` (an act-order expert beside experts in order: their
// order made explicit). Throws std::invalid_argument where their forms or shapes differ.
void set_expert(QuantizedExperts& stack, int64_t e, const QuantizedExperts& one);

// Rows start, start + step, ... of every expert (copied to `device`): kMxfp4, kNvfp4 and kInteger (scales per row), as
// gpt_oss interleaves gate's and up's rows.
QuantizedExperts rows_of(const QuantizedExperts& w, int64_t start, int64_t step, c10::Device device);

// Every part copied to `device` (its own memory: the parts may be views of a mapped file).
QuantizedExperts copied_to(const QuantizedExperts& w, c10::Device device);

// Experts `chosen` (int64 [k], on the weights' device) dequantized in fp32, then cast to `dtype`: [k, out, in].
at::Tensor dequantize_experts(const QuantizedExperts& w, const at::Tensor& chosen, at::ScalarType dtype);

// A stack of one's weight, so dequantized: [out, in].
at::Tensor dequantize_one(const QuantizedExperts& w, at::ScalarType dtype);

}  // namespace prefix_scorer
