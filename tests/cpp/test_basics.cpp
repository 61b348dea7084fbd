#include "test_basics.h"

#include <algorithm>
#include <filesystem>

namespace prefix_scorer::test {

std::string data_dir() { return PREFIX_SCORER_TEST_DATA; }

std::string model_dir(const std::string& name) { return data_dir() + "/models/" + name; }

// Every fixture under tests/data/models but the recurrent ones: a family that adds a fixture is tested by it.
const std::vector<std::string>& fixture_models() {
  static const std::vector<std::string> names = [] {
    const std::vector<std::string>& recurrent = recurrent_fixture_models();
    std::vector<std::string> all;
    for (const auto& entry : std::filesystem::directory_iterator(data_dir() + "/models")) {
      const std::string name = entry.path().filename().string();
      if (entry.is_directory() && std::find(recurrent.begin(), recurrent.end(), name) == recurrent.end())
        all.push_back(name);
    }
    std::sort(all.begin(), all.end());
    return all;
  }();
  return names;
}

const std::vector<std::string>& recurrent_fixture_models() {
  static const std::vector<std::string> names{"qwen3_5_text", "qwen3_5", "qwen3_5_moe", "qwen3_next", "olmo_hybrid", "lfm2", "lfm2_moe", "granitemoehybrid", "nemotron_h", "nemotron_h_moe", "lfm3", "falcon_h1", "kimi_linear", "bailing_hybrid"};
  return names;
}

}  // namespace prefix_scorer::test
