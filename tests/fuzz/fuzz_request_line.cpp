// One line of prefix-scorer-bench's JSONL requests: a request (text lines encoded with the fixtures' tokenizer)
// or a std::invalid_argument.
#include "request_io.h"

#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace prefix_scorer;
  static const Tokenizer tokenizer = Tokenizer::from_file(PREFIX_SCORER_FIXTURE_TOKENIZER);
  static const bench::TextEncoding encoding{&tokenizer, true};
  try {
    bench::parse_request_line(std::string(reinterpret_cast<const char*>(data), size),
                              [&]() -> const bench::TextEncoding& { return encoding; });
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
