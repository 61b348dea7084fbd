#include "scoring/rolling.h"

#include <algorithm>
#include <stdexcept>

namespace prefix_scorer {

std::vector<Request> rolling_windows(const TokenIds& document, int64_t prefix_token, int64_t max_length) {
  if (max_length < 1) throw std::invalid_argument("rolling windows need max_length >= 1");
  std::vector<Request> windows;
  const auto n = static_cast<int64_t>(document.size());
  if (n == 0) return windows;
  const int64_t first = std::min(max_length, n);
  windows.push_back({{prefix_token}, TokenIds(document.begin(), document.begin() + first)});
  for (int64_t predicted = first; predicted < n;) {
    const int64_t count = std::min(n - predicted, max_length);
    const int64_t end = predicted + count;
    // Context: the max_length + 1 tokens before `end`, less the last one, less the predicted ones but the first.
    const int64_t context_begin = std::max<int64_t>(0, end - max_length - 1);
    windows.push_back({TokenIds(document.begin() + context_begin, document.begin() + predicted),
                       TokenIds(document.begin() + predicted, document.begin() + end)});
    predicted = end;
  }
  return windows;
}

}  // namespace prefix_scorer
