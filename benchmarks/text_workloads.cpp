#include "text_workloads.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <random>
#include <stdexcept>

namespace prefix_scorer::bench {

namespace {

using Words = std::vector<std::string>;

const Words kSubjects{"abstract algebra", "anatomy", "astronomy", "business ethics", "clinical knowledge",
                      "college biology", "college chemistry", "computer security", "econometrics",
                      "formal logic", "global facts", "high school geography", "human aging", "jurisprudence",
                      "machine learning", "marketing", "medical genetics", "nutrition", "philosophy",
                      "prehistory", "public relations", "sociology", "virology", "world religions"};
const Words kNouns{"cell",     "market",  "river",   "theory",   "engine",  "village", "protein", "contract",
                   "signal",   "planet",  "student", "network",  "harvest", "tribe",   "orbit",   "enzyme",
                   "court",    "budget",  "crystal", "language", "climate", "virus",   "ledger",  "temple",
                   "argument", "muscle",  "policy",  "glacier",  "poem",    "reactor", "species", "algorithm"};
const Words kAdjectives{"rapid",   "stable",    "ancient", "hidden", "complex", "local",   "formal",  "thin",
                        "dominant", "uncertain", "chronic", "modern", "rural",   "dense",   "neutral", "early",
                        "silent",  "primary",   "broad",   "fragile", "careful", "massive", "gentle",  "curious"};
const Words kVerbs{"changes",  "follows", "measures", "protects", "reduces", "explains", "controls", "supports",
                   "divides",  "absorbs", "predicts", "connects", "replaces", "limits", "produces", "describes"};
const Words kPlaces{"in the kitchen", "at the park",     "on the beach",  "in a garage",   "at the gym",
                    "in the snow",    "on a small boat", "in the office", "at a wedding",  "in the garden"};
const Words kActivities{"Baking cookies", "Washing a car", "Playing the violin", "Skiing", "Painting a fence",
                        "Making a sandwich", "Rock climbing", "Tying shoelaces", "Sailing", "Ironing clothes"};
const Words kPeople{"A man", "A woman", "The boy", "The girl", "An old man", "A young woman", "The coach",
                    "Two friends", "The children", "A chef"};
const Words kActions{"picks up",  "puts down", "looks at", "pushes",  "opens",   "carries", "cleans",
                     "throws",    "holds",     "turns",    "examines", "drops",  "lifts",   "wipes"};

class Prose {
 public:
  explicit Prose(uint64_t seed) : rng_(seed) {}

  int64_t number(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  const std::string& pick(const Words& words) {
    return words[static_cast<size_t>(number(0, static_cast<int64_t>(words.size()) - 1))];
  }

  std::string noun_phrase() {
    switch (number(0, 3)) {
      case 0: return fmt::format("the {}", pick(kNouns));
      case 1: return fmt::format("a {} {}", pick(kAdjectives), pick(kNouns));
      case 2: return fmt::format("the {} of the {}", pick(kNouns), pick(kNouns));
      default: return fmt::format("{} {}s", number(2, 90), pick(kNouns));
    }
  }
  std::string claim() { return fmt::format("{} {} {}", noun_phrase(), pick(kVerbs), noun_phrase()); }

  // Questions of several wordings and lengths, as the subjects' questions vary.
  std::string question(const std::string& subject) {
    switch (number(0, 4)) {
      case 0: return fmt::format("Which of the following is true of {}?", noun_phrase());
      case 1: return fmt::format("What is the main {} of {}?", pick(kNouns), noun_phrase());
      case 2: return fmt::format("{}. Which of the following best explains this?", capitalized(claim()));
      case 3:
        return fmt::format("In {}, which {} is most closely associated with {}?", subject, pick(kNouns),
                           noun_phrase());
      default:
        return fmt::format("{}, and {}. If {}, what happens to {}?", capitalized(claim()), claim(), claim(),
                           noun_phrase());
    }
  }
  std::string option() { return number(0, 2) == 0 ? capitalized(claim()) : capitalized(noun_phrase()); }

  std::string scene_sentence() {
    return fmt::format("{} {} {} {}.", pick(kPeople), pick(kActions), noun_phrase(), pick(kPlaces));
  }
  std::string sentences(int64_t lo, int64_t hi) {
    std::string text;
    for (int64_t i = 0, n = number(lo, hi); i < n; ++i) text += (i ? " " : "") + scene_sentence();
    return text;
  }

  static std::string capitalized(std::string text) {
    if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    return text;
  }

 private:
  std::mt19937_64 rng_;
};

constexpr const char* kLetters[] = {"A", "B", "C", "D"};

// One question as lm-eval's MMLU template writes it: the question, the options, "Answer:".
std::string mmlu_question(Prose& prose, const std::string& subject) {
  std::string text = prose.question(subject) + "\n";
  for (const char* letter : kLetters) text += fmt::format("{}. {}\n", letter, prose.option());
  return text + "Answer:";
}

std::vector<TextPair> mmlu_text(const TextShape& shape, Prose& prose) {
  std::vector<TextPair> pairs;
  for (int64_t s = 0; s < shape.subjects; ++s) {
    const std::string& subject = kSubjects[static_cast<size_t>(s) % kSubjects.size()];
    std::string prompt = fmt::format("The following are multiple choice questions (with answers) about {}.\n\n", subject);
    for (int64_t shot = 0; shot < shape.shots; ++shot)
      prompt += fmt::format("{} {}\n\n", mmlu_question(prose, subject), kLetters[prose.number(0, 3)]);
    for (int64_t q = 0; q < shape.questions; ++q) {
      const std::string context = prompt + mmlu_question(prose, subject);
      for (const char* letter : kLetters) pairs.push_back({context, std::string(" ") + letter});
    }
  }
  return pairs;
}

// lm-eval's HellaSwag template: "activity: ctx_a Ctx_b", each ending after a space.
std::vector<TextPair> hellaswag_text(const TextShape& shape, Prose& prose) {
  std::vector<TextPair> pairs;
  for (int64_t q = 0; q < shape.subjects * shape.questions; ++q) {
    const std::string context = fmt::format("{}: {}", prose.pick(kActivities), prose.sentences(2, 4));
    for (int ending = 0; ending < 4; ++ending) pairs.push_back({context, " " + prose.sentences(1, 3)});
  }
  return pairs;
}

// A GSM8K-style word problem and its worked answer.
std::pair<std::string, std::string> word_problem(Prose& prose) {
  const std::string who = prose.pick(kPeople), what = prose.pick(kNouns);
  const int64_t a = prose.number(2, 60), b = prose.number(2, 40);
  if (prose.number(0, 1) == 0)
    return {fmt::format("{} has {} {}s and finds {} more {}. How many {}s are there now?", who, a, what, b,
                        prose.pick(kPlaces), what),
            fmt::format("{} + {} = {}. The answer is {}.", a, b, a + b, a + b)};
  return {fmt::format("{} has {} {}s and gives {} of them away. How many {}s are left?", who, a + b, what, b, what),
          fmt::format("{} - {} = {}. The answer is {}.", a + b, b, a, a)};
}

}  // namespace

std::vector<std::string> gsm8k_text_prompts(const TextShape& shape, uint64_t seed) {
  Prose prose(seed);
  std::string prefix;
  for (int64_t shot = 0; shot < shape.shots; ++shot) {
    const auto [question, answer] = word_problem(prose);
    prefix += fmt::format("Question: {}\nAnswer: {}\n\n", question, answer);
  }
  std::vector<std::string> prompts;
  for (int64_t q = 0; q < shape.subjects * shape.questions; ++q)
    prompts.push_back(fmt::format("{}Question: {}\nAnswer:", prefix, word_problem(prose).first));
  return prompts;
}

const std::vector<std::string>& text_workload_names() {
  static const std::vector<std::string> names{"mmlu-text", "hellaswag-text"};
  return names;
}

bool is_text_workload(const std::string& workload) {
  for (const auto& name : text_workload_names()) {
    if (name == workload) return true;
  }
  return false;
}

TextShape named_text_shape(const std::string& workload) {
  if (workload == "mmlu-text") return {4, 40, 5};
  if (workload == "hellaswag-text") return {1, 256, 0};
  throw std::invalid_argument(
      fmt::format("unknown text workload '{}' (known: {})", workload, fmt::join(text_workload_names(), ", ")));
}

std::vector<TextPair> text_workload(const std::string& workload, const TextShape& shape, uint64_t seed) {
  if (shape.subjects <= 0 || shape.questions <= 0 || shape.shots < 0)
    throw std::invalid_argument(fmt::format("{}: subjects and questions must be positive, shots >= 0", workload));
  Prose prose(seed);
  if (workload == "mmlu-text") return mmlu_text(shape, prose);
  if (workload == "hellaswag-text") return hellaswag_text(shape, prose);
  named_text_shape(workload);  // throws, naming the known ones
  return {};
}

}  // namespace prefix_scorer::bench
