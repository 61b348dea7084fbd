// score_one MODEL CONTEXT CONTINUATION: scores one request (ids comma-separated) and prints "logprob is_greedy".

#include <prefix_scorer/prefix_scorer.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

namespace {

prefix_scorer::TokenIds parse_ids(const std::string& text) {
  prefix_scorer::TokenIds ids;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) ids.push_back(std::stoll(item));
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: score_one MODEL CONTEXT_IDS CONTINUATION_IDS\n");
    return 2;
  }
  using namespace prefix_scorer;
  const auto model = std::make_shared<const Model>(Model::open(argv[1]));
  PrefixScorer scorer(model, PrefixScorerOptions{});
  const ScoringResult result = scorer.loglikelihood({{parse_ids(argv[2]), parse_ids(argv[3])}});
  std::printf("%.9g %d\n", result.scores.at(0).logprob, result.scores.at(0).is_greedy ? 1 : 0);
  return 0;
}
