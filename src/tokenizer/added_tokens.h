#pragma once
// Added tokens (special or not) found in the text before anything else runs.

#include "prefix_scorer/types.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace prefix_scorer::tok {

struct AddedToken {
  int64_t id = 0;
  std::string content;
  std::string match;  // what the text must hold: the content, normalized for a normalized token
  bool single_word = false, lstrip = false, rstrip = false, normalized = false, special = false;
};

std::vector<AddedToken> parse_added_tokens(const nlohmann::json& list);

// A stretch of text: either plain text (id < 0) or an added token's match.
struct Segment {
  std::string text;
  int64_t id = -1;
  size_t begin = 0;  // byte offset in the split text
};

// Splits `text` at the leftmost-longest matches of `tokens` (single_word, lstrip and rstrip honoured); a
// normalized token's match is its content normalized, and the text is normalized text.
std::vector<Segment> split_added(const std::string& text, const std::vector<const AddedToken*>& tokens);

}  // namespace prefix_scorer::tok
