// Xiaomi MiMo-V2-Flash (mimo_v2_flash): value heads narrower than q and k (v_head_dim, zero-padded to head_dim at
// load), the values times attention_value_scale, biases on q, k and v under attention_bias; sliding layers (the
// first layer and every sixth full by default) with twice the kv heads and attention sinks (saved as
// attention_sink_bias), a rope of each layer type's own rotating a third of each head; windows of
// sliding_window_size + 1 where that key is given. The routed layers (mlp_layer_types; all but the first by
// default) take DeepSeek V3's router, without shared experts. Multi-token-prediction layers (mtp.*) are never read.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> mimo_v2_flash() {
  ModelFamily f = base("mimo_v2_flash");
  f.default_eps = 1e-5;
  f.default_head_dim = 192;
  f.value_head_dim_key = "v_head_dim";
  f.default_value_head_dim = 128;
  f.value_scale_key = "attention_value_scale";
  f.default_value_scale = 0.707;
  f.attention_sinks = f.sinks_on_sliding_only = true;
  f.sinks_name = "attention_sink_bias";
  f.sliding_kv_heads_factor = 2;
  f.window_less_one_key = "sliding_window_size";
  f.windows = {true, 129, 6, nullptr, 0.0, 0.0};
  f.windows.first_layer_full = true;
  f.partial_rotary_key = nullptr;  // each layer type's rope says its own
  f.default_rope_scaling =
      R"({"full_attention": {"rope_type": "default", "rope_theta": 5000000.0, "partial_rotary_factor": 0.334},
          "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.334}})";
  ExpertTraits& e = f.experts;
  deepseek_moe(e, 256, 8, 2048);
  e.shared_count_key = nullptr;
  e.default_shared_count = 0;
  e.layers = MoeLayerRule::kMlpLayerTypes;
  e.first_dense_key = nullptr;
  e.default_first_dense = 1;
  return {f};
}

}  // namespace prefix_scorer::families
