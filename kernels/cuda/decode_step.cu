// The persistent one-token decode step (see decode_step.cuh).
#include "attention_dev.cuh"
#include "bulk_copy.cuh"
#include "decode_step.cuh"
#include "gemv_dot.cuh"
#include "ops_dev.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace kestrel::cuda {
namespace {

using gemvdev::Src;
using gemvdev::WBlock;

// 7 consumer warps + the producer: 8 warps, 2 per SM sub-partition, so a thread
// may hold up to 255 registers. With 8 + 1 warps one sub-partition holds 3 and
// ptxas caps threads at 168 registers: the kernel spilled, and its spills missed
// the ~28 KB of L1 this much shared memory leaves.
constexpr int kConsumerWarps = 7;
constexpr int kConsumers = kConsumerWarps * 32;
constexpr int kThreads = kConsumers + 32;  // + the producer warp
// A stage holds a chunk: up to 16 whole rows of one matrix (or of gate and up),
// 32 KB at most. Smaller stages mean more, shorter waits; larger ones, fewer
// rows per block left for the last chunk of a phase.
constexpr uint32_t kStageBytes = 32 * 1024;
constexpr int kMaxSlots = 16;  // rows per chunk (gate and up rows counted apart)
constexpr int kMaxStages = 12;
constexpr int kKeysPerStep = 4;  // KV rows a warp has in flight in attention

// ---------------------------------------------------------------------------
// KESTREL_CUDA_MEGA_TRACE=1: block 0's consumer thread 0 sums the time of each
// part of the step (ns, %globaltimer) over all launches; printed at exit.

enum TraceEvent : int {
    kTrBarrier = 0,  // + 3 * phase kind: waiting at the grid barrier before it
    kTrPrep = 1,     // the activation into shared memory (attention: the work)
    kTrWork = 2,     // consuming the phase's chunks
    kTrLaunches = 18, kTrCycles = 19, kTrNs = 20, kTrEvents = 21
};
__device__ unsigned long long gTrace[kTrEvents];

__device__ __forceinline__ uint64_t nowNs() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

struct Tracer {
    bool on;
    uint64_t last;
    __device__ __forceinline__ void mark(int ev) {
        if (!on) return;
        const uint64_t t = nowNs();
        atomicAdd(&gTrace[ev], t - last);
        last = t;
    }
};

// ---------------------------------------------------------------------------
// Synchronisation among the consumer warps (the producer never joins) and
// across the grid.

__device__ __forceinline__ void consumerSync() { asm volatile("bar.sync 1, %0;" ::"n"(kConsumers) : "memory"); }

// Every block's consumers have arrived: writes before it are visible to reads
// after it (those reads use ld.cg, which does not hit a stale L1 line).
__device__ __forceinline__ void gridBarrier(unsigned* counter, unsigned& target) {
    consumerSync();
    target += gridDim.x;
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(counter, 1u);
        unsigned seen;
        do {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(counter) : "memory");
        } while (seen < target);
    }
    consumerSync();
}

__device__ __forceinline__ float consumerSum(float v, float* partial) {
    v = warpSum(v);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
    consumerSync();
    float t = 0.0f;
#pragma unroll
    for (int w = 0; w < kConsumerWarps; ++w) t += partial[w];
    consumerSync();  // partial is reused by the next call
    return t;
}

// ---------------------------------------------------------------------------
// Rows of `mats` matrices (1, or 2 for gate with up) per chunk: as many as fit a
// stage, up to kMaxSlots slots. Host and device agree (decodeStepFits uses it).
__host__ __device__ __forceinline__ int chunkRows(int64_t cols, int qb, int sb, int mats) {
    const uint32_t rowBytes = static_cast<uint32_t>(cols / 32) * static_cast<uint32_t>(qb + sb);  // < 2^32: decodeStepFits
    int r = static_cast<int>((kStageBytes - 32u * mats) / (rowBytes * static_cast<uint32_t>(mats)));
    return r > kMaxSlots / mats ? kMaxSlots / mats : r;
}

// ---------------------------------------------------------------------------
// The chunk sequence: phases in step order, each block's contiguous share of a
// phase's rows cut into chunks. Producer and consumers walk the same sequence.

enum Phase : int { kQkv = 0, kOut = 1, kGlu = 2, kDown = 3 };

// A phase's matrices, by value: indexing an array of them (or of pointers into
// the parameter space) with a run-time index would put them in local memory,
// which the hot loops would then reload on every chunk.
struct PhaseMats {
    DevMatrix m0, m1, m2;
    int count;  // matrices stacked by rows (Q, K, V), or 2 for the gate/up pair
    bool pair;  // gate and up: a chunk holds the same rows of both
    __device__ __forceinline__ DevMatrix at(int j) const {
        DevMatrix r = m2;
        if (j == 0) r = m0;
        else if (j == 1) r = m1;
        return r;
    }
};

__device__ __forceinline__ PhaseMats phaseMats(const DecodeStepDev& p, const DecodeLayerDev* layers, int ph) {
    PhaseMats pm;
    pm.count = 1;
    pm.pair = false;
    if (ph >= p.layers * 4) {
        pm.m0 = pm.m1 = pm.m2 = p.out;
        return pm;
    }
    const DecodeLayerDev& L = layers[ph / 4];
    switch (ph % 4) {
    case kQkv:
        pm.m0 = L.wq;
        pm.m1 = L.wk;
        pm.m2 = L.wv;
        pm.count = 3;
        break;
    case kOut: pm.m0 = pm.m1 = pm.m2 = L.wo; break;
    case kGlu:
        pm.m0 = L.gate;
        pm.m1 = pm.m2 = L.up;
        pm.count = 2;
        pm.pair = true;
        break;
    default: pm.m0 = pm.m1 = pm.m2 = L.down; break;
    }
    return pm;
}

struct Chunk {
    int job;  // which stacked matrix (Q 0, K 1, V 2), 0 otherwise
    int row;  // first row within that matrix
    int n;    // rows
};

// Walks one block's chunks of a phase. Everything per matrix (rows per chunk,
// bytes per row) is worked out when the walk reaches that matrix, so a step to
// the next chunk is a few adds: the loop body runs once per chunk on every
// consumer warp and on the producer, and on a GPU a long scalar body costs
// both issue slots and instruction-cache lines (measured ~1.3 us per chunk with
// divisions and 64-bit arithmetic in it).
struct ChunkCursor {
    PhaseMats pm;
    int pos, end;       // over the phase's stacked rows
    int job, row;       // the current matrix and the next row in it
    DevMatrix m;        // that matrix
    int rowsPerChunk;
    uint32_t qRow, scRow;  // its bytes per row: quants, scales

    __device__ __forceinline__ void enter(int j) {
        job = j;
        m = pm.at(j);
        const int qb = quantBytesOf(m.format), sb = scaleBytesOf(m.format);
        rowsPerChunk = chunkRows(m.cols, qb, sb, pm.pair ? 2 : 1);
        qRow = static_cast<uint32_t>(m.cols / 32) * qb;
        scRow = static_cast<uint32_t>(m.cols / 32) * sb;
    }
    __device__ __forceinline__ void start(const DecodeStepDev& p, const DecodeLayerDev* layers, int ph) {
        pm = phaseMats(p, layers, ph);
        int total = static_cast<int>(pm.m0.rows);
        if (pm.count == 3) total += static_cast<int>(pm.m1.rows + pm.m2.rows);
        pos = static_cast<int>(static_cast<uint32_t>(total) * blockIdx.x / gridDim.x);  // total * grid < 2^32
        end = static_cast<int>(static_cast<uint32_t>(total) * (blockIdx.x + 1) / gridDim.x);
        int j = 0;
        row = pos;
        if (pm.count == 3 && row >= pm.m0.rows) {
            row -= static_cast<int>(pm.m0.rows);
            j = 1;
            if (row >= pm.m1.rows) {
                row -= static_cast<int>(pm.m1.rows);
                j = 2;
            }
        }
        enter(j);
    }
    __device__ __forceinline__ bool next(Chunk& c) {
        if (pos >= end) return false;
        if (row == m.rows) {  // the previous chunk ended its matrix (m describes c until the next call)
            row = 0;
            enter(job + 1);
        }
        const int n = min(rowsPerChunk, min(end - pos, static_cast<int>(m.rows) - row));
        c = Chunk{job, row, n};
        pos += n;
        row += n;
        return true;
    }
};

// A stage of the ring and the parity of its current use.
struct RingPos {
    uint32_t stage = 0, parity = 0;
    bool reused = false;  // the stage held an earlier chunk (the producer waits for its release)
    __device__ __forceinline__ void advance(uint32_t stages) {
        if (++stage == stages) {
            stage = 0;
            parity ^= 1;
            reused = true;
        }
    }
};

// Where one matrix's part of a chunk sits in its stage, from byte `off` on: the
// quants of its n rows, then the 16-byte-aligned window of global memory that
// holds their scales (scOff points at the first row's first scale in it).
struct MatChunk {
    const uint8_t *qSrc, *scSrc;
    uint32_t qOff, qBytes, winOff, winBytes, scOff;
    __device__ __forceinline__ uint32_t end() const { return winOff + winBytes; }
};


// Where the chunk's rows sit in its stage: the current matrix's part, and for a
// pair the up matrix's right after it.
__device__ __forceinline__ MatChunk partOf(const ChunkCursor& cur, const DevMatrix& m, int row, int n, uint32_t off) {
    MatChunk c;
    c.qOff = off;
    c.qBytes = static_cast<uint32_t>(n) * cur.qRow;
    c.qSrc = static_cast<const uint8_t*>(m.qs) + static_cast<size_t>(row) * cur.qRow;
    const size_t s0 = static_cast<size_t>(row) * cur.scRow, s1 = s0 + static_cast<size_t>(n) * cur.scRow;
    const size_t a0 = s0 & ~size_t{15}, a1 = (s1 + 15) & ~size_t{15};
    c.winOff = off + c.qBytes;
    c.winBytes = static_cast<uint32_t>(a1 - a0);
    c.scSrc = static_cast<const uint8_t*>(m.scales) + a0;
    c.scOff = c.winOff + static_cast<uint32_t>(s0 - a0);
    return c;
}

__device__ __forceinline__ void chunkParts(const ChunkCursor& cur, const Chunk& c, MatChunk& a, MatChunk& b) {
    a = partOf(cur, cur.m, c.row, c.n, 0);
    b = a;
    if (cur.pm.pair) b = partOf(cur, cur.pm.m1, c.row, c.n, a.end());
}

// ---------------------------------------------------------------------------
// Shared memory: the mbarriers, the ring, then a work area (the phase's int8
// activation, or attention's q, k, v and merge buffers).

struct Smem {
    uint64_t* full;
    uint64_t* empty;
    uint8_t* ring;
    int8_t* aq;     // activation quants
    float2* am;     // and their (scale, scale * sum) per 32
    float* work;    // attention (aliases aq/am: not used in the same phase)
    float* red;     // [2][kMaxSlots] per-chunk row partials, double-buffered
    float* partial; // [kConsumerWarps] reductions
    int* flag;
    float* xs;      // this block's rows of the residual (it alone adds to them)
    int xFirst;     // their first row
    // The plan's layers, copied from the parameter space: indexed by a run-time
    // layer there, every field read was a constant-cache miss (the plan is ~11 KB)
    // on the chunk loop's critical path.
    const DecodeLayerDev* layers;
    Tracer tr;
};

constexpr int kMaxResidualRows = 128;

__device__ __forceinline__ Smem carve(uint8_t* base, int stages, uint32_t workBytes) {
    Smem s;
    s.full = reinterpret_cast<uint64_t*>(base);
    s.empty = s.full + kMaxStages;
    uint8_t* p = base + 2 * kMaxStages * sizeof(uint64_t);
    s.red = reinterpret_cast<float*>(p);
    p += 2 * kMaxSlots * sizeof(float);
    s.partial = reinterpret_cast<float*>(p);
    p += kConsumerWarps * sizeof(float);
    s.flag = reinterpret_cast<int*>(p);
    p += 4 * sizeof(int);
    s.xs = reinterpret_cast<float*>(p);  // kMaxResidualRows floats: ends well before 1024
    p = base + 1024;
    s.ring = p;
    p += static_cast<size_t>(stages) * kStageBytes;
    s.work = reinterpret_cast<float*>(p);
    s.aq = reinterpret_cast<int8_t*>(p);
    s.am = nullptr;  // set per phase (after the quants of that phase's width)
    p += workBytes;
    s.layers = reinterpret_cast<const DecodeLayerDev*>(p);
    return s;
}

// ---------------------------------------------------------------------------
// Activations into shared memory as int8 per 32 (same rounding as quantizeQuad
// everywhere else). RMS-normalised with gamma when given.

constexpr int kActBatch = 10;  // float4 loads per thread in flight (a norm's row: up to 8960 values)

__device__ __forceinline__ void actToShared(const float* src, int n, const float* gamma, float eps, Smem& s) {
    const int t = threadIdx.x;
    const float4* x4 = reinterpret_cast<const float4*>(src);
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    const int quads = n / 4;
    s.am = reinterpret_cast<float2*>(s.aq + ((n + 15) & ~15));
    // Rounds of kActBatch loads issued together: one L2 round trip per round
    // instead of one per value (a loop that quantises between loads waits each time).
    for (int base = 0; base < quads; base += kConsumers * kActBatch) {  // with gamma: one round (decodeStepFits)
        float4 v[kActBatch], g[kActBatch];
#pragma unroll
        for (int k = 0; k < kActBatch; ++k) {
            const int i = base + t + k * kConsumers;
            const bool ok = i < quads;
            v[k] = ok ? __ldcg(x4 + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (gamma) g[k] = ok ? __ldg(g4 + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
        if (gamma) {
            float ss = 0.0f;
#pragma unroll
            for (int k = 0; k < kActBatch; ++k) ss += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
            const float inv = rsqrtf(consumerSum(ss, s.partial) / static_cast<float>(n) + eps);
#pragma unroll
            for (int k = 0; k < kActBatch; ++k)
                v[k] = make_float4(v[k].x * inv * g[k].x, v[k].y * inv * g[k].y, v[k].z * inv * g[k].z,
                                   v[k].w * inv * g[k].w);
        }
#pragma unroll
        for (int k = 0; k < kActBatch; ++k) {
            const int i = base + t + k * kConsumers;
            if (base + k * kConsumers >= quads) break;  // whole warps: quads % 8 == 0, kConsumers % 32 == 0
            float2 meta;
            const int packed = quantizeQuad(v[k], meta);  // 8-lane groups are whole: in or out together
            if (i < quads) {
                reinterpret_cast<int*>(s.aq)[i] = packed;
                if ((t & 7) == 0) s.am[i / 8] = meta;
            }
        }
    }
    consumerSync();
}

// ---------------------------------------------------------------------------
// The consumers' side of one chunk: each warp multiplies whole rows (slots dealt
// round-robin), or for a one-row chunk a seventh of its blocks; partial sums
// meet in s.red.

template <DevFormat F>
__device__ __forceinline__ void chunkDot(const uint8_t* stage, const MatChunk& A, const MatChunk& B, const Chunk& c,
                                         bool pair, int64_t cols, const Smem& s, float* red) {
    constexpr int QB = quantBytes<F>(), SB = scaleBytes<F>();
    const int nb = static_cast<int>(cols / 32);
    const int slots = pair ? 2 * c.n : c.n;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const bool whole = slots > 1;  // else all warps share the one row
    const int wpr = whole ? 1 : kConsumerWarps;
    const int part = whole ? 0 : warp;
    for (int slot = whole ? warp : 0; slot < slots; slot += kConsumerWarps) {
        const int mi = pair && slot >= c.n ? 1 : 0;
        const int r = slot - mi * c.n;
        const uint8_t* q = stage + (mi ? B.qOff : A.qOff) + static_cast<uint32_t>(r * nb * QB);
        const uint8_t* sc = stage + (mi ? B.scOff : A.scOff) + static_cast<uint32_t>(r * nb * SB);
        // Four blocks per round with every load issued first: shared-memory
        // latency once per round instead of once per block.
        float acc = 0.0f;
        const int step = 32 * wpr;
        int b = part * 32 + lane;
        for (; b + 3 * step < nb; b += 4 * step) {
            WBlock w[4];
            int4 a0[4], a1[4];
            float2 am[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                const int bb = b + u * step;
                gemvdev::loadBlockAt<F, Src::Shared>(w[u], q, sc, bb, true);
                const int4* ap = reinterpret_cast<const int4*>(s.aq + bb * 32);
                a0[u] = ap[0];
                a1[u] = ap[1];
                am[u] = s.am[bb];
            }
#pragma unroll
            for (int u = 0; u < 4; ++u) acc += gemvdev::dotBlock<F>(w[u], a0[u], a1[u], am[u]);
        }
        for (; b < nb; b += step) {
            WBlock w;
            gemvdev::loadBlockAt<F, Src::Shared>(w, q, sc, b, true);
            const int4* ap = reinterpret_cast<const int4*>(s.aq + b * 32);
            acc += gemvdev::dotBlock<F>(w, ap[0], ap[1], s.am[b]);
        }
        acc = warpSum(acc);
        if (lane == 0) red[slot * wpr + part] = acc;
        if (whole == false) break;
    }
}

// Consumes the block's chunks of phase ph; chunk counts the stages used so far.
__device__ __forceinline__ void consumePhase(const DecodeStepDev& p, int ph, uint32_t stages, Smem& s, RingPos& ring,
                                             uint32_t& chunk) {
    ChunkCursor cur;
    cur.start(p, s.layers, ph);
    const int kind = ph >= p.layers * 4 ? -1 : ph % 4;
    float* out = kind == kGlu ? p.h : kind < 0 ? p.logitsOut : nullptr;
    Chunk c;
    while (cur.next(c)) {
        MatChunk A, B;
        chunkParts(cur, c, A, B);
        const uint8_t* st = s.ring + ring.stage * kStageBytes;
        float* red = s.red + (chunk & 1) * kMaxSlots;
        bulk::wait(&s.full[ring.stage], ring.parity);
        switch (cur.m.format) {
        case DevFormat::Q4_0: chunkDot<DevFormat::Q4_0>(st, A, B, c, cur.pm.pair, cur.m.cols, s, red); break;
        case DevFormat::Q4_1: chunkDot<DevFormat::Q4_1>(st, A, B, c, cur.pm.pair, cur.m.cols, s, red); break;
        case DevFormat::Q8_0: chunkDot<DevFormat::Q8_0>(st, A, B, c, cur.pm.pair, cur.m.cols, s, red); break;
        case DevFormat::Q8_16: chunkDot<DevFormat::Q8_16>(st, A, B, c, cur.pm.pair, cur.m.cols, s, red); break;
        case DevFormat::F16: break;
        }
        consumerSync();  // every warp is done with the stage and has written red
        if (threadIdx.x == 0) {
            bulk::fenceProxyAsync();
            asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bulk::smemAddr(&s.empty[ring.stage])) : "memory");
        }
        ring.advance(stages);
        ++chunk;
        const int t = threadIdx.x;
        if (t < c.n) {
            const int wpr = (cur.pm.pair || c.n > 1) ? 1 : kConsumerWarps;
            float v = 0.0f, u = 0.0f;
            for (int i = 0; i < wpr; ++i) v += red[t * wpr + i];
            if (cur.pm.pair) u = red[c.n + t];
            const int row = c.row + t;
            if (kind == kOut || kind == kDown) {
                float& xr = s.xs[row - s.xFirst];
                xr += v;
                __stcg(p.x + row, xr);
            } else if (kind == kQkv) {
                __stcg((c.job == 0 ? p.q : c.job == 1 ? p.k : p.v) + row, v);
            } else {
                __stcg(out + row, kind == kGlu ? gluAct(v, p.act) * u : v);
            }
        }
        // red is double-buffered: the next chunk writes the other half, and the
        // one after only after its consumerSync, which these reads precede.
    }
}

// The producer: every chunk of every phase, in order, into the ring.
__device__ __forceinline__ void producer(const DecodeStepDev& p, int phases, uint32_t stages, Smem& s) {
    RingPos ring;
    for (int ph = 0; ph < phases; ++ph) {
        ChunkCursor cur;
        cur.start(p, s.layers, ph);
        Chunk c;
        while (cur.next(c)) {
            if (ring.reused) bulk::wait(&s.empty[ring.stage], ring.parity ^ 1);
            MatChunk A, B;
            chunkParts(cur, c, A, B);
            uint8_t* st = s.ring + ring.stage * kStageBytes;
            uint64_t* full = &s.full[ring.stage];
            bulk::arriveExpectTx(full, cur.pm.pair ? B.end() : A.end());
            bulk::copy(st + A.qOff, A.qSrc, A.qBytes, full);
            bulk::copy(st + A.winOff, A.scSrc, A.winBytes, full);
            if (cur.pm.pair) {
                bulk::copy(st + B.qOff, B.qSrc, B.qBytes, full);
                bulk::copy(st + B.winOff, B.scSrc, B.winBytes, full);
            }
            ring.advance(stages);
        }
    }
}

// ---------------------------------------------------------------------------
// Attention: item (kv head, key range). The range's keys are dealt to the 8
// warps; each warp keeps an online softmax for every query head of the group;
// the warps merge in a tree through shared memory; the block's state goes to
// the scratch; the last block of the head to arrive merges the ranges.

template <int EPL, int G>
__device__ __forceinline__ void attentionItem(const DecodeStepDev& p, const DecodeLayerDev& L, int kvh, int split, int splits,
                              Smem& s) {
    constexpr int D = EPL * 32;
    const int group = p.heads / p.kvHeads;
    const int pos = p.positions[0];
    const int len = pos + 1;
    // Ranges of at least 64 keys: below that an item's fixed costs (q, RoPE,
    // merges, the arrival) outweigh its keys.
    const int per = max(64, (len + splits - 1) / splits);
    const int splitLen = (per + 15) / 16 * 16;
    const int active = (len + splitLen - 1) / splitLen;
    if (split >= active) return;
    const int start = split * splitLen, end = min(start + splitLen, len);
    const bool covers = end == len;
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int h0 = kvh * group;
    const int32_t* table = kvTableOf(p.kv, 0);

    // q of the group's heads (and the new k, v when this range holds the token), rotated.
    float* qs = s.work;
    float* ks = qs + group * D;
    float* vs = ks + D;
    for (int i = t; i < group * D; i += kConsumers) qs[i] = __ldcg(p.q + h0 * D + i);
    if (covers)
        for (int i = t; i < D; i += kConsumers) {
            ks[i] = __ldcg(p.k + kvh * D + i);
            vs[i] = __ldcg(p.v + kvh * D + i);
        }
    consumerSync();
    const int pairs = p.ropeDims / 2;
    const int rotHeads = group + (covers ? 1 : 0);
    const RopeDev rope{L.invFreq, L.ropeMscale, p.ropeDims, p.ropeNeox};
    for (int w = t; w < rotHeads * pairs; w += kConsumers)
        rotatePair(w / pairs < group ? qs + (w / pairs) * D : ks, w % pairs, static_cast<float>(pos), rope);
    consumerSync();
    const int64_t headOff = static_cast<int64_t>(kvh) * D;
    if (covers)
        for (int i = t; i < D; i += kConsumers) {
            const int64_t off = kvRowOffset(p.kv, table, pos) + headOff + i;
            static_cast<__half*>(L.kCache)[off] = __float2half_rn(ks[i]);
            static_cast<__half*>(L.vCache)[off] = __float2half_rn(vs[i]);
        }
    float qr[G][EPL], m[G], l[G], acc[G][EPL];
#pragma unroll
    for (int g = 0; g < G; ++g) {
        m[g] = -INFINITY;
        l[g] = 0.0f;
#pragma unroll
        for (int e = 0; e < EPL; ++e) {
            qr[g][e] = g < group ? qs[g * D + lane * EPL + e] * p.attnScale : 0.0f;
            acc[g][e] = 0.0f;
        }
    }
    consumerSync();  // the new row is in the cache (block-visible) before anyone reads it

    constexpr int KPS = kKeysPerStep;
    for (int j0 = start + warp; j0 < end; j0 += KPS * kConsumerWarps) {
        float kk[KPS][EPL], vv[KPS][EPL];
        bool has[KPS];
        loadKeys<KPS, EPL, int>(p.kv, L.kCache, L.vCache, table, j0, kConsumerWarps, end, headOff, lane * EPL, D, kk, vv, has);
        onlineSoftmaxStep<G, KPS, EPL>(qr, kk, vv, has, group, 0.0f, m, l, acc);
    }

    // Tree merge of the warps' states. A warp that saw no key has
    // m = -inf and l = 0, which the merge weighs as 0.
    float* ms = s.work + (group + 2) * D;  // [4][G]
    float* ls = ms + 4 * G;                // [4][G]
    float* os = ls + 4 * G;                // [4][G][D]
    for (int half = 4; half >= 1; half /= 2) {  // 7 warps: 4-6 into 0-2, 2-3 into 0-1, 1 into 0
        if (warp >= half && warp < 2 * half && warp < kConsumerWarps) {
            const int w = warp - half;
#pragma unroll
            for (int g = 0; g < G; ++g) {
                if (lane == 0) {
                    ms[w * G + g] = m[g];
                    ls[w * G + g] = l[g];
                }
#pragma unroll
                for (int e = 0; e < EPL; ++e) os[(w * G + g) * D + lane * EPL + e] = acc[g][e];
            }
        }
        consumerSync();
        if (warp < half && warp + half < kConsumerWarps) {
#pragma unroll
            for (int g = 0; g < G; ++g) {
                const float mo = ms[warp * G + g], lo = ls[warp * G + g];
                const float mm = fmaxf(m[g], mo);
                const float fa = m[g] == -INFINITY ? 0.0f : __expf(m[g] - mm);
                const float fb = mo == -INFINITY ? 0.0f : __expf(mo - mm);
                l[g] = l[g] * fa + lo * fb;
#pragma unroll
                for (int e = 0; e < EPL; ++e) acc[g][e] = acc[g][e] * fa + os[(warp * G + g) * D + lane * EPL + e] * fb;
                m[g] = mm;
            }
        }
        consumerSync();
    }
    float* scratchO = p.attnScratch;
    float2* scratchML = reinterpret_cast<float2*>(p.attnScratch + static_cast<int64_t>(p.heads) * p.maxSplits * D);
    if (warp == 0) {
#pragma unroll
        for (int g = 0; g < G; ++g) {
            if (g >= group) break;
            const int64_t slot = static_cast<int64_t>(h0 + g) * p.maxSplits + split;
#pragma unroll
            for (int e = 0; e < EPL; ++e) __stcg(scratchO + slot * D + lane * EPL + e, acc[g][e]);
            if (lane == 0) __stcg(scratchML + slot, make_float2(m[g], l[g]));
        }
    }
    consumerSync();
    unsigned* arrivals = p.sync + 2 + kvh;
    if (t == 0) {
        __threadfence();
        s.flag[0] = atomicAdd(arrivals, 1u) == static_cast<unsigned>(active - 1);
    }
    consumerSync();
    if (!s.flag[0]) return;
    __threadfence();
    // The merge of the ranges: their (max, sum) pairs into shared memory in one
    // round of loads, then each output value's partials loaded 8 at a time.
    float2* mlS = reinterpret_cast<float2*>(os);  // group * active <= 2 * G * D pairs (decodeStepFits)
    for (int i = t; i < group * active; i += kConsumers)
        mlS[i] = __ldcg(scratchML + static_cast<int64_t>(h0 + i / active) * p.maxSplits + i % active);
    consumerSync();
    for (int i = t; i < group * D; i += kConsumers) {
        const int g = i / D, c = i % D;
        const float2* ml = mlS + g * active;
        float mm = -INFINITY;
        for (int sp = 0; sp < active; ++sp) mm = fmaxf(mm, ml[sp].x);
        const float* o0 = scratchO + static_cast<int64_t>(h0 + g) * p.maxSplits * D + c;
        float ll = 0.0f, o = 0.0f;
        for (int sp0 = 0; sp0 < active; sp0 += 8) {
            float ov[8];
#pragma unroll
            for (int u = 0; u < 8; ++u) ov[u] = sp0 + u < active ? __ldcg(o0 + static_cast<int64_t>(sp0 + u) * D) : 0.0f;
#pragma unroll
            for (int u = 0; u < 8; ++u) {
                if (sp0 + u >= active) break;
                const float f = __expf(ml[sp0 + u].x - mm);
                ll += ml[sp0 + u].y * f;
                o += ov[u] * f;
            }
        }
        __stcg(p.attn + (h0 + g) * D + c, o / ll);
    }
    if (t == 0) *arrivals = 0;  // next used a layer later, after grid barriers
}

template <int EPL>
__device__ __forceinline__ void attentionPhase(const DecodeStepDev& p, const DecodeLayerDev& L, Smem& s) {
    const int group = p.heads / p.kvHeads;
    int splits = static_cast<int>(gridDim.x) / p.kvHeads;
    splits = max(1, min(splits, p.maxSplits));
    for (int item = blockIdx.x; item < p.kvHeads * splits; item += gridDim.x) {
        const int kvh = item / splits, split = item % splits;
#ifdef KESTREL_MEGA_SLIM
        attentionItem<EPL, 4>(p, L, kvh, split, splits, s);
        (void)group;
#else
        if (group <= 1) attentionItem<EPL, 1>(p, L, kvh, split, splits, s);
        else if (group <= 2) attentionItem<EPL, 2>(p, L, kvh, split, splits, s);
        else if (group <= 4) attentionItem<EPL, 4>(p, L, kvh, split, splits, s);
        else attentionItem<EPL, 8>(p, L, kvh, split, splits, s);
#endif
        consumerSync();  // the work area is reused by the next item
    }
}

// ---------------------------------------------------------------------------

__global__ void __launch_bounds__(kThreads, 1) decodeStepKernel(const __grid_constant__ DecodeStepDev p, uint32_t stages, uint32_t workBytes) {
    extern __shared__ __align__(1024) uint8_t smemRaw[];
    Smem s = carve(smemRaw, stages, workBytes);
    {
        const uint32_t* src = reinterpret_cast<const uint32_t*>(p.layer);
        uint32_t* dst = reinterpret_cast<uint32_t*>(const_cast<DecodeLayerDev*>(s.layers));
        const int words = p.layers * static_cast<int>(sizeof(DecodeLayerDev) / 4);
        for (int i = threadIdx.x; i < words; i += kThreads) dst[i] = src[i];
    }
    if (threadIdx.x == 0) {
        for (int i = 0; i < stages; ++i) {
            bulk::barrierInit(&s.full[i], 1);
            bulk::barrierInit(&s.empty[i], 1);
        }
        bulk::fenceBarrierInit();
    }
    __syncthreads();  // the last barrier the producer joins
    const int phases = p.layers * 4 + (p.logits ? 1 : 0);
    if (threadIdx.x >= kConsumers) {
        if (threadIdx.x == kConsumers) producer(p, phases, stages, s);
        return;
    }

    s.tr.on = p.trace && blockIdx.x == 0 && threadIdx.x == 0;
    s.tr.last = s.tr.on ? nowNs() : 0;
    const uint64_t ns0 = s.tr.last;
    const long long clk0 = clock64();
    if (s.tr.on) atomicAdd(&gTrace[kTrLaunches], 1ull);
    s.xFirst = static_cast<int>(static_cast<uint32_t>(p.hidden) * blockIdx.x / gridDim.x);
    const int xEnd = static_cast<int>(static_cast<uint32_t>(p.hidden) * (blockIdx.x + 1) / gridDim.x);
    for (int r = s.xFirst + threadIdx.x; r < xEnd; r += kConsumers) s.xs[r - s.xFirst] = __ldcg(p.x + r);
    consumerSync();

    unsigned target = 0;
    uint32_t chunk = 0;
    RingPos ring;
    unsigned* bar = p.sync;
    // The step as a flat list of parts (per layer: norm + Q,K,V; attention; out;
    // norm + gate/up; down; then norm + logits), each after a grid barrier. One
    // loop with one copy of each part's code: inlining the parts at a call site
    // each made the code executed per layer ~240 KB, fetched from L2 every layer
    // (the instruction caches are far smaller), which ran the kernel at a few
    // percent of its issue rate.
    const int parts = p.layers * 5 + (p.logits ? 1 : 0);
    for (int part = 0; part < parts; ++part) {
        const int l = part / 5, kind = part < p.layers * 5 ? part % 5 : 5;
        if (part > 0) gridBarrier(bar, target);
        s.tr.mark(3 * kind + kTrBarrier);
        if (kind == 1) {
            const DecodeLayerDev& L = s.layers[l];
            if (p.headDim == 128) attentionPhase<4>(p, L, s);
            else attentionPhase<2>(p, L, s);
            s.tr.mark(3 + kTrPrep);
            continue;
        }
        const float* act = kind == 2 ? p.attn : kind == 4 ? p.h : p.x;
        const int n = kind == 2 ? p.heads * p.headDim : kind == 4 ? p.ffn : p.hidden;
        const float* gamma = kind == 0 ? s.layers[l].attnNorm : kind == 3 ? s.layers[l].ffnNorm
                             : kind == 5 ? p.outNorm : nullptr;
        actToShared(act, n, gamma, p.eps, s);
        s.tr.mark(3 * kind + kTrPrep);
        const int ph = kind == 5 ? p.layers * 4 : l * 4 + (kind == 0 ? kQkv : kind == 2 ? kOut : kind == 3 ? kGlu : kDown);
        consumePhase(p, ph, stages, s, ring, chunk);
        s.tr.mark(3 * kind + kTrWork);
    }
    if (s.tr.on) {
        atomicAdd(&gTrace[kTrCycles], static_cast<unsigned long long>(clock64() - clk0));
        atomicAdd(&gTrace[kTrNs], nowNs() - ns0);
    }
    // The last block out resets the barrier words for the next launch: every
    // block has left its last barrier once all have arrived here.
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(p.sync + 1, 1u) == gridDim.x - 1) {
            p.sync[0] = 0;
            p.sync[1] = 0;
            __threadfence();
        }
    }
}

bool formatOk(const DevMatrix& m) { return m.format != DevFormat::F16 && m.cols % 32 == 0 && m.qs && m.scales; }


bool rowsFit(const DevMatrix& m, int mats) {
    return formatOk(m) && chunkRows(m.cols, quantBytesOf(m.format), scaleBytesOf(m.format), mats) >= 1;
}

// The work area: the widest int8 activation, or attention's buffers.
uint32_t workBytes(const DecodeStepDev& p) {
    const int widest = std::max({p.hidden, p.heads * p.headDim, p.ffn});
    const uint32_t act = static_cast<uint32_t>((widest + 15) / 16 * 16 + widest / 32 * 8);
    const int group = p.heads / p.kvHeads, g = group <= 1 ? 1 : group <= 2 ? 2 : group <= 4 ? 4 : 8;
    const uint32_t attn = static_cast<uint32_t>(sizeof(float)) *
                          static_cast<uint32_t>((group + 2) * p.headDim + 8 * g + 4 * g * p.headDim);
    return (std::max(act, attn) + 15u) / 16u * 16u;
}

uint32_t layerBytes(const DecodeStepDev& p) { return static_cast<uint32_t>(p.layers * sizeof(DecodeLayerDev)); }

int stagesFor(const DecodeStepDev& p) {
    const int64_t room = static_cast<int64_t>(deviceAttribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>()) - 1024 -
                         workBytes(p) - layerBytes(p);
    return static_cast<int>(std::min<int64_t>(kMaxStages, room / kStageBytes));
}

size_t smemBytes(const DecodeStepDev& p, int stages) {
    return 1024 + static_cast<size_t>(stages) * kStageBytes + workBytes(p) + layerBytes(p);
}

}  // namespace

void printDecodeStepTrace() {
    unsigned long long t[kTrEvents] = {};
    if (cudaMemcpyFromSymbol(t, gTrace, sizeof(t)) != cudaSuccess || t[kTrLaunches] == 0) return;
    const double n = static_cast<double>(t[kTrLaunches]);
    const char* names[6] = {"norm+qkv", "attention", "out", "norm+gate/up", "down", "norm+logits"};
    double total = 0;
    for (int e = 0; e < 18; ++e) total += static_cast<double>(t[e]);
    std::fprintf(stderr, "decode step trace (block 0, %.0f launches, %.1f us per launch):\n", n, total / n / 1000.0);
    std::fprintf(stderr, "  %-14s %12s %12s %12s\n", "phase", "barrier us", "prep us", "chunks us");
    for (int k = 0; k < 6; ++k)
        std::fprintf(stderr, "  %-14s %12.1f %12.1f %12.1f\n", names[k], t[3 * k] / n / 1000.0, t[3 * k + 1] / n / 1000.0,
                     t[3 * k + 2] / n / 1000.0);
    std::fprintf(stderr, "  SM clock of block 0 while running: %.0f MHz\n", 1000.0 * t[kTrCycles] / std::max(1ull, t[kTrNs]));
}

bool decodeStepTraced() {
    static const bool on = [] {
        const char* v = std::getenv("KESTREL_CUDA_MEGA_TRACE");
        return v && *v && *v != '0';
    }();
    return on;
}

bool decodeStepEnabled() {
    // Opt-in (KESTREL_CUDA_MEGA=1) until it beats the per-op graph: measured
    // 354 tok/s against 522 on llama3-8b (docs/PERFORMANCE.md says where it loses).
    static const bool enabled = [] {
        const char* v = std::getenv("KESTREL_CUDA_MEGA");
        return v && v[0] == '1';
    }();
    return enabled;
}

bool decodeStepFits(const DecodeStepDev& p) {
    if (!decodeStepEnabled() || deviceMajor() < 9 || p.layers < 1 || p.layers > kDecodeMaxLayers) return false;
    if (p.headDim != 64 && p.headDim != 128) return false;
    if (p.kvHeads <= 0 || p.heads % p.kvHeads != 0 || p.heads / p.kvHeads > 8 || p.kvHeads > 256) return false;
    if (p.hidden % 32 != 0 || p.ffn % 32 != 0 || !p.kv.f16 || p.ropeDims > p.headDim || p.ropeDims % 2 != 0) return false;
    for (int l = 0; l < p.layers; ++l) {
        const DecodeLayerDev& L = p.layer[l];
        for (const DevMatrix* m : {&L.wq, &L.wk, &L.wv, &L.wo, &L.down})
            if (!rowsFit(*m, 1)) return false;
        if (!rowsFit(L.gate, 2) || !rowsFit(L.up, 2) || L.gate.format != L.up.format || L.gate.cols != L.up.cols ||
            L.gate.rows != L.up.rows)
            return false;
        if (L.wq.cols != p.hidden || L.wk.cols != p.hidden || L.wv.cols != p.hidden || L.gate.cols != p.hidden ||
            L.wo.cols != p.heads * p.headDim || L.down.cols != p.ffn || L.gate.rows != p.ffn ||
            L.wq.rows != p.heads * p.headDim || L.wk.rows != p.kvHeads * p.headDim ||
            L.wv.rows != p.kvHeads * p.headDim || L.wo.rows != p.hidden || L.down.rows != p.hidden)
            return false;
    }
    if (p.logits && (!rowsFit(p.out, 1) || p.out.cols != p.hidden)) return false;
    if (p.hidden / smCount() + 1 > kMaxResidualRows || p.hidden > 4 * kConsumers * kActBatch) return false;
    if (p.out.rows * smCount() >= (int64_t{1} << 32) || p.ffn * smCount() >= (int64_t{1} << 31)) return false;
    const int group = p.heads / p.kvHeads, g = group <= 1 ? 1 : group <= 2 ? 2 : group <= 4 ? 4 : 8;
    if (group * std::min(p.maxSplits, std::max(1, smCount() / p.kvHeads)) > 2 * g * p.headDim) return false;
    return stagesFor(p) >= 3;
}

cudaError_t launchDecodeStep(const DecodeStepDev& p, cudaStream_t stream) {
    const uint32_t stages = static_cast<uint32_t>(stagesFor(p));
    // Once per device, outside any later graph capture (the first launch of a step is eager).
    static bool optedIn[16] = {};
    int dev = 0;
    cudaGetDevice(&dev);
    if (!optedIn[dev & 15]) {
        if (cudaError_t e = cudaFuncSetAttribute(decodeStepKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 deviceAttribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>());
            e != cudaSuccess)
            return e;
        optedIn[dev & 15] = true;
    }
    // Cooperative: the grid barriers need every block resident.
    return launchKernel(Launch::Cooperative, decodeStepKernel, dim3(static_cast<unsigned>(smCount())), dim3(kThreads),
                        smemBytes(p, static_cast<int>(stages)), stream, p, stages, workBytes(p));
}

}  // namespace kestrel::cuda
