#include "generation/running_batch.h"

#include "model/forward_batch.h"
#include "model/model_config.h"
#include "scoring/batching.h"
#include "scoring/prefix_kv.h"

#include <algorithm>

namespace prefix_scorer {
namespace {

std::vector<const PrefixEntry*> pointers(const std::vector<EntryPtr>& entries) {
  std::vector<const PrefixEntry*> out;
  for (const EntryPtr& e : entries) out.push_back(e.get());
  return out;
}

}  // namespace

RunningBatch::RunningBatch(const Model& model, bool cascade)
    : model_(model), cascade_(cascade), cache_(model.config().num_layers) {
  cache_.grow_in_place();
}

JoiningRows RunningBatch::prefill(const std::vector<EntryPtr>& prefixes, const std::vector<TokenIds>& tails,
                                  const std::vector<int64_t>& starts, const std::vector<int64_t>& rope_variants) const {
  std::vector<const TokenIds*> rows;
  for (const TokenIds& t : tails) rows.push_back(&t);
  const ForwardBatch batch = make_batch(rows, starts, rope_variants);
  std::vector<int64_t> last;
  for (size_t i = 0; i < tails.size(); ++i)
    last.push_back(static_cast<int64_t>(i) * batch.tokens.size(1) + static_cast<int64_t>(tails[i].size()) - 1);
  const at::Tensor score_rows = at::tensor(last, at::kLong);
  if (cascade_) {
    KvCache own(model_.config().num_layers);
    const std::optional<SharedPrefixes> shared = distinct_prefix_kv(model_, pointers(prefixes));
    at::Tensor logprobs = model_.forward(batch, &own, score_rows, shared ? &*shared : nullptr);
    return {std::move(logprobs), std::move(own)};
  }
  KvCache gathered = gather_prefix_kv(model_, pointers(prefixes));
  at::Tensor logprobs = model_.forward(batch, &gathered, score_rows);
  return {std::move(logprobs), std::move(gathered)};
}

void RunningBatch::add(const KvCache& cache, std::vector<RunningRow> rows) {
  cache_.add_rows(cache);
  for (RunningRow& row : rows) rows_.push_back(std::move(row));
  update_shared();
}

void RunningBatch::keep(const std::vector<int64_t>& going_on) {
  if (going_on.size() == rows_.size()) return;
  cache_.keep_rows(going_on);
  std::vector<RunningRow> kept;
  for (int64_t i : going_on) kept.push_back(std::move(rows_[i]));
  rows_ = std::move(kept);
  update_shared();
}

at::Tensor RunningBatch::step() {
  const auto b = static_cast<int64_t>(rows_.size());
  std::vector<int64_t> tokens, positions, variants;
  for (const RunningRow& row : rows_) {
    tokens.push_back(row.last_token);
    positions.push_back(row.position);
    variants.push_back(row.rope_variant);
  }
  ForwardBatch batch;
  batch.tokens = at::tensor(tokens, at::kLong).view({b, 1});
  batch.positions = at::tensor(positions, at::kLong).view({b, 1});
  batch.valid = at::ones({b, 1}, at::kBool);
  if (std::any_of(variants.begin(), variants.end(), [](int64_t v) { return v != 0; }))
    batch.rope_variant = at::tensor(variants, at::kLong);
  return model_.forward(batch, &cache_, at::arange(b, at::kLong), shared_ ? &*shared_ : nullptr);
}

void RunningBatch::update_shared() {
  if (!cascade_) return;
  std::vector<const PrefixEntry*> distinct;
  for (const RunningRow& row : rows_) {
    if (std::find(distinct.begin(), distinct.end(), row.prefix.get()) == distinct.end()) distinct.push_back(row.prefix.get());
  }
  std::vector<const PrefixEntry*> sorted = distinct, held = distinct_;
  std::sort(sorted.begin(), sorted.end());
  std::sort(held.begin(), held.end());
  if (sorted != held) {  // a prefix came or went: stack the distinct ones again
    std::vector<const PrefixEntry*> per_row;
    for (const RunningRow& row : rows_) per_row.push_back(row.prefix.get());
    shared_ = distinct_prefix_kv(model_, per_row);
    distinct_ = distinct;  // distinct_prefix_kv orders them by first appearance, as here
    return;
  }
  if (!shared_) return;  // no row has a prefix
  std::vector<int64_t> pick;
  for (const RunningRow& row : rows_)
    pick.push_back(std::find(distinct_.begin(), distinct_.end(), row.prefix.get()) - distinct_.begin());
  shared_->row_prefix = at::tensor(pick, at::kLong);
}

}  // namespace prefix_scorer
