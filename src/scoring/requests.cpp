#include "scoring/requests.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace prefix_scorer {
namespace {

constexpr int64_t kAbsurdLength = int64_t{1} << 24;  // 16M tokens: no model has such a window

}  // namespace

void check_token_ids(const TokenIds& ids, int64_t limit, const std::string& where, const char* range) {
  for (size_t pos = 0; pos < ids.size(); ++pos) {
    if (ids[pos] < 0 || ids[pos] >= limit)
      throw std::invalid_argument(
          fmt::format("{} token {} is id {}, outside {} [0, {})", where, pos, ids[pos], range, limit));
  }
}

void validate_requests(const std::vector<Request>& requests, int64_t vocab_size, int64_t output_vocab) {
  for (size_t i = 0; i < requests.size(); ++i) {
    const Request& r = requests[i];
    if (r.context.empty())
      throw std::invalid_argument(fmt::format(
          "request {}: empty context (put a prefix token such as BOS there to score from the start)", i));
    if (r.continuation.empty()) throw std::invalid_argument(fmt::format("request {}: empty continuation", i));
    check_token_ids(r.context, vocab_size, fmt::format("request {}: context", i));
    check_token_ids(r.continuation, vocab_size, fmt::format("request {}: continuation", i));
    if (output_vocab < vocab_size)
      check_token_ids(r.continuation, output_vocab, fmt::format("request {}: continuation", i),
                      "the ids the model's pruned output layer scores (output_vocab_size)");
  }
}

void validate_options(const ScoringOptions& o, const ModelConfig& config) {
  if (o.max_length < 0 || o.max_length > kAbsurdLength)
    throw std::invalid_argument(fmt::format("max_length must be in [0, {}], got {}", kAbsurdLength, o.max_length));
  if (config.learned_positions && config.window(o.max_length) > config.max_position_embeddings)
    throw std::invalid_argument(fmt::format("max_length {} is past the model's {} learned positions "
                                            "(max_position_embeddings); use at most that", o.max_length,
                                            config.max_position_embeddings));
  if (o.max_batch_tokens <= 0 || o.max_batch_tokens > kAbsurdLength * 64)
    throw std::invalid_argument(fmt::format("max_batch_tokens must be positive and sane, got {}", o.max_batch_tokens));
  if (o.max_batch_rows <= 0 || o.max_batch_rows > kAbsurdLength)
    throw std::invalid_argument(fmt::format("max_batch_rows must be positive and sane, got {}", o.max_batch_rows));
}

void check_dense_attention_limit(const ModelConfig& config, int64_t tokens, const std::string& what,
                                 const std::string& remedy) {
  const int64_t limit = config.dense_attention_limit;
  if (limit > 0 && tokens > limit)
    throw std::invalid_argument(fmt::format(
        "{}: {} tokens reach the model, but {}'s attention is served here as dense attention, which equals its own "
        "only while a query sees at most {} = {} keys; {}",
        what, tokens, config.model_type, config.dense_attention_limit_key, limit, remedy));
}

ScoringWindow scoring_window(const Request& request, int64_t max_length, size_t index) {
  const auto cont_len = static_cast<int64_t>(request.continuation.size());
  if (cont_len > max_length)
    throw std::invalid_argument(fmt::format("request {}: continuation of {} tokens does not fit max_length {}", index,
                                            cont_len, max_length));
  TokenIds all = request.context;
  all.insert(all.end(), request.continuation.begin(), request.continuation.end());
  const auto keep = std::min<int64_t>(static_cast<int64_t>(all.size()), max_length + 1);
  ScoringWindow window;
  window.truncated = keep < static_cast<int64_t>(all.size());
  window.input.assign(all.end() - keep, all.end() - 1);
  window.targets = request.continuation;
  return window;
}

}  // namespace prefix_scorer
