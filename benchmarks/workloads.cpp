#include "workloads.h"

#include <fmt/format.h>

#include <random>
#include <stdexcept>

namespace prefix_scorer::bench {

std::vector<Request> mmlu_shape(const MmluShape& shape, int64_t vocab_size, uint64_t seed) {
  if (shape.subjects <= 0 || shape.questions <= 0 || shape.prefix_len <= 0 || shape.suffix_min <= 0 ||
      shape.suffix_max < shape.suffix_min)
    throw std::invalid_argument("mmlu-shape: sizes must be positive and suffix_min <= suffix_max");
  if (vocab_size < 8) throw std::invalid_argument(fmt::format("mmlu-shape: vocabulary of {} is too small", vocab_size));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> token(4, vocab_size - 1);
  std::uniform_int_distribution<int64_t> suffix_len(shape.suffix_min, shape.suffix_max);
  auto draw = [&](int64_t n) {
    TokenIds ids(n);
    for (auto& id : ids) id = token(rng);
    return ids;
  };
  std::vector<Request> requests;
  for (int64_t s = 0; s < shape.subjects; ++s) {
    const TokenIds prefix = draw(shape.prefix_len);
    for (int64_t q = 0; q < shape.questions; ++q) {
      TokenIds context = prefix;
      const TokenIds question = draw(suffix_len(rng));
      context.insert(context.end(), question.begin(), question.end());
      const TokenIds choices = draw(4);
      for (int64_t choice : choices) requests.push_back({context, {choice}});
    }
  }
  return requests;
}

}  // namespace prefix_scorer::bench
