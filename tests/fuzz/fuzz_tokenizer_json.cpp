// tokenizer.json from a stranger: the input is tokenizer.json text, then optionally a NUL byte and text to encode.
// Loading is a tokenizer or a std::invalid_argument; encoding is ids within the vocabulary or, for invalid UTF-8,
// a std::invalid_argument; decoding those ids works.
#include "prefix_scorer/tokenizer.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string json = input.substr(0, nul);
  const std::string text = nul == std::string::npos ? "Hello world, 12 apples!" : input.substr(nul + 1);
  try {
    const auto tokenizer = prefix_scorer::Tokenizer::from_json(json);
    for (const bool special : {false, true}) {
      const prefix_scorer::TokenIds ids = tokenizer.encode(text, special);
      for (int64_t id : ids) {
        if (id < 0 || id >= tokenizer.vocab_size()) std::abort();
      }
      tokenizer.decode(ids, special);
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
