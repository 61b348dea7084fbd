#pragma once
// Umbrella header of the PrefixScorer library.

#include "prefix_scorer/attention.h"
#include "prefix_scorer/batching.h"
#include "prefix_scorer/checkpoint.h"
#include "prefix_scorer/devices.h"
#include "prefix_scorer/kv_cache.h"
#include "prefix_scorer/model.h"
#include "prefix_scorer/model_config.h"
#include "prefix_scorer/plain_scorer.h"
#include "prefix_scorer/requests.h"
#include "prefix_scorer/rope.h"
#include "prefix_scorer/rows.h"
#include "prefix_scorer/safetensors.h"
#include "prefix_scorer/types.h"
#include "prefix_scorer/weights.h"
