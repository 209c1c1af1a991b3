#!/usr/bin/env python3
"""Regenerates actors/src/emoji/names.txt, Agora's table of Unicode emoji names.

The table holds, for every Unicode emoji Zulip names, its emoji code (the code points of the
emoji without U+FE0F, as lowercase hex of at least four digits joined by "-") and its names,
the canonical name first. It follows the naming rules Zulip documents for its own table
(zulip/zulip tools/setup/emoji: the organization's hand-picked names win, the CLDR
annotations name the rest, clashes are dropped), from the same three data sets:

  - Zulip's hand-picked names (custom_emoji_names.json beside this script, Apache-2.0);
  - iamcal's emoji-datasource (npm `emoji-datasource`, MIT): which emoji exist;
  - Unicode CLDR English annotations (npm `cldr-annotations-full` and
    `cldr-annotations-derived-full`, Unicode-3.0): names of the emoji Zulip did not pick by hand.

Usage (from the repository root; needs python3, and npm to fetch the packages):
    python3 tools/emoji/generate.py            # fetches the pinned packages with `npm pack`
    python3 tools/emoji/generate.py --from DIR  # uses the three .tgz files already in DIR
It writes actors/src/emoji/names.txt; nothing is fetched at build time.
"""
import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

PACKAGES = {
    "emoji": ("emoji-datasource", "16.0.0", "package/emoji.json"),
    "cldr": ("cldr-annotations-full", "48.2.0", "package/annotations/en/annotations.json"),
    "derived": ("cldr-annotations-derived-full", "48.2.0", "package/annotationsDerived/en/annotations.json"),
}
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "actors", "src", "emoji", "names.txt")

# Zulip names none of the clock faces but one (its hand-picked `time`), and none of the bare
# skin tone modifiers.
SKIPPED = {f"1f{n:03x}" for n in range(0x550, 0x568)} - {"1f557"}
SKIPPED |= {"1f3fb", "1f3fc", "1f3fd", "1f3fe", "1f3ff"}

# Letters that get an ASCII spelling as an extra name (e.g. piñata -> pinata).
ASCII_SPELLING = str.maketrans("èǐóāōñôçéãíåü", "eioaonoceaiau")
# Names with no ASCII spelling: their emoji have other names that are ASCII.
NO_ASCII_SPELLING = {"ココ", "サ", "指", "空"}


def code_of(unified: str) -> str:
    """The emoji code of an emoji-datasource `unified` field: without U+FE0F."""
    points = [p.lower() for p in unified.split("-") if p.lower() != "fe0f"]
    return "-".join(f"{int(p, 16):04x}" for p in points)


def text_of(code: str) -> str:
    return "".join(chr(int(p, 16)) for p in code.split("-"))


def clean(name: str) -> str:
    """A CLDR annotation as an emoji name: spaces and dashes to `_`, punctuation dropped."""
    name = name.strip()
    for old, new in ((" ", "_"), ("-", "_"), ("–", "_"), ("&", "and")):
        name = name.replace(old, new)
    name = re.sub("[“”:.,()‘’']", "", name)
    return re.sub("_{2,}", "_", name).lower()


def read_package(key: str, directory: str) -> object:
    name, version, member = PACKAGES[key]
    path = os.path.join(directory, f"{name}-{version}.tgz")
    if not os.path.exists(path):
        subprocess.run(["npm", "pack", "--silent", f"{name}@{version}"], cwd=directory, check=True,
                       stdout=subprocess.DEVNULL)
    with tarfile.open(path) as tar:
        data = tar.extractfile(member)
        if data is None:
            sys.exit(f"{member} missing from {path}")
        return json.load(io.TextIOWrapper(data, encoding="utf-8"))


def build(emoji_data: list, cldr: dict, custom: dict) -> dict:
    """code -> {"canonical_name", "aliases"} in emoji-datasource order, by Zulip's rules."""
    table, canonical = {}, set()
    for entry in emoji_data:
        code = code_of(entry["unified"])
        if code in SKIPPED:
            continue
        if code in custom:
            names = {"canonical_name": custom[code]["canonical_name"], "aliases": list(custom[code]["aliases"])}
            key = clean(names["canonical_name"])
        else:
            annotation = cldr.get(text_of(code))
            if annotation is None:
                continue
            (tts,) = annotation["tts"]
            key = clean(tts)
            names = {"canonical_name": key, "aliases": [clean(a) for a in annotation["default"]]}
        if key in canonical:
            sys.exit(f"two emoji are named {key!r} (the second is {code})")
        canonical.add(key)
        table[code] = names

    # An alias never shadows a canonical name; an alias two emoji share stays only with the
    # emoji whose names were picked by hand.
    holders = {}
    for code, names in table.items():
        names["aliases"] = [a for a in names["aliases"] if a not in canonical]
        for alias in names["aliases"]:
            holders.setdefault(alias, []).append(code)
    for alias, codes in holders.items():
        if len(codes) > 1:
            for code in codes:
                if code not in custom:
                    table[code]["aliases"].remove(alias)

    # Every non-ASCII name also gets its ASCII spelling, which no other emoji keeps.
    for code, names in table.items():
        for name in [names["canonical_name"], *names["aliases"]]:
            if name in NO_ASCII_SPELLING:
                assert any(a.isascii() for a in names["aliases"]), code
                continue
            if name.isascii():
                continue
            spelling = name.translate(ASCII_SPELLING)
            if not spelling.isascii():
                sys.exit(f"no ASCII spelling for {name!r}: extend ASCII_SPELLING")
            for other in holders.get(spelling, []):
                table[other]["aliases"].remove(spelling)
            names["aliases"].append(spelling)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from", dest="source", help="directory holding the three package .tgz files")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.source or scratch
        emoji_data = read_package("emoji", directory)
        cldr = dict(read_package("cldr", directory)["annotations"]["annotations"])
        cldr.update(read_package("derived", directory)["annotationsDerived"]["annotations"])
    with open(os.path.join(HERE, "custom_emoji_names.json"), encoding="utf-8") as f:
        custom = json.load(f)
    table = build(emoji_data, cldr, custom)
    sources = ", ".join(f"{name} {version}" for name, version, _ in PACKAGES.values())
    with open(OUT, "w", encoding="utf-8") as out:
        out.write("# Unicode emoji names, canonical name first: one emoji a line, its code then its names.\n")
        out.write(f"# Generated by tools/emoji/generate.py from {sources} and\n")
        out.write("# tools/emoji/custom_emoji_names.json (Zulip's names); do not edit by hand.\n")
        for code, names in table.items():
            out.write(" ".join([code, names["canonical_name"], *names["aliases"]]) + "\n")
    print(f"{len(table)} emoji, {sum(1 + len(n['aliases']) for n in table.values())} names -> {OUT}")


if __name__ == "__main__":
    main()
