#pragma once
// <slurm/spank.h> for C++: its slurm_spank_* prototypes sit outside its own extern "C"
// block, so it must be included inside one or C++ rejects our extern "C" definitions.
extern "C" {
#include <slurm/spank.h>
}
