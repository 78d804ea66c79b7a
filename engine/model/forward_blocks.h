// The building blocks the architectures' forward recipes are made of.
//
// Conventions of a step (see Step in arch_table.h): scratch.x holds the
// residual stream, scratch.xn the normed input of a block, and each block
// writes its output to scratch.tmp for the recipe to add back.
#pragma once

#include "arch_table.h"

namespace kestrel::model {

// scratch.x = token_embd[ids] * cfg.embedScale.
void embedTokens(Step& st);

// RoPE parameters of layer il: global layers get the file's base and scaling;
// sliding-window layers (gemma3) ropeBaseLocal without scaling.
backend::RopeParams ropeForLayer(const Step& st, int il);

// scratch.tmp = Wo · attention(rope(norm?(Wq xn + bq)), rope(norm?(Wk xn + bk)), Wv xn + bv).
// Biases and Q/K norms are applied when the layer has them.
void attentionBlock(Step& st, int il);

// scratch.tmp = Wdown · (act(Wgate xn) * (Wup xn)).
void gluFfnBlock(Step& st, int il, backend::GluKind kind);

// scratch.xn = rmsnorm(scratch.x) with `gamma`.
void normInto(Step& st, const backend::Weight& gamma);

// The pre-norm residual layer of llama/qwen2/qwen3: x += attn(norm(x)); x += ffn(norm(x)).
void preNormLayer(Step& st, int il, backend::GluKind kind);

// scratch.x = rmsnorm(scratch.x) with output_norm.
void finalNorm(Step& st);

// The whole step of llama, qwen2 and qwen3 (their differences are in the
// weights: biases, Q/K norms): embed, pre-norm SwiGLU layers, final norm.
void preNormSwiGluForward(Step& st);

}  // namespace kestrel::model
