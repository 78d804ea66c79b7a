// Up to three products sharing one input (Q, K and V; gate and up) as one
// launch of a row-tiled kernel: the blocks of job 0's tiles come first, then
// job 1's, then job 2's. Shared by the tensor-core kernels.
#pragma once

#include "cuda_common.cuh"
#include "dev_format.cuh"

namespace kestrel::cuda {

struct TiledJobs {
    GemvJob j[3];
    unsigned tiles[3];  // row tiles per job
    int count;
    unsigned total;     // tiles of all jobs
};

inline TiledJobs tileJobs(const GemvJob* list, int count, int64_t rowsPerTile) {
    TiledJobs jobs{};
    jobs.count = count < 3 ? count : 3;
    for (int i = 0; i < jobs.count; ++i) {
        jobs.j[i] = list[i];
        jobs.tiles[i] = ceilDiv(list[i].w.rows, rowsPerTile);
        jobs.total += jobs.tiles[i];
    }
    return jobs;
}

// The job of a block's tile index; `tile` becomes the index within that job.
__device__ __forceinline__ const GemvJob& jobOfTile(const TiledJobs& jobs, unsigned& tile) {
    int j = 0;
    while (j < jobs.count - 1 && tile >= jobs.tiles[j]) tile -= jobs.tiles[j++];
    return j == 0 ? jobs.j[0] : j == 1 ? jobs.j[1] : jobs.j[2];
}

}  // namespace kestrel::cuda
