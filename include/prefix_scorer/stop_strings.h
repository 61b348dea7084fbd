#pragma once
// Stop strings checked in C++: a StopHook for PrefixScorer::generate that decodes each row's last tokens with the
// native tokenizer, so that a call with stop strings runs without calling back into Python for every token.

#include "prefix_scorer/generation.h"
#include "prefix_scorer/tokenizer.h"

#include <string>
#include <vector>

namespace prefix_scorer {

// Ends request i's row once one of stops[i] appears in the decode (special tokens kept) of its last tokens: as many
// as the longest of its strings has bytes, and four more. A string split across more tokens than that is missed
// and its row runs on (the caller cuts the text at the first stop string anyway). A request with no strings never
// stops on one; an empty string, or more lists than requests, is an std::invalid_argument naming the request.
StopHook stop_strings_hook(Tokenizer tokenizer, std::vector<std::vector<std::string>> stops);

}  // namespace prefix_scorer
