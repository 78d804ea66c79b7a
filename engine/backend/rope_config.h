// A backend's RoPE parameters as the kernels' configuration (kernels/cpu/ops.h,
// whose ropeFrequencies both backends use for the frequency table). One place,
// so a new scaling field reaches the CPU and the CUDA backend alike.
#pragma once

#include "backend.h"
#include "ops.h"

namespace kestrel::backend {

// freqFactors: the backend's host copy of p.freqFactors (nullptr when the model has none).
inline kernels::RopeConfig ropeConfigOf(const RopeParams& p, const float* freqFactors) {
    kernels::RopeConfig cfg;
    cfg.dims = p.dims;
    cfg.base = p.base;
    cfg.neox = p.neox;
    cfg.scaling = static_cast<kernels::RopeScaling>(p.scaling);
    cfg.factor = p.factor;
    cfg.lowFreqFactor = p.lowFreqFactor;
    cfg.highFreqFactor = p.highFreqFactor;
    cfg.originalContext = p.originalContext;
    cfg.yarnBetaFast = p.yarnBetaFast;
    cfg.yarnBetaSlow = p.yarnBetaSlow;
    cfg.yarnExtFactor = p.yarnExtFactor;
    cfg.attnFactor = p.attnFactor;
    cfg.freqFactors = freqFactors;
    return cfg;
}

}  // namespace kestrel::backend
