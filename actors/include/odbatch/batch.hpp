#pragma once
// A batch as the trainer gets it from Pipeline::next_batch(): odbatch::Batch (its arrays, padded
// or packed, BatchLayout) and its StepInfo (loss_scale, idle, this rank's and every rank's totals).
#include "odbatch/batch/batch.hpp"
