#pragma once
// Test helpers free of libtorch (for the sanitized tokenizer tests too): where the golden fixtures lie
// (tests/data), and the message an exception carries.

#include <string>
#include <vector>

namespace prefix_scorer::test {

std::string data_dir();
std::string model_dir(const std::string& name);
const std::vector<std::string>& fixture_models();
// The fixtures with recurrent layers (Gated DeltaNet): every path but packed rows, which they do not take.
const std::vector<std::string>& recurrent_fixture_models();

// The message `f` throws as `Exception`, or "<nothing thrown>".
template <typename Exception, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const Exception& e) {
    return e.what();
  }
  return "<nothing thrown>";
}

}  // namespace prefix_scorer::test
