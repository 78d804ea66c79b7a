#!/usr/bin/env python3
"""Expected token ids for Kestrel's SentencePiece tokenizer (GGUF tokenizer.ggml.model = "llama").

Two vocabularies, chosen with --vocab:

  tiny    A Llama-2-style SPM vocabulary made here: the python `sentencepiece` trainer learns a
          small BPE model (byte fallback, add_dummy_prefix, identity normalizer, two control tokens
          and a user-defined one) from the corpus plus some English, and the `gguf` package writes
          its pieces into --gguf in llama.cpp's layout (tokens, scores, token_type, ids, flags).
          Reference ids: python `sentencepiece` running the TRAINED model file itself, so nothing
          Kestrel does when it rebuilds a ModelProto from the GGUF is shared with the reference.
  gemma3  Gemma 3 270M's vocabulary (the GGUF in the models folder). Reference ids: Hugging Face
          `transformers`' GGUF tokenizer conversion (convert_gguf_tokenizer, what AutoTokenizer
          with gguf_file=... runs), which rebuilds a `tokenizers` BPE pipeline from the
          vocabulary -- an implementation independent of sentencepiece.

Special tokens ("special" mode): control-token text is split out first, leftmost then longest,
and only the text before the first special token gets the dummy prefix (HF's prepend_scheme
"first"). "plain" mode: control-token text is ordinary text (the sentencepiece model never makes
control pieces from text; for HF, encode_special_tokens). User-defined tokens are matched in both.
No BOS/EOS in either mode.

Corpus: one case per line of tests/data/tokenizer_corpus.txt (escapes \\n \\r \\t \\\\ decoded),
the whole file as case "all", plus a few chat-shaped cases "x0".. with the vocabulary's own
control tokens.

Output (--out), tab-separated records:
  <case> text <the case's UTF-8 bytes in hex>
  <case> <mode> <ids separated by spaces>

Exit status 77 (ctest SKIP_RETURN_CODE) when the model or a Python package is missing.
"""
import argparse
import io
import os
import sys
from reference_common import models_dir, unescape  # noqa: E402

SKIP = 77

ENGLISH = """Tokenizers turn text into numbers. A small vocabulary learns the most frequent pieces of
the training text: common words, their beginnings and endings, and single characters. Anything it
never saw falls back to bytes, so every string can still be written down. The quick brown fox jumps
over the lazy dog, again and again, while the model counts pairs of symbols and merges the best one.
"""


def split_special(text, specials):
    """[(is_special, text_or_token)] with leftmost, then longest, matching."""
    by_len = sorted(specials, key=len, reverse=True)
    out, plain, pos = [], 0, 0
    while pos < len(text):
        hit = next((s for s in by_len if text.startswith(s, pos)), None)
        if hit is None:
            pos += 1
            continue
        if pos > plain:
            out.append((False, text[plain:pos]))
        out.append((True, hit))
        pos += len(hit)
        plain = pos
    if plain < len(text):
        out.append((False, text[plain:]))
    return out


# --- tiny: a trained Llama-2-style model ------------------------------------------------------

TINY_CONTROL = ["<|user|>", "<|end|>"]
TINY_USER_DEFINED = ["<tool>"]


def train_tiny(corpus_lines):
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus_lines * 4 + ENGLISH.split("\n") * 8),
        model_writer=model, model_type="bpe", vocab_size=700, hard_vocab_limit=False,
        byte_fallback=True, character_coverage=0.98, split_digits=True,
        normalization_rule_name="identity", add_dummy_prefix=True, remove_extra_whitespaces=False,
        control_symbols=TINY_CONTROL, user_defined_symbols=TINY_USER_DEFINED,
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, num_threads=1, minloglevel=2)
    return model.getvalue()


def write_tiny_gguf(path, model_bytes):
    import gguf
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    proto.ParseFromString(model_bytes)
    w = gguf.GGUFWriter(path, "llama")
    w.add_tokenizer_model("llama")
    w.add_token_list([p.piece for p in proto.pieces])
    w.add_token_scores([p.score for p in proto.pieces])
    w.add_token_types([int(p.type) for p in proto.pieces])
    w.add_bos_token_id(proto.trainer_spec.bos_id)
    w.add_eos_token_id(proto.trainer_spec.eos_id)
    w.add_unk_token_id(proto.trainer_spec.unk_id)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_add_space_prefix(True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def tiny_encoder(model_bytes):
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    first = spm.SentencePieceProcessor(model_proto=model_bytes)
    proto = pb.ModelProto()
    proto.ParseFromString(model_bytes)
    proto.normalizer_spec.add_dummy_prefix = False
    rest = spm.SentencePieceProcessor(model_proto=proto.SerializeToString())
    control = {first.id_to_piece(i): i for i in range(first.get_piece_size()) if first.is_control(i)}

    def encode(text, parse_special):
        parts = split_special(text, list(control)) if parse_special else [(False, text)]
        ids = []
        for index, (special, part) in enumerate(parts):
            if special:
                ids.append(control[part])
            else:
                ids += (first if index == 0 else rest).encode(part)
        return ids

    return encode, TINY_CONTROL


# --- gemma3: HF transformers on the GGUF ------------------------------------------------------

def read_gguf_metadata(path):
    """The metadata key/values of a GGUF v2/v3 file. gguf-py's reader takes over a minute on a
    262k-token vocabulary, so the few types a vocabulary uses are parsed here directly."""
    import struct

    scalar = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
    with open(path, "rb") as f:
        head = f.read(24)
        if head[:4] != b"GGUF":
            sys.exit(f"{path}: not a GGUF file")
        (count,) = struct.unpack_from("<Q", head, 16)
        data = f.read(64 << 20)  # the metadata lies well within this for any model we test
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, data, pos)[0]
        pos += struct.calcsize(fmt)
        return v

    def string():
        nonlocal pos
        n = take("<Q")
        v = data[pos:pos + n].decode("utf-8")
        pos += n
        return v

    def value(t):
        nonlocal pos
        if t == 8:
            return string()
        if t == 9:
            et, n = take("<I"), take("<Q")
            if et == 8:
                return [string() for _ in range(n)]
            fmt = scalar[et]
            size = struct.calcsize(fmt)
            v = list(struct.unpack_from("<" + fmt[1] * n, data, pos))
            pos += size * n
            return v
        return take(scalar[t])

    meta = {}
    for _ in range(count):
        key = string()
        meta[key] = value(take("<I"))
    return meta


def gemma_encoder(model_path):
    # transformers' AutoTokenizer(gguf_file=...) reads the file through torch; the tokenizer half
    # of that path (convert_gguf_tokenizer) needs only the metadata, which is read here instead.
    from transformers.integrations.gguf.gguf_tokenizer_mapping import convert_gguf_tokenizer

    meta = read_gguf_metadata(model_path)
    keys = {"model": "tokenizer_type", "tokens": "tokens", "scores": "scores", "token_type": "token_type",
            "merges": "merges", "bos_token_id": "bos_token_id", "eos_token_id": "eos_token_id",
            "unknown_token_id": "unk_token_id", "padding_token_id": "pad_token_id",
            "add_space_prefix": "add_prefix_space", "pre": "pre_tokenizer_type"}
    tokenizer_dict = {name: meta[f"tokenizer.ggml.{key}"] for key, name in keys.items()
                      if f"tokenizer.ggml.{key}" in meta}
    backend, _ = convert_gguf_tokenizer(meta["general.architecture"], tokenizer_dict)

    def encode(text, parse_special):
        backend.encode_special_tokens = not parse_special
        return backend.encode(text, add_special_tokens=False).ids

    return encode, ["<start_of_turn>", "<end_of_turn>", "<bos>"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab", choices=["tiny", "gemma3"], required=True)
    ap.add_argument("--model", default=os.path.join(models_dir(), "gemma-3-270m-q4_k_m.gguf"))
    ap.add_argument("--gguf", help="tiny: where to write the GGUF vocabulary")
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    # A stale file from an earlier run must not stand in for a reference that was not made.
    for stale in (args.out, args.gguf):
        if stale and os.path.exists(stale):
            os.remove(stale)
    try:
        import gguf  # noqa: F401
        import sentencepiece  # noqa: F401
        if args.vocab == "gemma3":
            import transformers  # noqa: F401
    except ImportError as e:
        print(f"skip: {e}; pip install -r tests/reference/requirements.txt", file=sys.stderr)
        return SKIP

    with open(args.corpus, encoding="utf-8", newline="") as f:
        raw = f.read()
    lines = [unescape(line) for line in raw.split("\n")[:-1]]
    cases = [(str(i), text) for i, text in enumerate(lines)] + [("all", raw)]

    if args.vocab == "tiny":
        if not args.gguf:
            sys.exit("--vocab tiny needs --gguf")
        model_bytes = train_tiny(lines)
        os.makedirs(os.path.dirname(os.path.abspath(args.gguf)), exist_ok=True)
        write_tiny_gguf(args.gguf, model_bytes)
        encode, control = tiny_encoder(model_bytes)
        source = f"sentencepiece {sentencepiece.__version__} on the trained model"
    else:
        if not os.path.exists(args.model):
            print(f"skip: model {args.model} missing; run scripts/fetch-models.sh --all", file=sys.stderr)
            return SKIP
        encode, control = gemma_encoder(args.model)
        source = f"transformers {transformers.__version__} on {os.path.basename(args.model)}"

    a, b = control[0], control[1]
    chat = [f"{a}user\nHello there!{b}\n{a}model\n", f"{a}{b}{a}", f"text {a} inside {b}", f" {a}x",
            f"{a[:-1]}almost a token{b[1:]}", "<tool> and <tool><tool>", "\n\n\n\t\t  x  \n"]
    cases += [(f"x{i}", text) for i, text in enumerate(chat)]

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        out.write(f"# {source}; {len(cases)} cases\n")
        for name, text in cases:
            out.write(f"{name}\ttext\t{text.encode('utf-8').hex()}\n")
            for mode, parse in (("special", True), ("plain", False)):
                out.write(f"{name}\t{mode}\t{' '.join(map(str, encode(text, parse)))}\n")
    os.replace(tmp, args.out)
    print(f"wrote {len(cases)} cases x 2 modes to {args.out} ({source})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
