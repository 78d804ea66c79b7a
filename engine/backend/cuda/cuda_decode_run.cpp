// Recognising whole one-token llama layers in a recorded step, for the
// persistent decode kernel (kernels/cuda/decode_step.cuh).
//
// A layer is the 17 ops forward_blocks.cpp's preNormLayer records for one
// token with integer weights; every buffer the layer hands from op to op is
// checked, so a step built any other way (biases, q/k norms, a sliding window,
// softcaps, several tokens) simply does not match and runs op by op.
#include "cuda_decode_run.h"

#include <cstring>

namespace kestrel::backend::cudaimpl {
namespace {

bool isOneTokenGemv(const Op& op, const void* in, const void* q8, const void* meta) {
    return op.kind == OpKind::Gemv && op.n0 == 1 && op.p[0] == in && op.p[1] == q8 && op.p[2] == meta && q8 != nullptr;
}

bool sameRope(const cuda::RopeDev& a, const cuda::RopeDev& b) {
    return a.invFreq == b.invFreq && a.mscale == b.mscale && a.dims == b.dims && a.neox == b.neox;
}

bool sameKvLayout(const cuda::KvDev& a, const cuda::KvDev& b) {
    return a.table == b.table && a.seqRows == b.seqRows && a.tableWidth == b.tableWidth &&
           a.blockSize == b.blockSize && a.rowStride == b.rowStride && a.f16 == b.f16;
}

// The buffers one layer passes along; the next layer must use the same ones.
struct Flow {
    const void *x, *q, *k, *v, *attn, *h, *scratch, *positions;
};

constexpr size_t kLayerOps = 17;

// One layer at ops[i]: fills L and the shared fields of `plan` (first layer) or
// checks them (later layers).
bool matchLayer(const std::vector<Op>& ops, size_t i, bool first, Flow& f, cuda::DecodeStepDev& plan,
                cuda::DecodeLayerDev& L) {
    if (i + kLayerOps > ops.size()) return false;
    const Op* o = &ops[i];
    const Op& n1 = o[0];
    if (n1.kind != OpKind::RmsNorm || n1.n0 != 1 || n1.n2 != n1.n1 || !n1.p[3] || (!first && n1.p[0] != f.x))
        return false;
    const void* xn = n1.p[2];
    for (int j = 1; j <= 3; ++j)
        if (!isOneTokenGemv(o[j], xn, n1.p[3], n1.p[4])) return false;
    const Op &rq = o[4], &rk = o[5], &st = o[6], &at = o[7];
    const void* pos = rq.p[1];
    if (rq.kind != OpKind::Rope || rk.kind != OpKind::Rope || rq.p[0] != o[1].p[3] || rk.p[0] != o[2].p[3] ||
        rk.p[1] != pos || rq.n0 != 1 || rk.n0 != 1 || !sameRope(rq.rope, rk.rope) || rq.i0 != rk.i0)
        return false;
    if (st.kind != OpKind::StoreKv || st.p[0] != o[2].p[3] || st.p[1] != o[3].p[3] || st.p[2] != pos || st.n0 != 1)
        return false;
    if (at.kind != OpKind::Attention || at.p[0] != o[1].p[3] || at.p[1] != pos || at.n0 != 1 || !at.p[4] ||
        at.kv.k != st.kv.k || at.kv.v != st.kv.v || !sameKvLayout(at.kv, st.kv) || at.attn.slidingWindow != 0 ||
        at.attn.softcap != 0.0f || at.attn.headDim != rq.i0)
        return false;
    const Op &wo = o[8], &add1 = o[9], &n2 = o[10], &gate = o[11], &up = o[12], &glu = o[13], &qz = o[14],
             &down = o[15], &add2 = o[16];
    const void* x = n1.p[0];
    if (!isOneTokenGemv(wo, at.p[3], at.p[4], at.p[5])) return false;
    if (add1.kind != OpKind::Add || add1.p[0] != x || add1.p[1] != wo.p[3] || add1.p[2] != x) return false;
    if (n2.kind != OpKind::RmsNorm || n2.p[0] != x || n2.n0 != 1 || n2.n2 != n2.n1 || !n2.p[3]) return false;
    if (!isOneTokenGemv(gate, n2.p[2], n2.p[3], n2.p[4]) || !isOneTokenGemv(up, n2.p[2], n2.p[3], n2.p[4])) return false;
    if (glu.kind != OpKind::Glu || glu.p[0] != gate.p[3] || glu.p[1] != up.p[3] || glu.n0 != gate.m.rows) return false;
    if (qz.kind != OpKind::Quantize || qz.p[0] != glu.p[2] || qz.n0 != 1) return false;
    if (!isOneTokenGemv(down, glu.p[2], qz.p[1], qz.p[2])) return false;
    if (add2.kind != OpKind::Add || add2.p[0] != x || add2.p[1] != down.p[3] || add2.p[2] != x) return false;

    const Flow mine{x, o[1].p[3], o[2].p[3], o[3].p[3], at.p[3], glu.p[2], at.p[2], pos};
    const cuda::GluAct act = glu.i0 == 0 ? cuda::GluAct::Silu : cuda::GluAct::GeluTanh;
    if (first) {
        f = mine;
        plan.hidden = static_cast<int>(n1.n1);
        plan.heads = at.attn.heads;
        plan.kvHeads = at.attn.kvHeads;
        plan.headDim = at.attn.headDim;
        plan.ffn = static_cast<int>(gate.m.rows);
        plan.eps = n1.f0;
        plan.attnScale = at.attn.scale;
        plan.ropeDims = rq.rope.dims;
        plan.ropeNeox = rq.rope.neox;
        plan.act = act;
        plan.positions = static_cast<const int32_t*>(pos);
        plan.kv = at.kv;
        plan.x = static_cast<float*>(const_cast<void*>(x));
        plan.q = static_cast<float*>(const_cast<void*>(mine.q));
        plan.k = static_cast<float*>(const_cast<void*>(mine.k));
        plan.v = static_cast<float*>(const_cast<void*>(mine.v));
        plan.attn = static_cast<float*>(const_cast<void*>(mine.attn));
        plan.h = static_cast<float*>(const_cast<void*>(mine.h));
        plan.attnScratch = static_cast<float*>(const_cast<void*>(mine.scratch));
        plan.maxSplits = at.attn.maxSplits;
    } else {
        if (std::memcmp(&mine, &f, sizeof(Flow)) != 0 || plan.hidden != n1.n1 || plan.heads != at.attn.heads ||
            plan.kvHeads != at.attn.kvHeads || plan.headDim != at.attn.headDim || plan.ffn != gate.m.rows ||
            plan.eps != n1.f0 || plan.attnScale != at.attn.scale || plan.ropeDims != rq.rope.dims ||
            plan.ropeNeox != rq.rope.neox || plan.act != act || !sameKvLayout(plan.kv, at.kv) ||
            plan.maxSplits != at.attn.maxSplits)
            return false;
    }
    if (n2.f0 != plan.eps) return false;  // one eps for both norms of every layer
    L.attnNorm = static_cast<const float*>(n1.p[1]);
    L.ffnNorm = static_cast<const float*>(n2.p[1]);
    L.wq = o[1].m;
    L.wk = o[2].m;
    L.wv = o[3].m;
    L.wo = wo.m;
    L.gate = gate.m;
    L.up = up.m;
    L.down = down.m;
    L.kCache = at.kv.k;
    L.vCache = at.kv.v;
    L.invFreq = rq.rope.invFreq;
    L.ropeMscale = rq.rope.mscale;
    return true;
}

// The final norm (in place on x), the copy of x's row, its quantise and the
// logits GEMV.
size_t matchTail(const std::vector<Op>& ops, size_t i, cuda::DecodeStepDev& plan) {
    if (i + 4 > ops.size()) return 0;
    const Op &nm = ops[i], &cp = ops[i + 1], &qz = ops[i + 2], &gv = ops[i + 3];
    if (nm.kind != OpKind::RmsNorm || nm.p[0] != plan.x || nm.p[2] != plan.x || nm.n0 != 1 || nm.n2 != nm.n1 ||
        nm.f0 != plan.eps)
        return 0;
    if (cp.kind != OpKind::CopyRows || cp.p[1] != plan.x || cp.n0 != static_cast<int64_t>(sizeof(float)) * plan.hidden)
        return 0;
    if (qz.kind != OpKind::Quantize || qz.p[0] != cp.p[0] || qz.n0 != 1) return 0;
    if (!isOneTokenGemv(gv, cp.p[0], qz.p[1], qz.p[2])) return 0;
    plan.logits = true;
    plan.outNorm = static_cast<const float*>(nm.p[1]);
    plan.out = gv.m;
    plan.logitsOut = static_cast<float*>(const_cast<void*>(gv.p[3]));
    return 4;
}

}  // namespace

size_t matchDecodeRun(const std::vector<Op>& ops, size_t i, cuda::DecodeStepDev& plan) {
    plan = cuda::DecodeStepDev{};
    Flow f{};
    size_t at = i;
    while (plan.layers < cuda::kDecodeMaxLayers &&
           matchLayer(ops, at, plan.layers == 0, f, plan, plan.layer[plan.layers])) {
        ++plan.layers;
        at += kLayerOps;
    }
    if (plan.layers == 0) return 0;
    // The tail when the final norm follows (after a run cut at kDecodeMaxLayers
    // the next op is a layer's norm into xn, which does not match).
    at += matchTail(ops, at, plan);
    return at - i;
}

}  // namespace kestrel::backend::cudaimpl
