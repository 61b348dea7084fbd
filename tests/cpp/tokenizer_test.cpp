// The native tokenizer against Hugging Face tokenizers' encodings, and tokenizer.json files written by hand.

#include "test_basics.h"
#include "prefix_scorer/tokenizer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace prefix_scorer::test {
namespace {

using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

TEST(Tokenizer, MatchesTokenizersOnEverySample) {
  const Tokenizer tokenizer = Tokenizer::from_file(data_dir() + "/tokenizer/tokenizer.json");
  const json samples = read_json(data_dir() + "/tokenizer/expected_encodings.json").at("samples");
  ASSERT_GT(samples.size(), 10u);
  for (const auto& sample : samples) {
    const std::string text = sample.at("text").get<std::string>();
    EXPECT_EQ(tokenizer.encode(text), sample.at("ids").get<TokenIds>()) << text;
    EXPECT_EQ(tokenizer.encode(text, true), sample.at("ids_with_bos").get<TokenIds>()) << text;
    EXPECT_EQ(tokenizer.decode(sample.at("ids").get<TokenIds>()), text);
    EXPECT_EQ(tokenizer.decode(sample.at("ids_with_bos").get<TokenIds>(), true), text);
  }
  EXPECT_EQ(tokenizer.bos_token_id(), std::optional<int64_t>(0));
  EXPECT_TRUE(tokenizer.adds_special_tokens());
  EXPECT_EQ(tokenizer.vocab_size(), 500);
}

TEST(Tokenizer, SpecialTokensInTheTextAreMatchedFirst) {
  const Tokenizer tokenizer = Tokenizer::from_file(model_dir("llama3"));
  const TokenIds ids = tokenizer.encode("<|begin_of_text|>Hi<|end_of_text|>");
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(ids.front(), 0);
  EXPECT_EQ(ids.back(), 1);
  EXPECT_EQ(tokenizer.decode(ids), "<|begin_of_text|>Hi<|end_of_text|>");
  EXPECT_EQ(tokenizer.decode(ids, true), "Hi");
  EXPECT_EQ(tokenizer.eos_token_id(), std::optional<int64_t>(1));  // from tokenizer_config.json
}

class PairEncoding : public testing::TestWithParam<std::string> {};

TEST_P(PairEncoding, ReproducesTheFixturePairs) {
  const Tokenizer tokenizer = Tokenizer::from_file(model_dir(GetParam()));
  const json rows = read_json(model_dir(GetParam()) + "/expected_loglikelihood.json").at("loglikelihood");
  for (const auto& row : rows) {
    const Request pair = encode_pair(tokenizer, row.at("context"), row.at("continuation"), false);
    EXPECT_EQ(pair.context, row.at("context_ids").get<TokenIds>()) << row.at("context");
    EXPECT_EQ(pair.continuation, row.at("continuation_ids").get<TokenIds>()) << row.at("continuation");
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PairEncoding, testing::ValuesIn(fixture_models()),
                         [](const auto& info) { return info.param; });

TEST(PairEncodingRules, WhitespaceMovesAndBosIsAddedToBoth) {
  const Tokenizer tokenizer = Tokenizer::from_file(model_dir("llama3"));
  const Request plain = encode_pair(tokenizer, "Answer: ", "B", false);
  EXPECT_EQ(plain.context, tokenizer.encode("Answer:"));
  EXPECT_EQ(plain.continuation, tokenizer.encode(" B"));
  const Request with_bos = encode_pair(tokenizer, "Answer: ", "B", true);
  EXPECT_EQ(with_bos.context.front(), 0);
  EXPECT_EQ(with_bos.continuation, plain.continuation);
  EXPECT_EQ(encode_pair(tokenizer, "", "Hi", false).context, TokenIds{0});
  // lm-eval 0.4.13: an empty context's continuation never gets special tokens, and one that opens with the prefix
  // token gives it up as the context.
  EXPECT_EQ(encode_pair(tokenizer, "", "Hi", true).continuation, tokenizer.encode("Hi", false));
  const Request opens_with_bos = encode_pair(tokenizer, "", "<|begin_of_text|>Hi", true);
  EXPECT_EQ(opens_with_bos.context, TokenIds{0});
  EXPECT_EQ(opens_with_bos.continuation, tokenizer.encode("Hi", false));
}

// A Llama 2 style tokenizer: Metaspace-like normalizer (or pre-tokenizer), byte fallback, <s> template.
json metaspace_tokenizer(bool as_pre_tokenizer) {
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    vocab[name] = 3 + b;
  }
  const std::string mark = "\xE2\x96\x81";  // ▁
  vocab[mark] = 259, vocab["a"] = 260, vocab["b"] = 261, vocab[mark + "a"] = 262, vocab["ab"] = 263;
  vocab[mark + "ab"] = 264, vocab["c"] = 265;
  json spec = {
      {"added_tokens", {{{"id", 0}, {"content", "<unk>"}, {"special", true}},
                        {{"id", 1}, {"content", "<s>"}, {"special", true}},
                        {{"id", 2}, {"content", "</s>"}, {"special", true}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", nullptr},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders", {{{"type", "Replace"}, {"pattern", {{"String", mark}}}, {"content", " "}},
                      {{"type", "ByteFallback"}}, {{"type", "Fuse"}},
                      {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
      {"model", {{"type", "BPE"}, {"unk_token", "<unk>"}, {"byte_fallback", true}, {"fuse_unk", true},
                 {"vocab", vocab}, {"merges", {json::array({mark, "a"}), "a b", mark + "a b"}}}}};
  if (as_pre_tokenizer) {
    spec["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", mark}, {"prepend_scheme", "always"}, {"split", true}};
    spec["decoder"] = {{"type", "Sequence"},
                       {"decoders", {{{"type", "Metaspace"}, {"replacement", mark}, {"prepend_scheme", "always"}},
                                     {{"type", "ByteFallback"}}, {{"type", "Fuse"}}}}};
  } else {
    spec["normalizer"] = {{"type", "Sequence"},
                          {"normalizers", {{{"type", "Prepend"}, {"prepend", mark}},
                                           {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", mark}}}}};
  }
  return spec;
}

class Metaspace : public testing::TestWithParam<bool> {};

TEST_P(Metaspace, KnownEncodingsAndByteFallback) {
  const Tokenizer tokenizer = Tokenizer::from_json(metaspace_tokenizer(GetParam()).dump());
  // "ab a" -> "▁ab▁a": merge ▁+a (rank 0) twice, leftmost first, then ▁a+b (rank 2).
  EXPECT_EQ(tokenizer.encode("ab a"), (TokenIds{264, 262}));
  EXPECT_EQ(tokenizer.encode("ab a", true), (TokenIds{1, 264, 262}));
  EXPECT_EQ(tokenizer.decode({1, 264, 262}, true), "ab a");
  // é is not in the vocabulary: its two UTF-8 bytes, as <0xC3> <0xA9>.
  EXPECT_EQ(tokenizer.encode("\xC3\xA9"), (TokenIds{259, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(tokenizer.decode({259, 3 + 0xC3, 3 + 0xA9}), "\xC3\xA9");
  EXPECT_EQ(tokenizer.encode("cab"), (TokenIds{259, 265, 263}));
  EXPECT_EQ(tokenizer.bos_token_id(), std::optional<int64_t>(1));  // from the template
}

INSTANTIATE_TEST_SUITE_P(AsNormalizerOrPreTokenizer, Metaspace, testing::Bool());

// Characters a and -, merges a+- and -+a and -+-: the pieces a Split leaves decide which merges can apply.
TokenIds split_ids(const std::string& behavior, const std::string& text, bool invert = false) {
  const json spec = {
      {"pre_tokenizer", {{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior}, {"invert", invert}}},
      {"model", {{"type", "BPE"},
                 {"vocab", {{"a", 0}, {"-", 1}, {"a-", 2}, {"-a", 3}, {"--", 4}}},
                 {"merges", {"a -", "- a", "- -"}}}}};
  return Tokenizer::from_json(spec.dump()).encode(text);
}

TEST(SplitBehaviors, PiecesFollowTokenizersSemantics) {
  EXPECT_EQ(split_ids("Isolated", "a-a"), (TokenIds{0, 1, 0}));
  EXPECT_EQ(split_ids("Removed", "a-a"), (TokenIds{0, 0}));
  EXPECT_EQ(split_ids("MergedWithPrevious", "a-a"), (TokenIds{2, 0}));
  EXPECT_EQ(split_ids("MergedWithNext", "a-a"), (TokenIds{0, 3}));
  EXPECT_EQ(split_ids("Isolated", "a--a"), (TokenIds{0, 1, 1, 0}));
  EXPECT_EQ(split_ids("Contiguous", "a--a"), (TokenIds{0, 4, 0}));
  EXPECT_EQ(split_ids("Removed", "a-a", true), (TokenIds{1}));  // invert: the a's are the delimiters
}

TEST(Tokenizer, MalformedFilesAreNamed) {
  EXPECT_THROW(Tokenizer::from_json("{not json"), std::invalid_argument);
  json spec = metaspace_tokenizer(false);
  spec["model"]["type"] = "WordPiece";
  EXPECT_NE(message_of<std::invalid_argument>([&] { Tokenizer::from_json(spec.dump()); }).find("'WordPiece'"),
            std::string::npos);
  spec = metaspace_tokenizer(false);
  spec["model"].erase("merges");
  EXPECT_NE(message_of<std::invalid_argument>([&] { Tokenizer::from_json(spec.dump()); }).find("no merges"),
            std::string::npos);
  spec = metaspace_tokenizer(false);
  spec["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
  EXPECT_NE(message_of<std::invalid_argument>([&] { Tokenizer::from_json(spec.dump()); }).find("'BertPreTokenizer'"),
            std::string::npos);
  spec = metaspace_tokenizer(false);
  spec["model"]["merges"].push_back("b c");  // "bc" is not in the vocabulary
  EXPECT_THROW(Tokenizer::from_json(spec.dump()), std::invalid_argument);
  EXPECT_THROW(Tokenizer::from_file("/nonexistent/tokenizer.json"), std::runtime_error);
}

// Found by fuzz_tokenizer_json: a float id was cast to an integer (undefined), and a huge id sized a table by it.
TEST(Tokenizer, IdsThatAreNotSmallIntegersAreNamed) {
  const auto error = [](const json& spec) {
    return message_of<std::invalid_argument>([&] { Tokenizer::from_json(spec.dump()); });
  };
  json spec = metaspace_tokenizer(false);
  const std::string token = spec["model"]["vocab"].begin().key();
  spec["model"]["vocab"][token] = 2.4e99;
  EXPECT_NE(error(spec).find("must be an integer"), std::string::npos) << error(spec);
  spec["model"]["vocab"][token] = int64_t{1} << 40;
  EXPECT_NE(error(spec).find("outside [0, 2147483647]"), std::string::npos) << error(spec);
  spec = metaspace_tokenizer(false);
  spec["added_tokens"] = json::array({{{"id", 3.5}, {"content", "<x>"}}});
  EXPECT_NE(error(spec).find("added token '<x>'"), std::string::npos) << error(spec);
}

TEST(Tokenizer, SparseIdsKeepTheirPlaces) {
  json spec = metaspace_tokenizer(false);
  const std::string token = spec["model"]["vocab"].begin().key();
  spec["model"]["vocab"][token] = 100000;
  const Tokenizer tokenizer = Tokenizer::from_json(spec.dump());
  EXPECT_EQ(tokenizer.vocab_size(), 100001);
  EXPECT_EQ(tokenizer.id_to_token(100000), token);
  EXPECT_EQ(tokenizer.id_to_token(99999), std::nullopt);
}

TEST(Tokenizer, InvalidUtf8IsAnError) {
  const Tokenizer tokenizer = Tokenizer::from_file(data_dir() + "/tokenizer/tokenizer.json");
  EXPECT_NE(message_of<std::invalid_argument>([&] { tokenizer.encode("ok \xC3\x28 no"); }).find("byte 3"),
            std::string::npos);
  EXPECT_THROW(tokenizer.encode("\xFF"), std::invalid_argument);
  EXPECT_THROW(encode_pair(tokenizer, "\xE2\x82", "x", false), std::invalid_argument);
}

TEST(PairEncodingRules, NoSecondBosWhenTheTextStartsWithIt) {
  const Tokenizer tokenizer = Tokenizer::from_file(model_dir("llama3"));
  const Request pair = encode_pair(tokenizer, "<|begin_of_text|>Question:", " yes", true);
  EXPECT_EQ(pair.context, encode_pair(tokenizer, "Question:", " yes", true).context);
  EXPECT_EQ(pair.context[0], 0);
  EXPECT_NE(pair.context[1], 0);
  EXPECT_EQ(tokenizer.encode("<|begin_of_text|>Question:", true)[1], 0);  // the plain encoder does add one
}


}  // namespace
}  // namespace prefix_scorer::test
