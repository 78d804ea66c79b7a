#!/usr/bin/env python3
"""Fill kestrel_en.ts (source = translation) and kestrel_zh_CN.ts from zh_CN.tsv.

Run after `ninja kestrel_lupdate` has added new strings; a string missing from
zh_CN.tsv is reported and left unfinished (the app then shows the English).
"""
import csv, pathlib, sys
import xml.etree.ElementTree as ET

here = pathlib.Path(__file__).resolve().parent
table = {}
with open(here / "zh_CN.tsv", encoding="utf-8", newline="") as f:
    for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\"):
        if len(row) == 2:
            table[row[0]] = row[1]

def fill(name, lookup):
    path = here / name
    tree = ET.parse(path)
    missing = []
    # Strings no longer in the code (lupdate marks them vanished; they have no
    # location) are dropped rather than revived.
    for context in tree.iter("context"):
        for message in list(context.findall("message")):
            kind = message.find("translation").get("type", "")
            if kind in ("vanished", "obsolete") or message.find("location") is None:
                context.remove(message)
    for message in tree.iter("message"):
        source = message.find("source").text or ""
        translation = message.find("translation")
        value = lookup(source)
        if value is None:
            missing.append(source)
            continue
        translation.text = value
        translation.attrib.pop("type", None)
    ET.indent(tree, space="    ")
    body = ET.tostring(tree.getroot(), encoding="unicode")
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n' + body + "\n", encoding="utf-8")
    return missing

fill("kestrel_en.ts", lambda s: s)
missing = fill("kestrel_zh_CN.ts", table.get)
for s in missing:
    print("untranslated:", repr(s), file=sys.stderr)
sys.exit(1 if missing else 0)
