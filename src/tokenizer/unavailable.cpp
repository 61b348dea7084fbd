// The tokenizer's entry points in a build without PCRE2 and utf8proc: each says so. No Tokenizer can be made
// there, so only the factories and the free functions taking one are reachable.

#include "prefix_scorer/tokenizer.h"

#include <stdexcept>

namespace prefix_scorer {
namespace {

[[noreturn]] void unavailable() {
  throw std::runtime_error(
      "this build of prefix_scorer has no native tokenizer (PCRE2 and utf8proc were not found at configure "
      "time): rebuild with libpcre2-dev and libutf8proc-dev, or pass token ids");
}

}  // namespace

Tokenizer Tokenizer::from_file(const std::string&) { unavailable(); }
Tokenizer Tokenizer::from_json(const std::string&, const std::string&) { unavailable(); }
TokenIds Tokenizer::encode(const std::string&, bool) const { unavailable(); }
std::string Tokenizer::decode(const TokenIds&, bool) const { unavailable(); }
std::optional<int64_t> Tokenizer::token_to_id(const std::string&) const { unavailable(); }
std::optional<std::string> Tokenizer::id_to_token(int64_t) const { unavailable(); }
int64_t Tokenizer::vocab_size() const { unavailable(); }
std::optional<int64_t> Tokenizer::bos_token_id() const { unavailable(); }
std::optional<int64_t> Tokenizer::eos_token_id() const { unavailable(); }
bool Tokenizer::adds_special_tokens() const { unavailable(); }
Request encode_pair(const Tokenizer&, const std::string&, const std::string&, bool) { unavailable(); }
int64_t prefix_token_id(const Tokenizer&) { unavailable(); }

}  // namespace prefix_scorer
