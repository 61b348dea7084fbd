// Every family's file, in the order supported_model_types() lists them: adding a family is one line in
// FAMILY_FILES (the function its file defines).

#include "model/families/families.h"

#define FAMILY_FILES(FILE) \
  FILE(llama) FILE(mistral) FILE(qwen) FILE(gemma) FILE(olmo) FILE(granite) FILE(phi3) FILE(smollm3) \
  FILE(starcoder2) FILE(phi) FILE(gpt_neox) FILE(gpt2) FILE(gpt_oss) FILE(mixtral) FILE(seed_oss) FILE(exaone4) FILE(hunyuan) FILE(ernie) FILE(apertus)

namespace prefix_scorer {
namespace families {

#define DECLARE_FAMILY_FILE(name) std::vector<ModelFamily> name();
FAMILY_FILES(DECLARE_FAMILY_FILE)

ModelFamily base(const char* model_type) {
  ModelFamily f;
  f.model_type = model_type;
  return f;
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
