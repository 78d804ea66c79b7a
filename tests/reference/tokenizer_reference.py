#!/usr/bin/env python3
"""Expected token ids for Kestrel's byte-level BPE tokenizer, from Hugging Face `tokenizers`.

The reference is independent of Kestrel: the vocabulary and merges are read from the GGUF file
with the `gguf` package, and the tokenization is done by HF `tokenizers` with the pipeline of
SmolLM2's tokenizer.json:
  pre_tokenizer = Sequence[Digits(individual_digits=True), ByteLevel(add_prefix_space=False, use_regex=True)]
  model         = BPE(vocab, merges), no unk fallback, no byte fallback
  decoder       = ByteLevel
  added tokens  = the GGUF control tokens (token_type 3), special, not normalized

Corpus: one case per line of tests/data/tokenizer_corpus.txt, with the escapes \\n \\r \\t \\\\
turned into the characters (so a case can hold newlines), plus the whole file as one text.

Output ($KESTREL_TEST_DATA/tokenizer_smollm2.txt), one record per line, tab-separated:
  <case> <mode> <ids separated by spaces>
where <case> is the 0-based line index or "all", and <mode> is "special" (control-token text
becomes the control token) or "plain" (HF's encode_special_tokens: such text is ordinary text).

Other pre-tokenizers (mode "pre=<tokenizer.ggml.pre name>", special tokens parsed): the same
vocabulary and merges under the pre-tokenizer pipelines of other models' tokenizer.json (a regex
Split, Isolated, then ByteLevel without its own regex; Llama 3's BPE has ignore_merges). The regex
strings are written here as those files have them; what this checks is Kestrel's PCRE2 splitting
and merge options against HF's (Oniguruma) on the same patterns, not the patterns themselves.

Exit status 77 (ctest SKIP_RETURN_CODE) when the model or a Python package is missing.
"""
import argparse
import os
import sys
from reference_common import models_dir, unescape  # noqa: E402

SKIP = 77


def read_vocab(path):
    import gguf

    reader = gguf.GGUFReader(path)

    def field(key):
        f = reader.fields.get(key)
        if f is None:
            sys.exit(f"{path}: key {key} is missing")
        return f

    def strings(key):
        f = field(key)
        return [bytes(f.parts[i]).decode("utf-8") for i in f.data]

    model = bytes(field("tokenizer.ggml.model").parts[-1]).decode()
    if model != "gpt2":
        sys.exit(f"{path}: tokenizer.ggml.model is {model!r}, this script handles 'gpt2'")
    tokens = strings("tokenizer.ggml.tokens")
    f = field("tokenizer.ggml.token_type")
    types = [int(f.parts[i][0]) for i in f.data]
    merges = strings("tokenizer.ggml.merges")
    pre = bytes(field("tokenizer.ggml.pre").parts[-1]).decode()
    return tokens, types, merges, pre


LLAMA3 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
          r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN2 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
         r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
GPT4O = (r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
         r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
         r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
DEEPSEEK_V3 = [r"\p{N}{1,3}", "[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+",
               r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
               r"""| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""]

# name -> (regex splits before ByteLevel, ByteLevel uses its own GPT-2 regex, BPE ignore_merges)
PIPELINES = {
    "gpt2": ([], True, False),
    "llama-bpe": ([LLAMA3], False, True),
    "qwen2": ([QWEN2], False, False),
    "gpt-4o": ([GPT4O], False, False),
    "deepseek-v3": (DEEPSEEK_V3, False, False),
}


def build_tokenizer(tokens, types, merges, pipeline=None):
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    vocab = {}
    for i, t in enumerate(tokens):
        vocab.setdefault(t, i)
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    splits, byte_level_regex, ignore_merges = pipeline or ([], True, False)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=pairs, fuse_unk=False, byte_fallback=False,
                               ignore_merges=ignore_merges))
    if pipeline is None:  # SmolLM2's own tokenizer.json
        steps = [pre_tokenizers.Digits(individual_digits=True)]
    else:
        steps = [pre_tokenizers.Split(Regex(r), behavior="isolated") for r in splits]
    steps.append(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=byte_level_regex))
    tok.pre_tokenizer = pre_tokenizers.Sequence(steps)
    tok.decoder = decoders.ByteLevel()
    control = [t for t, ty in zip(tokens, types) if ty == 3]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in control])
    return tok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(models_dir(), "SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    # A stale file from an earlier run must not stand in for a reference that was not made.
    if os.path.exists(args.out):
        os.remove(args.out)
    try:
        import gguf  # noqa: F401
        import tokenizers
    except ImportError as e:
        print(f"skip: {e}; pip install -r tests/reference/requirements.txt", file=sys.stderr)
        return SKIP
    if not os.path.exists(args.model):
        print(f"skip: model {args.model} missing; run scripts/fetch-models.sh", file=sys.stderr)
        return SKIP

    tokens, types, merges, pre = read_vocab(args.model)
    if pre != "smollm":
        sys.exit(f"{args.model}: tokenizer.ggml.pre is {pre!r}; this reference reproduces 'smollm'")
    tok = build_tokenizer(tokens, types, merges)

    with open(args.corpus, encoding="utf-8", newline="") as f:
        raw = f.read()
    cases = [(str(i), unescape(line)) for i, line in enumerate(raw.split("\n")[:-1])]
    cases.append(("all", raw))

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        out.write(f"# tokenizers {tokenizers.__version__}; {os.path.basename(args.model)}; {len(cases)} cases\n")
        for name, text in cases:
            for mode, split_special_off in (("special", False), ("plain", True)):
                tok.encode_special_tokens = split_special_off
                ids = tok.encode(text, add_special_tokens=False).ids
                if tok.decode(ids, skip_special_tokens=False) != text:
                    sys.exit(f"reference round trip failed for case {name} ({mode})")
                out.write(f"{name}\t{mode}\t{' '.join(map(str, ids))}\n")
        for pre_name, pipeline in PIPELINES.items():
            other = build_tokenizer(tokens, types, merges, pipeline)
            for name, text in cases:
                ids = other.encode(text, add_special_tokens=False).ids
                out.write(f"{name}\tpre={pre_name}\t{' '.join(map(str, ids))}\n")
    os.replace(tmp, args.out)
    print(f"wrote {len(cases)} cases x {2 + len(PIPELINES)} modes to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
