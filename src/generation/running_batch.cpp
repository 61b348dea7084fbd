#include "generation/running_batch.h"

#include "model/config/layer_spec.h"
#include "model/config/model_config.h"
#include "model/forward_batch.h"
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

RunningBatch::PrefillForward RunningBatch::prefill_forward(const PromptTails& prompts) const {
  std::vector<const TokenIds*> rows;
  for (const TokenIds& t : prompts.tails) rows.push_back(&t);
  PrefillForward f{make_batch(rows, prompts.starts, prompts.rope_variants), {}, KvCache(model_.config().num_layers), {}};
  std::vector<int64_t> last;
  for (size_t i = 0; i < prompts.tails.size(); ++i)
    last.push_back(static_cast<int64_t>(i) * f.batch.tokens.size(1) + static_cast<int64_t>(prompts.tails[i].size()) - 1);
  f.score_rows = at::tensor(last, at::kLong);
  if (cascade_)
    f.shared = distinct_prefix_kv(model_, pointers(prompts.prefixes));
  else
    f.cache = gather_prefix_kv(model_, pointers(prompts.prefixes));
  f.cache.grow_in_place();
  f.cache.reserve(f.cache.slots() + f.batch.tokens.size(1) + prompts.most_new_tokens);
  return f;
}

JoiningRows RunningBatch::prefill(const PromptTails& prompts) const {
  PrefillForward f = prefill_forward(prompts);
  at::Tensor logprobs = model_.forward(f.batch, &f.cache, f.score_rows, f.shared ? &*f.shared : nullptr);
  return {std::move(logprobs), std::move(f.cache)};
}

bool RunningBatch::prefills_in_step() const { return !rows_.empty() && model_.packs_real_tokens(); }

void RunningBatch::add(const KvCache& cache, std::vector<RunningRow> rows) {
  if (rows.empty()) return;
  if (rows.size() <= vacant_.size() && cache.slots() <= cache_.slots()) {  // into vacant rows, in place
    const std::vector<int64_t> into(vacant_.begin(), vacant_.begin() + static_cast<std::ptrdiff_t>(rows.size()));
    cache_.place_rows(cache, into);
    vacant_.erase(vacant_.begin(), vacant_.begin() + static_cast<std::ptrdiff_t>(rows.size()));
    cache_row_.insert(cache_row_.end(), into.begin(), into.end());
  } else {
    if (!vacant_.empty()) compact();
    for (int64_t r = 0; r < cache.rows(); ++r) cache_row_.push_back(cache_.rows() + r);
    cache_.add_rows(cache);
  }
  for (RunningRow& row : rows) rows_.push_back(std::move(row));
  update_shared();
}

void RunningBatch::keep(const std::vector<int64_t>& going_on) {
  if (going_on.size() == rows_.size()) return;
  std::vector<RunningRow> kept;
  std::vector<int64_t> kept_in;
  std::vector<bool> stays(rows_.size(), false);
  for (int64_t i : going_on) {
    kept.push_back(std::move(rows_[i]));
    kept_in.push_back(cache_row_[i]);
    stays[i] = true;
  }
  for (size_t i = 0; i < rows_.size(); ++i)
    if (!stays[i]) vacant_.push_back(cache_row_[i]);
  rows_ = std::move(kept);
  cache_row_ = std::move(kept_in);
  if (2 * vacant_.size() > rows_.size()) compact();
  update_shared();
}

void RunningBatch::compact() {
  if (rows_.empty()) {
    cache_ = KvCache(model_.config().num_layers);
  } else {
    cache_.keep_rows(cache_row_);
  }
  cache_.grow_in_place();
  for (size_t i = 0; i < cache_row_.size(); ++i) cache_row_[i] = static_cast<int64_t>(i);
  vacant_.clear();
}

at::Tensor RunningBatch::step(const std::vector<TokenIds>& drafts, const PromptTails* joining, JoiningRows* joined) {
  // Every cache row steps; a vacant one, and the slots a shorter draft leaves, on token 0 at position 0, as padding.
  if (!drafts.empty() && model_.spec().has_recurrent_layers())
    throw std::logic_error("RunningBatch::step: drafts for a model whose layers keep a state, which cannot take them back");
  const int64_t b = cache_.rows();
  int64_t width = 1;
  for (const TokenIds& d : drafts) width = std::max(width, 1 + static_cast<int64_t>(d.size()));
  std::vector<int64_t> tokens(b * width, 0), positions(b * width, 0), variants(b, 0), scored;
  std::vector<uint8_t> valid(b * width, 0);
  for (size_t i = 0; i < rows_.size(); ++i) {
    const int64_t r = cache_row_[i];
    const TokenIds none, &draft = drafts.empty() ? none : drafts[i];
    for (int64_t j = 0; j <= static_cast<int64_t>(draft.size()); ++j) {
      tokens[r * width + j] = j == 0 ? rows_[i].last_token : draft[j - 1];
      positions[r * width + j] = rows_[i].position + j;
      valid[r * width + j] = 1;
      scored.push_back(r * width + j);
    }
    variants[r] = rows_[i].rope_variant;
  }
  step_width_ = width;
  ForwardBatch batch;
  batch.tokens = at::tensor(tokens, at::kLong).view({b, width});
  batch.positions = at::tensor(positions, at::kLong).view({b, width});
  const bool all_valid = std::all_of(valid.begin(), valid.end(), [](uint8_t v) { return v != 0; });
  batch.valid = all_valid ? at::ones({b, width}, at::kBool) : at::tensor(valid, at::kByte).view({b, width}).to(at::kBool);
  if (std::any_of(variants.begin(), variants.end(), [](int64_t v) { return v != 0; }))
    batch.rope_variant = at::tensor(variants, at::kLong);
  const at::Tensor score_rows = at::tensor(scored, at::kLong);
  if (joining == nullptr) return model_.forward(batch, &cache_, score_rows, shared_ ? &*shared_ : nullptr);
  if (!prefills_in_step()) throw std::logic_error("RunningBatch::step: a prefill in a step this batch cannot take");
  PrefillForward f = prefill_forward(*joining);
  std::vector<at::Tensor> out =
      model_.forward_together({{&batch, &cache_, score_rows, shared_ ? &*shared_ : nullptr},
                               {&f.batch, &f.cache, f.score_rows, f.shared ? &*f.shared : nullptr}});
  *joined = {std::move(out[1]), std::move(f.cache)};
  return std::move(out[0]);
}

void RunningBatch::keep_fed(size_t i, int64_t kept) { cache_.invalidate_last_slots(cache_row_[i], step_width_ - kept); }

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
    shared_ = distinct_prefix_kv(model_, distinct);
    distinct_ = distinct;  // distinct_prefix_kv orders them by first appearance, as here
  }
  if (!shared_) return;  // no row has a prefix
  // Each cache row's prefix; a vacant row takes the first, its output unread.
  std::vector<int64_t> pick(cache_.rows(), 0);
  for (size_t i = 0; i < rows_.size(); ++i)
    pick[cache_row_[i]] = std::find(distinct_.begin(), distinct_.end(), rows_[i].prefix.get()) - distinct_.begin();
  shared_->row_prefix = at::tensor(pick, at::kLong);
}

}  // namespace prefix_scorer
