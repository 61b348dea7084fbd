// Every family's file, in the order supported_model_types() lists them: adding a family is one line in
// FAMILY_FILES (the function its file defines).

#include "model/families/families.h"

#include <stdexcept>

#define FAMILY_FILES(FILE) \
  FILE(llama) FILE(mistral) FILE(qwen) FILE(gemma) FILE(olmo) FILE(granite) FILE(phi3) FILE(smollm3) \
  FILE(starcoder2) FILE(phi) FILE(gpt_neox) FILE(gpt2) FILE(gpt_oss) FILE(mixtral) FILE(seed_oss) FILE(exaone4) FILE(hunyuan) FILE(ernie) FILE(apertus) \
  FILE(glm4_moe) FILE(minimax) FILE(qwen3_5) FILE(olmo_hybrid) FILE(lfm2) FILE(nemotron_h) FILE(falcon_h1) \
  FILE(deepseek_v3) FILE(glm4_moe_lite) FILE(mistral4) FILE(deepseek_v32) FILE(glm4) FILE(exaone_moe) FILE(solar_open) FILE(hy_v3) FILE(afmoe) FILE(cohere) FILE(laguna) FILE(mimo_v2_flash) \
  FILE(llama4) FILE(minimax_m3) FILE(kimi_linear)

namespace prefix_scorer {
namespace families {

#define DECLARE_FAMILY_FILE(name) std::vector<ModelFamily> name();
FAMILY_FILES(DECLARE_FAMILY_FILE)

ModelFamily base(const char* model_type) {
  ModelFamily f;
  f.model_type = model_type;
  return f;
}

void name_experts(ExpertTraits& e, const char* router) {
  e.router = router;
  e.gate = "mlp.experts.{}.gate_proj.weight";
  e.up = "mlp.experts.{}.up_proj.weight";
  e.down = "mlp.experts.{}.down_proj.weight";
}

void name_mixtral_experts(ExpertTraits& e) {
  e.router = "block_sparse_moe.gate.weight";
  e.gate = "block_sparse_moe.experts.{}.w1.weight";
  e.up = "block_sparse_moe.experts.{}.w3.weight";
  e.down = "block_sparse_moe.experts.{}.w2.weight";
}

void deepseek_router(ExpertTraits& e) {
  e.present = e.router_fp32 = e.normalized_by_default = e.grouped = e.scaled = e.routing_fp32 = true;
  e.scores = RouterScores::kSigmoid;
  e.norm_epsilon = 1e-20;
  e.layers = MoeLayerRule::kFirstDense;
  e.shared_count_key = "n_shared_experts";
}

void deepseek_moe(ExpertTraits& e, int64_t experts, int64_t per_token, int64_t size) {
  deepseek_router(e);
  e.experts_key = "n_routed_experts";
  e.default_experts = experts;
  e.default_per_token = per_token;
  e.default_size = size;
  e.default_shared_count = 1;
  name_experts(e, "mlp.gate.weight");
  e.correction_bias = "mlp.gate.e_score_correction_bias";
  e.shared = "mlp.shared_experts";
}

}  // namespace families

const std::vector<ModelFamily>& registered_families() {
  static const std::vector<ModelFamily> table = [] {
    std::vector<ModelFamily> all;
#define LIST_FAMILY_FILE(name) families::name,
    for (auto* file : {FAMILY_FILES(LIST_FAMILY_FILE)}) {
      for (ModelFamily& f : file()) all.push_back(std::move(f));
    }
    return all;
  }();
  return table;
}

}  // namespace prefix_scorer
