#pragma once
// What this build of PrefixScorer was compiled with, and the torch it runs on.

#include <optional>
#include <string>
#include <vector>

namespace prefix_scorer {

struct BuildInfo {
  std::string version;                // PrefixScorer's own
  std::string torch_version;          // the torch it was built against ("2.11.0+cu130")
  std::optional<std::string> cuda;    // the CUDA its kernels were compiled with ("13.0"); none in a CPU build
  std::vector<int> cuda_architectures;  // compiled for, when cuda is set (80, 90)
  bool tokenizer = false;             // whether the native tokenizer is in (it needs PCRE2 and utf8proc)
  std::string blas;                   // torch's BLAS ("mkl", "openblas")
  int threads = 0;                    // torch's intra-op threads now
};

BuildInfo build_info();

// One JSON object: version, torch, cuda (null in a CPU build), cuda_architectures, tokenizer, blas, threads.
std::string to_json(const BuildInfo& info);

}  // namespace prefix_scorer
