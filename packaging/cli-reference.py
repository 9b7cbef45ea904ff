#!/usr/bin/env python3
"""The CLI reference, generated from the argument parser so it cannot drift from it:

    python3 packaging/cli-reference.py PUSHCTL [OUTDIR]

reads `PUSHCTL --experimental-dump-help` (swift-argument-parser's description of every command, option, default
and help text) and `PUSHCTL --version`, merges in the hand-written sections of packaging/pushctl-manual.md
(DESCRIPTION, CONFIGURATION, ENVIRONMENT, FILES, EXIT STATUS, EXAMPLES, SEE ALSO), and writes
OUTDIR/docs/cli.md and OUTDIR/packaging/pushctl.1 (OUTDIR: the repository). `make cli-reference` regenerates
both; Tests/cli/reference.sh fails when the committed ones differ from what this writes.
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WIDTH = 100


# --- the parser's description ------------------------------------------------------------------------------------
def commands(command, path=()):
    """(path, command) of every displayed command, depth first, the root first; `help` is left out."""
    path = path + (command["commandName"],)
    yield path, command
    for sub in command.get("subcommands", []):
        if sub.get("shouldDisplay", True) and sub["commandName"] != "help":
            yield from commands(sub, path)


def displayed(command):
    """The arguments `--help` shows, but --help itself."""
    return [a for a in command.get("arguments", []) if a.get("shouldDisplay", True) and name(a) != "help"]


def name(arg):
    return arg.get("preferredName", {}).get("name") or arg["valueName"]


def flag_names(arg):
    names = []
    for n in arg.get("names", []):
        names.append(("-" if n["kind"] in ("short", "longWithSingleDash") else "--") + n["name"])
    return names


def value_of(arg):
    return f"<{arg['valueName']}>"


def spelling(arg, all_names=False):
    """How an argument is written: `--token <token>`, `--json`, `<file>`."""
    if arg["kind"] == "positional":
        return value_of(arg)
    names = flag_names(arg) if all_names else ["--" + arg["preferredName"]["name"]
                                               if arg["preferredName"]["kind"] == "long"
                                               else "-" + arg["preferredName"]["name"]]
    text = ", ".join(names)
    if arg["kind"] == "option":
        text += " " + value_of(arg)
    return text


def usage(path, command):
    """The synopsis: subcommand groups as `pushctl tokens <subcommand>`, commands with every option."""
    words = [" ".join(path)]
    args = displayed(command)
    subs = [s for s in command.get("subcommands", []) if s.get("shouldDisplay", True) and s["commandName"] != "help"]
    for a in args:
        if a["kind"] == "flag" and name(a) == "version":
            continue
        w = spelling(a)
        if a.get("isRepeating"):
            w += " ..."
        if a.get("isOptional"):
            w = f"[{w}]"
        words.append(w)
    if subs:
        words.append("<subcommand>")
    lines, line = [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > 76:
            lines.append(line)
            line = "    " + w
        else:
            line = (line + " " + w) if line else w
    lines.append(line)
    return lines


def discussion_blocks(text):
    """A command's discussion as blocks: lines indented by two spaces are verbatim (examples), consecutive other
    lines one paragraph (the parser's text wraps by hand)."""
    blocks = []
    for line in text.strip().split("\n"):
        if line.startswith("  ") and line.strip():
            if blocks and blocks[-1][0] == "code":
                blocks[-1][1].append(line.strip())
            else:
                blocks.append(("code", [line.strip()]))
        elif not line.strip():
            blocks.append(("gap", None))
        elif blocks and blocks[-1][0] == "p":
            blocks[-1] = ("p", blocks[-1][1] + " " + line.strip())
        else:
            blocks.append(("p", line.strip()))
    return [b for b in blocks if b[0] != "gap"]


def describe(arg):
    text = (arg.get("abstract") or "").strip()
    extra = []
    if arg.get("allValues") and not all(v in text for v in arg["allValues"]):
        extra.append("one of " + ", ".join(arg["allValues"]))
    if arg.get("defaultValue") not in (None, "", "false") and arg["kind"] != "flag":
        extra.append("default " + str(arg["defaultValue"]))
    if arg.get("isRepeating") and "repeat" not in text.lower():
        extra.append("repeatable")
    if extra:
        text += (" " if text else "") + "(" + "; ".join(extra) + ")"
    return text


# --- the hand-written part ---------------------------------------------------------------------------------------
def manual_sections(path):
    """[(TITLE, [block])] where a block is ("p", text) | ("items", [(term, text)]) | ("code", [lines])."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"<!--.*?-->\s*", "", text, flags=re.S)
    sections, cur = [], None
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            cur = (line[3:].strip(), [])
            sections.append(cur)
        elif line.startswith("```"):
            body = []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            cur[1].append(("code", body))
        elif line.startswith("- "):
            m = re.match(r"^- ((?:`[^`]+`(?:, )?)+): (.*)$", line)
            if not m:
                raise SystemExit(f"pushctl-manual.md: an item is '- `TERM`[, `TERM`]: text': {line}")
            term, body = m.group(1).replace("`", ""), [m.group(2)]
            while i + 1 < len(lines) and lines[i + 1].startswith("  ") and lines[i + 1].strip():
                i += 1
                body.append(lines[i].strip())
            if cur[1] and cur[1][-1][0] == "items":
                cur[1][-1][1].append((term, " ".join(body)))
            else:
                cur[1].append(("items", [(term, " ".join(body))]))
        elif line.strip():
            body = [line.strip()]
            while i + 1 < len(lines) and lines[i + 1].strip() and not re.match(r"^(## |- |```)", lines[i + 1]):
                i += 1
                body.append(lines[i].strip())
            cur[1].append(("p", " ".join(body)))
        i += 1
    return sections


# --- Markdown ----------------------------------------------------------------------------------------------------
def anchor(title):
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def md_text(text):
    """The parser's prose in Markdown: angle brackets are text, not HTML."""
    return text.replace("<", "&lt;").replace(">", "&gt;")


def md_cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(dump, version, sections):
    root = dump["command"]
    out = ["# CLI reference", "",
           "<!-- Generated by packaging/cli-reference.py from `pushctl --experimental-dump-help` and",
           "     packaging/pushctl-manual.md; edit those, then run `make cli-reference` (Tests/cli/reference.sh fails",
           "     when this file is stale). -->", "",
           f"`pushctl` {version}: {root.get('abstract', '')} The same reference is the man page: `man -l packaging/pushctl.1` "
           "in a checkout, `man pushctl` once the Debian package (or the tarball's `pushctl.1`) is installed.", ""]

    # Tests/readme/readme.sh reads this page like the others: every fenced block carries its marker (a synopsis:
    # each command it names must be run by some page's example; an example: not run here, the topic pages do).
    def blocks_md(blocks, why):
        for kind, body in blocks:
            if kind == "p":
                out.extend([body, ""])
            elif kind == "items":
                out.extend("- " + ", ".join(f"`{n}`" for n in t.split(", ")) + f": {d}" for t, d in body)
                out.append("")
            else:
                out.extend([f"<!-- readme.sh: skip {why} -->", "```sh"] + body + ["```", ""])

    before = True
    for title, blocks in sections:
        if title == "COMMANDS":
            before = False
            out.extend(["## Commands", ""])
            for path, command in list(commands(root))[1:]:
                name = " ".join(path)
                out.append(f"- [`{name}`](#{anchor(name)}): {md_text(command.get('abstract', ''))}")
            out.append("")
            for path, command in list(commands(root))[1:]:
                name = " ".join(path)
                out.extend([f"### {name}", "", md_text(command.get("abstract", "").strip()), ""])
                out.extend(["<!-- readme.sh: synopsis -->", "```"] + usage(path, command) + ["```", ""])
                if command.get("discussion"):
                    blocks_md([(k, md_text(b) if k == "p" else b) for k, b in discussion_blocks(command["discussion"])],
                              "examples from the command's --help; the topic pages run these commands")
                args = displayed(command)
                if args:
                    out.extend(["| argument | meaning |", "|---|---|"])
                    for a in args:
                        out.append(f"| `{md_cell(spelling(a, all_names=True))}` | {md_cell(md_text(describe(a)))} |")
                    out.append("")
            continue
        out.extend([f"## {title.title() if title != 'SEE ALSO' else 'See also'}", ""])
        blocks_md(blocks, "examples of the man page; the topic pages run these commands")
    while out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


# --- roff --------------------------------------------------------------------------------------------------------
ROFF_CHARS = {"—": r"\(em", "–": r"\(en", "…": "...", "’": "'", "‘": "'", "“": '"', "”": '"', "×": r"\(mu",
              "÷": r"\(di", "≥": r"\(>=", "≤": r"\(<=", "→": r"\(->", "·": r"\(md", "±": r"\(+-"}


def roff_text(text):
    text = text.replace("\\", "\\e")
    text = text.replace("-", "\\-")
    out = []
    for ch in text:
        if ord(ch) < 128:
            out.append(ch)
        elif ch in ROFF_CHARS:
            out.append(ROFF_CHARS[ch])
        else:
            out.append(f"\\[u{ord(ch):04X}]")
    return "".join(out)


def roff_inline(text):
    """`code` in bold, the rest as text; a line never starts with a control character."""
    parts = re.split(r"`([^`]*)`", text)
    s = "".join(roff_text(p) if i % 2 == 0 else "\\fB" + roff_text(p) + "\\fR" for i, p in enumerate(parts))
    return s


def roff_lines(s):
    """Roff source lines for a paragraph, wrapped, none starting with '.' or '\''."""
    words, lines, line = s.split(" "), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > WIDTH:
            lines.append(line)
            line = w
        else:
            line = (line + " " + w) if line else w
    if line:
        lines.append(line)
    return ["\\&" + l if l[:1] in (".", "'") else l for l in lines]


def roff(dump, version, sections):
    root = dump["command"]
    out = ['.\\" pushctl(1), generated by packaging/cli-reference.py from `pushctl --experimental-dump-help` and',
           '.\\" packaging/pushctl-manual.md: do not edit; run `make cli-reference` (Tests/cli/reference.sh checks it).',
           f'.TH PUSHCTL 1 "" "PushProvider {version}" "User Commands"',
           ".nh",
           ".ad l",
           ".SH NAME",
           "pushctl \\- " + roff_text("PushProvider, a self-hosted push provider for APNs, Web Push and FCM"),
           ".SH SYNOPSIS",
           ".B pushctl",
           ".RB [ \\-\\-version ]",
           ".I subcommand",
           ".RB [ \\-\\-config",
           ".IR FILE ]",
           ".RI [ options ]",
           ".br",
           ".B pushctl help",
           ".I subcommand"]

    def blocks_roff(blocks):
        for kind, body in blocks:
            if kind == "p":
                out.append(".PP")
                out.extend(roff_lines(roff_inline(body)))
            elif kind == "items":
                for term, text in body:
                    out.extend([".TP", ".B " + roff_text(term)])
                    out.extend(roff_lines(roff_inline(text)))
            else:
                out.extend([".PP", ".nf", ".RS 4"])
                out.extend("\\&" + roff_text(l) for l in body)
                out.extend([".RE", ".fi"])

    for title, blocks in sections:
        if title == "COMMANDS":
            # The list first (Tests/package/deb.sh looks for `.B NAME` of every subcommand), then each in full.
            out.append(".SH SUBCOMMANDS")
            for sub in [c for p, c in commands(root) if len(p) == 2]:
                # The bare name (a hyphen, not \-): what Tests/package/deb.sh and Tests/cli/reference.sh look for.
                out.extend([".TP", ".B " + sub["commandName"]])
                out.extend(roff_lines(roff_inline(sub.get("abstract", ""))))
            out.append(".SH COMMANDS")
            for path, command in list(commands(root))[1:]:
                out.append('.SS "' + roff_text(" ".join(path)) + '"')
                out.extend(roff_lines(roff_inline(command.get("abstract", "").strip())))
                out.extend([".PP", ".nf", ".RS 4"])
                out.extend("\\&" + roff_text(l) for l in usage(path, command))
                out.extend([".RE", ".fi"])
                if command.get("discussion"):
                    blocks_roff(discussion_blocks(command["discussion"]))
                for a in displayed(command):
                    out.extend([".TP", ".B " + roff_text(spelling(a, all_names=True))])
                    out.extend(roff_lines(roff_text(describe(a))))
            continue
        out.append(".SH " + roff_text(title))
        blocks_roff(blocks)
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    binary, outdir = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else ROOT)
    dump = json.loads(subprocess.run([binary, "--experimental-dump-help"], check=True, capture_output=True,
                                     text=True).stdout)
    version = subprocess.run([binary, "--version"], check=True, capture_output=True, text=True).stdout.split("\n")[0]
    version = version.removeprefix("pushctl ").strip()
    sections = manual_sections(os.path.join(ROOT, "packaging", "pushctl-manual.md"))
    if "COMMANDS" not in [t for t, _ in sections]:
        raise SystemExit("pushctl-manual.md has no '## COMMANDS' (where the generated reference goes)")
    for rel, text in (("docs/cli.md", markdown(dump, version, sections)),
                      ("packaging/pushctl.1", roff(dump, version, sections))):
        path = os.path.join(outdir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(path)


if __name__ == "__main__":
    main()
