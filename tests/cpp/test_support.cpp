#include "model/config/model_config.h"
#include "model/forward_batch.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <ftw.h>

namespace prefix_scorer::test {

std::vector<Request> fixture_requests(const std::string& name) {
  std::vector<Request> requests;
  for (const auto& row : expected_scores(name)) requests.push_back(row.request);
  return requests;
}

void expect_bfloat16_agrees_with_fixture(const Model& model, const std::string& model_name) {
  const auto expected = expected_scores(model_name);
  const auto got = score_plain(model, fixture_requests(model_name)).scores;
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const double tokens = static_cast<double>(expected[i].request.continuation.size());
    EXPECT_NEAR(got[i].logprob, expected[i].logprob, kBfloat16PerToken * tokens) << "request " << i;
  }
  const SafetensorsFile logits(model_dir(model_name) + "/expected_logits.safetensors");
  const at::Tensor tokens = logits.load("tokens_4");  // 150 tokens
  const TokenIds ids(tokens.data_ptr<int64_t>(), tokens.data_ptr<int64_t>() + tokens.numel());
  const at::Tensor same = full_logprobs(model, ids).argmax(-1).cpu().eq(logits.load("logits_4").argmax(-1));
  EXPECT_GE(same.to(at::kDouble).mean().item<double>(), bfloat16_argmax_floor(model_name));
}

double bfloat16_argmax_floor(const std::string& model_name) {
  std::ifstream in(model_dir(model_name) + "/expected_loglikelihood.json");
  const auto j = nlohmann::json::parse(in);
  const auto theirs = j.find("transformers_bfloat16_argmax_agreement");
  if (theirs == j.end()) return kBfloat16ArgmaxAgreement;
  return std::min(kBfloat16ArgmaxAgreement, theirs->get<double>() - kBfloat16ArgmaxMargin);
}

double split_forward_tolerance(const std::string& model_name) {
  std::ifstream in(model_dir(model_name) + "/expected_loglikelihood.json");
  const auto j = nlohmann::json::parse(in);
  const auto theirs = j.find("transformers_split_forward_difference");
  return theirs == j.end() ? 1e-5 : std::max(1e-5, 2 * theirs->get<double>());
}

void expect_same_scores(const std::vector<Score>& got, const std::vector<Score>& want, const std::string& what,
                        double tolerance) {
  ASSERT_FALSE(want.empty()) << what << ": nothing to compare";
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i].logprob, want[i].logprob, tolerance) << what << ", request " << i;
    EXPECT_EQ(got[i].is_greedy, want[i].is_greedy) << what << ", request " << i;
  }
}

std::vector<ExpectedScore> expected_scores(const std::string& model_name) {
  std::ifstream in(model_dir(model_name) + "/expected_loglikelihood.json");
  const auto j = nlohmann::json::parse(in);
  std::vector<ExpectedScore> rows;
  for (const auto& row : j.at("loglikelihood")) {
    rows.push_back({{row.at("context_ids").get<TokenIds>(), row.at("continuation_ids").get<TokenIds>()},
                    row.at("logprob").get<double>(),
                    row.at("is_greedy").get<bool>()});
  }
  return rows;
}

namespace {

// The folders make_temp_dir made, removed with everything in them after the last test. Through the C library:
// the test program's std::filesystem::remove_all resolves to libtorch's copy, which crashes.
class MadeFolders : public testing::Environment {
 public:
  std::vector<std::string> paths;
  void TearDown() override {
    for (const std::string& path : paths) {
      nftw(path.c_str(), [](const char* entry, const struct stat*, int, struct FTW*) { return ::remove(entry); }, 16,
           FTW_DEPTH | FTW_PHYS);
    }
    paths.clear();
  }
};

// Registered before main, as GoogleTest allows (it owns the environment).
MadeFolders* const made_folders = static_cast<MadeFolders*>(testing::AddGlobalTestEnvironment(new MadeFolders));

}  // namespace

std::string make_temp_dir(const std::string& tag) {
  std::string pattern = (std::filesystem::temp_directory_path() / ("prefix_scorer_" + tag + "_XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  made_folders->paths.push_back(pattern);
  return pattern;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_safetensors(const std::string& path, const std::map<std::string, at::Tensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& [name, tensor] : tensors) {
    const at::Tensor t = tensor.contiguous();
    const std::string tag = t.scalar_type() == at::kFloat      ? "F32"
                            : t.scalar_type() == at::kBFloat16 ? "BF16"
                            : t.scalar_type() == at::kHalf     ? "F16"
                            : t.scalar_type() == at::kByte     ? "U8"
                            : t.scalar_type() == at::kFloat8_e4m3fn ? "F8_E4M3"
                                                               : "I64";
    const size_t begin = data.size();
    data.append(static_cast<const char*>(t.data_ptr()), t.nbytes());
    header[name] = {{"dtype", tag}, {"shape", t.sizes().vec()}, {"data_offsets", {begin, data.size()}}};
  }
  const std::string text = header.dump();
  const uint64_t len = text.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&len), 8);
  out << text << data;
}

void copy_model(const std::string& name, const std::string& dir) {
  for (const char* file : {"config.json", "model.safetensors"})
    std::filesystem::copy_file(model_dir(name) + "/" + file, dir + "/" + file,
                               std::filesystem::copy_options::overwrite_existing);
}

std::string model_with_config_edit(const std::string& name, const std::string& from, const std::string& to) {
  const std::string dir = make_temp_dir(name + "_edited");
  copy_model(name, dir);
  std::string text = read_text(dir + "/config.json");
  const size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("config.json of " + name + " has no '" + from + "'");
  write_text(dir + "/config.json", text.replace(at, from.size(), to));
  return dir;
}

std::vector<int64_t> rope_variant_for(const Model& model, int64_t length) {
  return {model.config().rope_variant(length)};
}

at::Tensor full_logprobs(const Model& model, const TokenIds& tokens) {
  const auto len = static_cast<int64_t>(tokens.size());
  const ForwardBatch batch = make_batch({&tokens}, {0}, rope_variant_for(model, len));
  return model.forward(batch, nullptr, at::arange(len, at::kLong));
}

TokenIds random_tokens(std::mt19937& rng, int64_t n) {
  TokenIds ids(n);
  for (auto& id : ids) id = std::uniform_int_distribution<int64_t>(0, 499)(rng);
  return ids;
}

EntryPtr prefilled(const Model& model, const TokenIds& tokens) {
  KvCache cache(model.config().num_layers);
  model.forward(make_batch({&tokens}, {0}), &cache, at::zeros({0}, at::kLong));
  auto entry = std::make_shared<PrefixEntry>();
  entry->tokens = tokens;
  entry->layers = take_segment(cache, 0, 0, static_cast<int64_t>(tokens.size()));
  return entry;
}

std::vector<std::string> fixture_model_types(const std::string& name) {
  std::ifstream file(model_dir(name) + "/config.json");
  const nlohmann::json config = nlohmann::json::parse(file);
  std::vector<std::string> types{config.at("model_type").get<std::string>()};
  if (config.contains("text_config") && config["text_config"].contains("model_type"))
    types.push_back(config["text_config"]["model_type"].get<std::string>());
  return types;
}

}  // namespace prefix_scorer::test
