// Qwen 3.5 and 3.6 (qwen3_5_text): Gated DeltaNet layers (linear_attention) with every full_attention_interval-th
// layer full attention; full-attention layers with per-head q/k norms, an output gate (the second half of each
// head's q_proj rows, through a sigmoid) and a quarter of each 256-wide head rotated; every RMSNorm scales by
// (1 + w) in fp32. Text positions rotate as plain rope (the three mrope sections agree on text).

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> qwen3_5() {
  ModelFamily f = base("qwen3_5_text");
  f.multimodal_wrapper = "qwen3_5";  // as released: its text model scored alone, the vision tower not loaded
  f.qk_norm = f.norm_plus_one = f.gated_deltanet_keys = true;
  f.default_head_dim = 256;
  f.default_partial_rotary = 0.25;
  return {f};
}

}  // namespace prefix_scorer::families
