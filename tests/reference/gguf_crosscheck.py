#!/usr/bin/env python3
"""Cross-check Kestrel's GGUF reader and writer against gguf-py (PyPI `gguf`).

(a) gguf.GGUFWriter writes a file from SPEC; the C++ tool dumps what
    kestrel::gguf::GgufFile read as JSON; every key, type, value, tensor name,
    type, dims and data byte must match SPEC.
(b) the C++ tool writes SPEC with kestrel::gguf::GgufWriter; gguf.GGUFReader
    reads it; every field and tensor must match SPEC, and the data offset and
    alignment both readers report must agree.

Exact comparisons throughout (float values in SPEC are exactly representable
in float32). Exit 0 on success, 1 on any mismatch, 77 (ctest skip) when the
gguf package is missing.

usage: gguf_crosscheck.py --tool PATH/gguf_crosscheck_tool --workdir DIR
"""
import argparse
import json
import os
import random
import subprocess
import sys

try:
    import numpy as np
    import gguf
except ImportError as e:  # pragma: no cover
    print(f"SKIP: {e}; pip install -r tests/reference/requirements.txt", file=sys.stderr)
    sys.exit(77)

VT = gguf.GGUFValueType
QT = gguf.GGMLQuantizationType
ALIGNMENT = 64
UNICODE = "Grüße, 世界! 🦅 ĸestrel"


def scalar(t, v):
    return {"type": t, "value": v}


def arr(element, items):
    return {"type": "array", "element": element, "value": items}


def ints(t, values):
    return arr(t, [scalar(t, str(v)) for v in values])


# Keys in order. (name, value, python_can_write): gguf-py cannot write empty arrays.
METADATA = [
    ("general.alignment", scalar("uint32", str(ALIGNMENT)), True),
    ("t.u8", scalar("uint8", "200"), True),
    ("t.i8", scalar("int8", "-100"), True),
    ("t.u16", scalar("uint16", "60000"), True),
    ("t.i16", scalar("int16", "-30000"), True),
    ("t.u32", scalar("uint32", "4000000000"), True),
    ("t.i32", scalar("int32", "-2000000000"), True),
    ("t.u64", scalar("uint64", str(2**64 - 1)), True),
    ("t.i64", scalar("int64", str(-(2**63))), True),
    ("t.f32", scalar("float32", 0.15625), True),
    ("t.f64", scalar("float64", 0.1), True),
    ("t.true", scalar("bool", True), True),
    ("t.false", scalar("bool", False), True),
    ("t.unicode", scalar("string", UNICODE), True),
    ("t.empty", scalar("string", ""), True),
    ("a.strings", arr("string", [scalar("string", s) for s in ["<s>", "", UNICODE, "Ġthe"]]), True),
    ("a.i32", ints("int32", [-1, 0, 2147483647]), True),
    ("a.u8", ints("uint8", [0, 7, 255]), True),
    ("a.u64", ints("uint64", [2**63, 1]), True),
    ("a.f32", arr("float32", [scalar("float32", x) for x in [0.5, -2.25, 1024.0]]), True),
    ("a.bool", arr("bool", [scalar("bool", True), scalar("bool", False)]), True),
    ("a.nested", arr("array", [ints("int32", [1, 2]), ints("int32", [3])]), True),
    ("a.nested_str", arr("array", [arr("string", [scalar("string", "x")]),
                                   arr("string", [scalar("string", "y"), scalar("string", "z")])]), True),
    ("a.empty", arr("uint32", []), False),
]

NP_TYPES = {"F32": np.float32, "F16": np.float16, "I32": np.int32}


def make_tensors():
    rng = random.Random(1202)
    specs = [("f32.mat", "F32", [4, 3]), ("f16.vec", "F16", [8]), ("q8_0.mat", "Q8_0", [32, 2]),
             ("q4_0.mat", "Q4_0", [64, 3]), ("q4_k.vec", "Q4_K", [256]), ("q6_k.mat", "Q6_K", [256, 2]),
             ("i32.vec", "I32", [5])]
    out = []
    for name, t, dims in specs:
        block, size = gguf.GGML_QUANT_SIZES[QT[t]]
        nbytes = size * (dims[0] // block)
        for d in dims[1:]:
            nbytes *= d
        data = bytes(rng.randrange(256) for _ in range(nbytes))
        out.append({"name": name, "type": t, "dims": dims, "data_hex": data.hex()})
    return out


TENSORS = make_tensors()


def py_value(v):
    """SPEC value -> the python value gguf-py writes / reads."""
    t = v["type"]
    if t == "array":
        return [py_value(x) for x in v["value"]]
    if t in ("float32", "float64", "bool", "string"):
        return v["value"]
    return int(v["value"])


def write_with_python(path):
    w = gguf.GGUFWriter(path, "llama")
    for key, v, can in METADATA:
        if not can:
            continue
        if key == "general.alignment":
            w.add_custom_alignment(ALIGNMENT)
            continue
        vt = VT[v["type"].upper()]
        sub = VT[v["element"].upper()] if vt == VT.ARRAY else None
        w.add_key_value(key, py_value(v), vt, sub_type=sub)
    for t in TENSORS:
        data = bytes.fromhex(t["data_hex"])
        dims = t["dims"]
        if t["type"] in NP_TYPES:
            a = np.frombuffer(data, dtype=NP_TYPES[t["type"]]).reshape(tuple(reversed(dims)))
            w.add_tensor(t["name"], a)
        else:
            row_bytes = len(data) // int(np.prod(dims[1:], dtype=np.int64) if len(dims) > 1 else 1)
            a = np.frombuffer(data, dtype=np.uint8).reshape(tuple(reversed(dims[1:])) + (row_bytes,))
            w.add_tensor(t["name"], a, raw_dtype=QT[t["type"]])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


class Checker:
    def __init__(self):
        self.failures = []

    def eq(self, what, got, want):
        if got != want:
            self.failures.append(f"{what}: got {got!r}, want {want!r}")


def canon(v):
    """Normalise a SPEC or C++-dump value for comparison (ints as int, floats as float)."""
    t = v["type"]
    if t == "array":
        return ("array", v["element"], [canon(x) for x in v["value"]])
    if t in ("float32", "float64"):
        return (t, float(v["value"]))
    if t in ("bool", "string"):
        return (t, v["value"])
    return (t, int(v["value"]))


def check_cpp_read(c, dump):
    meta = dump["metadata"]
    want_keys = {"general.architecture"} | {k for k, _, can in METADATA if can}
    c.eq("(a) key set", sorted(meta), sorted(want_keys))
    c.eq("(a) general.architecture", canon(meta.get("general.architecture", {"type": "?", "value": 0})),
         ("string", "llama"))
    for key, v, can in METADATA:
        if can and key in meta:
            c.eq(f"(a) key {key}", canon(meta[key]), canon(v))
    c.eq("(a) alignment", int(dump["alignment"]), ALIGNMENT)
    c.eq("(a) tensor count", len(dump["tensors"]), len(TENSORS))
    for got, want in zip(dump["tensors"], TENSORS):
        c.eq(f"(a) tensor {want['name']} name", got["name"], want["name"])
        c.eq(f"(a) tensor {want['name']} type", got["type"], want["type"])
        c.eq(f"(a) tensor {want['name']} dims", [int(d) for d in got["dims"]], want["dims"])
        c.eq(f"(a) tensor {want['name']} data", got["data_hex"], want["data_hex"])
        c.eq(f"(a) tensor {want['name']} offset aligned", int(got["offset"]) % ALIGNMENT, 0)


def flatten(v):
    if v["type"] == "array":
        return [x for item in v["value"] for x in flatten(item)]
    return [py_value(v)]


def leaf_types(v):
    types = [VT[v["type"].upper()]]
    if v["type"] == "array":
        types += leaf_types(v["value"][0]) if v["value"] else []
    return types


def check_python_read(c, path, cpp_dump):
    r = gguf.GGUFReader(path)
    fields = {k: f for k, f in r.fields.items() if not k.startswith("GGUF.")}
    c.eq("(b) key order", list(fields), [k for k, _, _ in METADATA])
    for key, v, _ in METADATA:
        f = fields.get(key)
        if f is None:
            continue
        c.eq(f"(b) key {key} types", f.types, leaf_types(v))
        got = f.contents()
        if v["type"] == "array":
            want = flatten(v)  # gguf-py flattens nested arrays
        else:
            want = py_value(v)
        if v["type"] == "float32" or v.get("element") == "float32":
            got = [float(np.float32(x)) for x in got] if isinstance(got, list) else float(np.float32(got))
        c.eq(f"(b) key {key} value", got, want)
    # Nested structure that flattening hides: the raw parts of a.nested are
    # [key len, key, type, ARRAY, 2, INT32, 2, 1, 2, INT32, 1, 3].
    nested = fields.get("a.nested")
    if nested is not None:
        c.eq("(b) a.nested inner counts", [int(nested.parts[i][0]) for i in (4, 6, 10)], [2, 2, 1])
        c.eq("(b) a.nested inner types", [int(nested.parts[i][0]) for i in (3, 5, 9)],
             [int(VT.ARRAY), int(VT.INT32), int(VT.INT32)])
    c.eq("(b) alignment", int(r.alignment), ALIGNMENT)
    c.eq("(b) data offset vs C++ reader", int(r.data_offset), int(cpp_dump["data_offset"]))
    c.eq("(b) tensor count", len(r.tensors), len(TENSORS))
    for got, want in zip(r.tensors, TENSORS):
        c.eq(f"(b) tensor {want['name']} name", got.name, want["name"])
        c.eq(f"(b) tensor {want['name']} type", got.tensor_type.name, want["type"])
        c.eq(f"(b) tensor {want['name']} dims", [int(d) for d in got.shape], want["dims"])
        c.eq(f"(b) tensor {want['name']} data", bytes(got.data.tobytes()).hex(), want["data_hex"])


def gguf_version():
    from importlib.metadata import version
    return version("gguf")


def run_tool(tool, *args):
    p = subprocess.run([tool, *args], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"FAIL: {tool} {' '.join(args)} exited {p.returncode}: {p.stderr.strip()}", file=sys.stderr)
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    c = Checker()

    py_file = os.path.join(args.workdir, "python_written.gguf")
    py_dump = os.path.join(args.workdir, "python_written.json")
    write_with_python(py_file)
    run_tool(args.tool, "dump", py_file, py_dump)
    with open(py_dump, encoding="utf-8") as f:
        check_cpp_read(c, json.load(f))

    spec = os.path.join(args.workdir, "spec.json")
    with open(spec, "w", encoding="utf-8") as f:
        json.dump({"alignment": str(ALIGNMENT), "metadata": [[k, v] for k, v, _ in METADATA],
                   "tensors": TENSORS}, f, ensure_ascii=False)
    cpp_file = os.path.join(args.workdir, "cpp_written.gguf")
    cpp_dump = os.path.join(args.workdir, "cpp_written.json")
    run_tool(args.tool, "write", spec, cpp_file)
    run_tool(args.tool, "dump", cpp_file, cpp_dump)
    with open(cpp_dump, encoding="utf-8") as f:
        check_python_read(c, cpp_file, json.load(f))

    if c.failures:
        for m in c.failures:
            print("MISMATCH", m, file=sys.stderr)
        print(f"FAIL: {len(c.failures)} mismatches (gguf-py {gguf_version()})", file=sys.stderr)
        return 1
    print(f"OK: {len(METADATA)} keys and {len(TENSORS)} tensors agree both ways with gguf-py {gguf_version()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
