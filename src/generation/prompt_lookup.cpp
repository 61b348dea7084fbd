#include "generation/prompt_lookup.h"

#include <algorithm>

namespace prefix_scorer {

TokenIds lookup_draft(const TokenIds& prompt, const TokenIds& generated, int64_t max_tokens) {
  if (max_tokens < 1) return {};
  const auto size = static_cast<int64_t>(prompt.size() + generated.size());
  auto at = [&](int64_t i) {
    const auto p = static_cast<int64_t>(prompt.size());
    return i < p ? prompt[static_cast<size_t>(i)] : generated[static_cast<size_t>(i - p)];
  };
  for (int64_t n = std::min<int64_t>(kLookupNgram, size - 1); n >= 1; --n) {
    // the latest start before the tail itself whose n tokens equal the tail's
    for (int64_t start = size - n - 1; start >= 0; --start) {
      bool same = true;
      for (int64_t j = 0; j < n && same; ++j) same = at(start + j) == at(size - n + j);
      if (!same) continue;
      TokenIds draft;
      for (int64_t i = start + n; i < size && static_cast<int64_t>(draft.size()) < max_tokens; ++i) draft.push_back(at(i));
      return draft;
    }
  }
  return {};
}

}  // namespace prefix_scorer
