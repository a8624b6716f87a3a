#pragma once
// The executor's gradient buckets are defined with the model's vocabulary, where the
// planner prices them too.
#include "model/gradient_buckets.h"
