#!/usr/bin/env python3
"""Reference data for tst_quant: GGML blocks and gguf-py's dequantisation of them.

Usage: quant_reference.py OUTDIR [MODELSDIR]

Writes, for every name listed in OUTDIR/quant_manifest.txt ("name type_id elements kind"):
  name.blocks  raw GGML bytes
  name.f32     float32 values (kind "dequant": gguf.quants.dequantize of the blocks;
               kind "quant": the float input that gguf.quants.quantize turned into the blocks)
Random blocks have random quant bits and finite, moderate f16 scales (random scale
bits would be NaN/inf now and then, which says nothing about the layout). When the
models are present, a few rows of real tensors are dumped too.
"""
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.constants import GGML_QUANT_SIZES

RNG = np.random.default_rng(20261202)

# Byte offsets of the f16 scale fields in each block (d, dmin, m).
SCALE_FIELDS = {
    T.Q4_0: [0], T.Q4_1: [0, 2], T.Q5_0: [0], T.Q5_1: [0, 2], T.Q8_0: [0],
    T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208],
}


def random_blocks(qtype, n_blocks):
    block_size, type_size = GGML_QUANT_SIZES[qtype]
    raw = RNG.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
    for off in SCALE_FIELDS.get(qtype, []):
        scales = (RNG.standard_normal(n_blocks) * 0.05).astype(np.float16)
        raw[:, off:off + 2] = scales.view(np.uint8).reshape(n_blocks, 2)
    return raw


def write(outdir, manifest, name, qtype, blocks, floats, kind):
    blocks = np.ascontiguousarray(blocks, dtype=np.uint8)
    floats = np.ascontiguousarray(floats, dtype=np.float32).reshape(-1)
    blocks.tofile(os.path.join(outdir, name + ".blocks"))
    floats.tofile(os.path.join(outdir, name + ".f32"))
    manifest.append(f"{name} {int(qtype)} {floats.size} {kind}")


def random_dequant(outdir, manifest):
    for qtype in SCALE_FIELDS:
        blocks = random_blocks(qtype, 64)
        deq = gguf.quants.dequantize(blocks.reshape(-1), qtype)
        write(outdir, manifest, f"random_{qtype.name}", qtype, blocks, deq, "dequant")
    # Plain 16-bit types: every finite bit pattern (NaNs compare unequal by definition).
    halves = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    f16 = halves[(halves & 0x7C00) != 0x7C00]
    write(outdir, manifest, "all_F16", T.F16, f16.view(np.uint8), f16.view(np.float16).astype(np.float32), "dequant")
    bf = halves[(halves & 0x7F80) != 0x7F80]
    bfd = gguf.quants.dequantize(bf.view(np.uint8), T.BF16)
    write(outdir, manifest, "all_BF16", T.BF16, bf.view(np.uint8), bfd, "dequant")


def random_quant(outdir, manifest):
    # Inputs with ties and zeros sprinkled in, as well as plain normals.
    for qtype in (T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.BF16, T.F16):
        n = 32 * 64
        x = (RNG.standard_normal(n) * RNG.choice([0.01, 1.0, 30.0], size=n)).astype(np.float32)
        x[RNG.integers(0, n, 40)] = 0.0
        x[:32] = 0.0  # an all-zero block
        if qtype == T.F16:
            blocks = x.astype(np.float16).view(np.uint8)
        else:
            blocks = gguf.quants.quantize(x.reshape(1, -1), qtype).reshape(-1)
        write(outdir, manifest, f"quant_{qtype.name}", qtype, blocks, x, "quant")


def tensor_table(path):
    """{name: (type, dims, absolute offset)} from a GGUF header. gguf.GGUFReader parses
    every metadata array (Gemma's 262k-entry vocabulary takes it ~30 s); this skips them."""
    import mmap
    import struct
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, mm, pos)
        pos += struct.calcsize("<" + fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take("Q")
        s = bytes(mm[pos:pos + n]).decode("utf-8", "replace")
        pos += n
        return s

    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

    def skip(vtype):
        nonlocal pos
        if vtype == 8:
            n = take("Q")  # read before updating pos: take() moves it
            pos += n
        elif vtype == 9:
            etype, count = take("I"), take("Q")
            if etype in sizes:
                pos += sizes[etype] * count
            else:
                for _ in range(count):
                    skip(etype)
        else:
            pos += sizes[vtype]

    assert take("I") == 0x46554747, "not a GGUF file"
    take("I")
    n_tensors, n_kv = take("Q"), take("Q")
    alignment = 32
    for _ in range(n_kv):
        key, vtype = string(), take("I")
        if key == "general.alignment" and vtype == 4:
            alignment = take("I")
        else:
            skip(vtype)
    infos = {}
    for _ in range(n_tensors):
        name = string()
        dims = [take("Q") for _ in range(take("I"))]
        infos[name] = (take("I"), dims, take("Q"))
    data_start = (pos + alignment - 1) // alignment * alignment
    return {k: (t, d, data_start + o) for k, (t, d, o) in infos.items()}, mm


def model_rows(outdir, manifest, modelsdir):
    wanted = {
        "SmolLM2-135M-Instruct.Q4_1.gguf": ["blk.0.attn_q.weight", "token_embd.weight", "blk.0.ffn_down.weight"],
        "gemma-3-270m-q4_k_m.gguf": ["blk.0.attn_q.weight", "blk.0.attn_output.weight", "blk.0.ffn_down.weight",
                                     "blk.0.attn_v.weight", "token_embd.weight"],
    }
    for fname, tensors in wanted.items():
        path = os.path.join(modelsdir, fname)
        if not os.path.exists(path):
            print(f"quant_reference: {path} missing, skipping its tensors")
            continue
        table, mm = tensor_table(path)
        for tname in tensors:
            if tname not in table:
                continue
            type_id, dims, offset = table[tname]
            qtype = T(type_id)
            cols = int(dims[0])
            block_size, type_size = GGML_QUANT_SIZES[qtype]
            row_bytes = cols // block_size * type_size
            rows = 3
            blocks = np.frombuffer(mm, dtype=np.uint8, count=rows * row_bytes, offset=offset).copy()
            deq = gguf.quants.dequantize(blocks, qtype)
            short = fname.split("-")[0].lower()
            write(outdir, manifest, f"model_{short}_{tname}_{qtype.name}", qtype, blocks, deq, "dequant")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    outdir = sys.argv[1]
    modelsdir = sys.argv[2] if len(sys.argv) > 2 else os.environ.get(
        "KESTREL_MODELS_DIR", os.path.expanduser("~/.local/share/kestrel/models"))
    os.makedirs(outdir, exist_ok=True)
    manifest = []
    random_dequant(outdir, manifest)
    random_quant(outdir, manifest)
    model_rows(outdir, manifest, modelsdir)
    with open(os.path.join(outdir, "quant_manifest.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    print(f"quant_reference: wrote {len(manifest)} cases to {outdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
