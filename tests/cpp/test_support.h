#pragma once
// Helpers shared by the tests: fixture paths, fixture readers, and a safetensors writer for broken checkpoints.

#include "test_basics.h"
#include "prefix_scorer/prefix_scorer.h"

// The units behind the public API, which the tests reach too.
#include "attention.h"
#include "batching.h"
#include "checkpoint.h"
#include "planner.h"
#include "prefix_cache.h"
#include "prefix_view.h"
#include "requests.h"
#include "rolling.h"
#include "rope.h"
#include "rows.h"
#include "safetensors.h"
#include "weights.h"

#include <map>
#include <string>
#include <vector>

namespace prefix_scorer::test {

// A fixture row of expected_loglikelihood.json.
struct ExpectedScore {
  Request request;
  double logprob = 0.0;
  bool is_greedy = false;
};
std::vector<ExpectedScore> expected_scores(const std::string& model_name);

// A fresh empty directory under the system's temporary folder.
std::string make_temp_dir(const std::string& tag);
void write_text(const std::string& path, const std::string& text);
std::string read_text(const std::string& path);
void write_safetensors(const std::string& path, const std::map<std::string, at::Tensor>& tensors);
// Copies config.json and model.safetensors of a fixture model into `dir`.
void copy_model(const std::string& name, const std::string& dir);
// A copy of a fixture model in a fresh directory, with `from` replaced by `to` in its config.json.
std::string model_with_config_edit(const std::string& name, const std::string& from, const std::string& to);

// The model with the rope factors transformers picks for a forward of `length` tokens (longrope: long ones beyond
// original_max_position_embeddings).
Model for_length(const Model& model, int64_t length);

// Log-probabilities [len, vocab] of every position of one sequence, by one forward without a cache (longrope:
// with the factors transformers picks for its length).
at::Tensor full_logprobs(const Model& model, const TokenIds& tokens);

}  // namespace prefix_scorer::test
