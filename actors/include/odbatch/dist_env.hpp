#pragma once
// Where this process stands among the data-parallel ranks: odbatch::DistEnv, from torchrun's
// variables (DistEnv::from_env()) or a single rank.
#include "odbatch/dist/dist_env.hpp"
