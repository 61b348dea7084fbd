#include "workloads.h"

#include <fmt/format.h>

#include <random>
#include <stdexcept>

namespace prefix_scorer::bench {

namespace {

// Random token ids (never the lowest four, where special tokens usually sit) from one seeded stream.
class TokenDraw {
 public:
  TokenDraw(int64_t vocab_size, uint64_t seed, const char* workload) : rng_(seed), token_(4, vocab_size - 1) {
    if (vocab_size < 8) throw std::invalid_argument(fmt::format("{}: vocabulary of {} is too small", workload, vocab_size));
  }
  TokenIds operator()(int64_t n) {
    TokenIds ids(n);
    for (auto& id : ids) id = token_(rng_);
    return ids;
  }
  int64_t length(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }

 private:
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int64_t> token_;
};

void check_range(const char* workload, int64_t lo, int64_t hi) {
  if (lo <= 0 || hi < lo) throw std::invalid_argument(fmt::format("{}: lengths must be positive, min <= max", workload));
}

}  // namespace

std::vector<Request> mmlu_shape(const MmluShape& shape, int64_t vocab_size, uint64_t seed) {
  if (shape.subjects <= 0 || shape.questions <= 0 || shape.prefix_len <= 0)
    throw std::invalid_argument("mmlu-shape: sizes must be positive");
  check_range("mmlu-shape", shape.suffix_min, shape.suffix_max);
  TokenDraw draw(vocab_size, seed, "mmlu-shape");
  std::vector<Request> requests;
  for (int64_t s = 0; s < shape.subjects; ++s) {
    const TokenIds prefix = draw(shape.prefix_len);
    for (int64_t q = 0; q < shape.questions; ++q) {
      TokenIds context = prefix;
      const TokenIds question = draw(draw.length(shape.suffix_min, shape.suffix_max));
      context.insert(context.end(), question.begin(), question.end());
      const TokenIds choices = draw(4);
      for (int64_t choice : choices) requests.push_back({context, {choice}});
    }
  }
  return requests;
}

std::vector<Request> hellaswag_shape(const HellaswagShape& shape, int64_t vocab_size, uint64_t seed) {
  if (shape.questions <= 0) throw std::invalid_argument("hellaswag-shape: sizes must be positive");
  check_range("hellaswag-shape", shape.context_min, shape.context_max);
  check_range("hellaswag-shape", shape.ending_min, shape.ending_max);
  TokenDraw draw(vocab_size, seed, "hellaswag-shape");
  std::vector<Request> requests;
  for (int64_t q = 0; q < shape.questions; ++q) {
    const TokenIds context = draw(draw.length(shape.context_min, shape.context_max));
    for (int ending = 0; ending < 4; ++ending)
      requests.push_back({context, draw(draw.length(shape.ending_min, shape.ending_max))});
  }
  return requests;
}

}  // namespace prefix_scorer::bench
