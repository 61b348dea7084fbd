#pragma once
// JSON Lines in and out of prefix-scorer-bench's file mode.

#include "prefix_scorer/tokenizer.h"
#include "prefix_scorer/types.h"

#include <functional>
#include <string>
#include <vector>

namespace prefix_scorer::bench {

// How text requests are encoded: a tokenizer, and lm-evaluation-harness's add_bos_token.
struct TextEncoding {
  const Tokenizer* tokenizer = nullptr;
  bool add_special_tokens = false;
};

// One line {"context": [ids...], "continuation": [ids...]}, or with both as strings encoded the way
// lm-evaluation-harness encodes pairs with what `text_encoding` gives (asked for text lines only). Throws
// std::invalid_argument saying what is wrong with the line.
Request parse_request_line(const std::string& line, const std::function<const TextEncoding&()>& text_encoding);

// Lines as parse_request_line reads them, or with both as strings, encoded the way
// lm-evaluation-harness encodes pairs with what `text_encoding` gives (asked on the first text line only);
// blank lines are skipped. Throws std::invalid_argument naming the file and line of the first malformed one.
std::vector<Request> read_requests(const std::string& path, const std::function<TextEncoding()>& text_encoding);

// Lines {"context": [ids...], "continuation": [ids...]}, as read_requests reads them.
void write_requests(const std::string& path, const std::vector<Request>& requests);

// Lines {"logprob": <float>, "is_greedy": <bool>}, in the scores' order.
void write_scores(const std::string& path, const std::vector<Score>& scores);

}  // namespace prefix_scorer::bench
