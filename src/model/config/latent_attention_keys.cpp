#include "model/config/latent_attention_keys.h"

#include "model/config/config_json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

namespace prefix_scorer {

using config_json::get_or;
using config_json::json;

// Mistral 4's partial_rotary_factor names the rotated width as a share of the query's head: the rope is whole here.
void read_latent_attention(const json& j, const LatentDefaults& d, ModelConfig& c) {
  c.kv_lora_rank = get_or<int64_t>(j, "kv_lora_rank", d.kv_rank);
  c.q_lora_rank = j.contains("q_lora_rank") ? get_or<int64_t>(j, "q_lora_rank", 0) : d.q_rank;
  c.qk_nope_head_dim = get_or<int64_t>(j, "qk_nope_head_dim", d.nope);
  c.head_dim = get_or<int64_t>(j, "qk_rope_head_dim", d.rope);
  c.v_head_dim = get_or<int64_t>(j, "v_head_dim", d.value);
  c.rope.partial_rotary_factor = 1;
  c.interleaved_rope = !d.unrotated && (d.fixed_layout || get_or<bool>(j, "rope_interleave", true));
  if (d.unrotated) c.rope_layers.assign(c.num_layers, false);
  if (d.fixed_layout && c.q_lora_rank == 0)
    throw std::invalid_argument(fmt::format("config.json: {} needs q_lora_rank (its queries always go through it)",
                                            c.model_type));
  if (c.kv_lora_rank < 1 || c.q_lora_rank < 0 || c.qk_nope_head_dim < 1 || c.v_head_dim < 1 || c.head_dim < 2 ||
      c.head_dim % 2 != 0)
    throw std::invalid_argument(fmt::format(
        "config.json: kv_lora_rank {}, q_lora_rank {}, qk_nope_head_dim {}, qk_rope_head_dim {}, v_head_dim {} (all "
        "positive, q_lora_rank 0 or null for none, qk_rope_head_dim even)",
        c.kv_lora_rank, c.q_lora_rank, c.qk_nope_head_dim, c.head_dim, c.v_head_dim));
}

void write_latent_attention(const ModelConfig& c, json& j) {
  j.update({{"kv_lora_rank", c.kv_lora_rank}, {"q_lora_rank", c.q_lora_rank > 0 ? json(c.q_lora_rank) : json()},
            {"qk_nope_head_dim", c.qk_nope_head_dim}, {"qk_rope_head_dim", c.head_dim},
            {"v_head_dim", c.v_head_dim}, {"rope_interleave", c.interleaved_rope}});
}

}  // namespace prefix_scorer
