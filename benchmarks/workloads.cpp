#include "workloads.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <random>
#include <stdexcept>

namespace prefix_scorer::bench {

namespace {

// Random token ids (never the lowest four, where special tokens usually sit) from one seeded stream.
class TokenDraw {
 public:
  TokenDraw(int64_t vocab_size, uint64_t seed, const std::string& workload) : rng_(seed), token_(4, vocab_size - 1) {
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

void check_range(const std::string& workload, const char* what, int64_t lo, int64_t hi) {
  if (lo <= 0 || hi < lo)
    throw std::invalid_argument(fmt::format("{}: {} lengths must be positive, min <= max", workload, what));
}

}  // namespace

const std::vector<std::string>& workload_names() {
  static const std::vector<std::string> names{"mmlu-shape", "hellaswag-shape", "arc25-shape", "hellaswag10-shape"};
  return names;
}

ChoiceShape named_shape(const std::string& workload) {
  if (workload == "mmlu-shape") return {4, 64, 600, 40, 160, 1, 1};
  if (workload == "hellaswag-shape") return {1, 256, 0, 60, 140, 10, 40};
  if (workload == "arc25-shape") return {1, 64, 2500, 20, 60, 3, 15};
  if (workload == "hellaswag10-shape") return {1, 64, 1000, 60, 140, 10, 40};
  throw std::invalid_argument(
      fmt::format("unknown workload '{}' (known: {})", workload, fmt::join(workload_names(), ", ")));
}

std::vector<Request> choice_workload(const ChoiceShape& shape, int64_t vocab_size, uint64_t seed,
                                     const std::string& workload) {
  if (shape.subjects <= 0 || shape.questions <= 0 || shape.prefix_len < 0)
    throw std::invalid_argument(fmt::format("{}: subjects and questions must be positive, prefix-len >= 0", workload));
  check_range(workload, "context", shape.context_min, shape.context_max);
  check_range(workload, "choice", shape.choice_min, shape.choice_max);
  TokenDraw draw(vocab_size, seed, workload);
  std::vector<Request> requests;
  for (int64_t s = 0; s < shape.subjects; ++s) {
    const TokenIds prefix = draw(shape.prefix_len);
    for (int64_t q = 0; q < shape.questions; ++q) {
      TokenIds context = prefix;
      const TokenIds question = draw(draw.length(shape.context_min, shape.context_max));
      context.insert(context.end(), question.begin(), question.end());
      for (int choice = 0; choice < 4; ++choice)
        requests.push_back({context, draw(draw.length(shape.choice_min, shape.choice_max))});
    }
  }
  return requests;
}

}  // namespace prefix_scorer::bench
