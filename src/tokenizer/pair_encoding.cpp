// lm-evaluation-harness's pair encoding (HF backend) over the native tokenizer.

#include "prefix_scorer/tokenizer.h"

#include "tokenizer/unicode.h"

#include <stdexcept>

namespace prefix_scorer {

int64_t prefix_token_id(const Tokenizer& tokenizer) {
  if (const auto bos = tokenizer.bos_token_id()) return *bos;
  if (const auto eos = tokenizer.eos_token_id()) return *eos;
  throw std::invalid_argument("the tokenizer has neither a BOS nor an EOS token to stand for an empty context");
}

Request encode_pair(const Tokenizer& tokenizer, const std::string& context, const std::string& continuation,
                    bool add_special_tokens) {
  // With special tokens, text that already starts with the BOS does not get a second one.
  auto encode = [&](const std::string& text) {
    TokenIds ids = tokenizer.encode(text, add_special_tokens);
    const auto bos = tokenizer.bos_token_id();
    if (add_special_tokens && bos && ids.size() >= 2 && ids[0] == *bos && ids[1] == *bos) ids.erase(ids.begin());
    return ids;
  };
  if (context.empty()) {  // lm-eval 0.4.13: the continuation without special tokens, after the prefix token
    TokenIds ids = tokenizer.encode(continuation, false);
    const int64_t prefix = prefix_token_id(tokenizer);
    if (ids.empty() || ids.front() != prefix) return {{prefix}, std::move(ids)};
    return {{prefix}, TokenIds(ids.begin() + 1, ids.end())};  // a continuation opening with it: that token is the context
  }
  // Python's str.rstrip(): the trailing whitespace of the context moves to the continuation.
  tok::check_utf8(context);
  const std::vector<int32_t> cps = tok::code_points(context);
  size_t keep = cps.size();
  while (keep > 0 && tok::is_space(cps[keep - 1])) --keep;
  std::string head;
  for (size_t i = 0; i < keep; ++i) head += tok::to_utf8(cps[i]);
  const std::string tail = context.substr(head.size());

  const TokenIds whole = encode(head + tail + continuation);
  TokenIds context_ids = encode(head);
  const size_t n = std::min(context_ids.size(), whole.size());
  return {std::move(context_ids), TokenIds(whole.begin() + static_cast<std::ptrdiff_t>(n), whole.end())};
}

}  // namespace prefix_scorer
