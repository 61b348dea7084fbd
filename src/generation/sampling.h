#pragma once
// Picking a row's next token from its log-probabilities: greedy, or sampled as HF generate's warpers sample.

#include "prefix_scorer/generation.h"

#include <ATen/ATen.h>

namespace prefix_scorer {

// Checks a request's sampling settings; throws std::invalid_argument with `what` in front.
void check_sampling(const SamplingOptions& sampling, const std::string& what);

// A request's own random stream, seeded from its settings.
at::Generator sampling_generator(const SamplingOptions& sampling);

// The next token from `logprobs` [vocab] float32 on the CPU: the argmax (the first one, as torch.argmax takes it)
// when greedy or at temperature 0; else a draw from `generator` after temperature, top-k and top-p (in HF's order).
int64_t pick_token(const at::Tensor& logprobs, const SamplingOptions& sampling, at::Generator& generator);

}  // namespace prefix_scorer
