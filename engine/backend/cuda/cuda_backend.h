// The CUDA backend: weights in device memory (repacked for the kernels of
// kernels/cuda), activations and the KV cache on one GPU, and each step
// replayed as one CUDA graph once it has been seen twice.
//
// How a step runs: ops are not launched when called; they are recorded (a
// plain list of kernel arguments) until the host needs a result (download) or
// the next step's inputs arrive (upload after ops). The list is then matched
// against the graphs already captured: an identical list (a decode step: same
// tensors, same row counts; positions and token ids live in device buffers)
// replays its graph with one launch; a list seen twice in a row is captured
// and instantiated; anything else runs eagerly. While executing, neighbouring
// ops fuse: residual add + RMSNorm (+ int8 quantisation of the result), the Q,
// K and V GEMVs into one launch, gate + up GEMVs + GLU into one, RoPE of q and
// k + the KV write into one.
//
// Errors: ops cannot fail individually (the interface returns void); the
// first CUDA error is kept and returned by the next upload() or download().
//
// No CUDA type appears here: the rest of the engine includes this header.
// Thread-safety: as every Backend, one op at a time.
#pragma once

#include "backend.h"

#include <memory>
#include <string>

namespace kestrel::backend {

struct CudaDeviceInfo {
    int index = 0;
    std::string name;
    int computeMajor = 0, computeMinor = 0;
    size_t totalBytes = 0, freeBytes = 0;
    int multiprocessors = 0;
};

// Checks that `device` exists, that the driver works and that this build has
// kernels for it; the error says which of these failed and what to do.
Result<CudaDeviceInfo> probeCudaDevice(int device);

// "cuda" -> 0, "cuda:N" -> N; anything else is InvalidArgument.
Result<int> parseCudaDevice(const std::string& spec);

Result<std::unique_ptr<Backend>> createCudaBackend(int device);

}  // namespace kestrel::backend
