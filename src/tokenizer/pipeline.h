#pragma once
// The text stages of a tokenizer.json, each built from its JSON: normalizers, pre-tokenizers and decoders.

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace prefix_scorer::tok {

// A piece of text on its way to the model; `at_start` marks the piece that begins the input.
struct Piece {
  std::string text;
  bool at_start = false;
};

using Normalizer = std::function<std::string(const std::string&)>;
using PreTokenizer = std::function<std::vector<Piece>(std::vector<Piece>)>;
using Decoder = std::function<std::vector<std::string>(std::vector<std::string>)>;

// Each throws std::invalid_argument naming an unsupported "type"; a null JSON gives the identity.
Normalizer make_normalizer(const nlohmann::json& spec);
PreTokenizer make_pre_tokenizer(const nlohmann::json& spec);
Decoder make_decoder(const nlohmann::json& spec);

}  // namespace prefix_scorer::tok
