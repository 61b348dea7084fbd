#include "tokenizer/added_tokens.h"

#include "json_integer.h"
#include "tokenizer/bpe.h"
#include "tokenizer/unicode.h"

#include <fmt/format.h>

namespace prefix_scorer::tok {
namespace {

// The code point that ends at `end` (or starts at `begin`) in valid UTF-8, or -1 at the edge of the text.
int32_t code_point_before(const std::string& text, size_t end) {
  if (end == 0) return -1;
  size_t begin = end - 1;
  while (begin > 0 && (static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80) --begin;
  return code_points(text.substr(begin, end - begin)).front();
}

int32_t code_point_at(const std::string& text, size_t begin) {
  if (begin >= text.size()) return -1;
  size_t end = begin + 1;
  while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  return code_points(text.substr(begin, end - begin)).front();
}

bool is_word(int32_t c) { return c >= 0 && is_word_character(c); }

}  // namespace

std::vector<AddedToken> parse_added_tokens(const nlohmann::json& list) {
  std::vector<AddedToken> tokens;
  if (!list.is_array()) return tokens;
  for (const auto& t : list) {
    const std::string content = t.at("content").get<std::string>();
    const int64_t id = json_integer(t.at("id"), fmt::format("added token '{}': its id", content));
    if (id < 0 || id > kMaxTokenId)
      throw std::invalid_argument(fmt::format("added token '{}' has id {} outside [0, {}]", content, id, kMaxTokenId));
    tokens.push_back({id, content, content, t.value("single_word", false),
                      t.value("lstrip", false), t.value("rstrip", false), t.value("normalized", false),
                      t.value("special", false)});
  }
  return tokens;
}

std::vector<Segment> split_added(const std::string& text, const std::vector<const AddedToken*>& tokens) {
  std::vector<Segment> out;
  bool starts[256] = {};
  for (const AddedToken* t : tokens) {
    if (!t->match.empty()) starts[static_cast<unsigned char>(t->match[0])] = true;
  }
  size_t plain_begin = 0, at = 0;
  while (at < text.size() && !tokens.empty()) {
    if (!starts[static_cast<unsigned char>(text[at])]) {
      ++at;
      continue;
    }
    const AddedToken* best = nullptr;
    for (const AddedToken* t : tokens) {
      if (!t->match.empty() && text.compare(at, t->match.size(), t->match) == 0 &&
          (best == nullptr || t->match.size() > best->match.size()))
        best = t;
    }
    size_t end = best == nullptr ? at : at + best->match.size();
    if (best != nullptr && best->single_word && (is_word(code_point_before(text, at)) || is_word(code_point_at(text, end))))
      best = nullptr;
    if (best == nullptr) {
      ++at;
      continue;
    }
    size_t begin = at;
    if (best->lstrip) {
      while (begin > plain_begin && is_space(code_point_before(text, begin))) {
        const int32_t cp = code_point_before(text, begin);
        begin -= to_utf8(cp).size();
      }
    }
    if (best->rstrip) {
      while (end < text.size() && is_space(code_point_at(text, end))) end += to_utf8(code_point_at(text, end)).size();
    }
    if (begin > plain_begin) out.push_back({text.substr(plain_begin, begin - plain_begin), -1, plain_begin});
    out.push_back({text.substr(begin, end - begin), best->id, begin});
    plain_begin = at = end;
  }
  if (plain_begin < text.size()) out.push_back({text.substr(plain_begin), -1, plain_begin});
  return out;
}

}  // namespace prefix_scorer::tok
