#!/usr/bin/env python3
"""Checks that the docs name every subcommand and flag `layerplan --help` shows.

  help_flags_documented.py LAYERPLAN_BINARY SOURCE_DIR [--plant FLAG]

Reads `layerplan --help` for the subcommands and `layerplan SUB --help` for each one's
flags, then looks for "layerplan SUB" and each "--flag" in README.md and docs/*.md.
Exits 0 when every one is named, 1 listing what is not, 2 when the binary cannot be run.
--plant adds a flag no doc names (tests/CMakeLists.txt: the check must then fail).
"""
import argparse
import pathlib
import re
import subprocess
import sys

FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
SUBCOMMAND_LINE = re.compile(r"^\s{2}([a-z][a-z-]*)\s{2,}\S")


def help_text(binary, *args):
    run = subprocess.run([binary, *args, "--help"], capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        print(f"{binary} {' '.join(args)} --help exited {run.returncode}: {run.stderr.strip()}", file=sys.stderr)
        sys.exit(2)
    return run.stdout


def subcommands(top_help):
    """The names under the 'Subcommands:' heading of CLI11's help."""
    names, inside = [], False
    for line in top_help.splitlines():
        if line.strip() == "Subcommands:":
            inside = True
            continue
        if inside:
            match = SUBCOMMAND_LINE.match(line)
            if match:
                names.append(match.group(1))
            elif line.strip() and not line.startswith("  "):
                inside = False
    return names


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("source_dir", type=pathlib.Path)
    parser.add_argument("--plant", help="a flag to add to the help, which the docs do not name")
    args = parser.parse_args()

    docs = [args.source_dir / "README.md", *sorted((args.source_dir / "docs").glob("*.md"))]
    text = "\n".join(path.read_text() for path in docs)
    named_flags = set(FLAG.findall(text))

    top = help_text(args.binary)
    subs = subcommands(top)
    if not subs:
        print("no subcommands found under 'Subcommands:' in layerplan --help", file=sys.stderr)
        return 2
    missing = []
    flags_seen = 0
    for flag in sorted(set(FLAG.findall(top)) - {"--help"}):
        flags_seen += 1
        if flag not in named_flags:
            missing.append(f"layerplan {flag}")
    for sub in subs:
        if not re.search(rf"\blayerplan {re.escape(sub)}\b", text):
            missing.append(f"layerplan {sub} (the subcommand)")
        flags = set(FLAG.findall(help_text(args.binary, sub))) - {"--help"}
        if args.plant and sub == subs[0]:
            flags.add(args.plant)
        for flag in sorted(flags):
            flags_seen += 1
            if flag not in named_flags:
                missing.append(f"layerplan {sub} {flag}")
    if missing:
        print(f"{len(missing)} of {flags_seen} flags and {len(subs)} subcommands in --help are named in no doc "
              "(README.md, docs/*.md):")
        for item in missing:
            print(f"  {item}")
        return 1
    print(f"every one of {len(subs)} subcommands and {flags_seen} flags in --help is named in README.md or docs/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
