// Q, K, V GEMVs with RoPE and the KV write in the epilogue (see gemv_rope.cuh).
// Two rows per warp also keep twice the weight bytes in flight per warp of the
// plain one-row GEMV, which is what the short Q, K, V matrices (one load round
// per row) are limited by.
#include "gemv_dot.cuh"
#include "gemv_split.cuh"
#include "gemv_rope.cuh"

namespace kestrel::cuda {
namespace {

using gemvdev::kWarpsPerBlock;

struct QkvJobs {
    GemvJob j[3];
};

// The rows of pair `pair` of a head-structured job: RoPE's partners (e, e +
// dims/2) in NeoX order or (2e, 2e + 1) otherwise for e < dims/2, then the
// unrotated rest in adjacent pairs. `e` is the frequency index when rotated.
__device__ __forceinline__ bool ropePair(int64_t pair, const QkvRope& rk, int64_t& r0, int64_t& r1, int& e) {
    const int hd = rk.headDim, half = rk.rope.dims / 2;
    const int64_t base = pair / (hd / 2) * hd;
    e = static_cast<int>(pair % (hd / 2));
    if (e < half) {
        r0 = base + (rk.rope.neox ? e : 2 * e);
        r1 = base + (rk.rope.neox ? e + half : 2 * e + 1);
        return true;
    }
    r0 = base + (rk.rope.neox ? rk.rope.dims + 2 * (e - half) : 2 * e);
    r1 = r0 + 1;
    return false;
}

// Pair `pair` of job j (q 0, k 1, v 2) is done: rotate q and k, store k and v in the cache.
__device__ __forceinline__ void storeQkvPair(const QkvJobs& jobs, const QkvRope& rk, int j, int64_t pair, float v0,
                                             float v1) {
    int64_t r0, r1;
    int e;
    const bool rotate = ropePair(pair, rk, r0, r1, e) && j < 2;  // q and k rotate, v does not
    const int p = rk.positions[0];
    if (rotate) {  // same arithmetic as ropeStoreHeadKernel (ops.cu)
        float s, c;
        sincosf(static_cast<float>(p) * rk.rope.invFreq[e], &s, &c);
        s *= rk.rope.mscale;
        c *= rk.rope.mscale;
        const float x0 = v0, x1 = v1;
        v0 = x0 * c - x1 * s;
        v1 = x0 * s + x1 * c;
    }
    if (j > 0) {
        const int64_t off = kvRowOffset(rk.kv, kvTableOf(rk.kv, 0), p);
        void* slab = j == 1 ? rk.kv.k : rk.kv.v;
        kvStoreValue(rk.kv, slab, off + r0, v0);
        kvStoreValue(rk.kv, slab, off + r1, v1);
    }
    jobs.j[j].y[r0] = v0;
    jobs.j[j].y[r1] = v1;
}

// The job of pair index `pair` over all three jobs (pair becomes the index within it).
__device__ __forceinline__ int jobOfPair(const QkvJobs& jobs, int64_t& pair) {
    int j = 0;
    while (j < 2 && pair >= jobs.j[j].w.rows / 2) pair -= jobs.j[j++].w.rows / 2;
    return j;
}

// Act: Q8In, or NormIn (gemv_act.cuh), whose staging every thread of the block
// joins: so a warp past the last pair multiplies the last pair again instead of
// returning, and stores nothing.
template <DevFormat F, class Act>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    gemvQkvRopeKernel(QkvJobs jobs, Act xq, QkvRope rk) {
    const int lane = threadIdx.x & 31;
    const int64_t pairs = jobs.j[0].w.rows / 2 + jobs.j[1].w.rows / 2 + jobs.j[2].w.rows / 2;
    const int64_t warpPair = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
    const bool active = warpPair < pairs;
    int64_t pair = active ? warpPair : pairs - 1;
    const int j = jobOfPair(jobs, pair);
    pdlTrigger();
    const GemvJob& job = jobs.j[j];
    int64_t r0, r1;
    int e;
    ropePair(pair, rk, r0, r1, e);
    float acc[2][1] = {{0.0f}, {0.0f}};
    gemvdev::rowDotInt<F, 1, 2, 4>(job.w, r0, job.w, r1, xq, 0, 1, lane, acc);
    const float v0 = warpSum(acc[0][0]), v1 = warpSum(acc[1][0]);
    if (active && lane == 0) storeQkvPair(jobs, rk, j, pair, v0, v1);
}

// The same through the split-row kernel (gemv_split.cuh): task k is pair k.
struct QkvRopeTask {
    static constexpr int M = 2;
    QkvJobs jobs;
    QkvRope rk;
    int64_t count, cols;
    __device__ __forceinline__ void rows(int64_t k, DevMatrix (&w)[2], int64_t (&r)[2]) const {
        const int j = jobOfPair(jobs, k);
        int e;
        ropePair(k, rk, r[0], r[1], e);
        w[0] = w[1] = jobs.j[j].w;
    }
    __device__ __forceinline__ void finish(int64_t k, const float (&v)[2]) const {
        const int j = jobOfPair(jobs, k);
        storeQkvPair(jobs, rk, j, k, v[0], v[1]);
    }
};

}  // namespace

bool gemvQkvRopeFits(const GemvJob (&jobs)[3], int64_t tokens, const QkvRope& rope) {
    const DevFormat f = jobs[0].w.format;
    if (tokens != 1 || f == DevFormat::F16) return false;
    for (const GemvJob& job : jobs)
        if (job.w.format != f || job.w.cols != jobs[0].w.cols) return false;
    const int hd = rope.headDim, dims = rope.rope.dims;
    return hd > 0 && hd % 2 == 0 && dims > 0 && dims % 2 == 0 && dims <= hd && jobs[0].w.rows % hd == 0 &&
           jobs[1].w.rows % hd == 0 && jobs[2].w.rows == jobs[1].w.rows;
}

namespace {

// The split-row task of the three jobs; count 0 when there is nothing to do.
QkvRopeTask qkvTask(const GemvJob (&jobs)[3], const QkvRope& rope) {
    QkvJobs qj{};
    int64_t pairs = 0;
    for (int i = 0; i < 3; ++i) {
        qj.j[i] = jobs[i];
        pairs += jobs[i].w.rows / 2;
    }
    return QkvRopeTask{qj, rope, pairs, jobs[0].w.cols};
}

}  // namespace

namespace {

// The split-row kernel where it fits, else a warp per pair, on activations from `in`
// (gemvsplit's Q8In or NormIn).
template <class Act>
void launchQkvRopeOn(const GemvJob (&jobs)[3], const Act& in, const QkvRope& rope, cudaStream_t stream) {
    const QkvRopeTask task = qkvTask(jobs, rope);
    if (task.count == 0) return;
    if (gemvsplit::splitFits(jobs[0].w.format, jobs[0].w.cols)) {
        gemvsplit::launchSplit(task, jobs[0].w.format, in, stream);
        return;
    }
    const dim3 grid(ceilDiv(task.count, kWarpsPerBlock)), block(kWarpsPerBlock * 32);
    const size_t smem = Act::smemBytes(jobs[0].w.cols);
    forIntegerFormat(jobs[0].w.format, [&](auto format) {  // F16 is excluded by gemvQkvRopeFits
        launchKSmem(gemvQkvRopeKernel<decltype(format)::value, Act>, grid, block, smem, stream, task.jobs, in, rope);
    });
}

}  // namespace

void launchGemvQkvRope(const GemvJob (&jobs)[3], NormQ8 src, const QkvRope& rope, cudaStream_t stream) {
    const int64_t cols = jobs[0].w.cols;
    const int threads = gemvsplit::splitFits(jobs[0].w.format, cols) ? gemvsplit::blockThreads(cols) : kWarpsPerBlock * 32;
    gemvdev::withNormIn(cols, threads, src, [&](const auto& in) { launchQkvRopeOn(jobs, in, rope, stream); });
}

void launchGemvQkvRope(const GemvJob (&jobs)[3], Q8Act xq, const QkvRope& rope, cudaStream_t stream) {
    launchQkvRopeOn(jobs, gemvdev::Q8In{xq}, rope, stream);
}

}  // namespace kestrel::cuda
