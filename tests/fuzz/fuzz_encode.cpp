// Hostile text through the fixtures' byte-level BPE tokenizer: the input is a context, then optionally a NUL byte
// and a continuation. Valid UTF-8 encodes and decodes back to itself, and lm-eval's pair encoding gives
// ids within the vocabulary (a context of whitespace alone may become empty, as in lm-eval, which the scorer
// then refuses by name); invalid UTF-8 is a std::invalid_argument.
#include "prefix_scorer/tokenizer.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using prefix_scorer::Tokenizer;
  static const Tokenizer tokenizer = Tokenizer::from_file(PREFIX_SCORER_FIXTURE_TOKENIZER);
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string context = input.substr(0, nul);
  const std::string continuation = nul == std::string::npos ? " end" : input.substr(nul + 1);
  try {
    if (tokenizer.decode(tokenizer.encode(context)) != context) std::abort();
    const prefix_scorer::Request pair = prefix_scorer::encode_pair(tokenizer, context, continuation, false);
    for (const auto* ids : {&pair.context, &pair.continuation}) {
      for (int64_t id : *ids) {
        if (id < 0 || id >= tokenizer.vocab_size()) std::abort();
      }
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
