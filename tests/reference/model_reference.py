#!/usr/bin/env python3
"""Independent NumPy forward pass for llama, qwen2, qwen3 and gemma3 GGUF models.

Reads tensors with the PyPI `gguf` package (GGUFReader + gguf.quants.dequantize)
and runs the transformer in float32 with a NumPy KV cache. Shares no code with
the C++ engine: it is the reference the engine's logits are tested against.

For each prompt (token ids) it writes to <out>.json:
  prompts, top1 at every prompt position, 64 greedy continuation ids,
and the full last-position logits of prompt i to <out>_logits<i>.f32 (raw float32).

Usage:
  model_reference.py --all-real                      # SmolLM2 + Gemma 3 into $KESTREL_TEST_DATA
  model_reference.py --model x.gguf --out prefix --prompt 1,2,3 [--prompt ...] [--greedy N]
"""
import argparse
import json
import math
import os
import sys
import time

# One BLAS thread: the test machine is small and shared; threads only spin here.
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
import numpy as np  # noqa: E402
from gguf import GGUFReader  # noqa: E402
from gguf.quants import dequantize  # noqa: E402
from reference_common import models_dir  # noqa: E402


class Model:
    def __init__(self, path):
        self.r = GGUFReader(path)
        self.f = {k: v for k, v in self.r.fields.items()}
        self.arch = self.meta("general.architecture")
        self.t = {t.name: t for t in self.r.tensors}
        a = self.arch
        self.n_layer = int(self.meta(f"{a}.block_count"))
        self.n_embd = int(self.meta(f"{a}.embedding_length"))
        self.n_head = int(self.meta(f"{a}.attention.head_count"))
        self.n_kv = int(self.meta(f"{a}.attention.head_count_kv", self.n_head))
        self.hd = int(self.meta(f"{a}.attention.key_length", self.n_embd // self.n_head))
        self.eps = float(self.meta(f"{a}.attention.layer_norm_rms_epsilon"))
        self.base = float(self.meta(f"{a}.rope.freq_base", 10000.0))
        self.rope_dims = int(self.meta(f"{a}.rope.dimension_count", self.hd))
        self.window = int(self.meta(f"{a}.attention.sliding_window", 0))
        self.neox = a in ("qwen2", "qwen3", "gemma3")
        self.cache = {}
        self.embd = self.w("token_embd.weight")  # [vocab, n_embd], dequantised once
        self.out_w = self.w("output.weight") if "output.weight" in self.t else self.embd

    def meta(self, key, default=None):
        if key not in self.f:
            if default is None:
                raise KeyError(key)
            return default
        return self.f[key].contents()

    def w(self, name):
        if name not in self.cache:
            t = self.t[name]
            a = dequantize(t.data, t.tensor_type).astype(np.float32)
            dims = [int(d) for d in t.shape]  # ggml order
            self.cache[name] = a.reshape(list(reversed(dims)))
        return self.cache[name]

    def has(self, name):
        return name in self.t

    # --- ops, written from the definitions ---
    def rmsnorm(self, x, g):
        # x [..., n]; g [n]
        ms = np.mean(x.astype(np.float64) ** 2, axis=-1, keepdims=True)
        return (x / np.sqrt(ms + self.eps)).astype(np.float32) * g

    def rope(self, x, pos, base):
        # x [T, heads, hd]; pos [T]
        d = self.rope_dims
        out = x.copy()
        i = np.arange(d // 2, dtype=np.float64)
        theta = np.asarray(pos, dtype=np.float64)[:, None] * base ** (-2.0 * i / d)  # [T, d/2]
        c, s = np.cos(theta)[:, None, :], np.sin(theta)[:, None, :]
        if self.neox:
            a, b = x[..., : d // 2], x[..., d // 2 : d]
        else:
            a, b = x[..., 0:d:2], x[..., 1:d:2]
        ra = a * c - b * s
        rb = a * s + b * c
        if self.neox:
            out[..., : d // 2], out[..., d // 2 : d] = ra, rb
        else:
            out[..., 0:d:2], out[..., 1:d:2] = ra, rb
        return out.astype(np.float32)

    def layer_is_sliding(self, il):
        return self.arch == "gemma3" and self.window > 0 and (il % 6) != 5

    def forward(self, toks, start, kv):
        """Tokens at positions start.. through every layer; kv[il] = [K, V] arrays [T, n_kv, hd].
        Returns the final normed hidden states [T, n_embd]."""
        a = self.arch
        T = len(toks)
        pos = np.arange(start, start + T)
        x = self.embd[np.asarray(toks)].astype(np.float32)
        if a == "gemma3":
            x *= np.float32(math.sqrt(self.n_embd))
        group = self.n_head // self.n_kv
        for il in range(self.n_layer):
            p = f"blk.{il}."
            h = self.rmsnorm(x, self.w(p + "attn_norm.weight"))
            q = h @ self.w(p + "attn_q.weight").T
            k = h @ self.w(p + "attn_k.weight").T
            v = h @ self.w(p + "attn_v.weight").T
            if a == "qwen2":
                q += self.w(p + "attn_q.bias")
                k += self.w(p + "attn_k.bias")
                v += self.w(p + "attn_v.bias")
            q = q.reshape(T, self.n_head, self.hd)
            k = k.reshape(T, self.n_kv, self.hd)
            v = v.reshape(T, self.n_kv, self.hd)
            if a in ("qwen3", "gemma3"):
                q = self.rmsnorm(q, self.w(p + "attn_q_norm.weight"))
                k = self.rmsnorm(k, self.w(p + "attn_k_norm.weight"))
            sliding = self.layer_is_sliding(il)
            base = 10000.0 if sliding else self.base
            q = self.rope(q, pos, base)
            k = self.rope(k, pos, base)
            kv[il][0] = k if kv[il][0] is None else np.concatenate([kv[il][0], k])
            kv[il][1] = v if kv[il][1] is None else np.concatenate([kv[il][1], v])
            K, V = kv[il]
            S = K.shape[0]
            j = np.arange(S)
            mask = j[None, :] <= pos[:, None]  # [T, S]
            if sliding:
                mask &= (pos[:, None] - j[None, :]) < self.window
            Kh = np.repeat(K, group, axis=1).transpose(1, 0, 2)  # [H, S, hd]
            Vh = np.repeat(V, group, axis=1).transpose(1, 0, 2)
            sc = np.einsum("thd,hsd->hts", q, Kh) / math.sqrt(self.hd)
            sc = np.where(mask[None], sc, -np.inf)
            sc = np.exp(sc - sc.max(axis=-1, keepdims=True))
            sc /= sc.sum(axis=-1, keepdims=True)
            att = np.einsum("hts,hsd->thd", sc, Vh).reshape(T, -1).astype(np.float32)
            o = att @ self.w(p + "attn_output.weight").T
            if a == "gemma3":
                o = self.rmsnorm(o, self.w(p + "post_attention_norm.weight"))
            x = x + o
            h = self.rmsnorm(x, self.w(p + "ffn_norm.weight"))
            g = h @ self.w(p + "ffn_gate.weight").T
            u = h @ self.w(p + "ffn_up.weight").T
            if a == "gemma3":
                act = 0.5 * g * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (g + 0.044715 * g ** 3)))
            else:
                act = g / (1.0 + np.exp(-g))
            f = (act * u) @ self.w(p + "ffn_down.weight").T
            if a == "gemma3":
                f = self.rmsnorm(f, self.w(p + "post_ffw_norm.weight"))
            x = x + f
        return self.rmsnorm(x, self.w("output_norm.weight"))

    def logits(self, hidden):
        return (hidden @ self.out_w.T).astype(np.float32)

    def run(self, prompt, greedy):
        kv = [[None, None] for _ in range(self.n_layer)]
        lg = self.logits(self.forward(prompt, 0, kv))  # [T, vocab]
        top1 = [int(t) for t in np.argmax(lg, axis=-1)]
        srt = np.sort(lg, axis=-1)
        self.top1_margins = [float(m) for m in srt[:, -1] - srt[:, -2]]
        self.all_logits = lg
        out_logits = lg[-1].copy()
        gen, margins = [], []
        nxt = top1[-1]
        pos = len(prompt)
        for _ in range(greedy):
            gen.append(nxt)
            last = self.logits(self.forward([nxt], pos, kv))[0]
            srt = np.sort(last)
            margins.append(float(srt[-1] - srt[-2]))  # near-ties explain any greedy divergence
            nxt = int(np.argmax(last))
            pos += 1
        return out_logits, top1, gen, margins


def vocab_ids(model, pieces):
    toks = model.meta("tokenizer.ggml.tokens")
    index = {s: i for i, s in enumerate(toks)}
    return [index[p] for p in pieces]


def up_to_date(out, path):
    """Outputs newer than both the model and this script are reused (the fixture runs every ctest)."""
    try:
        done = min(os.path.getmtime(out + ".json"), os.path.getmtime(out + ".txt"))
    except OSError:
        return False
    return done > os.path.getmtime(path) and done > os.path.getmtime(os.path.abspath(__file__))


def run_model(path, out, prompts, greedy, quiet=False, reuse=False):
    if reuse and up_to_date(out, path):
        print(f"{out}.json is up to date")
        return
    t0 = time.time()
    m = Model(path)
    result = {"model": os.path.basename(path), "arch": m.arch, "prompts": [], "top1": [], "top1_margins": [],
              "greedy": [], "margins": []}
    for i, prompt in enumerate(prompts):
        logits, top1, gen, margins = m.run(prompt, greedy)
        logits.astype("<f4").tofile(f"{out}_logits{i}.f32")
        result["prompts"].append(prompt)
        result["top1"].append(top1)
        result["top1_margins"].append(m.top1_margins)
        if m.all_logits.size <= 1 << 20:  # small (synthetic) models: every position's logits
            m.all_logits.astype("<f4").tofile(f"{out}_all{i}.f32")
        result["greedy"].append(gen)
        result["margins"].append(margins)
        if not quiet and "tokenizer.ggml.tokens" in m.f:
            toks = m.meta("tokenizer.ggml.tokens")
            print(f"[{m.arch}] prompt {i}:", "".join(toks[t] for t in prompt), "=>", "".join(toks[t] for t in gen[:24]))
    with open(out + ".txt.tmp", "w") as fh:  # the same, for readers without JSON (tests/common/reference_check.h)
        for key in ("prompts", "top1", "top1_margins", "greedy", "margins"):
            for i, values in enumerate(result[key]):
                fh.write(f"{key} {i} " + " ".join(repr(float(v)) if key.endswith("margins") else str(int(v))
                                                  for v in values) + "\n")
    os.replace(out + ".txt.tmp", out + ".txt")
    with open(out + ".json.tmp", "w") as fh:
        json.dump(result, fh)
    os.replace(out + ".json.tmp", out + ".json")
    if not quiet:
        print(f"{os.path.basename(path)}: {time.time() - t0:.1f} s")


def all_real(greedy):
    data = os.environ.get("KESTREL_TEST_DATA")
    if not data:
        sys.exit("KESTREL_TEST_DATA is not set")
    os.makedirs(data, exist_ok=True)
    smol = os.path.join(models_dir(), "SmolLM2-135M-Instruct.Q4_1.gguf")
    gemma = os.path.join(models_dir(), "gemma-3-270m-q4_k_m.gguf")
    if os.path.exists(smol) and not up_to_date(os.path.join(data, "model_ref_smollm2"), smol):
        m = Model(smol)
        p = [
            [1] + vocab_ids(m, ["The", "Ġcapital", "Ġof", "ĠFrance", "Ġis"]),
            vocab_ids(m, ["Once", "Ġupon", "Ġa", "Ġtime", ",", "Ġthere", "Ġwas", "Ġa", "Ġlittle"]),
            # Chat-shaped and longer than the test's maxBatch of 16, so prefill runs in chunks.
            vocab_ids(m, ["<|im_start|>", "user", "Ċ", "What", "Ġis", "Ġthe", "Ġbest", "Ġway", "Ġto", "Ġlearn",
                          "Ġa", "Ġnew", "Ġlanguage", "Ġquickly", "?", "<|im_end|>", "Ċ", "<|im_start|>",
                          "ass", "istant", "Ċ"]),
        ]
        del m
        run_model(smol, os.path.join(data, "model_ref_smollm2"), p, greedy, reuse=True)
    if os.path.exists(gemma) and not up_to_date(os.path.join(data, "model_ref_gemma3"), gemma):
        m = Model(gemma)
        p = [
            [2] + vocab_ids(m, ["The", "▁capital", "▁of", "▁France", "▁is"]),
            [2] + vocab_ids(m, ["Once", "▁upon", "▁a", "▁time", ",", "▁there", "▁was", "▁a", "▁little"]),
            [2] + vocab_ids(m, ["def", "▁fib", "(", "n", "):", "\n"]),
        ]
        del m
        run_model(gemma, os.path.join(data, "model_ref_gemma3"), p, greedy, reuse=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--all-real", action="store_true")
    ap.add_argument("--model")
    ap.add_argument("--out")
    ap.add_argument("--prompt", action="append", default=[])
    ap.add_argument("--greedy", type=int, default=64)
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    if a.all_real:
        if not any(os.path.exists(os.path.join(models_dir(), n)) for n in
                   ("SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf")):
            print("no reference models; run scripts/fetch-models.sh --all")
            sys.exit(77)
        all_real(a.greedy)
    else:
        prompts = [[int(x) for x in p.split(",")] for p in a.prompt]
        run_model(a.model, a.out, prompts, a.greedy, a.quiet)


if __name__ == "__main__":
    main()
