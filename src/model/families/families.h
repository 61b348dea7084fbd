#pragma once
// Each family's file returns its model types' traits (model_family.h); registry.cpp lists the files' functions.

#include "model/model_family.h"

#include <vector>

namespace prefix_scorer::families {

// The fields every family starts from: Llama's keys and names, with `model_type`.
ModelFamily base(const char* model_type);

}  // namespace prefix_scorer::families
