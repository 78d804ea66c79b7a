#!/usr/bin/env python3
"""Expected chat-template renders for Kestrel's Jinja interpreter, from Python jinja2.

jinja2 is configured the way Hugging Face transformers configures it for
apply_chat_template (transformers/utils/chat_template_utils.py):
  ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                extensions=[AssistantTracker, jinja2.ext.loopcontrols])
  filters["tojson"]  = json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
                                  sort_keys=sort_keys)   (transformers' override, no HTML escaping)
  globals["raise_exception"] = raise TemplateError(message)
  globals["strftime_now"]    = datetime.now().strftime(format)
and rendered with messages=..., tools=<list or None>, documents=None,
add_generation_prompt=..., the special tokens, and any extra keys of the conversation
(enable_thinking ...). AssistantTracker provides `{% generation %}`; when assistant masks are
not requested it renders its body unchanged, which is what the stand-in below does.

Inputs: tests/data/templates/<name>.jinja, tests/data/templates/tokens.json (bos/eos per
template) and tests/data/templates/conversations/<conv>.json. Every template is rendered with
every conversation.

Output, under --out (e.g. $KESTREL_TEST_DATA/templates):
  <name>__<conv>.txt   the render (UTF-8 bytes), when it succeeds
  manifest.tsv         one line per pair: name, conv, outcome, detail
                       outcome "ok"    : detail = the .txt file name
                       outcome "raise" : the template called raise_exception; detail = its message
                       outcome "error" : jinja2 failed otherwise; detail = exception type: message
Kestrel must produce the same bytes for "ok", and an error for "raise" / "error" (for "raise",
an error whose message contains the template's message).

Exit status 77 (ctest SKIP_RETURN_CODE) when jinja2 is missing.
"""
import argparse
import glob
import json
import os
import sys
from datetime import datetime

SKIP = 77


def make_environment():
    import jinja2
    from jinja2 import nodes
    from jinja2.ext import Extension, loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class AssistantTracker(Extension):
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

        def _render(self, caller):
            return caller()

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.now().strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env, jinja2


class Raised(Exception):
    pass


def render(env, jinja2, source, conversation, tokens):
    kwargs = dict(conversation)
    messages = kwargs.pop("messages")
    tools = kwargs.pop("tools", None)
    documents = kwargs.pop("documents", None)
    add_generation_prompt = kwargs.pop("add_generation_prompt", False)
    kwargs.update(tokens)
    template = env.from_string(source)
    return template.render(messages=messages, tools=tools, documents=documents,
                           add_generation_prompt=add_generation_prompt, **kwargs)


def one_line(text):
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="tests/data/templates")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    try:
        env, jinja2 = make_environment()
    except ImportError as e:
        print(f"skip: {e} (pip install -r tests/reference/requirements.txt)")
        return SKIP
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.data, "tokens.json"), encoding="utf-8") as f:
        tokens = json.load(f)
    templates = sorted(glob.glob(os.path.join(args.data, "*.jinja")))
    conversations = sorted(glob.glob(os.path.join(args.data, "conversations", "*.json")))
    lines = []
    counts = {"ok": 0, "raise": 0, "error": 0}
    for tpath in templates:
        name = os.path.basename(tpath)[: -len(".jinja")]
        with open(tpath, encoding="utf-8", newline="") as f:
            source = f.read()
        for cpath in conversations:
            conv = os.path.basename(cpath)[: -len(".json")]
            with open(cpath, encoding="utf-8") as f:
                conversation = json.load(f)
            try:
                text = render(env, jinja2, source, conversation, tokens.get(name, {}))
            except jinja2.exceptions.TemplateError as e:
                # raise_exception raises the bare TemplateError; jinja2's own errors are subclasses.
                if type(e) is jinja2.exceptions.TemplateError:
                    lines.append((name, conv, "raise", one_line(str(e))))
                    counts["raise"] += 1
                else:
                    lines.append((name, conv, "error", one_line(f"{type(e).__name__}: {e}")))
                    counts["error"] += 1
                continue
            except Exception as e:  # TypeError and friends from Python operations in the template
                lines.append((name, conv, "error", one_line(f"{type(e).__name__}: {e}")))
                counts["error"] += 1
                continue
            out_name = f"{name}__{conv}.txt"
            with open(os.path.join(args.out, out_name), "wb") as f:
                f.write(text.encode("utf-8"))
            lines.append((name, conv, "ok", out_name))
            counts["ok"] += 1
    with open(os.path.join(args.out, "manifest.tsv"), "w", encoding="utf-8") as f:
        for rec in lines:
            f.write("\t".join(rec) + "\n")
    print(f"{len(templates)} templates x {len(conversations)} conversations: "
          f"{counts['ok']} renders, {counts['raise']} raise_exception, {counts['error']} other errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
