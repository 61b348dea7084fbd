#pragma once
// JSON Lines in and out of prefix-scorer-bench's file mode.

#include "prefix_scorer/tokenizer.h"
#include "prefix_scorer/types.h"

#include <string>
#include <vector>

namespace prefix_scorer::bench {

// Lines {"context": [ids...], "continuation": [ids...]}, or with both as strings, encoded by `tokenizer` the way
// lm-evaluation-harness encodes pairs (`add_special_tokens` is its add_bos_token); blank lines are skipped.
// Throws std::invalid_argument naming the file and line of the first malformed one.
std::vector<Request> read_requests(const std::string& path, const Tokenizer* tokenizer, bool add_special_tokens);

// Lines {"context": [ids...], "continuation": [ids...]}, as read_requests reads them.
void write_requests(const std::string& path, const std::vector<Request>& requests);

// Lines {"logprob": <float>, "is_greedy": <bool>}, in the scores' order.
void write_scores(const std::string& path, const std::vector<Score>& scores);

}  // namespace prefix_scorer::bench
