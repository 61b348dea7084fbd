// Every family's file, in the order supported_model_types() lists them: adding a family is a line in each list.

#include "model/families/families.h"

namespace prefix_scorer {
namespace families {

std::vector<ModelFamily> llama();
std::vector<ModelFamily> mistral();
std::vector<ModelFamily> qwen();
std::vector<ModelFamily> gemma();
std::vector<ModelFamily> olmo();
std::vector<ModelFamily> granite();
std::vector<ModelFamily> phi3();
std::vector<ModelFamily> smollm3();
std::vector<ModelFamily> starcoder2();
std::vector<ModelFamily> phi();
std::vector<ModelFamily> gpt_neox();
std::vector<ModelFamily> gpt2();
std::vector<ModelFamily> gpt_oss();
std::vector<ModelFamily> mixtral();

ModelFamily base(const char* model_type) {
  ModelFamily f;
  f.model_type = model_type;
  return f;
}

}  // namespace families

const std::vector<ModelFamily>& registered_families() {
  static const std::vector<ModelFamily> table = [] {
    std::vector<ModelFamily> all;
    for (auto* file : {families::llama, families::mistral, families::qwen, families::gemma, families::olmo,
                       families::granite, families::phi3, families::smollm3, families::starcoder2, families::phi,
                       families::gpt_neox, families::gpt2, families::gpt_oss, families::mixtral}) {
      for (ModelFamily& f : file()) all.push_back(std::move(f));
    }
    return all;
  }();
  return table;
}

}  // namespace prefix_scorer
