#include "tokenizer/bpe.h"

#include "json_integer.h"
#include "tokenizer/unicode.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace prefix_scorer::tok {
namespace {

uint64_t pair_key(int64_t left, int64_t right) {
  return (static_cast<uint64_t>(left) << 32) | static_cast<uint64_t>(right);
}

constexpr size_t kCacheLimit = 200000;  // words; the cache starts over past this

}  // namespace

Bpe::Bpe(const nlohmann::json& model) {
  const std::string type = model.value("type", std::string("BPE"));
  if (type != "BPE") throw std::invalid_argument(fmt::format("unsupported tokenizer model type '{}' (supported: BPE)", type));
  if (!model.contains("vocab") || !model["vocab"].is_object())
    throw std::invalid_argument("tokenizer model has no vocab");
  if (!model.contains("merges") || !model["merges"].is_array())
    throw std::invalid_argument("tokenizer model has no merges");
  for (const char* field : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(field) && !model[field].is_null() && !model[field].get<std::string>().empty())
      throw std::invalid_argument(fmt::format("unsupported BPE option '{}'", field));
  }
  for (const auto& [token, id] : model["vocab"].items()) {
    const int64_t i = json_integer(id, fmt::format("vocab token '{}': its id", token));
    if (i < 0 || i > kMaxTokenId)
      throw std::invalid_argument(fmt::format("vocab token '{}' has id {} outside [0, {}]", token, i, kMaxTokenId));
    vocab_[token] = i;
    tokens_[i] = token;
    vocab_size_ = std::max(vocab_size_, i + 1);
  }
  int64_t rank = 0;
  for (const auto& merge : model["merges"]) {
    std::string left, right;
    if (merge.is_string()) {  // "a b"
      const std::string text = merge.get<std::string>();
      const size_t space = text.find(' ');
      if (space == std::string::npos) throw std::invalid_argument(fmt::format("malformed merge '{}'", text));
      left = text.substr(0, space);
      right = text.substr(space + 1);
    } else if (merge.is_array() && merge.size() == 2) {  // ["a", "b"]
      left = merge[0].get<std::string>();
      right = merge[1].get<std::string>();
    } else {
      throw std::invalid_argument(fmt::format("malformed merge {}", merge.dump()));
    }
    const auto l = vocab_.find(left), r = vocab_.find(right), m = vocab_.find(left + right);
    if (l == vocab_.end() || r == vocab_.end() || m == vocab_.end())
      throw std::invalid_argument(fmt::format("merge '{} {}' uses or makes a token outside the vocabulary", left, right));
    merges_.emplace(pair_key(l->second, r->second), std::make_pair(rank++, m->second));
  }
  if (model.contains("unk_token") && model["unk_token"].is_string()) {
    const auto it = vocab_.find(model["unk_token"].get<std::string>());
    if (it == vocab_.end()) throw std::invalid_argument("unk_token is not in the vocabulary");
    unk_ = it->second;
  }
  byte_fallback_ = model.value("byte_fallback", false);
  fuse_unk_ = model.value("fuse_unk", false);
  ignore_merges_ = model.value("ignore_merges", false);
}

std::optional<int64_t> Bpe::token_to_id(const std::string& token) const {
  const auto it = vocab_.find(token);
  return it == vocab_.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

const std::string* Bpe::id_to_token(int64_t id) const {
  const auto it = tokens_.find(id);
  return it == tokens_.end() ? nullptr : &it->second;
}

void Bpe::encode(const std::string& word, TokenIds& out) const {
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    const auto it = cache_.find(word);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  TokenIds ids = merge_word(word);
  out.insert(out.end(), ids.begin(), ids.end());
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() >= kCacheLimit) cache_.clear();
  cache_.emplace(word, std::move(ids));
}

TokenIds Bpe::merge_word(const std::string& word) const {
  if (ignore_merges_) {
    if (const auto id = token_to_id(word)) return {*id};
  }
  TokenIds symbols;
  for (const std::string& ch : characters(word)) {
    if (const auto id = token_to_id(ch)) {
      symbols.push_back(*id);
      continue;
    }
    bool bytes_known = byte_fallback_;
    TokenIds bytes;
    for (unsigned char b : ch) {
      const auto id = bytes_known ? token_to_id(fmt::format("<0x{:02X}>", b)) : std::nullopt;
      if (!id) {
        bytes_known = false;
        break;
      }
      bytes.push_back(*id);
    }
    if (bytes_known) {
      symbols.insert(symbols.end(), bytes.begin(), bytes.end());
    } else if (unk_) {
      if (!(fuse_unk_ && !symbols.empty() && symbols.back() == *unk_)) symbols.push_back(*unk_);
    } else {
      throw std::invalid_argument(fmt::format("character '{}' is not in the vocabulary, and there is no unk_token "
                                              "nor byte fallback", ch));
    }
  }
  // Apply the lowest-ranked merge present, leftmost first, until none applies.
  while (symbols.size() > 1) {
    int64_t best_rank = std::numeric_limits<int64_t>::max(), merged = -1;
    size_t best_at = 0;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      const auto it = merges_.find(pair_key(symbols[i], symbols[i + 1]));
      if (it != merges_.end() && it->second.first < best_rank) {
        best_rank = it->second.first;
        merged = it->second.second;
        best_at = i;
      }
    }
    if (merged < 0) break;
    symbols[best_at] = merged;
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best_at) + 1);
  }
  return symbols;
}

}  // namespace prefix_scorer::tok
