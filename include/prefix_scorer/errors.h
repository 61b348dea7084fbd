#pragma once
// Exception types beyond the standard ones, so that bindings can map them to their own (FileNotFoundError).

#include <stdexcept>

namespace prefix_scorer {

// A file the caller named (a checkpoint, a config, a tokenizer) does not exist or cannot be opened.
class FileNotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A call stopped by PrefixScorer::cancel() (or, from Python, by Ctrl-C) before it finished.
class Cancelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace prefix_scorer
