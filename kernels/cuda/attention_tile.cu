// Tensor-core attention pass 1 for prefill rows (see attention_tile.cuh).
//
// Block: 4 warps, 64 query rows (warp w: rows 16w..16w+15; row r is query
// head kvh * group + r % group of token r / group of the tile). Shared memory:
// the rows' Q (F16, pre-scaled), and two stages of KT keys of K and V filled
// by cp.async while the previous stage is multiplied. Rows are padded by 8
// halves so that the 8 rows one fragment load touches fall in distinct banks.
//
// Fragments of mma.m16n8k16 (lane = 4 g + t): A holds rows g, g + 8 and
// k = 2t, 2t + 1, 2t + 8, 2t + 9; B holds column g at the same k; C holds rows
// g, g + 8 and columns 2t, 2t + 1. S = Q K^T comes out in C layout, which is
// the A layout of P for P V (FlashAttention-2's register reuse); V's B
// fragments come transposed from shared memory by ldmatrix.trans.
#include "attention_splits.cuh"
#include "attention_tile.cuh"
#include "cuda_common.cuh"
#include "mma_ptx.cuh"

#include <cstdlib>

namespace kestrel::cuda {
namespace {

constexpr int kTileWarps = 4;
constexpr int kTileRows = 16 * kTileWarps;

__device__ __forceinline__ uint32_t lds32(const __half* p) { return *reinterpret_cast<const uint32_t*>(p); }

template <int D, int KT>
constexpr size_t tileSmemBytes() {
    return sizeof(__half) * static_cast<size_t>(kTileRows + 4 * KT) * (D + 8);
}

// One query row of a thread (it holds two: g and g + 8 of its warp's 16).
struct RowState {
    int tile;        // token index in the tile
    int head;
    int pos;
    int64_t lo, hi;  // keys of this split it sees in the current segment (lo > hi: none)
    float m, l;      // running max (log2 domain) and this thread's part of the sum
};

template <int D, int KT>
__global__ void __launch_bounds__(kTileWarps * 32)
    attnTileKernel(const float* __restrict__ q, int64_t tokens, const int32_t* __restrict__ positions, KvDev kv,
                   AttentionDev p, float* __restrict__ scratchO, float2* __restrict__ scratchML) {
    constexpr int LD = D + 8;
    extern __shared__ __align__(16) unsigned char smemRaw[];
    __half* sQ = reinterpret_cast<__half*>(smemRaw);
    __half* sK = sQ + kTileRows * LD;  // [2][KT][LD]
    __half* sV = sK + 2 * KT * LD;     // [2][KT][LD]
    __shared__ int sPos[kTileRows], sSeq[kTileRows];

    const int group = p.heads / p.kvHeads;
    const int tpb = kTileRows / group;  // tokens per tile
    const auto tilesPerHead = static_cast<int>((tokens - p.tileFrom + tpb - 1) / tpb);
    const int kvh = static_cast<int>(blockIdx.x) / tilesPerHead;
    const int64_t tok0 = p.tileFrom + static_cast<int64_t>(blockIdx.x % tilesPerHead) * tpb;
    const int nt = static_cast<int>(min(static_cast<int64_t>(tpb), tokens - tok0));
    const int64_t L = p.tileKeys;
    const int64_t split = blockIdx.y;
    const int64_t splitLo = split * L, splitHi = splitLo + L - 1;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t4 = lane & 3;

    pdlEnter();
    for (int i = tid; i < nt; i += blockDim.x) {
        sPos[i] = positions[tok0 + i];
        sSeq[i] = kv.seqRows ? kv.seqRows[tok0 + i] : 0;
    }
    __syncthreads();
    bool any = false;
    for (int i = 0; i < nt && !any; ++i) any = firstVisible(sPos[i], p) <= splitHi && sPos[i] >= splitLo;
    if (!any) return;  // the same answer in every thread

    for (int idx = tid; idx < kTileRows * (D / 4); idx += blockDim.x) {
        const int r = idx / (D / 4), c = (idx % (D / 4)) * 4;
        const int ti = r / group;
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (ti < nt)
            v = *reinterpret_cast<const float4*>(q + ((tok0 + ti) * p.heads + kvh * group + r % group) * D + c);
        auto* dst = reinterpret_cast<__half2*>(sQ + r * LD + c);
        dst[0] = __floats2half2_rn(v.x * p.scale, v.y * p.scale);
        dst[1] = __floats2half2_rn(v.z * p.scale, v.w * p.scale);
    }

    RowState row[2];
    for (int i = 0; i < 2; ++i) {
        const int r = warp * 16 + g + 8 * i;
        row[i].tile = r / group;
        row[i].head = kvh * group + r % group;
        row[i].pos = row[i].tile < nt ? sPos[row[i].tile] : -1;
    }
    const int64_t headOff = static_cast<int64_t>(kvh) * D;
    const auto* kBase = static_cast<const __half*>(kv.k);
    const auto* vBase = static_cast<const __half*>(kv.v);

    // Each run of tokens from one sequence, in turn.
    for (int segEnd = 0, segStart = 0; segStart < nt; segStart = segEnd) {
        const int seq = sSeq[segStart];
        int64_t lo = INT64_MAX, hi = -1;
        for (segEnd = segStart; segEnd < nt && sSeq[segEnd] == seq; ++segEnd) {
            lo = min(lo, static_cast<int64_t>(firstVisible(sPos[segEnd], p)));
            hi = max(hi, static_cast<int64_t>(sPos[segEnd]));
        }
        lo = max(lo, splitLo);
        hi = min(hi, splitHi);
        if (lo > hi) continue;
        const int32_t* table = kv.table + static_cast<int64_t>(seq) * kv.tableWidth;
        for (RowState& rs : row) {
            const bool in = rs.tile >= segStart && rs.tile < segEnd;
            rs.lo = in ? max(static_cast<int64_t>(firstVisible(rs.pos, p)), splitLo) : 1;
            rs.hi = in ? min(static_cast<int64_t>(rs.pos), splitHi) : 0;
            rs.m = -INFINITY;
            rs.l = 0.0f;
        }
        float o[D / 8][4];
#pragma unroll
        for (int n = 0; n < D / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;

        const auto tiles = static_cast<int>((hi - lo) / KT + 1);
        auto loadStage = [&](int it) {
            const int64_t kb = lo + static_cast<int64_t>(it) * KT;
            __half* k = sK + (it & 1) * KT * LD;
            __half* v = sV + (it & 1) * KT * LD;
            constexpr int kChunks = D / 8;  // 16-byte pieces per row
            for (int idx = tid; idx < KT * kChunks; idx += blockDim.x) {
                const int r = idx / kChunks, c = (idx % kChunks) * 8;
                const bool ok = kb + r <= hi;
                const int64_t off = kvRowOffset(kv, table, ok ? kb + r : lo) + headOff + c;
                cpAsync<16>(k + r * LD + c, kBase + off, ok);
                cpAsync<16>(v + r * LD + c, vBase + off, ok);
            }
            cpAsyncCommit();
        };
        loadStage(0);
        for (int it = 0; it < tiles; ++it) {
            if (it + 1 < tiles) {
                loadStage(it + 1);
                cpAsyncWait<1>();
            } else {
                cpAsyncWait<0>();
            }
            __syncthreads();
            const __half* k = sK + (it & 1) * KT * LD;
            const __half* v = sV + (it & 1) * KT * LD;
            const int64_t kb = lo + static_cast<int64_t>(it) * KT;

            float s[KT / 8][4];
#pragma unroll
            for (int n = 0; n < KT / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                const __half* qa = sQ + (warp * 16 + g) * LD + kk * 16 + 2 * t4;
                const uint32_t a[4] = {lds32(qa), lds32(qa + 8 * LD), lds32(qa + 8), lds32(qa + 8 * LD + 8)};
#pragma unroll
                for (int n = 0; n < KT / 8; ++n) {
                    const __half* kr = k + (n * 8 + g) * LD + kk * 16 + 2 * t4;
                    mma16816(s[n], a, lds32(kr), lds32(kr + 8));
                }
            }
            // Mask, soft-cap, online softmax in the log2 domain (exp2 is one instruction).
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                RowState& rs = row[i];
                float mx = -INFINITY;
#pragma unroll
                for (int n = 0; n < KT / 8; ++n)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int64_t j = kb + n * 8 + 2 * t4 + e;
                        float x = s[n][2 * i + e];
                        if (p.softcap > 0.0f) x = p.softcap * tanhf(x / p.softcap);
                        x = (j >= rs.lo && j <= rs.hi) ? x * kLog2e : -INFINITY;
                        s[n][2 * i + e] = x;
                        mx = fmaxf(mx, x);
                    }
                const float mNew = fmaxf(rs.m, quadMax(mx));
                // mNew is -inf while the row has seen no key: nothing to rescale, nothing to add.
                const float corr = mNew == -INFINITY ? 1.0f : exp2f(rs.m - mNew);
                float sum = 0.0f;
#pragma unroll
                for (int n = 0; n < KT / 8; ++n)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const float pv = mNew == -INFINITY ? 0.0f : exp2f(s[n][2 * i + e] - mNew);
                        s[n][2 * i + e] = pv;
                        sum += pv;
                    }
                rs.l = rs.l * corr + sum;
                rs.m = mNew;
#pragma unroll
                for (int n = 0; n < D / 8; ++n) {
                    o[n][2 * i] *= corr;
                    o[n][2 * i + 1] *= corr;
                }
            }
            // O += P V.
#pragma unroll
            for (int kk = 0; kk < KT / 16; ++kk) {
                const uint32_t a[4] = {packHalf2(s[2 * kk][0], s[2 * kk][1]), packHalf2(s[2 * kk][2], s[2 * kk][3]),
                                       packHalf2(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                       packHalf2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
                for (int nd = 0; nd < D / 16; ++nd) {
                    uint32_t b[4];
                    ldmatrixX4Trans(b, v + (kk * 16 + (lane & 15)) * LD + nd * 16 + (lane >> 4) * 8);
                    mma16816(o[2 * nd], a, b[0], b[1]);
                    mma16816(o[2 * nd + 1], a, b[2], b[3]);
                }
            }
            __syncthreads();  // the next stage's loads overwrite this buffer
        }
        // One partial per row that sees keys of this split (natural-log max for the combine).
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            RowState& rs = row[i];
            const float l = quadSum(rs.l);
            if (rs.lo > rs.hi) continue;
            const int64_t t = tok0 + rs.tile;
            const int64_t slot =
                (t * p.heads + rs.head) * p.maxSplits + (split - firstVisible(rs.pos, p) / L);
            float* dst = scratchO + slot * D + 2 * t4;
#pragma unroll
            for (int n = 0; n < D / 8; ++n)
                *reinterpret_cast<float2*>(dst + n * 8) = make_float2(o[n][2 * i], o[n][2 * i + 1]);
            if (t4 == 0) scratchML[slot] = make_float2(rs.m * kLn2, l);
        }
    }
}

template <int D, int KT>
void launchTile(const float* q, int64_t tokens, const int32_t* positions, const KvDev& kv, const AttentionDev& p,
                float* scratchO, float2* scratchML, cudaStream_t stream) {
    constexpr size_t smem = tileSmemBytes<D, KT>();  // launchKSmem opts the kernel in
    const int group = p.heads / p.kvHeads;
    const int tpb = kTileRows / group;
    const dim3 grid(static_cast<unsigned>(p.kvHeads) * ceilDiv(tokens - p.tileFrom, tpb), static_cast<unsigned>(p.maxSplits));
    launchKSmem(attnTileKernel<D, KT>, grid, dim3(kTileWarps * 32), smem, stream, q, tokens, positions, kv, p, scratchO,
                scratchML);
}

}  // namespace

bool attentionTileFits(const KvDev& kv, const AttentionDev& p, const float* q) {
    static const bool enabled = switchedOn("KESTREL_CUDA_ATTN_TILE");
    const auto aligned = [](const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15) == 0; };
    return enabled && kv.f16 && (p.headDim == 64 || p.headDim == 128 || p.headDim == 256) && kv.rowStride % 8 == 0 &&
           aligned(kv.k) && aligned(kv.v) && aligned(q) && p.kvHeads > 0 && p.heads % p.kvHeads == 0 &&
           p.heads / p.kvHeads <= kTileRows && p.tileKeys > 0 && deviceMajor() >= 8;
}

void launchAttentionTile(const float* q, int64_t tokens, const int32_t* positions, const KvDev& kv,
                         const AttentionDev& p, float* scratchO, float2* scratchML, cudaStream_t stream) {
    if (tokens <= p.tileFrom) return;
    if (p.headDim == 64) launchTile<64, 64>(q, tokens, positions, kv, p, scratchO, scratchML, stream);
    else if (p.headDim == 128) launchTile<128, 64>(q, tokens, positions, kv, p, scratchO, scratchML, stream);
    else launchTile<256, 32>(q, tokens, positions, kv, p, scratchO, scratchML, stream);
}

}  // namespace kestrel::cuda
