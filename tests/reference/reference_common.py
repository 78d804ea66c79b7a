"""Helpers the reference scripts share: where models live and how the corpus is written."""
import os


def models_dir():
    """$KESTREL_MODELS_DIR, else $XDG_DATA_HOME/kestrel/models, else ~/.local/share/kestrel/models
    (where scripts/fetch-models.sh puts them; tests/common/test_env.h looks in the same place)."""
    env = os.environ.get("KESTREL_MODELS_DIR")
    if env:
        return env
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "kestrel", "models")


def unescape(line):
    """A corpus line with \\n, \\r, \\t and \\\\ written as escapes, back to its text."""
    out, i = [], 0
    table = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\"}
    while i < len(line):
        c = line[i]
        if c == "\\" and i + 1 < len(line) and line[i + 1] in table:
            out.append(table[line[i + 1]])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)
