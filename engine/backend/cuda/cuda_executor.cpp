// Running a recorded step: graph replay when the step was seen before,
// otherwise eager launches, with neighbouring ops fused.
#include "cuda_backend_impl.h"
#include "cuda_decode_run.h"
#include "gemv_rope.cuh"
#include "step_trace.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

namespace kestrel::backend::cudaimpl {
namespace {

constexpr size_t kMaxGraphs = 8;

// KESTREL_CUDA_FUSE=0 turns the Q,K,V + RoPE + KV-write fusion off (to compare).
bool qkvRopeFusion() {
    static const bool on = [] {
        const char* v = std::getenv("KESTREL_CUDA_FUSE");
        return !(v && v[0] == '0');
    }();
    return on;
}

bool sameOps(const std::vector<Op>& a, const std::vector<Op>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Op)) == 0;
}

bool gemvCompatible(const Op& a, const Op& b) {
    return b.kind == OpKind::Gemv && b.p[0] == a.p[0] && b.n0 == a.n0 && b.m.format == a.m.format &&
           b.m.cols == a.m.cols && b.p[3] != a.p[0];
}

cuda::Q8Act q8Of(const Op& op) {
    return cuda::Q8Act{static_cast<const int8_t*>(op.p[1]), static_cast<const float2*>(op.p[2])};
}

float* mut(const void* p) { return static_cast<float*>(const_cast<void*>(p)); }

// KESTREL_CUDA_SKIP=norm,quant,attn,rope,upload,copy leaves those ops out of every step: the
// results are wrong (stale buffers, still finite), the time says what the ops
// cost on the step's critical path (a diagnostic for graph replay, where
// per-kernel events do not exist; docs/PERFORMANCE.md has its readings).
bool skippedForTiming(const Op& op) {
    static const std::string skip = [] {
        const char* v = std::getenv("KESTREL_CUDA_SKIP");
        return std::string(v ? v : "");
    }();
    if (skip.empty()) return false;
    const char* cat = op.kind == OpKind::Upload                             ? "upload"
                      : op.kind == OpKind::CopyRows                         ? "copy"
                      : op.kind == OpKind::RmsNorm || op.kind == OpKind::Add ? "norm"
                      : op.kind == OpKind::Quantize                         ? "quant"
                      : op.kind == OpKind::Attention                        ? "attn"
                      : op.kind == OpKind::Rope || op.kind == OpKind::StoreKv ? "rope"
                                                                            : nullptr;
    return cat && skip.find(cat) != std::string::npos;
}

// gate, up, glu(gate, up) at ops[i].
bool gluAt(const std::vector<Op>& ops, size_t i) {
    const Op& op = ops[i];
    return i + 2 < ops.size() && gemvCompatible(op, ops[i + 1]) && ops[i + 2].kind == OpKind::Glu &&
           ops[i + 2].p[0] == op.p[3] && ops[i + 2].p[1] == ops[i + 1].p[3] && ops[i + 2].n0 == op.n0 * op.m.rows &&
           ops[i + 1].m.rows == op.m.rows;
}

// Whether ops[k] makes the int8 form of the GLU output of the gate/up GEMV `gate`
// (gluAt), one pass of the fused kernel with it.
bool gluQuantizeAt(const std::vector<Op>& ops, size_t k, const Op& gate) {
    if (k >= ops.size()) return false;
    const Op& q = ops[k];
    return q.kind == OpKind::Quantize && q.p[0] == ops[k - 1].p[2] && q.n0 == gate.n0 && q.n1 == gate.m.rows &&
           !skippedForTiming(q);
}

// Up to 3 GEMVs from ops[i] sharing its input.
int gemvGroup(const std::vector<Op>& ops, size_t i, cuda::GemvJob (&jobs)[3]) {
    int count = 0;
    for (size_t j = i; j < ops.size() && count < 3 && (j == i || gemvCompatible(ops[i], ops[j])); ++j, ++count) {
        jobs[count] = cuda::GemvJob{};
        jobs[count].w = ops[j].m;
        jobs[count].y = mut(ops[j].p[3]);
    }
    return count;
}

// rope(q), rope(k), storeKv(k, v) at ops[r]: one rotation, positions and token count for all three.
bool ropeStoreAt(const std::vector<Op>& ops, size_t r) {
    if (r + 2 >= ops.size()) return false;
    const Op& a = ops[r];
    const Op& b = ops[r + 1];
    const Op& st = ops[r + 2];
    return a.kind == OpKind::Rope && b.kind == OpKind::Rope && st.kind == OpKind::StoreKv && b.p[1] == a.p[1] &&
           st.p[2] == a.p[1] && st.p[0] == b.p[0] && b.i0 == a.i0 && b.rope.invFreq == a.rope.invFreq &&
           b.rope.mscale == a.rope.mscale && b.rope.dims == a.rope.dims && b.rope.neox == a.rope.neox &&
           b.n0 == a.n0 && st.n0 == a.n0 && st.n1 == b.n1;
}

// ropeStoreAt(ops, r) on the Q, K, V outputs of `jobs`.
bool qkvRopeAt(const std::vector<Op>& ops, size_t r, const cuda::GemvJob (&jobs)[3], int64_t tokens,
               cuda::QkvRope& rk) {
    if (!ropeStoreAt(ops, r)) return false;
    const Op& a = ops[r];
    const Op& b = ops[r + 1];
    const Op& st = ops[r + 2];
    if (a.p[0] != jobs[0].y || b.p[0] != jobs[1].y || st.p[1] != jobs[2].y || a.n0 != tokens ||
        a.n1 != jobs[0].w.rows || b.n1 != jobs[1].w.rows)
        return false;
    rk.positions = static_cast<const int32_t*>(a.p[1]);
    rk.rope = a.rope;
    rk.headDim = a.i0;
    rk.kv = st.kv;
    return true;
}

// Q, K, V GEMVs at ops[i] followed by rope(q), rope(k), storeKv(k, v), for one
// token: one launch (gemv_rope.cuh). Returns the ops it covered (0: not launched).
size_t launchQkvRope(const std::vector<Op>& ops, size_t i, cudaStream_t s) {
    cuda::GemvJob jobs[3];
    cuda::QkvRope rk;
    if (!qkvRopeFusion() || gemvGroup(ops, i, jobs) != 3 || !qkvRopeAt(ops, i + 3, jobs, ops[i].n0, rk) ||
        !cuda::gemvQkvRopeFits(jobs, ops[i].n0, rk))
        return 0;
    cuda::launchGemvQkvRope(jobs, q8Of(ops[i]), rk, s);
    return 6;
}

// One-token GEMV y = W x then x = x + y at ops[i]: one launch that adds W x to x
// (the residual add folded in; gemv_act.cuh's NormIn says why). Returns the
// ops it covered (0: not launched).
size_t launchResidualGemv(const std::vector<Op>& ops, size_t i, cudaStream_t s) {
    const Op& op = ops[i];
    if (i + 1 >= ops.size() || op.n0 != 1 || !cuda::gemvFoldFits(op.m, 1, false) || !op.p[1]) return 0;
    const Op& add = ops[i + 1];
    const void* y = op.p[3];
    if (add.kind != OpKind::Add || add.p[1] != y || add.p[0] != add.p[2] || add.p[0] == op.p[0] || add.n0 != op.m.rows)
        return 0;
    cuda::GemvJob job;
    job.w = op.m;
    job.y = mut(y);
    job.residual = mut(add.p[0]);
    cuda::launchGemv(&job, 1, static_cast<const float*>(op.p[0]), q8Of(op), 1, s);
    return 2;
}

// A one-token RMSNorm with an int8 output at ops[i] followed by the products
// that read it (Q, K, V with RoPE and the KV write, or gate and up with the
// GLU): the products make the norm themselves (NormQ8), one launch less.
// Returns the ops it covered (0: not launched).
size_t launchNormFolded(const std::vector<Op>& ops, size_t i, cudaStream_t s, const char*& label) {
    const Op& nm = ops[i];
    const auto aligned = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; };
    if (nm.n0 != 1 || nm.n2 != nm.n1 || !nm.p[3] || nm.p[2] == nm.p[0] || !aligned(nm.p[0]) || !aligned(nm.p[1]) ||
        !aligned(nm.p[2]) || !aligned(nm.p[3]) || i + 1 >= ops.size())
        return 0;
    const Op& first = ops[i + 1];
    if (first.kind != OpKind::Gemv || first.n0 != 1 || first.p[0] != nm.p[2] || first.p[1] != nm.p[3] ||
        first.m.cols != nm.n1 || !cuda::gemvFoldFits(first.m, 1, true))
        return 0;
    const cuda::NormQ8 src{static_cast<const float*>(nm.p[0]), static_cast<const float*>(nm.p[1]), nm.f0, mut(nm.p[2]),
                           static_cast<int8_t*>(const_cast<void*>(nm.p[3])),
                           static_cast<float2*>(const_cast<void*>(nm.p[4]))};
    cuda::GemvJob jobs[3];
    cuda::QkvRope rk;
    if (qkvRopeFusion() && gemvGroup(ops, i + 1, jobs) == 3 && qkvRopeAt(ops, i + 4, jobs, 1, rk) &&
        cuda::gemvQkvRopeFits(jobs, 1, rk)) {
        cuda::launchGemvQkvRope(jobs, src, rk, s);
        label = "rmsnorm+gemv qkv+rope+kv write";
        return 1 + 6;
    }
    if (!gluAt(ops, i + 1)) return 0;
    const Op& up = ops[i + 2];
    const Op& g = ops[i + 3];
    const bool quant = gluQuantizeAt(ops, i + 4, first);
    cuda::launchGemvGluNorm(first.m, up.m, src, mut(first.p[3]), mut(up.p[3]), mut(g.p[2]),
                            g.i0 == 0 ? cuda::GluAct::Silu : cuda::GluAct::GeluTanh, s,
                            quant ? static_cast<int8_t*>(const_cast<void*>(ops[i + 4].p[1])) : nullptr,
                            quant ? static_cast<float2*>(const_cast<void*>(ops[i + 4].p[2])) : nullptr);
    label = quant ? "rmsnorm+gemv gate+up+glu+q8" : "rmsnorm+gemv gate+up+glu";
    return 1 + 3 + (quant ? 1 : 0);
}

// Whole one-token layers from ops[i] in one persistent launch (decode_step.cuh).
// Returns the ops it covered (0: not launched; the ops then run one by one).
size_t launchDecodeRun(const std::vector<Op>& ops, size_t i, unsigned* sync, cudaStream_t s) {
    static bool failed = false;  // a launch the device refused: stop trying
    if (!sync || failed || !cuda::decodeStepEnabled()) return 0;
    static thread_local cuda::DecodeStepDev plan;  // ~11 KB: kept off the stack
    const size_t used = matchDecodeRun(ops, i, plan);
    if (used == 0 || !cuda::decodeStepFits(plan)) return 0;
    plan.sync = sync;
    plan.trace = cuda::decodeStepTraced();
    if (const cudaError_t e = cuda::launchDecodeStep(plan, s); e != cudaSuccess) {
        cudaGetLastError();
        failed = true;
        std::fprintf(stderr, "kestrel: persistent decode step unavailable (%s); running layers op by op\n",
                     cudaGetErrorString(e));
        return 0;
    }
    return used;
}

// Profile rows keep one-token, batched-decode and prefill launches of a kernel apart.
std::string profileLabel(const char* label, const Op& op) {
    std::string l = label;
    if (op.kind == OpKind::Gemv || op.kind == OpKind::Attention)
        l += op.n0 == 1 ? "" : op.n0 <= 16 ? " [2-16 tok]" : " [>16 tok]";
    return l;
}

}  // namespace

bool CudaBackend::statsWanted() {
    static const bool on = [] {
        const char* v = std::getenv("KESTREL_CUDA_STATS");
        return v && *v && *v != '0';
    }();
    return on;
}

void CudaBackend::timeReplay(bool start) {
    if (!statsWanted()) return;
    if (!replayEvents_[0] && (cudaEventCreate(&replayEvents_[0]) != cudaSuccess ||
                              cudaEventCreate(&replayEvents_[1]) != cudaSuccess))
        return;
    if (start && replayTimed_) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, replayEvents_[0], replayEvents_[1]) == cudaSuccess) {
            stats_.replayGpuMs += ms;
            ++stats_.timedReplays;
        }
        replayTimed_ = false;
    }
    cudaEventRecord(replayEvents_[start ? 0 : 1], stream_);
    replayTimed_ = !start;
}

void CudaBackend::clearGraphs() {
    for (Graph& g : graphs_) cudaGraphExecDestroy(g.exec);
    graphs_.clear();
    replayGraph_ = -1;
}

bool CudaBackend::replayStep(std::span<const int64_t> shape) {
    replayGraph_ = -1;
    stepShape_.assign(shape.begin(), shape.end());
    static const bool enabled = [] {  // KESTREL_CUDA_REPLAY=0: record every step (to compare)
        const char* v = std::getenv("KESTREL_CUDA_REPLAY");
        return !(v && v[0] == '0');
    }();
    if (!enabled || !graphsEnabled_ || profiling_ || !error_.isOk() || shape.empty()) return false;
    for (size_t i = 0; i < graphs_.size(); ++i) {
        const Graph& g = graphs_[i];
        if (!std::equal(g.shape.begin(), g.shape.end(), shape.begin(), shape.end())) continue;
        // What the step has recorded so far (its uploads) must be how the graph starts.
        if (ops_.size() > g.ops.size() || std::memcmp(ops_.data(), g.ops.data(), ops_.size() * sizeof(Op)) != 0)
            return false;
        replayGraph_ = static_cast<int>(i);
        return true;
    }
    return false;
}

Status CudaBackend::launchGraph(Graph& g) {
    g.lastUse = useCounter_;
    ops_.clear();
    ++stats_.replays;
    inFlight_ = true;
    tracer_.beforeLaunch(g.traceLabels, stream_);
    timeReplay(true);
    const bool timed = statsWanted();
    const HostClock::time_point start = timed ? HostClock::now() : HostClock::time_point{};
    const cudaError_t e = cudaGraphLaunch(g.exec, stream_);
    if (timed) {
        host_.launching += usSince(start);
        ++host_.steps;
    }
    timeReplay(false);
    return check(e, "launching a step graph");
}

Status CudaBackend::flush() {
    if (ops_.empty() && replayGraph_ < 0) return error_;
    // The step's replayStep tag, if any, goes with this flush only.
    std::vector<int64_t> shape;
    shape.swap(stepShape_);
    const int replay = std::exchange(replayGraph_, -1);
    if (!error_.isOk()) {
        ops_.clear();
        return error_;
    }
    cudaSetDevice(device_);
    ++useCounter_;
    const bool timed = statsWanted() && firstUploadAt_ != HostClock::time_point{};
    HostClock::time_point mark{};
    if (timed) {
        host_.recording += usSince(firstUploadAt_);
        firstUploadAt_ = {};
        mark = HostClock::now();
    }
    // The graph this step runs carries its tag; no other may keep it (a stale
    // tag would replay the wrong step).
    auto tag = [&](Graph* chosen) {
        if (shape.empty()) return;
        for (Graph& g : graphs_)
            if (&g != chosen && g.shape == shape) g.shape.clear();
        if (chosen) chosen->shape = shape;
    };
    if (replay >= 0) {
        if (timed) host_.matching += usSince(mark);
        return launchGraph(graphs_[static_cast<size_t>(replay)]);
    }
    if (graphsEnabled_ && !profiling_) {
        for (Graph& g : graphs_) {
            if (!sameOps(g.ops, ops_)) continue;
            tag(&g);
            if (timed) host_.matching += usSince(mark);
            return launchGraph(g);
        }
        if (sameOps(lastEager_, ops_)) {
            // Seen twice in a row: worth a graph.
            cudaGraph_t graph = nullptr;
            cudaGraphExec_t exec = nullptr;
            tracer_.beforeLaunch(nullptr, stream_);
            std::vector<std::string> labels;
            KESTREL_RETURN_IF_ERROR(check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "starting a capture"));
            execute(ops_, tracer_.active() ? &labels : nullptr);
            const cudaError_t endErr = cudaStreamEndCapture(stream_, &graph);
            KESTREL_RETURN_IF_ERROR(check(endErr, "capturing a step"));
            const cudaError_t instErr = cudaGraphInstantiate(&exec, graph, 0);
            cudaGraphDestroy(graph);
            KESTREL_RETURN_IF_ERROR(check(instErr, "instantiating a step graph"));
            if (graphs_.size() >= kMaxGraphs) {
                auto oldest = std::min_element(graphs_.begin(), graphs_.end(),
                                               [](const Graph& a, const Graph& b) { return a.lastUse < b.lastUse; });
                cudaGraphExecDestroy(oldest->exec);
                graphs_.erase(oldest);
            }
            tag(nullptr);
            graphs_.push_back(Graph{ops_, exec, useCounter_, shape,
                                    std::make_shared<const std::vector<std::string>>(std::move(labels))});
            lastEager_.clear();
            ops_.clear();
            ++stats_.captures;
            inFlight_ = true;
            return check(cudaGraphLaunch(exec, stream_), "launching a step graph");
        }
    }
    tag(nullptr);
    if (profiling_) collectProfile();
    tracer_.beforeLaunch(nullptr, stream_);
    execute(ops_);
    ++stats_.eager;
    inFlight_ = true;
    lastEager_.swap(ops_);
    ops_.clear();
    return check(cudaGetLastError(), "launching kernels");
}

cudaEvent_t CudaBackend::takeEvent() {
    if (!eventPool_.empty()) {
        cudaEvent_t e = eventPool_.back();
        eventPool_.pop_back();
        return e;
    }
    cudaEvent_t e = nullptr;
    cudaEventCreate(&e);
    return e;
}

void CudaBackend::collectProfile() {
    if (pendingEvents_.empty()) return;
    cudaStreamSynchronize(stream_);
    for (auto& [label, ev] : pendingEvents_) {
        float ms = 0;
        cudaEventElapsedTime(&ms, ev.first, ev.second);
        auto it = std::find_if(profile_.begin(), profile_.end(), [&](const ProfileRow& r) { return r.label == label; });
        if (it == profile_.end()) {
            profile_.push_back(ProfileRow{label, 0, 0});
            it = profile_.end() - 1;
        }
        ++it->calls;
        it->ms += ms;
        eventPool_.push_back(ev.first);
        eventPool_.push_back(ev.second);
    }
    pendingEvents_.clear();
    ++profiledSteps_;
}

void CudaBackend::printProfile() {
    collectProfile();
    if (profile_.empty()) return;
    std::sort(profile_.begin(), profile_.end(), [](const ProfileRow& a, const ProfileRow& b) { return a.ms > b.ms; });
    double total = 0;
    for (const auto& r : profile_) total += r.ms;
    std::fprintf(stderr, "cuda profile (%lld steps, eager launches, %.3f ms of kernels per step):\n",
                 static_cast<long long>(profiledSteps_), total / std::max<int64_t>(1, profiledSteps_));
    std::fprintf(stderr, "  %-22s %10s %12s %12s %7s\n", "kernel", "calls", "us/step", "us/call", "share");
    for (const auto& r : profile_)
        std::fprintf(stderr, "  %-22s %10lld %12.1f %12.2f %6.1f%%\n", r.label.c_str(), static_cast<long long>(r.calls),
                     1000.0 * r.ms / std::max<int64_t>(1, profiledSteps_), 1000.0 * r.ms / std::max<int64_t>(1, r.calls),
                     100.0 * r.ms / total);
    for (cudaEvent_t e : eventPool_) cudaEventDestroy(e);
    eventPool_.clear();
}

void CudaBackend::execute(const std::vector<Op>& ops, std::vector<std::string>* traceLabels) {
    cudaStream_t s = stream_;
    const size_t n = ops.size();
    for (size_t i = 0; i < n; ++i) {
        const Op& op = ops[i];
        if (skippedForTiming(op)) continue;
        const char* label = "?";
        cudaEvent_t evStart = nullptr;
        const int64_t launchesBefore = traceLabels ? cuda::steptrace::launches() : 0;
        std::string traceShape;  // the trace tells the GEMVs apart by their shape
        if (profiling_) {
            evStart = takeEvent();
            cudaEventRecord(evStart, s);
        }
        switch (op.kind) {
        case OpKind::Upload: {
            label = "upload (H2D)";
            // Tensors placed side by side (createIndexTensors) go in one copy: each
            // copy is a DMA round trip of several microseconds on the step's path.
            auto* dst = static_cast<char*>(const_cast<void*>(op.p[0]));
            const auto* src = static_cast<const char*>(op.p[1]);
            size_t bytes = static_cast<size_t>(op.n0);
            while (i + 1 < n && ops[i + 1].kind == OpKind::Upload && ops[i + 1].p[2] == op.p[2] &&
                   ops[i + 1].p[0] == dst + bytes && ops[i + 1].p[1] == src + bytes && !skippedForTiming(ops[i + 1])) {
                bytes += static_cast<size_t>(ops[i + 1].n0);
                ++i;
            }
            cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s);
            break;
        }
        case OpKind::CopyRows:
            label = "copyRows (D2D)";
            cudaMemcpyAsync(const_cast<void*>(op.p[0]), op.p[1], static_cast<size_t>(op.n0), cudaMemcpyDeviceToDevice, s);
            break;
        case OpKind::Embed:
            label = "embed";
            cuda::launchEmbed(op.m, static_cast<const int32_t*>(op.p[0]), op.n0, static_cast<float*>(const_cast<void*>(op.p[1])), s);
            break;
        case OpKind::Quantize:
            label = "quantize q8";
            cuda::launchQuantizeQ8(static_cast<const float*>(op.p[0]), op.n0, op.n1,
                                   static_cast<int8_t*>(const_cast<void*>(op.p[1])),
                                   static_cast<float2*>(const_cast<void*>(op.p[2])), s);
            break;
        case OpKind::Gemv: {
            // gate, up, glu(gate, up) -> one pass that also applies the activation.
            if (gluAt(ops, i)) {
                const Op& up = ops[i + 1];
                const Op& g = ops[i + 2];
                // The int8 form of the GLU output, when the next op makes it, in the same call.
                const bool quant = gluQuantizeAt(ops, i + 3, op);
                label = quant ? "gemv gate+up+glu+q8" : "gemv gate+up+glu";
                cuda::launchGemvGlu(op.m, up.m, static_cast<const float*>(op.p[0]), q8Of(op), op.n0, mut(op.p[3]),
                                    mut(up.p[3]), mut(g.p[2]), g.i0 == 0 ? cuda::GluAct::Silu : cuda::GluAct::GeluTanh, s,
                                    quant ? static_cast<int8_t*>(const_cast<void*>(ops[i + 3].p[1])) : nullptr,
                                    quant ? static_cast<float2*>(const_cast<void*>(ops[i + 3].p[2])) : nullptr);
                i += quant ? 3 : 2;
                break;
            }
            if (const size_t used = launchResidualGemv(ops, i, s)) {
                label = "gemv+residual add";
                i += used - 1;
                break;
            }
            if (const size_t used = launchQkvRope(ops, i, s)) {
                label = "gemv qkv+rope+kv write";
                i += used - 1;
                break;
            }
            cuda::GemvJob jobs[3];
            const int count = gemvGroup(ops, i, jobs);
            label = count == 3 ? "gemv x3 (qkv)" : count == 2 ? "gemv x2" : op.m.rows > 32768 ? "gemv (logits)" : "gemv";
            if (traceLabels) {
                char shape[48];
                std::snprintf(shape, sizeof shape, " %lldx%lld", static_cast<long long>(op.m.rows),
                              static_cast<long long>(op.m.cols));
                traceShape = shape;
            }
            cuda::launchGemv(jobs, count, static_cast<const float*>(op.p[0]), q8Of(op), op.n0, s);
            i += size_t(count) - 1;
            break;
        }
        case OpKind::Glu:
            label = "glu";
            cuda::launchGlu(static_cast<const float*>(op.p[0]), static_cast<const float*>(op.p[1]),
                            static_cast<float*>(const_cast<void*>(op.p[2])), op.n0,
                            op.i0 == 0 ? cuda::GluAct::Silu : cuda::GluAct::GeluTanh, s);
            break;
        case OpKind::Add: {
            // x = a + b followed by a norm of x: one kernel.
            if (i + 1 < n && ops[i + 1].kind == OpKind::RmsNorm && ops[i + 1].p[0] == op.p[2] &&
                ops[i + 1].n0 * ops[i + 1].n1 == op.n0 && ops[i + 1].n1 == op.n1) {
                const Op& nm = ops[i + 1];
                label = "add+rmsnorm(+q8)";
                cuda::launchRmsNorm(static_cast<const float*>(op.p[0]), static_cast<const float*>(op.p[1]),
                                    static_cast<float*>(const_cast<void*>(op.p[2])), static_cast<const float*>(nm.p[1]),
                                    nm.f0, static_cast<float*>(const_cast<void*>(nm.p[2])), nm.n0, nm.n1, nm.n2,
                                    static_cast<int8_t*>(const_cast<void*>(nm.p[3])),
                                    static_cast<float2*>(const_cast<void*>(nm.p[4])), s);
                ++i;
                break;
            }
            label = "add";
            cuda::launchAdd(static_cast<const float*>(op.p[0]), static_cast<const float*>(op.p[1]),
                            static_cast<float*>(const_cast<void*>(op.p[2])), op.n0, s);
            break;
        }
        case OpKind::RmsNorm:
            if (const size_t used = launchDecodeRun(ops, i, decodeSync_, s)) {
                label = "decode step (persistent)";
                i += used - 1;
                break;
            }
            if (const size_t used = launchNormFolded(ops, i, s, label)) {
                i += used - 1;
                break;
            }
            label = "rmsnorm(+q8)";
            cuda::launchRmsNorm(static_cast<const float*>(op.p[0]), nullptr, nullptr, static_cast<const float*>(op.p[1]),
                                op.f0, static_cast<float*>(const_cast<void*>(op.p[2])), op.n0, op.n1, op.n2,
                                static_cast<int8_t*>(const_cast<void*>(op.p[3])),
                                static_cast<float2*>(const_cast<void*>(op.p[4])), s);
            break;
        case OpKind::Rope: {
            // rope(q), rope(k), storeKv(k, v): one kernel.
            if (ropeStoreAt(ops, i)) {
                const Op& k = ops[i + 1];
                const Op& st = ops[i + 2];
                label = "rope q,k + kv write";
                cuda::launchRopeStore(static_cast<float*>(const_cast<void*>(op.p[0])), op.n1,
                                      static_cast<float*>(const_cast<void*>(k.p[0])), static_cast<const float*>(st.p[1]),
                                      k.n1, op.n0, op.i0, static_cast<const int32_t*>(op.p[1]), op.rope, st.kv, s);
                i += 2;
                break;
            }
            label = "rope";
            cuda::launchRope(static_cast<float*>(const_cast<void*>(op.p[0])), op.n0, op.n1, op.i0,
                             static_cast<const int32_t*>(op.p[1]), op.rope, s);
            break;
        }
        case OpKind::StoreKv:
            label = "storeKv";
            cuda::launchStoreKv(static_cast<const float*>(op.p[0]), static_cast<const float*>(op.p[1]), op.n0, op.n1,
                                static_cast<const int32_t*>(op.p[2]), op.kv, s);
            break;
        case OpKind::Attention:
            label = "attention (2 kernels)";
            cuda::launchAttention(static_cast<const float*>(op.p[0]), op.n0, static_cast<const int32_t*>(op.p[1]), op.kv,
                                  op.attn, static_cast<float*>(const_cast<void*>(op.p[2])),
                                  static_cast<float*>(const_cast<void*>(op.p[3])),
                                  static_cast<int8_t*>(const_cast<void*>(op.p[4])),
                                  static_cast<float2*>(const_cast<void*>(op.p[5])), s);
            break;
        case OpKind::Scale: label = "scale"; cuda::launchScale(static_cast<float*>(const_cast<void*>(op.p[0])), op.f0, op.n0, s); break;
        case OpKind::Softcap: label = "softcap"; cuda::launchSoftcap(static_cast<float*>(const_cast<void*>(op.p[0])), op.f0, op.n0, s); break;
        case OpKind::AddBias:
            label = "addBias";
            cuda::launchAddBias(static_cast<float*>(const_cast<void*>(op.p[0])), static_cast<const float*>(op.p[1]), op.n0,
                                op.n1, s);
            break;
        }
        if (traceLabels) tracer_.noteOp(label + traceShape, launchesBefore, *traceLabels);
        if (profiling_) {
            cudaEvent_t evEnd = takeEvent();
            cudaEventRecord(evEnd, s);
            pendingEvents_.push_back({profileLabel(label, op), {evStart, evEnd}});
        }
    }
}

}  // namespace kestrel::backend::cudaimpl