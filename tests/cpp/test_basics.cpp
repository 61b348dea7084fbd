#include "test_basics.h"

namespace prefix_scorer::test {

std::string data_dir() { return PREFIX_SCORER_TEST_DATA; }

std::string model_dir(const std::string& name) { return data_dir() + "/models/" + name; }

const std::vector<std::string>& fixture_models() {
  static const std::vector<std::string> names{
      "llama3", "mistral", "qwen2",   "qwen3",   "gemma",     "gemma2",    "gemma3_text", "olmo2",   "olmo3",
      "granite", "phi3",  "phi3_longrope", "smollm3", "mixtral", "qwen2_moe", "qwen3_moe", "gemma3", "mistral3", "starcoder2", "phi", "gpt_neox", "gpt2", "gpt_oss", "ministral3", "gemma4_text", "gemma4", "gemma4_moe", "seed_oss", "exaone4", "hunyuan_v1_dense", "ernie4_5", "apertus", "glm4_moe", "ernie4_5_moe", "hunyuan_v1_moe", "minimax_m2", "apertus1p5",
      "deepseek_v3", "deepseek_v3_q_proj", "glm4_moe_lite", "mistral4", "deepseek_v32", "glm_moe_dsa", "glm4", "exaone_moe", "solar_open", "hy_v3", "afmoe", "cohere", "cohere2", "gemma4_unified", "laguna"};
  return names;
}

const std::vector<std::string>& recurrent_fixture_models() {
  static const std::vector<std::string> names{"qwen3_5_text", "qwen3_5", "qwen3_5_moe", "qwen3_next", "olmo_hybrid", "lfm2", "lfm2_moe", "granitemoehybrid", "nemotron_h", "nemotron_h_moe", "lfm3", "falcon_h1"};
  return names;
}

}  // namespace prefix_scorer::test
