#pragma once
// The loader's state at a step boundary (docs/checkpoint.md): odbatch::Checkpoint, which
// Pipeline::state() returns and Pipeline::resume() goes on from; save_checkpoint() joins every
// rank's part into one file, read_checkpoint_file() loads it, join_checkpoint_parts() joins parts
// held in memory.
#include "odbatch/config/checkpoint_file.hpp"
#include "odbatch/core/checkpoint.hpp"
#include "odbatch/proto_msgs/checkpoint_codec.hpp"
