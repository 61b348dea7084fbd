#include "generation/sampling.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace prefix_scorer {

void check_sampling(const SamplingOptions& s, const std::string& what) {
  if (s.greedy) return;
  if (!std::isfinite(s.temperature) || s.temperature < 0)
    throw std::invalid_argument(fmt::format("{} temperature must be finite and >= 0, got {}", what, s.temperature));
  if (s.top_k < 0) throw std::invalid_argument(fmt::format("{} top_k must be >= 0, got {}", what, s.top_k));
  if (!(s.top_p > 0 && s.top_p <= 1))
    throw std::invalid_argument(fmt::format("{} top_p must lie in (0, 1], got {}", what, s.top_p));
}

at::Generator sampling_generator(const SamplingOptions& sampling) {
  return at::make_generator<at::CPUGeneratorImpl>(sampling.seed);
}

int64_t pick_token(const at::Tensor& logprobs, const SamplingOptions& s, at::Generator& generator) {
  if (s.greedy || s.temperature == 0) return logprobs.argmax().item<int64_t>();
  at::Tensor scores = logprobs / s.temperature;
  const double masked = -std::numeric_limits<double>::infinity();
  if (s.top_k > 0 && s.top_k < scores.size(0)) {
    const at::Tensor kth = std::get<0>(scores.topk(s.top_k)).min();
    scores = scores.masked_fill(scores < kth, masked);
  }
  if (s.top_p < 1) {
    // Drop the least likely tokens whose probabilities add up to at most 1 - top_p; the likeliest always stays.
    const auto [sorted, order] = scores.sort(/*dim=*/0, /*descending=*/false);
    const at::Tensor cumulative = sorted.softmax(0).cumsum(0);
    at::Tensor drop = cumulative <= 1 - s.top_p;
    drop[-1] = false;
    scores = scores.masked_fill(at::zeros_like(drop).scatter(0, order, drop), masked);
  }
  return at::multinomial(scores.softmax(0), 1, false, generator).item<int64_t>();
}

}  // namespace prefix_scorer
