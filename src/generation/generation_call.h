#pragma once
// One generate call: the prompts' shared prefixes planned and prefilled as scoring plans them, then continuous
// batching: waiting prompts join the running batch (their tails prefilled after their prefixes), every running
// row advances one token per step, and a row leaves as soon as it stops.

#include "prefix_scorer/generation.h"
#include "prefix_scorer/model.h"
#include "scoring/batching.h"
#include "scoring/prefix_cache.h"

#include <atomic>
#include <vector>

namespace prefix_scorer {

// Throws std::invalid_argument naming the first bad request (one that cannot run within `memory` among them).
void check_generation_requests(const Model& model, const BatchMemory& memory,
                               const std::vector<GenerationRequest>& requests);

// Generates for requests checked already. A LongRoPE model's rows take the long factors (rope variant 1) from
// their prompt on when it is longer than original_max_position_embeddings, else from the step whose sequence grows
// past it (see switch_to_long_factors).
GenerationResult run_generation(const Model& model, const PrefixScorerOptions& options, const BatchMemory& memory,
                                PrefixCache& cache, const std::vector<GenerationRequest>& requests,
                                const StopHook& stop_hook, std::atomic<bool>& cancel);

}  // namespace prefix_scorer
