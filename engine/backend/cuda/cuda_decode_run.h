// Internal to engine/backend/cuda: finding the ops the persistent decode step
// (kernels/cuda/decode_step.cuh) can run in one launch.
#pragma once

#include "cuda_objects.h"
#include "decode_step.cuh"

#include <cstddef>
#include <vector>

namespace kestrel::backend::cudaimpl {

// Whole one-token llama layers from ops[i] on (at most kDecodeMaxLayers), and
// the final norm + logits when they follow the last one: fills `plan` (all but
// plan.sync) and returns how many ops it covers; 0 when ops[i] does not start
// such a layer.
size_t matchDecodeRun(const std::vector<Op>& ops, size_t i, cuda::DecodeStepDev& plan);

}  // namespace kestrel::backend::cudaimpl
