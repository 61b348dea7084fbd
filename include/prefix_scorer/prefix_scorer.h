#pragma once
// Umbrella header of the PrefixScorer library: everything a user calls, nothing internal.

#include "prefix_scorer/build_info.h"
#include "prefix_scorer/devices.h"
#include "prefix_scorer/errors.h"
#include "prefix_scorer/model.h"
#include "prefix_scorer/plain_scorer.h"
#include "prefix_scorer/scorer.h"
#include "prefix_scorer/stop_strings.h"
#include "prefix_scorer/tokenizer.h"
#include "prefix_scorer/types.h"
#include "prefix_scorer/rolling_windows.h"
