#include "forward_blocks.h"

namespace kestrel::model {

void embedTokens(Step& st) {
    st.be.embed(*st.w.tokenEmbd, *st.s.ids, *st.s.x);
    if (st.cfg.embedScale != 1.0f) st.be.scale(*st.s.x, st.cfg.embedScale);
}

backend::RopeParams ropeForLayer(const Step& st, int il) {
    const ModelConfig& c = st.cfg;
    backend::RopeParams p;
    p.dims = c.ropeDims;
    p.neox = c.ropeNeox;
    if (c.isSlidingLayer(il) && c.slidingPeriod > 0) {
        p.base = c.ropeBaseLocal;
        return p;
    }
    p.base = c.ropeBase;
    p.scaling = c.ropeScaling;
    p.factor = c.ropeFactor;
    p.freqScale = 1.0f / c.ropeFactor;
    p.originalContext = c.ropeOriginalContext;
    p.lowFreqFactor = c.ropeLowFreqFactor;
    p.highFreqFactor = c.ropeHighFreqFactor;
    p.yarnBetaFast = c.ropeYarnBetaFast;
    p.yarnBetaSlow = c.ropeYarnBetaSlow;
    p.yarnExtFactor = c.ropeYarnExtFactor;
    p.attnFactor = c.ropeAttnFactor;
    p.freqFactors = st.w.ropeFreqs;
    return p;
}

void attentionBlock(Step& st, int il) {
    const LayerWeights& l = st.w.layers[static_cast<size_t>(il)];
    const ModelConfig& c = st.cfg;
    backend::Backend& be = st.be;
    Scratch& s = st.s;
    const backend::Backend::MatmulTarget qkv[] = {{l.wq, s.q.get()}, {l.wk, s.k.get()}, {l.wv, s.v.get()}};
    be.matmulShared(*s.xn, qkv);
    if (l.bq) be.addBias(*s.q, *l.bq);
    if (l.bk) be.addBias(*s.k, *l.bk);
    if (l.bv) be.addBias(*s.v, *l.bv);
    if (l.qNorm) be.rmsNorm(*s.q, *l.qNorm, c.normEps, *s.q, c.headDim);
    if (l.kNorm) be.rmsNorm(*s.k, *l.kNorm, c.normEps, *s.k, c.headDim);
    const backend::RopeParams rope = ropeForLayer(st, il);
    be.rope(*s.q, c.headDim, *s.positions, rope);
    be.rope(*s.k, c.headDim, *s.positions, rope);
    const backend::KvBatch kvb = s.kvBatch();
    be.storeKv(*s.k, *s.v, st.kv, il, kvb);
    backend::AttentionParams ap;
    ap.heads = c.nHead;
    ap.kvHeads = c.nHeadKv;
    ap.headDim = c.headDim;
    ap.scale = c.queryScale;
    ap.slidingWindow = c.isSlidingLayer(il) ? c.slidingWindow : 0;
    ap.softcap = c.attnSoftcap;
    be.attention(*s.q, st.kv, il, kvb, ap, *s.attn);
    be.matmul(*l.wo, *s.attn, *s.tmp);
}

void gluFfnBlock(Step& st, int il, backend::GluKind kind) {
    const LayerWeights& l = st.w.layers[static_cast<size_t>(il)];
    Scratch& s = st.s;
    const backend::Backend::MatmulTarget gateUp[] = {{l.ffnGate, s.gate.get()}, {l.ffnUp, s.up.get()}};
    st.be.matmulShared(*s.xn, gateUp);
    st.be.glu(*s.gate, *s.up, kind, *s.gate);
    st.be.matmul(*l.ffnDown, *s.gate, *s.tmp);
}

void normInto(Step& st, const backend::Weight& gamma) {
    st.be.rmsNorm(*st.s.x, gamma, st.cfg.normEps, *st.s.xn, st.cfg.nEmbd);
}

void preNormLayer(Step& st, int il, backend::GluKind kind) {
    const LayerWeights& l = st.w.layers[static_cast<size_t>(il)];
    normInto(st, *l.attnNorm);
    attentionBlock(st, il);
    st.be.add(*st.s.x, *st.s.tmp, *st.s.x);
    normInto(st, *l.ffnNorm);
    gluFfnBlock(st, il, kind);
    st.be.add(*st.s.x, *st.s.tmp, *st.s.x);
}

void finalNorm(Step& st) { st.be.rmsNorm(*st.s.x, *st.w.outputNorm, st.cfg.normEps, *st.s.x, st.cfg.nEmbd); }

void preNormSwiGluForward(Step& st) {
    embedTokens(st);
    for (int il = 0; il < st.cfg.nLayer; ++il) preNormLayer(st, il, backend::GluKind::Silu);
    finalNorm(st);
}

}  // namespace kestrel::model
