#include "generation/generation_call.h"

#include "generation/prompt_lookup.h"
#include "generation/running_batch.h"
#include "generation/sampling.h"
#include "model/cache/kv_cache.h"
#include "model/config/layer_spec.h"
#include "model/config/model_config.h"
#include "model/host_transfers.h"
#include "model/layers/mixer.h"
#include "prefix_scorer/errors.h"
#include "scoring/batching.h"
#include "scoring/call_prefixes.h"
#include "scoring/forward_segments.h"
#include "scoring/requests.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

namespace prefix_scorer {
namespace {

// The longest a request's sequence may grow.
int64_t longest_sequence(const GenerationRequest& r) { return static_cast<int64_t>(r.prompt.size()) + r.max_new_tokens; }

// The most memory a running batch of `rows` rows holds, their own caches growing to `slots` slots (every row is as
// wide as the widest: rows end at the same slot; the room is made for that many) and each step's queries also
// attending to a shared prefix of `shared` tokens by cascade (its keys and values held once, in the prefix cache).
int64_t running_bytes(const BatchMemory& memory, int64_t rows, int64_t slots, int64_t shared = 0) {
  return forward_bytes(memory, rows, 1, slots) + rows * shared * memory.bytes_per_score;
}

}  // namespace

void check_generation_requests(const Model& model, const BatchMemory& memory,
                               const std::vector<GenerationRequest>& requests) {
  const ModelConfig& c = model.config();
  for (size_t i = 0; i < requests.size(); ++i) {
    const GenerationRequest& r = requests[i];
    const std::string what = fmt::format("generate: request {}:", i);
    if (r.prompt.empty()) throw std::invalid_argument(fmt::format("{} the prompt is empty", what));
    check_token_ids(r.prompt, c.vocab_size, what);
    check_token_ids(r.stop_ids, c.vocab_size, what + " stop id");
    if (r.max_new_tokens < 1)
      throw std::invalid_argument(fmt::format("{} max_new_tokens must be >= 1, got {}", what, r.max_new_tokens));
    const int64_t longest = longest_sequence(r);
    if (longest > c.max_position_embeddings)
      throw std::invalid_argument(fmt::format("{} {} prompt tokens + max_new_tokens {} exceed the model's {} positions",
                                              what, r.prompt.size(), r.max_new_tokens, c.max_position_embeddings));
    check_dense_attention_limit(c, longest - 1, what.substr(0, what.size() - 1) + " (prompt and new tokens but the last)",
                                fmt::format("give at most {} prompt tokens and max_new_tokens together",
                                            c.dense_attention_limit + 1));
    check_sampling(r.sampling, what);
    const int64_t bytes = running_bytes(memory, 1, longest);
    if (memory.max_bytes > 0 && bytes > memory.max_bytes)
      throw std::invalid_argument(fmt::format("{} its {} tokens need {} bytes of keys, values and activations, more than "
                                              "max_batch_bytes {}", what, longest, bytes, memory.max_bytes));
  }
}

namespace {

// One prompt per scoring row: the position after its last token is the one scored first.
std::vector<ScoringRow> prompt_rows(const std::vector<GenerationRequest>& requests, const ModelConfig& config) {
  std::vector<ScoringRow> rows(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const TokenIds& prompt = requests[i].prompt;
    rows[i] = {prompt, 1, {i}, config.rope_variant(static_cast<int64_t>(prompt.size()))};
  }
  return rows;
}

// Generation caches prefixes only: scoring's packed trees have no place in it.
PrefixScorerOptions without_trees(PrefixScorerOptions options) {
  options.tree_max_branches = 0;
  return options;
}

// The most tokens a decode step feeds in all with drafts: past it a step's matmuls cost about their width on the
// CPU, so that rows gain more from their own tokens than from drafts (docs/performance.md, "Drafts: 3 by default").
constexpr int64_t kMostFedWithDrafts = 32;

// Cascade over the shared prefixes where it gives the model's numbers and the options ask for it at the depth
// of the call's prefixes; else each row gathers its prefix into its own cache.
bool decode_by_cascade(const Model& model, const PrefixScorerOptions& options, const ScoringPlan& plan) {
  if (!cascade_exact(model.spec()) || options.cascade_min_prefix_len < 0) return false;
  return std::any_of(plan.entries.begin(), plan.entries.end(),
                     [&](const PrefixEntryPlan& e) { return e.depth() >= options.cascade_min_prefix_len; });
}

class GenerationCall {
 public:
  GenerationCall(const Model& model, const PrefixScorerOptions& options, const BatchMemory& memory, PrefixCache& cache,
                 const std::vector<GenerationRequest>& requests, const StopHook& stop_hook, std::atomic<bool>& cancel)
      : model_(model),
        options_(without_trees(options)),
        requests_(requests),
        stop_hook_(stop_hook),
        cancel_(cancel),
        memory_(memory),
        rows_(prompt_rows(requests, model.config())),
        prefixes_(model, options_, memory_, cache, rows_, prefix_stats_),
        running_(model, decode_by_cascade(model, options_, prefixes_.plan())) {
    result_.generations.resize(requests.size());
    result_.stats.requests = static_cast<int64_t>(requests.size());
    for (const GenerationRequest& r : requests) token_budget_ += r.max_new_tokens;
  }

  GenerationResult run() {
    const TransferCounts before = thread_transfers();
    const int64_t copied_before = kv_bytes_copied();
    const size_t max_rows = static_cast<size_t>(std::max<int64_t>(1, options_.max_batch_rows));
    const size_t group = std::max<size_t>(1, max_rows / 4);
    while (next_ < plan_.order.size() || running_rows() > 0 || ready_) {
      if (cancel_.exchange(false))
        throw Cancelled(fmt::format("generate: cancelled with {} of {} requests done", done_, requests_.size()));
      const size_t free_rows = max_rows - running_rows(), waiting = plan_.order.size() - next_;
      // Join in groups (a prefill each), not one row per step as single rows stop; prompts prefilled ahead in an
      // earlier step join as soon as there is room for them, without a forward, and the next step prefills the
      // next ones ahead.
      if (ready_ && free_rows >= ready_->rows.size())
        join_ready();
      else if (!ready_ && waiting > 0 && free_rows >= std::min(waiting, group))
        admit(std::min(free_rows, waiting), /*ahead=*/false);
      else if (waiting > 0 && !ready_ && running_.prefills_in_step())
        admit(std::min(waiting, group), /*ahead=*/true);
      else
        step();
      if (options_.on_progress) options_.on_progress(result_.stats.generated_tokens, token_budget_);
    }
    result_.stats.prefix_tokens = prefix_stats_.prefill_tokens;
    result_.stats.bytes_to_device = thread_transfers().bytes_to_device - before.bytes_to_device;
    result_.stats.bytes_to_host = thread_transfers().bytes_to_host - before.bytes_to_host;
    result_.stats.kv_bytes_copied = kv_bytes_copied() - copied_before;
    return std::move(result_);
  }

 private:
  // Prefills the tails of up to `count` waiting prompts after their live prefixes and adds the rows that go on:
  // as many as max_batch_tokens allows their prefill and max_batch_bytes their running (at least one). `ahead`:
  // in the running rows' step, the rows kept ready to join when others leave.
  void admit(size_t count, bool ahead) {
    std::vector<size_t> joining;
    const Reach running = running_reach();
    int64_t longest_tail = 0, own_prompt = 0, most_new = 0, shared = running.shared;
    for (size_t k = next_; k < next_ + count; ++k) {
      const GenerationRequest& request = requests_[plan_.order[k].row];
      const auto prompt = static_cast<int64_t>(request.prompt.size());
      const int64_t depth = prefixes_.live().depth(plan_.order[k].entry);
      longest_tail = std::max(longest_tail, prompt - depth);
      // A row's own cache holds its prompt after the prefix by cascade, all of it by gather.
      own_prompt = std::max(own_prompt, running_.cascade() ? prompt - depth : prompt);
      most_new = std::max(most_new, request.max_new_tokens);
      if (running_.cascade()) shared = std::max(shared, depth);
      // Joining rows are padded in front to the running rows' slots (or they to theirs), then all grow together.
      const int64_t slots = std::max(running.slots, own_prompt) + std::max(running.more, most_new);
      const auto rows = static_cast<int64_t>(running_rows() + (ready_ ? ready_->rows.size() : 0) + joining.size() + 1);
      const bool fits = longest_tail * static_cast<int64_t>(joining.size() + 1) <= options_.max_batch_tokens &&
                        (memory_.max_bytes == 0 || running_bytes(memory_, rows, slots, shared) <= memory_.max_bytes);
      if (!fits && !(joining.empty() && running_rows() == 0)) break;
      joining.push_back(k);
    }
    if (joining.empty()) return step();
    prefixes_.prepare(joining, next_ + joining.size());
    next_ += joining.size();

    PromptTails prompts;
    for (size_t k : joining) {
      prompts.rope_variants.push_back(rows_[plan_.order[k].row].rope_variant);
      const int64_t e = prefixes_.deepest_live(plan_.order[k].entry);  // the cache may not hold the whole chain
      prompts.prefixes.push_back(e < 0 ? nullptr : prefixes_.live().held(e));
      const TokenIds& prompt = rows_[plan_.order[k].row].input;
      prompts.starts.push_back(prefixes_.live().depth(e));
      prompts.tails.emplace_back(prompt.begin() + prompts.starts.back(), prompt.end());
      result_.stats.prefill_tokens += static_cast<int64_t>(prompts.tails.back().size());
      prompts.most_new_tokens = std::max(prompts.most_new_tokens, requests_[plan_.order[k].row].max_new_tokens);
    }
    // With the running rows' next step where it can: a step's matmuls cost about their weights' reading on the
    // CPU, and the tails' share it (docs/performance.md, "Prompts join in a step").
    JoiningRows joined{at::Tensor(), KvCache(model_.config().num_layers)};
    if (running_.prefills_in_step()) {
      step(running_, &prompts, &joined);
      result_.stats.joined_in_steps += static_cast<int64_t>(joining.size());
    } else {
      joined = running_.prefill(prompts);
      count_forward(result_.stats.prefill_forwards, running_.cascade());
    }
    prefixes_.release(joining);

    std::vector<RunningRow> rows;
    for (size_t i = 0; i < joining.size(); ++i) {
      const size_t request = plan_.order[joining[i]].row;
      rows.push_back({request, static_cast<int64_t>(rows_[request].input.size()), 0, at::Generator(),
                      running_.cascade() ? prompts.prefixes[i] : nullptr, prompts.rope_variants[i]});
    }
    if (ahead)
      ready_.emplace(Ready{std::move(joined), std::move(rows)});
    else
      join(joined, std::move(rows));
    switch_to_long_factors();
  }

  // The rows prefilled ahead join.
  void join_ready() {
    Ready ready = std::move(*ready_);
    ready_.reset();
    join(ready.joined, std::move(ready.rows));
    switch_to_long_factors();
  }

  // Counts a forward by its kind, and as a cascade forward where it attended to shared prefixes by cascade.
  void count_forward(int64_t& kind, bool by_cascade) {
    ++kind;
    if (by_cascade) ++result_.stats.cascade_forwards;
  }

  // How far the running rows (and those ready to join) will take their cache: its slots now, the most tokens any of
  // them may still feed, and the deepest prefix they attend to by cascade.
  struct Reach {
    int64_t slots = 0, more = 0, shared = 0;
  };
  Reach running_reach() const {
    Reach reach{running_.cache().slots(), 0, 0};
    auto add = [&](const RunningRow& row) {
      reach.more = std::max(reach.more, still_to_generate(row));
      if (row.prefix) reach.shared = std::max(reach.shared, row.prefix->depth());
    };
    for (const RunningRow& row : running_.rows()) add(row);
    if (ready_) {
      reach.slots = std::max(reach.slots, ready_->joined.cache.slots());
      for (const RunningRow& row : ready_->rows) add(row);
    }
    return reach;
  }

  // Picks each prefilled row's next token and adds the rows that go on to the running batch.
  void join(JoiningRows& joined, std::vector<RunningRow> rows) {
    std::vector<int64_t> going_on;
    std::vector<RunningRow> staying;
    const std::vector<TokenChoice> chosen = choose_tokens(joined.logprobs, samplers(rows));
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!advance(rows[i], chosen[i])) {
        going_on.push_back(static_cast<int64_t>(i));
        staying.push_back(std::move(rows[i]));
      }
    }
    joined.cache.keep_rows(going_on);
    running_.add(joined.cache, std::move(staying));
    int64_t most_fed = 0;  // by any row from here on (a draft's rejected tokens take slots too, past this room)
    for (const RunningRow& row : running_.rows()) most_fed = std::max(most_fed, still_to_generate(row));
    running_.reserve(most_fed);
  }

  size_t running_rows() const { return running_.size(); }

  // One token for every running row, in one forward; the rows that stop leave.
  void step() {
    step(running_);
    switch_to_long_factors();
  }

  // One step of every running row: its last token, and its draft where it has one; each row keeps the tokens the
  // model chose while its draft agreed with them, and the rows that stop leave. With `joining`, those prompts'
  // prefill runs in the step's forward (a prefill forward then), into `joined`.
  void step(RunningBatch& batch, const PromptTails* joining = nullptr, JoiningRows* joined = nullptr) {
    if (batch.empty()) return;
    result_.stats.max_rows = std::max(result_.stats.max_rows, static_cast<int64_t>(batch.size()));
    const std::vector<TokenIds> drafts = draft_tokens(batch);
    const std::vector<RowSampler> by_row = samplers(batch.rows());
    std::vector<RowSampler> per_position;  // a row's sampler for each token it feeds (only greedy rows have drafts)
    for (size_t i = 0; i < batch.size(); ++i)
      per_position.insert(per_position.end(), 1 + (drafts.empty() ? 0 : drafts[i].size()), by_row[i]);
    const std::vector<TokenChoice> chosen = choose_tokens(batch.step(drafts, joining, joined), per_position);
    count_forward(joining != nullptr ? result_.stats.prefill_forwards : result_.stats.decode_forwards, batch.cascade());
    std::vector<int64_t> going_on;
    size_t first = 0;  // row i's first chosen token
    for (size_t i = 0; i < batch.size(); ++i) {
      RunningRow& row = batch.rows()[i];
      const TokenIds none, &draft = drafts.empty() ? none : drafts[i];
      result_.stats.draft_tokens += static_cast<int64_t>(draft.size());
      size_t fed = 0;  // tokens of this step the row keeps: its last one and the draft tokens agreed with
      bool stops = false;
      while (true) {
        const TokenChoice& next = chosen[first + fed];
        ++row.position;
        ++fed;
        stops = advance(row, next);
        if (stops || fed > draft.size() || next.token != draft[fed - 1]) break;
        ++result_.stats.accepted_draft_tokens;
      }
      first += 1 + draft.size();
      if (!stops) {
        batch.keep_fed(i, static_cast<int64_t>(fed));
        going_on.push_back(static_cast<int64_t>(i));
      }
    }
    batch.keep(going_on);
  }

  // Each running row's draft (prompt_lookup.h): greedy rows only, of at most max_draft_tokens, of fewer than the
  // tokens the row may still generate, and short enough that the step feeds at most kMostFedWithDrafts tokens; none
  // at all for a model whose layers keep a state or whose rope changes with the length. The slots a rejected draft
  // leaves invalid stay in the cache: drafts are shortened (to none) where the step's wider forward, or the cache at
  // the end of every row's remaining tokens, would no longer fit max_batch_bytes (its room doubled: rejected drafts
  // take slots past the room made for the rows' tokens). Empty: no drafts.
  std::vector<TokenIds> draft_tokens(const RunningBatch& batch) const {
    if (options_.max_draft_tokens < 1 || model_.spec().has_recurrent_layers() ||
        model_.config().rope.type == RopeType::kLongRope)
      return {};
    int64_t remaining = 0;
    for (const RunningRow& row : batch.rows()) remaining = std::max(remaining, still_to_generate(row));
    const int64_t rows = batch.cache().rows(), slots = batch.cache().slots();
    int64_t most = std::min(options_.max_draft_tokens, kMostFedWithDrafts / rows - 1);
    while (most > 0 && !within_memory(memory_, rows, 1 + most, 2 * (slots + most + remaining))) --most;
    if (most < 1) return {};
    std::vector<TokenIds> drafts;
    bool any = false;
    for (const RunningRow& row : batch.rows()) {
      const bool greedy = requests_[row.request].sampling.greedy;
      drafts.push_back(greedy ? lookup_draft(rows_[row.request].input, result_.generations[row.request].tokens,
                                             std::min(most, still_to_generate(row) - 1))
                              : TokenIds());
      any = any || !drafts.back().empty();
    }
    return any ? drafts : std::vector<TokenIds>();
  }

  int64_t still_to_generate(const RunningRow& row) const {
    return requests_[row.request].max_new_tokens - static_cast<int64_t>(result_.generations[row.request].tokens.size());
  }

  // transformers' Phi-3 drops its cache when a sequence first grows past original_max_position_embeddings and runs
  // it again whole on the long factors; rows do the same, in one prefill on rope variant 1 without a shared prefix,
  // and stay on it.
  void switch_to_long_factors() {
    if (model_.config().rope.type != RopeType::kLongRope) return;
    std::vector<int64_t> staying;
    std::vector<RunningRow> crossing;
    std::vector<TokenIds> sequences;
    for (size_t i = 0; i < running_.size(); ++i) {
      RunningRow& row = running_.rows()[i];
      if (row.rope_variant == 1 || !model_.config().long_rope(row.position + 1)) {
        staying.push_back(static_cast<int64_t>(i));
        continue;
      }
      TokenIds sequence = rows_[row.request].input;
      const TokenIds& generated = result_.generations[row.request].tokens;
      sequence.insert(sequence.end(), generated.begin(), generated.end());
      result_.stats.prefill_tokens += static_cast<int64_t>(sequence.size());
      row.position = static_cast<int64_t>(sequence.size());
      row.prefix = nullptr;
      row.rope_variant = 1;
      sequences.push_back(std::move(sequence));
      crossing.push_back(std::move(row));
    }
    if (crossing.empty()) return;
    running_.keep(staying);
    // In forwards within max_batch_tokens (rows x longest; one row always runs).
    for (size_t begin = 0; begin < crossing.size();) {
      size_t end = begin + 1;
      int64_t longest = static_cast<int64_t>(sequences[begin].size());
      while (end < crossing.size()) {
        const int64_t wider = std::max(longest, static_cast<int64_t>(sequences[end].size()));
        if (wider * static_cast<int64_t>(end - begin + 1) > options_.max_batch_tokens) break;
        longest = wider;
        ++end;
      }
      const std::vector<TokenIds> part(sequences.begin() + begin, sequences.begin() + end);
      std::vector<RunningRow> rows(std::make_move_iterator(crossing.begin() + begin),
                                   std::make_move_iterator(crossing.begin() + end));
      int64_t most_new_tokens = 0;
      for (const RunningRow& row : rows) most_new_tokens = std::max(most_new_tokens, still_to_generate(row));
      JoiningRows joined = running_.prefill({std::vector<EntryPtr>(part.size()), part, std::vector<int64_t>(part.size(), 0),
                                             std::vector<int64_t>(part.size(), 1), most_new_tokens});
      count_forward(result_.stats.prefill_forwards, /*by_cascade=*/false);
      join(joined, std::move(rows));
      begin = end;
    }
  }

  std::vector<RowSampler> samplers(std::vector<RunningRow>& rows) const {
    std::vector<RowSampler> out;
    for (RunningRow& row : rows) out.push_back({&requests_[row.request].sampling, &row.generator});
    return out;
  }

  // Records the row's next token; returns whether the row stops there.
  bool advance(RunningRow& row, const TokenChoice& chosen) {
    const GenerationRequest& request = requests_[row.request];
    Generation& out = result_.generations[row.request];
    row.last_token = chosen.token;
    out.tokens.push_back(row.last_token);
    out.logprobs.push_back(chosen.logprob);
    ++result_.stats.generated_tokens;
    bool stop = true;
    if (std::find(request.stop_ids.begin(), request.stop_ids.end(), row.last_token) != request.stop_ids.end())
      out.finish = FinishReason::kStopId;
    else if (stop_hook_ && stop_hook_(row.request, out.tokens))
      out.finish = FinishReason::kStopHook;
    else if (static_cast<int64_t>(out.tokens.size()) >= request.max_new_tokens)
      out.finish = FinishReason::kMaxNewTokens;
    else
      stop = false;
    if (stop) {
      ++done_;
      token_budget_ -= request.max_new_tokens - static_cast<int64_t>(out.tokens.size());
    }
    return stop;
  }

  const Model& model_;
  const PrefixScorerOptions options_;
  const std::vector<GenerationRequest>& requests_;
  const StopHook& stop_hook_;
  std::atomic<bool>& cancel_;
  const BatchMemory memory_;
  const std::vector<ScoringRow> rows_;
  ScoringStats prefix_stats_;  // what prefilling the shared prefixes took
  CallPrefixes prefixes_;
  const ScoringPlan& plan_ = prefixes_.plan();
  RunningBatch running_;
  // Prompts prefilled ahead (in a step of the running rows) that join when rows leave.
  struct Ready {
    JoiningRows joined;
    std::vector<RunningRow> rows;
  };
  std::optional<Ready> ready_;
  size_t next_ = 0;            // the first waiting prompt, in plan order
  size_t done_ = 0;
  int64_t token_budget_ = 0;   // the tokens the call will have generated: max_new_tokens, less what stopped rows left
  GenerationResult result_;
};

}  // namespace

GenerationResult run_generation(const Model& model, const PrefixScorerOptions& options, const BatchMemory& memory,
                                PrefixCache& cache, const std::vector<GenerationRequest>& requests,
                                const StopHook& stop_hook, std::atomic<bool>& cancel) {
  return GenerationCall(model, options, memory, cache, requests, stop_hook, cancel).run();
}

}  // namespace prefix_scorer
