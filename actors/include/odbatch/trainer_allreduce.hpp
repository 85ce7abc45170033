#pragma once
// The trainer's own collective on the CPU: odbatch::TrainerAllreduce, an allreduce over the ranks
// of a DistEnv that meets through the run's store, apart from the loader's.
#include "odbatch/trainer/trainer_allreduce.hpp"
