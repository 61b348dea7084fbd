#pragma once
// A synthetic model's weights quantized at load, for speed runs only (prefix-scorer-bench --quantize): its
// projections and routed experts drawn at random and kept in a form a quantized checkpoint stores.

#include "model/checkpoint/weights.h"

#include <string>

namespace prefix_scorer {

// `form`: "int4" (4-bit codes in groups of 128, 64 or 32 inputs, W4A16), "int8" (8-bit codes with a scale per
// output channel, W8A16; routed experts plain) or "fp8" (float8_e4m3fn in blocks of 128 x 128, DeepSeek's); routed
// experts stacked in one tensor (gpt_oss's) in MXFP4 with int4 and fp8. Throws std::invalid_argument for another
// form.
KeptForms synthetic_kept_forms(const std::string& form);

}  // namespace prefix_scorer
