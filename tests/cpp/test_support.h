#pragma once
// Helpers shared by the tests: fixture paths, fixture readers, and a safetensors writer for broken checkpoints.

#include "prefix_scorer/prefix_scorer.h"
#include "test_basics.h"

// The units behind the public API, which the tests reach too.
#include "model/cache/kv_cache.h"
#include "model/checkpoint/checkpoint.h"
#include "model/checkpoint/safetensors.h"
#include "model/checkpoint/weights.h"
#include "model/ops/attention.h"
#include "model/ops/rope.h"
#include "prefix_scorer/rolling_windows.h"
#include "scoring/batching.h"
#include "scoring/planner.h"
#include "scoring/prefix_cache.h"
#include "scoring/prefix_kv.h"
#include "scoring/requests.h"
#include "scoring/rows.h"

#include <map>
#include <random>
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
std::vector<Request> fixture_requests(const std::string& model_name);

// bf16 against fp32 on the fixtures: the most a summed logprob may move per continuation token. Measured on the CPU
// (all 14 families, 11 rows each): at most 4.5e-3 per token (granite, whose multipliers amplify the rounding;
// 0.9e-3 to 3.0e-3 elsewhere). About twice the largest; a wrong model or a wrong norm moves rows far more.
constexpr double kBfloat16PerToken = 1e-2;
// The least share of positions whose argmax bf16 keeps on the fixtures' 150-token sequence: measured 0.96 to 1.0
// (random weights give flat logits, whose near-ties bf16 may flip); another model agrees on about 1 in 512.
constexpr double kBfloat16ArgmaxAgreement = 0.95;
// A fixture whose transformers bf16 agrees less (its field transformers_bfloat16_argmax_agreement: Gemma 4's tiny
// model, 0.89) asks ours for at least that less this margin.
constexpr double kBfloat16ArgmaxMargin = 0.03;
double bfloat16_argmax_floor(const std::string& model_name);
// A cached forward (a prefill, then the rest from the cache) against one full forward in fp32: 1e-5, or twice
// transformers' own difference where the fixture records a larger one (transformers_split_forward_difference: fp32
// rounding alone moves Nemotron-H's cached forward by 9.5e-6 in transformers).
double split_forward_tolerance(const std::string& model_name);
// Expects a bf16 `model` of fixture `model_name` to give the fixture's fp32 loglikelihoods within kBfloat16PerToken
// per continuation token, and the fixture's argmax on its 150-token sequence at bfloat16_argmax_floor or more.
void expect_bfloat16_agrees_with_fixture(const Model& model, const std::string& model_name);

// A fresh empty directory under the system's temporary folder, removed after the last test.
std::string make_temp_dir(const std::string& tag);
void write_text(const std::string& path, const std::string& text);
std::string read_text(const std::string& path);
void write_safetensors(const std::string& path, const std::map<std::string, at::Tensor>& tensors);
// Copies config.json and model.safetensors of a fixture model into `dir`.
void copy_model(const std::string& name, const std::string& dir);
// A copy of a fixture model in a fresh directory, with `from` replaced by `to` in its config.json.
std::string model_with_config_edit(const std::string& name, const std::string& from, const std::string& to);

// The rope variant of the factors transformers picks for a forward of `length` tokens (longrope: the long ones
// beyond original_max_position_embeddings), as make_batch's rope_variants of one row.
std::vector<int64_t> rope_variant_for(const Model& model, int64_t length);

// Expects `got` to hold as many scores as `want`, and `want` some: each logprob within `tolerance`, each is_greedy
// equal. `what` names the comparison in a failure.
void expect_same_scores(const std::vector<Score>& got, const std::vector<Score>& want, const std::string& what,
                        double tolerance = 1e-5);

// Log-probabilities [len, vocab] of every position of one sequence, by one forward without a cache (longrope:
// with the factors transformers picks for its length).
at::Tensor full_logprobs(const Model& model, const TokenIds& tokens);

// `n` token ids drawn uniformly from [0, 500) (every fixture's vocabulary holds them).
TokenIds random_tokens(std::mt19937& rng, int64_t n);

// The model_type a fixture's config.json states, and its text_config's where it has one.
std::vector<std::string> fixture_model_types(const std::string& name);

// A cache entry of `tokens` (from position 0), its keys and values made by a forward.
EntryPtr prefilled(const Model& model, const TokenIds& tokens);

}  // namespace prefix_scorer::test
