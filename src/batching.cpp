#include "prefix_scorer/batching.h"

#include <algorithm>

namespace prefix_scorer {

std::vector<std::pair<size_t, size_t>> plan_batches(const std::vector<int64_t>& lengths_descending,
                                                    int64_t max_tokens, int64_t max_rows) {
  std::vector<std::pair<size_t, size_t>> batches;
  size_t begin = 0;
  while (begin < lengths_descending.size()) {
    const int64_t longest = std::max<int64_t>(lengths_descending[begin], 1);
    const auto fit = std::max<int64_t>(1, std::min(max_rows, max_tokens / longest));
    const size_t end = std::min(lengths_descending.size(), begin + static_cast<size_t>(fit));
    batches.emplace_back(begin, end);
    begin = end;
  }
  return batches;
}

ForwardBatch make_batch(const std::vector<const TokenIds*>& rows, const std::vector<int64_t>& start_positions) {
  const auto b = static_cast<int64_t>(rows.size());
  int64_t t = 1;
  for (const TokenIds* row : rows) t = std::max<int64_t>(t, static_cast<int64_t>(row->size()));
  at::Tensor tokens = at::zeros({b, t}, at::kLong);
  at::Tensor positions = at::zeros({b, t}, at::kLong);
  at::Tensor valid = at::zeros({b, t}, at::kBool);
  auto tok = tokens.accessor<int64_t, 2>();
  auto pos = positions.accessor<int64_t, 2>();
  auto val = valid.accessor<bool, 2>();
  for (int64_t i = 0; i < b; ++i) {
    const TokenIds& row = *rows[i];
    const auto len = static_cast<int64_t>(row.size());
    for (int64_t j = 0; j < t; ++j) {
      const bool real = j < len;
      tok[i][j] = real ? row[j] : 0;
      pos[i][j] = start_positions[i] + std::min(j, std::max<int64_t>(len - 1, 0));
      val[i][j] = real;
    }
  }
  return {tokens, positions, valid};
}

at::Tensor last_positions(const std::vector<int64_t>& lengths, const std::vector<int64_t>& scored, int64_t width) {
  std::vector<int64_t> flat;
  for (size_t i = 0; i < lengths.size(); ++i) {
    for (int64_t j = lengths[i] - scored[i]; j < lengths[i]; ++j) flat.push_back(static_cast<int64_t>(i) * width + j);
  }
  return at::tensor(flat, at::kLong);
}

int64_t count_forward(const ForwardBatch& batch, ScoringStats& stats) {
  const int64_t real = batch.valid.sum().item<int64_t>();
  stats.forwards += 1;
  stats.tokens_computed += real;
  stats.padding_tokens += batch.valid.numel() - real;
  return real;
}

}  // namespace prefix_scorer
