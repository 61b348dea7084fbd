#pragma once
// The generation benchmark: a GSM8K-shaped workload (one few-shot prefix, many questions, generations of varied
// length) run the way HF generate runs it (naive) and by PrefixScorer::generate (prefix), on the same requests.

#include "prefix_scorer/generation.h"
#include "prefix_scorer/model.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace prefix_scorer::bench {

// gsm8k-shape: `questions` prompts of [question_min, question_max] random tokens after one prefix_len-token prefix.
// gsm8k-text: the prompts of gsm8k_text_prompts (text_workloads.h), encoded by a tokenizer.
// reasoning-shape: gsm8k-shape's prompts, each generating exactly max_new_tokens (a chain of thought, no early stop).
struct GenerationShape {
  int64_t prefix_len = 900;
  int64_t questions = 64;
  int64_t question_min = 40;
  int64_t question_max = 120;
  int64_t shots = 8;  // gsm8k-text
  int64_t max_new_tokens = 128;
  bool every_token = false;  // each request generates max_new_tokens; else N/8 to N drawn from the seed
};

bool is_generation_workload(const std::string& workload);  // gsm8k-shape, gsm8k-text, reasoning-shape
GenerationShape named_generation_shape(const std::string& workload);
std::vector<TokenIds> gsm8k_shape_prompts(const GenerationShape& shape, int64_t vocab_size, uint64_t seed);
// Requests of `prompts`, each wanting max_new_tokens new tokens (every_token), or a number drawn from
// [max_new_tokens / 8, max_new_tokens] (where a real run's answers stop).
std::vector<GenerationRequest> generation_requests(std::vector<TokenIds> prompts, const GenerationShape& shape,
                                                   uint64_t seed);

// Runs `modes` (naive, prefix) on the requests, prints a line per mode on stderr, and returns the report.
// naive: prompts whole (longest first) in static batches of max_batch_rows, each batch stepping until its slowest
// row is done, as HF generate does; prefix: PrefixScorer::generate (with the bytes of cached keys and values it
// copied), and with `count_ops` its decode step's top-level aten ops per layer, counted in two more calls on a few
// of the prompts.
nlohmann::json run_generation_modes(const std::shared_ptr<const Model>& model,
                                    const std::vector<GenerationRequest>& requests,
                                    const std::vector<std::string>& modes, const PrefixScorerOptions& options,
                                    bool count_ops);

}  // namespace prefix_scorer::bench
