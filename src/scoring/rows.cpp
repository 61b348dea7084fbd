#include "scoring/rows.h"

#include "model/host_transfers.h"

#include "scoring/requests.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace prefix_scorer {

std::vector<ScoringRow> make_rows(const std::vector<Request>& requests, const ModelConfig& config, int64_t max_length,
                                  bool share_identical, int64_t& truncated) {
  validate_requests(requests, config.vocab_size, config.output_vocab());
  std::vector<ScoringRow> rows;
  std::map<TokenIds, size_t> row_of_input;
  for (size_t i = 0; i < requests.size(); ++i) {
    ScoringWindow window = scoring_window(requests[i], config.window(max_length), i);
    check_dense_attention_limit(config, static_cast<int64_t>(window.input.size()), fmt::format("request {}", i),
                                fmt::format("set max_length to at most {}", config.dense_attention_limit));
    truncated += window.truncated ? 1 : 0;
    const auto n = static_cast<int64_t>(window.targets.size());
    if (share_identical) {
      auto [it, fresh] = row_of_input.emplace(window.input, rows.size());
      if (!fresh) {
        rows[it->second].scored = std::max(rows[it->second].scored, n);
        rows[it->second].requests.push_back(i);
        continue;
      }
    }
    const int64_t variant = config.rope_variant(static_cast<int64_t>(window.input.size()));
    rows.push_back({std::move(window.input), n, {i}, variant});
  }
  return rows;
}

void gather_scores(const at::Tensor& logprobs, const std::vector<const ScoringRow*>& rows,
                   const std::vector<Request>& requests, std::vector<Score>& scores) {
  // Gather on the device: one (row, target) pair per continuation token of every request.
  std::vector<int64_t> positions, targets;
  int64_t row_start = 0;
  for (const ScoringRow* row : rows) {
    for (size_t r : row->requests) {
      const TokenIds& cont = requests[r].continuation;
      const int64_t first = row_start + row->scored - static_cast<int64_t>(cont.size());
      for (size_t j = 0; j < cont.size(); ++j) {
        positions.push_back(first + static_cast<int64_t>(j));
        targets.push_back(cont[j]);
      }
    }
    row_start += row->scored;
  }
  const std::vector<at::Tensor> on = upload_together(
      {at::tensor(positions, at::kLong), at::tensor(targets, at::kLong)}, logprobs.device());
  const at::Tensor& target = on[1];
  const at::Tensor picked_rows = logprobs.index_select(0, on[0]);
  // Each target's log-prob and whether it is the argmax, back to the host in one copy.
  const at::Tensor picked = picked_rows.gather(1, target.unsqueeze(1)).squeeze(1).to(at::kDouble);
  const at::Tensor both = download(at::stack({picked, (picked_rows.argmax(1) == target).to(at::kDouble)}));
  auto rows_of_both = both.accessor<double, 2>();
  auto lp = rows_of_both[0];
  auto gr = rows_of_both[1];

  int64_t k = 0;
  for (const ScoringRow* row : rows) {
    for (size_t r : row->requests) {
      Score score{0.0, true};
      for (size_t j = 0; j < requests[r].continuation.size(); ++j, ++k) {
        score.logprob += lp[k];
        score.is_greedy = score.is_greedy && gr[k] != 0;
      }
      scores[r] = score;
    }
  }
}

}  // namespace prefix_scorer
