// Generation against the plain full-forward path: each prompt alone, its whole sequence run again for every new
// token, the argmax of the last position taken. The prefix path (shared prefixes cached, continuous batching,
// rows joining and leaving) must give the same tokens on every fixture family.

#include "generation/prompt_lookup.h"
#include "generation/running_batch.h"
#include "generation/sampling.h"
#include "model/config/layer_spec.h"
#include "model/config/model_config.h"
#include "model/layers/mixer.h"
#include "test_support.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace prefix_scorer::test {
namespace {

// Greedy tokens of `prompt` by full forwards, until `max_new_tokens` or the first of `stop_ids`, with each one's
// log-probability in `logprobs` when given.
TokenIds greedy_alone(const Model& model, const TokenIds& prompt, int64_t max_new_tokens, const TokenIds& stop_ids = {},
                      std::vector<double>* logprobs = nullptr) {
  TokenIds sequence = prompt, generated;
  while (static_cast<int64_t>(generated.size()) < max_new_tokens) {
    const at::Tensor last = full_logprobs(model, sequence)[-1];
    const int64_t token = last.argmax().item<int64_t>();
    if (logprobs != nullptr) logprobs->push_back(last[token].item<double>());
    generated.push_back(token);
    sequence.push_back(token);
    if (std::find(stop_ids.begin(), stop_ids.end(), token) != stop_ids.end()) break;
  }
  return generated;
}

// Five prompts: four after one 16-token prefix with tails of 1 to 7 tokens, one on its own; each wants 3 to 8
// new tokens (every sequence stays within 40 tokens, below the longrope fixtures' switch).
std::vector<GenerationRequest> prompts_of(const Model& model, const std::string& name) {
  const TokenIds context = expected_scores(name).front().request.context;
  const int64_t vocab = model.config().vocab_size;
  TokenIds prefix;
  for (int64_t i = 0; i < 16; ++i) prefix.push_back(context[i % context.size()]);
  std::vector<GenerationRequest> requests;
  for (int64_t r = 0; r < 5; ++r) {
    GenerationRequest q;
    q.prompt = r < 4 ? prefix : TokenIds{context.back()};
    for (int64_t i = 0; i < 1 + 2 * (r % 4); ++i) q.prompt.push_back((7 + 31 * r + 13 * i) % vocab);
    q.max_new_tokens = 3 + (r * 5) % 6;
    requests.push_back(q);
  }
  return requests;
}

PrefixScorerOptions small_batches() {
  PrefixScorerOptions options;
  options.min_prefix_len = 4;
  options.max_batch_rows = 3;  // five prompts: rows must leave before the last ones join
  return options;
}

class Generation : public testing::TestWithParam<std::string> {};

// A row that stops leaves its cache row vacant and a joining row is written there: the others' keys and values stay
// where they were (the same storage, no row copied), and every row's next log-probabilities are those of its
// sequence alone.
class RunningRows : public testing::TestWithParam<std::string> {};

// On an attention model, and on one with recurrent layers (whose rows' states are replaced at each step, and
// written into a vacant row like its keys and values).
TEST_P(RunningRows, LeaveAndJoinWithoutCopyingTheOthers) {
  const Model model = Model::load(model_dir(GetParam()));
  const int64_t vocab = model.config().vocab_size;
  RunningBatch batch(model, /*cascade=*/false);
  std::vector<TokenIds> sequences;
  auto join = [&](const std::vector<TokenIds>& prompts) {
    const JoiningRows joined = batch.prefill({std::vector<EntryPtr>(prompts.size()), prompts,
                                              std::vector<int64_t>(prompts.size(), 0), std::vector<int64_t>(prompts.size(), 0)});
    std::vector<RunningRow> rows;
    for (const TokenIds& p : prompts) {
      rows.push_back({sequences.size(), static_cast<int64_t>(p.size()) - 1, p.back(), at::Generator(), nullptr, 0});
      sequences.push_back(p);
    }
    batch.add(joined.cache, std::move(rows));
  };
  // One step: each row fed a token of its own; its log-probabilities against its whole sequence's full forward.
  auto step_and_check = [&](const std::string& when) {
    for (RunningRow& row : batch.rows()) {
      row.last_token = (row.position * 7 + 3) % vocab;
      ++row.position;
      sequences[row.request].push_back(row.last_token);
    }
    const at::Tensor got = batch.step();
    ASSERT_EQ(got.size(0), static_cast<int64_t>(batch.size())) << when;
    for (size_t i = 0; i < batch.size(); ++i) {
      const at::Tensor want = full_logprobs(model, sequences[batch.rows()[i].request])[-1];
      EXPECT_LT((got[static_cast<int64_t>(i)] - want).abs().max().item<double>(), 1e-5) << when << ", row " << i;
    }
  };
  join({{5, 9, 2, 7, 1}, {3, 8}, {4, 4, 6, 1, 2, 9, 9}});
  step_and_check("three rows");

  // A step with drafts: each row's token and two draft tokens fed at once, a log-probability row after each against
  // its sequence's full forward; then row i keeps its token and i of its draft tokens, and the next step sees only
  // those (the rejected ones' slots never attended to again).
  if (model.spec().has_recurrent_layers()) {  // a state cannot take back tokens: no drafts (see draft_tokens)
    EXPECT_THROW(batch.step({{1}, {1}, {1}}), std::logic_error);
    return;
  }
  std::vector<TokenIds> drafts;
  for (RunningRow& row : batch.rows()) {
    row.last_token = (row.position * 5 + 2) % vocab;
    ++row.position;
    drafts.push_back({(row.position * 3 + 1) % vocab, (row.position * 11 + 4) % vocab});
  }
  const at::Tensor drafted = batch.step(drafts);
  ASSERT_EQ(drafted.size(0), 3 * static_cast<int64_t>(batch.size()));
  for (size_t i = 0; i < batch.size(); ++i) {
    RunningRow& row = batch.rows()[i];
    TokenIds fed = sequences[row.request];
    fed.push_back(row.last_token);
    for (size_t j = 0; j < 3; ++j) {
      const at::Tensor want = full_logprobs(model, fed)[-1];
      EXPECT_LT((drafted[static_cast<int64_t>(3 * i + j)] - want).abs().max().item<double>(), 1e-5)
          << "drafted step, row " << i << ", position " << j;
      if (j < 2) fed.push_back(drafts[i][j]);
    }
    const auto kept = static_cast<int64_t>(i) + 1;  // its token and i draft tokens
    sequences[row.request].push_back(row.last_token);
    for (int64_t j = 0; j + 1 < kept; ++j) sequences[row.request].push_back(drafts[i][j]);
    row.position += kept - 1;
    batch.keep_fed(i, kept);
  }
  step_and_check("after a drafted step");
  int64_t attention = 0;  // the first layer keeping keys and values
  while (batch.cache().layer(attention).slotted.empty()) ++attention;
  const void* storage = batch.cache().layer(attention).keys().data_ptr();

  batch.keep({0, 2});  // the middle row stops
  EXPECT_EQ(batch.cache().rows(), 3);
  EXPECT_EQ(batch.cache().layer(attention).keys().data_ptr(), storage);
  step_and_check("after a row left");

  join({{6, 1, 3}});  // shorter than the cache: written into the vacant row
  EXPECT_EQ(batch.cache_rows(), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(batch.cache().layer(attention).keys().data_ptr(), storage);
  step_and_check("after a row joined");

  batch.keep({2});  // two of three vacant: the one going on is copied into a cache of its own
  EXPECT_EQ(batch.cache().rows(), 1);
  EXPECT_EQ(batch.cache_rows(), (std::vector<int64_t>{0}));
  step_and_check("after compaction");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RunningRows, testing::Values("llama3", "qwen3_5_text"),
                         [](const auto& info) { return info.param; });

TEST_P(Generation, GreedyTokensEqualThePlainPathPromptByPrompt) {
  const auto model = std::make_shared<const Model>(Model::load(model_dir(GetParam())));
  const std::vector<GenerationRequest> requests = prompts_of(*model, GetParam());
  std::vector<TokenIds> alone;
  std::vector<std::vector<double>> alone_logprobs(requests.size());
  for (size_t i = 0; i < requests.size(); ++i)
    alone.push_back(greedy_alone(*model, requests[i].prompt, requests[i].max_new_tokens, {}, &alone_logprobs[i]));
  for (const int64_t cascade : {int64_t{0}, int64_t{-1}}) {  // cascade where the family allows it; gather
    PrefixScorerOptions options = small_batches();
    options.cascade_min_prefix_len = cascade;
    PrefixScorer scorer(model, options);
    const GenerationResult result = scorer.generate(requests);
    ASSERT_EQ(result.generations.size(), requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      EXPECT_EQ(result.generations[i].tokens, alone[i]) << "request " << i << ", cascade " << cascade;
      // The numbers behind the tokens: random weights give flat logits, whose argmax a small error may not move.
      const std::vector<double>& got = result.generations[i].logprobs;
      ASSERT_EQ(got.size(), alone_logprobs[i].size());
      for (size_t t = 0; t < got.size(); ++t)
        EXPECT_NEAR(got[t], alone_logprobs[i][t], 1e-5) << "request " << i << " token " << t << ", cascade " << cascade;
      EXPECT_EQ(result.generations[i].finish, FinishReason::kMaxNewTokens) << "request " << i;
    }
    EXPECT_EQ(result.stats.prefix_tokens, 16);  // the shared prefix, prefilled once
    EXPECT_GT(result.stats.decode_forwards, 0);
    EXPECT_GT(result.stats.prefill_forwards, 1);  // the last prompts joined a running batch
    EXPECT_LE(result.stats.max_rows, 3);
    const bool by_cascade = cascade == 0 && cascade_exact(model->spec());
    EXPECT_EQ(result.stats.cascade_forwards > 0, by_cascade) << "cascade " << cascade;
    if (by_cascade) EXPECT_EQ(result.stats.cascade_forwards, result.stats.prefill_forwards + result.stats.decode_forwards);
  }
}

// Greedy rows with drafts (prompt lookup): a prompt that repeats itself gives every row a draft from its first
// step; the tokens and their log-probabilities stay those of one full forward a token. A model whose layers keep a
// state, or LongRoPE, never drafts.
TEST_P(Generation, DraftsGiveTheTokensOfOneTokenSteps) {
  const auto model = std::make_shared<const Model>(Model::load(model_dir(GetParam())));
  std::vector<GenerationRequest> requests = prompts_of(*model, GetParam());
  for (GenerationRequest& r : requests) {
    const TokenIds once = r.prompt;
    r.prompt.insert(r.prompt.end(), once.begin(), once.end());
    r.max_new_tokens = 12;
  }
  PrefixScorerOptions options = small_batches();
  options.max_draft_tokens = 3;
  PrefixScorer scorer(model, options);
  const GenerationResult result = scorer.generate(requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    std::vector<double> logprobs;
    EXPECT_EQ(result.generations[i].tokens, greedy_alone(*model, requests[i].prompt, 12, {}, &logprobs)) << "request " << i;
    ASSERT_EQ(result.generations[i].logprobs.size(), logprobs.size());
    for (size_t t = 0; t < logprobs.size(); ++t)
      EXPECT_NEAR(result.generations[i].logprobs[t], logprobs[t], 1e-5) << "request " << i << " token " << t;
  }
  const bool drafts = !model->spec().has_recurrent_layers() && model->config().rope.type != RopeType::kLongRope;
  EXPECT_EQ(result.stats.draft_tokens > 0, drafts);
  EXPECT_LE(result.stats.accepted_draft_tokens, result.stats.draft_tokens);
}

// Prompts that join running rows are prefilled in a step of those rows (one forward for both; ahead of their joining
// while others wait) where the model's layers are token-wise, else in a forward of their own; their tokens are those
// of each prompt alone either way (GreedyTokensEqualThePlainPathPromptByPrompt runs the same calls).
TEST_P(Generation, PromptsJoinInTheRunningRowsStepWhereTheLayersAreTokenWise) {
  const auto model = std::make_shared<const Model>(Model::load(model_dir(GetParam())));
  const std::vector<GenerationRequest> requests = prompts_of(*model, GetParam());
  PrefixScorer scorer(model, small_batches());
  const GenerationResult result = scorer.generate(requests);
  EXPECT_EQ(result.stats.joined_in_steps > 0, model->packs_real_tokens());
  EXPECT_LE(result.stats.joined_in_steps + 3, static_cast<int64_t>(requests.size()));  // the first three run at once
}

// Rows that join at once and run to their last token by cascade write their keys and values where they stay: the
// prefill into room for every token the rows will feed, the steps after it. Rows that end at different lengths and
// make way for others (three at a time) move some, and the count says so. (By gather, each row's copy of its prefix
// counts too.)
TEST(GenerationKvCopies, RowsRunningTogetherToTheirEndCopyNoCachedKeysOrValues) {
  const auto model = std::make_shared<const Model>(Model::load(model_dir("llama3")));
  PrefixScorerOptions options = small_batches();
  options.max_draft_tokens = 0;
  options.cascade_min_prefix_len = 0;
  for (const bool together : {true, false}) {
    std::vector<GenerationRequest> requests = prompts_of(*model, "llama3");
    if (together) {
      for (GenerationRequest& r : requests) r.max_new_tokens = 9;
    }
    options.max_batch_rows = together ? 5 : 3;
    PrefixScorer scorer(model, options);
    const GenerationResult result = scorer.generate(requests);
    const int64_t last = requests[4].max_new_tokens;
    EXPECT_EQ(result.generations[4].tokens, greedy_alone(*model, requests[4].prompt, last)) << together;
    if (together)
      EXPECT_EQ(result.stats.kv_bytes_copied, 0);
    else
      EXPECT_GT(result.stats.kv_bytes_copied, 0);
  }
}

TEST_P(Generation, AStopIdEndsItsRowAndOnlyItsRow) {
  const auto model = std::make_shared<const Model>(Model::load(model_dir(GetParam())));
  std::vector<GenerationRequest> requests = prompts_of(*model, GetParam());
  const TokenIds free_run = greedy_alone(*model, requests[3].prompt, requests[3].max_new_tokens);
  requests[3].stop_ids = {free_run[2], model->config().vocab_size - 1};
  PrefixScorer scorer(model, small_batches());
  const GenerationResult result = scorer.generate(requests);
  const TokenIds want = greedy_alone(*model, requests[3].prompt, requests[3].max_new_tokens, requests[3].stop_ids);
  EXPECT_EQ(result.generations[3].tokens, want);
  EXPECT_LE(want.size(), 3u);
  EXPECT_EQ(result.generations[3].finish, FinishReason::kStopId);
  EXPECT_EQ(result.generations[2].tokens, greedy_alone(*model, requests[2].prompt, requests[2].max_new_tokens));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Generation, testing::ValuesIn(fixture_models()),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(RecurrentFixtures, Generation, testing::ValuesIn(recurrent_fixture_models()),
                         [](const auto& info) { return info.param; });

std::shared_ptr<const Model> tiny() { return std::make_shared<const Model>(Model::synthetic("tiny")); }

// Stop strings checked in C++ on the native tokenizer: a row ends at the first token whose decoded text so far
// holds one of its strings (its window of last tokens is long enough for that here), the others run on.
TEST(GenerationStopStrings, ARowEndsAtTheFirstTokenAfterWhichItsTextHoldsOne) {
  const auto model = std::make_shared<const Model>(Model::load(model_dir("llama3")));
  const Tokenizer tokenizer = Tokenizer::from_file(model_dir("llama3"));
  std::vector<GenerationRequest> requests(2);
  requests[0].prompt = {5, 9, 2, 7};
  requests[1].prompt = {3, 8, 1};
  for (GenerationRequest& r : requests) r.max_new_tokens = 12;
  PrefixScorer scorer(model, PrefixScorerOptions());
  const GenerationResult free = scorer.generate(requests);
  const TokenIds& run_on = free.generations[0].tokens;
  std::string stop;  // the text of a token past the first few, not empty
  for (size_t i = 4; i < run_on.size() && stop.empty(); ++i) stop = tokenizer.decode({run_on[i]});
  ASSERT_FALSE(stop.empty());
  size_t ends = 0;  // the first token after which the text holds it
  auto text_through = [&](size_t last) {
    return tokenizer.decode(TokenIds(run_on.begin(), run_on.begin() + static_cast<std::ptrdiff_t>(last) + 1));
  };
  while (ends < run_on.size() && text_through(ends).find(stop) == std::string::npos) ++ends;
  ASSERT_LT(ends, run_on.size());

  const GenerationResult stopped = scorer.generate(requests, stop_strings_hook(tokenizer, {{stop}, {}}));
  EXPECT_EQ(stopped.generations[0].tokens, TokenIds(run_on.begin(), run_on.begin() + static_cast<std::ptrdiff_t>(ends) + 1));
  EXPECT_EQ(stopped.generations[0].finish, FinishReason::kStopHook);
  EXPECT_EQ(stopped.generations[1].tokens, free.generations[1].tokens);
  EXPECT_EQ(stopped.generations[1].finish, FinishReason::kMaxNewTokens);

  EXPECT_EQ(message_of<std::invalid_argument>([&] { stop_strings_hook(tokenizer, {{"a"}, {"b", ""}}); }),
            "generate: request 1: an empty stop string");
}

TEST(GenerationHook, EndsTheRowItNamesWhereItSaysSo) {
  const auto model = tiny();
  std::vector<GenerationRequest> requests(3);
  for (size_t i = 0; i < requests.size(); ++i) requests[i] = {{1, 2, 3, static_cast<int64_t>(10 + i)}, 6, {}, {}};
  PrefixScorer scorer(model);
  std::vector<size_t> seen;
  const GenerationResult result = scorer.generate(requests, [&](size_t request, const TokenIds& generated) {
    seen.push_back(request);
    return request == 1 && generated.size() == 2;
  });
  EXPECT_EQ(result.generations[1].tokens, greedy_alone(*model, requests[1].prompt, 2));
  EXPECT_EQ(result.generations[1].finish, FinishReason::kStopHook);
  EXPECT_EQ(result.generations[0].tokens.size(), 6u);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), size_t{1}), 2);  // never asked again after it stopped
  EXPECT_EQ(std::count(seen.begin(), seen.end(), size_t{0}), 6);
}

TEST(GenerationStats, EveryCounterIsListedOnceAndRowsOfBothRopeVariantsShareOneBatch) {
  const auto& fields = generation_stats_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    for (size_t j = 0; j < i; ++j) EXPECT_NE(fields[i].member, fields[j].member) << fields[i].name;
  }
  EXPECT_EQ(fields.size() * sizeof(int64_t), sizeof(GenerationStats));  // no counter left out
  // A prompt past phi3_longrope's 40 tokens takes the long factors, the other the short ones: one prefill forward
  // and one decode forward a step run both rows.
  const auto model = std::make_shared<const Model>(Model::load(model_dir("phi3_longrope")));
  const TokenIds context = expected_scores("phi3_longrope").front().request.context;
  PrefixScorer scorer(model);
  const GenerationResult both = scorer.generate({{TokenIds(context.begin(), context.begin() + 10), 3, {}, {}},
                                                 {TokenIds(context.begin(), context.begin() + 44), 3, {}, {}}});
  EXPECT_EQ(both.stats.requests, 2);
  EXPECT_EQ(both.stats.generated_tokens, 6);
  EXPECT_EQ(both.stats.prefill_forwards, 1);
  EXPECT_EQ(both.stats.prefill_tokens, 54);
  EXPECT_EQ(both.stats.decode_forwards, 2);
  EXPECT_EQ(both.stats.max_rows, 2);
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(both.generations[i].tokens, greedy_alone(*model, TokenIds(context.begin(), context.begin() + (i ? 44 : 10)), 3));
}

TEST(GenerationProgress, CountsTokensAgainstWhatTheCallWillGenerate) {
  std::vector<std::pair<int64_t, int64_t>> reports;
  PrefixScorerOptions options;
  options.max_batch_rows = 2;
  options.on_progress = [&](int64_t done, int64_t total) { reports.emplace_back(done, total); };
  PrefixScorer scorer(tiny(), options);
  std::vector<GenerationRequest> requests(4, GenerationRequest{{1, 2, 3}, 8, {}, {}});
  for (size_t i = 0; i < requests.size(); ++i) requests[i].prompt.push_back(static_cast<int64_t>(i));
  const GenerationResult result = scorer.generate(requests, [](size_t request, const TokenIds& generated) {
    return request % 2 == 0 && generated.size() == 3;  // two rows stop early, leaving 5 tokens each unused
  });
  ASSERT_GT(reports.size(), 3u);
  EXPECT_EQ(reports.back(), std::make_pair(result.stats.generated_tokens, result.stats.generated_tokens));
  EXPECT_EQ(result.stats.generated_tokens, 3 + 8 + 3 + 8);
  for (size_t i = 1; i < reports.size(); ++i) {
    EXPECT_GE(reports[i].first, reports[i - 1].first);
    EXPECT_LE(reports[i].second, reports[i - 1].second);
    EXPECT_LE(reports[i].first, reports[i].second);
  }
  EXPECT_EQ(reports.front(), std::make_pair(int64_t{2}, int64_t{32}));  // after the first two rows' first tokens
}

GenerationRequest sampled(TokenIds prompt, uint64_t seed) {
  GenerationRequest r{std::move(prompt), 12, {}, {}};
  r.sampling.greedy = false;
  r.sampling.temperature = 0.7;
  r.sampling.top_k = 40;
  r.sampling.top_p = 0.9;
  r.sampling.seed = seed;
  return r;
}

TEST(GenerationSampling, ASeedGivesTheSameTokensInAnyBatchAndOrder) {
  PrefixScorer scorer(tiny());
  const GenerationRequest subject = sampled({5, 6, 7, 8}, 42);
  const TokenIds alone = scorer.generate({subject}).generations[0].tokens;
  const std::vector<GenerationRequest> crowd = {sampled({5, 6, 7, 9}, 1), subject, sampled({3, 4}, 2),
                                                sampled({5, 6, 7, 8, 1, 2}, 3)};
  EXPECT_EQ(scorer.generate(crowd).generations[1].tokens, alone);
  const std::vector<GenerationRequest> reversed(crowd.rbegin(), crowd.rend());
  EXPECT_EQ(scorer.generate(reversed).generations[2].tokens, alone);
  EXPECT_NE(scorer.generate({sampled({5, 6, 7, 8}, 43)}).generations[0].tokens, alone);  // the seed matters
}

TEST(PromptLookup, TheLongestLatestMatchProposesWhatFollowedIt) {
  // The tail (8, 9) occurred twice before: the latest occurrence is followed by 3, then the tail itself.
  EXPECT_EQ(lookup_draft({8, 9, 1, 2, 8, 9, 3}, {8, 9}, 4), (TokenIds{3, 8, 9}));
  EXPECT_EQ(lookup_draft({8, 9, 1, 2, 8, 9, 3}, {8, 9}, 2), (TokenIds{3, 8}));
  // Three tokens match before two: (5, 8, 9) at the start wins over the later (8, 9).
  EXPECT_EQ(lookup_draft({5, 8, 9, 7, 8, 9, 6, 5}, {8, 9}, 1), (TokenIds{7}));
  EXPECT_EQ(lookup_draft({1, 2, 3}, {4}, 3), TokenIds{});  // the last token never occurred before
  EXPECT_EQ(lookup_draft({1, 2, 1}, {}, 3), (TokenIds{2, 1}));
  EXPECT_EQ(lookup_draft({1, 2, 1}, {}, 0), TokenIds{});
  EXPECT_EQ(lookup_draft({7}, {}, 3), TokenIds{});
}

TEST(GenerationSampling, SampledRowsNeverDraft) {
  PrefixScorer scorer(tiny());
  const GenerationRequest r = sampled({5, 6, 7, 5, 6, 7, 5, 6}, 42);  // a greedy row would draft from its first step
  EXPECT_EQ(scorer.generate({r, r}).stats.draft_tokens, 0);
  GenerationRequest greedy = r;
  greedy.sampling.greedy = true;
  EXPECT_GT(scorer.generate({greedy}).stats.draft_tokens, 0);
}

// Drafts fill a step up to 32 fed tokens in all: 4 greedy rows draft up to 3 tokens each, 16 rows one, 32 rows none.
TEST(GenerationDrafts, AStepFeedsAtMost32TokensInAll) {
  PrefixScorerOptions options;
  options.max_draft_tokens = 3;
  PrefixScorer scorer(tiny(), options);
  GenerationRequest r;
  r.prompt = {5, 6, 7, 5, 6, 7, 5, 6};  // a draft from the first step on
  r.max_new_tokens = 12;
  for (const int64_t rows : {4, 16, 32}) {
    const GenerationResult result = scorer.generate(std::vector<GenerationRequest>(rows, r));
    EXPECT_GT(result.stats.decode_forwards, 0) << rows << " rows";
    EXPECT_EQ(result.stats.max_rows, rows);
    EXPECT_LE(result.stats.draft_tokens, result.stats.decode_forwards * rows * std::min<int64_t>(3, 32 / rows - 1))
        << rows << " rows";
    EXPECT_EQ(result.stats.draft_tokens > 0, rows < 32) << rows << " rows";
  }
}

TEST(GenerationSampling, TemperatureZeroIsGreedy) {
  const auto model = tiny();
  PrefixScorer scorer(model);
  GenerationRequest r = sampled({5, 6, 7, 8}, 42);
  r.sampling.temperature = 0;
  EXPECT_EQ(scorer.generate({r}).generations[0].tokens, greedy_alone(*model, r.prompt, r.max_new_tokens));
}

TEST(GenerationSampling, TopKOfOneIsGreedy) {
  const auto model = tiny();
  PrefixScorer scorer(model);
  GenerationRequest r = sampled({9, 8, 7}, 5);
  r.sampling.top_k = 1;
  EXPECT_EQ(scorer.generate({r}).generations[0].tokens, greedy_alone(*model, r.prompt, r.max_new_tokens));
}

TEST(GenerationSampling, DrawsFollowTheWarpedDistribution) {
  // Three tokens of probabilities 0.5, 0.3, 0.2: top_p 0.7 keeps the first two (0.5 + 0.3 reaches it), in the
  // ratio 5:3 (temperature 1).
  const at::Tensor logprobs = at::log(at::tensor({0.2, 0.5, 0.3}, at::kFloat));
  SamplingOptions s;
  s.greedy = false;
  s.top_p = 0.7;
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(7);
  std::vector<int64_t> counts(3, 0);
  for (int i = 0; i < 4000; ++i) ++counts[draw_token(logprobs, s, generator).item<int64_t>()];
  EXPECT_EQ(counts[0], 0);
  EXPECT_NEAR(static_cast<double>(counts[1]) / 4000, 0.625, 0.03);
}

// A step brings each row's token and its log-probability to the host (two float64s a row), never the vocabulary's
// log-probabilities; sampled rows draw where the logits are, as greedy rows take their argmax there.
TEST(GenerationStats, ATokenMovesSixteenBytesToTheHostWhateverTheVocabulary) {
  const auto model = tiny();
  PrefixScorerOptions options;
  options.min_prefix_len = 4;
  PrefixScorer scorer(model, options);
  std::vector<GenerationRequest> requests;
  for (int64_t i = 0; i < 4; ++i) {
    GenerationRequest r = sampled({1, 2, 3, 4, 5, 6, 7 + i}, static_cast<uint64_t>(i));
    r.sampling.greedy = i % 2 == 0;
    requests.push_back(r);
  }
  const GenerationStats s = scorer.generate(requests).stats;
  EXPECT_EQ(s.generated_tokens, 4 * 12);
  EXPECT_EQ(s.bytes_to_host, 16 * s.generated_tokens);
  EXPECT_GT(s.bytes_to_device, 0);
}

TEST(GenerationErrors, NameTheRequestAndComputeNothing) {
  PrefixScorerOptions options;
  options.keep_cache = true;
  options.min_prefix_len = 1;
  PrefixScorer scorer(tiny(), options);
  const GenerationRequest good{{1, 2, 3}, 4, {}, {}};
  int64_t tokens = 0;  // generated before the error: none
  auto message = [&](GenerationRequest bad) {
    return message_of<std::invalid_argument>([&] {
      scorer.generate({good, good, bad}, [&](size_t, const TokenIds&) { return ++tokens < 0; });
    });
  };
  EXPECT_NE(message({{}, 4, {}, {}}).find("request 2: the prompt is empty"), std::string::npos);
  EXPECT_NE(message({{1, 2}, 0, {}, {}}).find("request 2: max_new_tokens must be >= 1"), std::string::npos);
  EXPECT_NE(message({{1, 1 << 30}, 4, {}, {}}).find("request 2:"), std::string::npos);
  EXPECT_NE(message({{1, 2}, 4, {-1}, {}}).find("request 2: stop id"), std::string::npos);
  EXPECT_NE(message({{1, 2}, 1 << 20, {}, {}}).find("exceed the model's"), std::string::npos);
  GenerationRequest bad_p = sampled({1, 2}, 0);
  bad_p.sampling.top_p = 0;
  EXPECT_NE(message(bad_p).find("request 2: top_p must lie in (0, 1]"), std::string::npos);
  GenerationRequest bad_k = sampled({1, 2}, 0);
  bad_k.sampling.top_k = -1;
  EXPECT_NE(message(bad_k).find("request 2: top_k must be >= 0, got -1"), std::string::npos);
  EXPECT_EQ(tokens, 0);
  EXPECT_EQ(scorer.stats().entries_held, 0);  // the good prompts' shared prefix was never prefilled
}

TEST(GenerationCancel, FromTheHookStopsTheCallAndLeavesTheScorerUsable) {
  const auto model = tiny();
  PrefixScorer scorer(model);
  std::vector<GenerationRequest> requests(4, GenerationRequest{{1, 2, 3, 4, 5, 6}, 20, {}, {}});
  for (size_t i = 0; i < requests.size(); ++i) requests[i].prompt.push_back(static_cast<int64_t>(i));
  int calls = 0;
  EXPECT_THROW(scorer.generate(requests,
                               [&](size_t, const TokenIds&) {
                                 if (++calls == 5) scorer.cancel();
                                 return false;
                               }),
               Cancelled);
  EXPECT_EQ(scorer.stats().entries_pinned, 0);
  EXPECT_EQ(scorer.generate({requests[0]}).generations[0].tokens, greedy_alone(*model, requests[0].prompt, 20));
}

TEST(GenerationMemory, RowsRunWithinMaxBatchBytesAndARowTooLargeIsNamed) {
  const auto model = tiny();
  std::vector<GenerationRequest> requests;
  for (int64_t r = 0; r < 6; ++r) requests.push_back({{1, 2, 3, 4, 5 + r}, 10, {}, {}});
  const BatchMemory memory = batch_memory(*model, PrefixScorerOptions{});
  PrefixScorerOptions options;
  // Room for two rows at their longest (15 tokens, the cache's room made for that many): not for three.
  options.max_batch_bytes = forward_bytes(memory, 2, 1, 15) + 1;
  ASSERT_GT(forward_bytes(memory, 3, 1, 15), options.max_batch_bytes);
  PrefixScorer scorer(model, options);
  const GenerationResult result = scorer.generate(requests);
  EXPECT_EQ(result.stats.max_rows, 2);
  for (size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(result.generations[i].tokens, greedy_alone(*model, requests[i].prompt, 10)) << "request " << i;
  requests[4].max_new_tokens = 1000;
  EXPECT_NE(message_of<std::invalid_argument>([&] { scorer.generate(requests); })
                .find("generate: request 4: its 1005 tokens need"),
            std::string::npos);
}

// Random prompt trees (prompts continuing shared prefixes of random depths, an identical pair), random budgets and
// stop ids: the prefix path gives each prompt the tokens of generating it alone, with the prefix cache and without.
void expect_random_trees_give_each_prompt_its_tokens(const std::string& name, bool expect_cascade) {
  const auto model = std::make_shared<const Model>(Model::synthetic(name));
  std::mt19937 rng(17);
  auto draw = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int64_t prefix_tokens = 0, cascade_forwards = 0;
  for (int round = 0; round < 4; ++round) {
    std::vector<GenerationRequest> requests;
    TokenIds trunk;
    for (int64_t i = 0; i < draw(0, 40); ++i) trunk.push_back(draw(1, 400));
    for (int64_t r = 0; r < draw(3, 9); ++r) {
      GenerationRequest q;
      q.prompt.assign(trunk.begin(), trunk.begin() + draw(0, static_cast<int64_t>(trunk.size())));
      for (int64_t i = 0; i < draw(q.prompt.empty() ? 1 : 0, 12); ++i) q.prompt.push_back(draw(1, 400));
      if (q.prompt.empty()) q.prompt.push_back(draw(1, 400));
      q.max_new_tokens = draw(1, 9);
      if (draw(0, 2) == 0) q.stop_ids = {draw(1, 400), draw(1, 400)};
      requests.push_back(q);
    }
    requests.push_back(requests.front());  // an identical prompt
    PrefixScorerOptions cached, uncached;
    cached.min_prefix_len = draw(1, 8);
    cached.max_batch_rows = draw(1, 5);
    cached.max_batch_tokens = draw(16, 128);
    cached.keep_cache = round % 2 == 1;
    cached.cascade_min_prefix_len = round % 2 == 0 ? 0 : -1;
    uncached.min_prefix_len = 1 << 20;  // no prefix is ever cached
    uncached.max_batch_rows = 1;
    PrefixScorer with_cache(model, cached), without_cache(model, uncached);
    const GenerationResult a = with_cache.generate(requests), b = without_cache.generate(requests);
    ASSERT_EQ(a.generations.size(), requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      const TokenIds alone = greedy_alone(*model, requests[i].prompt, requests[i].max_new_tokens, requests[i].stop_ids);
      EXPECT_EQ(a.generations[i].tokens, alone) << name << " round " << round << " request " << i;
      EXPECT_EQ(b.generations[i].tokens, alone) << name << " round " << round << " request " << i;
    }
    EXPECT_EQ(b.stats.prefix_tokens, 0);
    prefix_tokens += a.stats.prefix_tokens;
    cascade_forwards += a.stats.cascade_forwards;
  }
  EXPECT_GT(prefix_tokens, 0);  // the cached side did cache prefixes
  EXPECT_EQ(cascade_forwards > 0, expect_cascade);
}

TEST(GenerationProperty, RandomPromptTreesGiveEachPromptItsOwnTokens) {
  expect_random_trees_give_each_prompt_its_tokens("tiny", true);  // by cascade and by gather
  expect_random_trees_give_each_prompt_its_tokens("tiny-gemma2", false);  // windows of 32 tokens: always gather
}

// transformers' Phi-3 runs a sequence again whole on the long factors when it first grows past
// original_max_position_embeddings (40 in this fixture), so every token is the full forward's of its sequence:
// rows that cross, one that starts past it (run apart, on the long factors' cache) and one that stays below.
TEST(GenerationLongRope, EveryTokenIsTheFullForwardsOfItsSequence) {
  const auto model = std::make_shared<const Model>(Model::load(model_dir("phi3_longrope")));
  ASSERT_EQ(model->config().rope.original_max_position_embeddings, 40);
  const TokenIds context = expected_scores("phi3_longrope").front().request.context;
  std::vector<GenerationRequest> requests;
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{20, 24}, {30, 16}, {39, 8}, {40, 8}, {44, 8}, {10, 6}};
  for (const auto& [length, new_tokens] : shapes)
    requests.push_back({TokenIds(context.begin(), context.begin() + length), new_tokens, {}, {}});
  std::vector<std::vector<double>> want_logprobs(requests.size());
  std::vector<TokenIds> want;
  for (size_t i = 0; i < requests.size(); ++i)
    want.push_back(greedy_alone(*model, requests[i].prompt, requests[i].max_new_tokens, {}, &want_logprobs[i]));
  // max_batch_tokens 48: rows that cross together run again one per forward.
  for (const int64_t max_batch_tokens : {int64_t{8192}, int64_t{48}}) {
    PrefixScorerOptions options = small_batches();
    options.cascade_min_prefix_len = 0;
    options.max_batch_tokens = max_batch_tokens;
    PrefixScorer scorer(model, options);
    std::vector<std::pair<size_t, TokenIds>> hooked;
    const GenerationResult result = scorer.generate(requests, [&](size_t request, const TokenIds& generated) {
      hooked.emplace_back(request, generated);
      return false;
    });
    for (size_t i = 0; i < requests.size(); ++i) {
      EXPECT_EQ(result.generations[i].tokens, want[i]) << "request " << i << ", max_batch_tokens " << max_batch_tokens;
      ASSERT_EQ(result.generations[i].logprobs.size(), want_logprobs[i].size());
      for (size_t t = 0; t < want_logprobs[i].size(); ++t)
        EXPECT_NEAR(result.generations[i].logprobs[t], want_logprobs[i][t], 1e-5) << "request " << i << " token " << t;
    }
    // The hook hears each request under its own index, the one run apart on the long factors too.
    ASSERT_EQ(hooked.size(), 70u);
    for (const auto& [request, generated] : hooked) {
      const TokenIds& all = result.generations[request].tokens;
      EXPECT_TRUE(std::equal(generated.begin(), generated.end(), all.begin())) << "request " << request;
    }
    EXPECT_GT(result.stats.prefill_forwards, 3);  // crossing rows run again on the long factors
  }
}

}  // namespace
}  // namespace prefix_scorer::test
