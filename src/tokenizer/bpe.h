#pragma once
// The BPE model of a tokenizer.json: vocabulary, ranked merges, byte fallback, and a cache per word.

#include "prefix_scorer/types.h"

#include <nlohmann/json.hpp>

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace prefix_scorer::tok {

// Token ids are below 2^31, as Hugging Face's u32 ids are in practice (merges pack two ids in 64 bits).
constexpr int64_t kMaxTokenId = (int64_t{1} << 31) - 1;

class Bpe {
 public:
  // Throws std::invalid_argument for a missing vocabulary or merges, or a merge whose parts are unknown.
  explicit Bpe(const nlohmann::json& model);

  // Appends the ids of one pre-tokenized word.
  void encode(const std::string& word, TokenIds& out) const;

  std::optional<int64_t> token_to_id(const std::string& token) const;
  const std::string* id_to_token(int64_t id) const;
  int64_t vocab_size() const { return vocab_size_; }  // one past the largest id

 private:
  TokenIds merge_word(const std::string& word) const;

  std::unordered_map<std::string, int64_t> vocab_;
  std::unordered_map<int64_t, std::string> tokens_;  // by id (ids may be sparse)
  int64_t vocab_size_ = 0;
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> merges_;  // (left, right) -> (rank, merged id)
  std::optional<int64_t> unk_;
  bool byte_fallback_ = false, fuse_unk_ = false, ignore_merges_ = false;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, TokenIds> cache_;
};

}  // namespace prefix_scorer::tok
