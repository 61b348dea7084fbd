#pragma once
// Picking each row's next token from its log-probabilities where they were computed: greedy, or sampled as HF
// generate's warpers sample. Only the chosen tokens and their log-probabilities come to the host.

#include "prefix_scorer/generation.h"

#include <ATen/ATen.h>

#include <vector>

namespace prefix_scorer {

// Checks a request's sampling settings; throws std::invalid_argument with `what` in front.
void check_sampling(const SamplingOptions& sampling, const std::string& what);

// A request's own random stream on `device`, seeded from its settings.
at::Generator sampling_generator(const SamplingOptions& sampling, c10::Device device);

// One row's draw from `logprobs` [vocab] float32 (on any device): a [1] int64 tensor there, drawn from `generator`
// (on the same device) after temperature, top-k and top-p, in HF's order.
at::Tensor draw_token(const at::Tensor& logprobs, const SamplingOptions& sampling, at::Generator& generator);

// A row's sampling settings and its random stream (undefined until its first draw, then made on the logprobs'
// device).
struct RowSampler {
  const SamplingOptions* sampling;
  at::Generator* generator;
};

struct TokenChoice {
  int64_t token = 0;
  double logprob = 0;
};

// Each row's next token from `logprobs` [rows, vocab] float32: greedy rows (and rows at temperature 0) by one argmax
// over the batch (the first maximum, as torch.argmax takes it), the others by draw_token. One download of
// [rows, 2] values brings the tokens and their log-probabilities to the host.
std::vector<TokenChoice> choose_tokens(const at::Tensor& logprobs, const std::vector<RowSampler>& rows);

}  // namespace prefix_scorer
