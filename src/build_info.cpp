#include "prefix_scorer/build_info.h"

#include "model/ops/merge_attention.h"

#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <nlohmann/json.hpp>

#include <sstream>

namespace prefix_scorer {
namespace {

// torch's show_config() lists "BLAS_INFO=<name>" among its build settings.
std::string torch_blas() {
  const std::string config = at::show_config();
  const std::string key = "BLAS_INFO=";
  const size_t at = config.find(key);
  if (at == std::string::npos) return "unknown";
  const size_t begin = at + key.size();
  return config.substr(begin, config.find_first_of(", \n", begin) - begin);
}

std::vector<int> architectures(const std::string& list) {  // "80,90"
  std::vector<int> values;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) values.push_back(std::stoi(item));
  return values;
}

}  // namespace

BuildInfo build_info() {
  BuildInfo info;
  info.version = PREFIX_SCORER_VERSION;
  info.torch_version = PREFIX_SCORER_TORCH_VERSION;
#ifdef PREFIX_SCORER_WITH_CUDA
  info.cuda = cuda::compiled_version();
  info.cuda_architectures = architectures(PREFIX_SCORER_CUDA_ARCHITECTURES);
#endif
#ifdef PREFIX_SCORER_WITH_TOKENIZER
  info.tokenizer = true;
#endif
  info.blas = torch_blas();
  info.threads = at::get_num_threads();
  return info;
}

std::string to_json(const BuildInfo& info) {
  nlohmann::json j = {{"version", info.version},
                      {"torch", info.torch_version},
                      {"cuda", info.cuda ? nlohmann::json(*info.cuda) : nlohmann::json(nullptr)},
                      {"cuda_architectures", info.cuda_architectures},
                      {"tokenizer", info.tokenizer},
                      {"blas", info.blas},
                      {"threads", info.threads}};
  return j.dump();
}

}  // namespace prefix_scorer
