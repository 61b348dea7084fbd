#pragma once
// A Hugging Face tokenizer.json read natively (BPE models: byte-level and byte-fallback), and the
// lm-evaluation-harness way of encoding (context, continuation) pairs.

#include "prefix_scorer/types.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace prefix_scorer {

class Tokenizer {
 public:
  // A tokenizer.json file, or a directory holding tokenizer.json (and, optionally, tokenizer_config.json for the
  // BOS and EOS tokens). Throws std::runtime_error when a file cannot be read and std::invalid_argument naming
  // what is malformed or unsupported.
  static Tokenizer from_file(const std::string& path);
  // tokenizer.json text, and optionally tokenizer_config.json text.
  static Tokenizer from_json(const std::string& tokenizer_json, const std::string& config_json = "");

  // Encodes UTF-8 text exactly as Hugging Face tokenizers does; with add_special_tokens, the post-processor's
  // template (a BOS, typically) is applied. Throws std::invalid_argument for invalid UTF-8.
  TokenIds encode(const std::string& text, bool add_special_tokens = false) const;
  std::string decode(const TokenIds& ids, bool skip_special_tokens = false) const;

  std::optional<int64_t> token_to_id(const std::string& token) const;
  std::optional<std::string> id_to_token(int64_t id) const;
  int64_t vocab_size() const;  // one past the largest id
  std::optional<int64_t> bos_token_id() const;
  std::optional<int64_t> eos_token_id() const;
  // Whether encode(text, true) adds tokens (whether the tokenizer's own default adds a BOS).
  bool adds_special_tokens() const;

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// lm-evaluation-harness's HF-backend pair encoding: trailing whitespace of the context moves to the front of the
// continuation; context + continuation is encoded whole and the context alone; the continuation is the whole
// encoding past the context's length. An empty context becomes the prefix token (BOS, else EOS) and the
// continuation is encoded alone without special tokens; when that encoding opens with the prefix token, the token
// is the context (lm-eval 0.4.13's rule). `add_special_tokens` is lm-eval's add_bos_token; text that already starts
// with the BOS token does not get a second one.
Request encode_pair(const Tokenizer& tokenizer, const std::string& context, const std::string& continuation,
                    bool add_special_tokens);

// The token an empty context becomes: BOS, else EOS; throws std::invalid_argument when the tokenizer has neither.
int64_t prefix_token_id(const Tokenizer& tokenizer);

}  // namespace prefix_scorer
