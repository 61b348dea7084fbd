#pragma once
// One generate call: the prompts' shared prefixes planned and prefilled as scoring plans them, then continuous
// batching: waiting prompts join the running batch (their tails prefilled after their prefixes), every running
// row advances one token per step, and a row leaves as soon as it stops.

#include "prefix_scorer/generation.h"
#include "prefix_scorer/model.h"
#include "scoring/prefix_cache.h"

#include <atomic>
#include <vector>

namespace prefix_scorer {

// Throws std::invalid_argument naming the first bad request.
void check_generation_requests(const Model& model, const PrefixScorerOptions& options,
                               const std::vector<GenerationRequest>& requests);

// Generates for requests checked already. `long_model` (null: none) has LongRoPE's long factors: a row takes it
// from the step whose sequence grows past original_max_position_embeddings on, as transformers switches per
// forward (the keys cached before keep their short factors).
GenerationResult run_generation(const Model& model, const Model* long_model, const PrefixScorerOptions& options,
                                PrefixCache& cache, const std::vector<GenerationRequest>& requests,
                                const StopHook& stop_hook, std::atomic<bool>& cancel);

}  // namespace prefix_scorer
