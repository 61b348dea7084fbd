#include "generation/sampling.h"

#include "model/host_transfers.h"

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

at::Generator sampling_generator(const SamplingOptions& sampling, c10::Device device) {
  if (device.is_cpu()) return at::make_generator<at::CPUGeneratorImpl>(sampling.seed);
  at::Generator generator = at::globalContext().defaultGenerator(device).clone();
  generator.set_current_seed(sampling.seed);
  return generator;
}

at::Tensor draw_token(const at::Tensor& logprobs, const SamplingOptions& s, at::Generator& generator) {
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
  return at::multinomial(scores.softmax(0), 1, false, generator);
}

std::vector<TokenChoice> choose_tokens(const at::Tensor& logprobs, const std::vector<RowSampler>& rows) {
  const at::Tensor tokens = logprobs.argmax(1);
  for (size_t i = 0; i < rows.size(); ++i) {
    const SamplingOptions& s = *rows[i].sampling;
    if (s.greedy || s.temperature == 0) continue;
    at::Generator& generator = *rows[i].generator;
    if (!generator.defined()) generator = sampling_generator(s, logprobs.device());
    const auto row = static_cast<int64_t>(i);
    tokens.narrow(0, row, 1).copy_(draw_token(logprobs[row], s, generator));
  }
  const at::Tensor chosen = logprobs.gather(1, tokens.unsqueeze(1)).squeeze(1);
  const at::Tensor host = download(at::stack({tokens.to(at::kDouble), chosen.to(at::kDouble)}, 1));
  const auto values = host.accessor<double, 2>();
  std::vector<TokenChoice> choices;
  for (int64_t i = 0; i < host.size(0); ++i) choices.push_back({static_cast<int64_t>(values[i][0]), values[i][1]});
  return choices;
}

}  // namespace prefix_scorer
