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
  const auto n = static_cast<int64_t>(targets.size());
  bool in_order = static_cast<int64_t>(positions.size()) == logprobs.size(0);  // each scored row read once, in order
  for (int64_t i = 0; in_order && i < n; ++i) in_order = positions[i] == i;
  // [n, 1] targets and, unless in order, [n] rows, in one copy
  at::Tensor host = at::empty({in_order ? n : 2 * n}, at::kLong);
  std::copy(targets.begin(), targets.end(), host.data_ptr<int64_t>());
  if (!in_order) std::copy(positions.begin(), positions.end(), host.data_ptr<int64_t>() + n);
  const at::Tensor on_device = upload(host, logprobs.device());
  const at::Tensor target = (in_order ? on_device : on_device.narrow(0, 0, n)).view({n, 1});
  const at::Tensor picked_rows = in_order ? logprobs : logprobs.index_select(0, on_device.narrow(0, n, n));
  // Each target's log-prob and whether it is the argmax, back to the host in one copy: [n, 2] fp32.
  const at::Tensor both = download(
      at::cat({picked_rows.gather(1, target), picked_rows.argmax(1, true).eq(target).to(at::kFloat)}, 1));
  auto rows_of_both = both.accessor<float, 2>();

  int64_t k = 0;
  for (const ScoringRow* row : rows) {
    for (size_t r : row->requests) {
      Score score{0.0, true};
      for (size_t j = 0; j < requests[r].continuation.size(); ++j, ++k) {
        score.logprob += static_cast<double>(rows_of_both[k][0]);
        score.is_greedy = score.is_greedy && rows_of_both[k][1] != 0;
      }
      scores[r] = score;
    }
  }
}

}  // namespace prefix_scorer
