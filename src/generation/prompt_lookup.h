#pragma once
// Draft tokens for a greedy row by prompt lookup: where the row's last few tokens occurred before in its prompt or
// output, the tokens that followed them there are proposed as its next ones. A decode step feeds them after the
// row's last token and keeps those the model's own choices agree with (a verified draft changes no token, only
// how many steps they take); few-shot prompts, whose answers repeat the examples' phrasing, gain the most.

#include "prefix_scorer/types.h"

#include <cstdint>

namespace prefix_scorer {

// The longest n-gram matched at the end of prompt ++ generated, from this many tokens down to one.
constexpr int64_t kLookupNgram = 3;

// Up to `max_tokens` tokens that followed the latest earlier occurrence of the sequence's last n tokens (n from
// kLookupNgram down to 1, the longest match first); empty where none recurs or max_tokens < 1.
TokenIds lookup_draft(const TokenIds& prompt, const TokenIds& generated, int64_t max_tokens);

}  // namespace prefix_scorer
