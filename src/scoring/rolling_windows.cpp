#include "prefix_scorer/rolling_windows.h"

#include <algorithm>
#include <stdexcept>

namespace prefix_scorer {

std::vector<Request> windows_after(const TokenIds& context, const TokenIds& target, int64_t max_length) {
  if (max_length < 1) throw std::invalid_argument("scoring windows need max_length >= 1");
  TokenIds history = context;
  history.insert(history.end(), target.begin(), target.end());
  const auto before = static_cast<int64_t>(context.size()), n = static_cast<int64_t>(target.size());
  std::vector<Request> windows;
  for (int64_t start = 0; start < n; start += max_length) {
    const int64_t count = std::min(max_length, n - start);
    const int64_t end = before + start;  // of the piece's context in history
    const int64_t begin = std::max<int64_t>(0, end - (max_length + 1 - count));
    windows.push_back({TokenIds(history.begin() + begin, history.begin() + end),
                       TokenIds(target.begin() + start, target.begin() + start + count)});
  }
  return windows;
}

std::vector<Request> rolling_windows(const TokenIds& document, int64_t prefix_token, int64_t max_length) {
  return windows_after({prefix_token}, document, max_length);
}

}  // namespace prefix_scorer
