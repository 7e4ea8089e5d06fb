#!/usr/bin/env python3
"""The longest C++/CUDA function bodies in a tree, longest first.

usage: scripts/longest_functions.py [--top N] [--root DIR] [--exclude PREFIX]...

How it counts: every tracked .cc, .h, .cu and .inc file (git ls-files under
DIR; every such file where DIR is not a checkout) is read with comments,
string and character literals (raw strings too) blanked out, keeping line
breaks. A '{' opens a function body when it stands at namespace or class
level and the text before it since the last ';', '{' or '}' reads as a
declarator: a name followed by '(' (after a template<...> prefix), not a
control statement, not an initialiser ("= {"), not a class, struct, union,
enum or namespace. A function's length is the number of lines from the line
of its name to the line of its closing brace, both included; lambdas and
local classes count toward the function that holds them.
"""
import argparse
import os
import re
import subprocess
import sys

SOURCE_ENDINGS = (".cc", ".h", ".cu", ".inc")
CONTROL = {"if", "for", "while", "switch", "catch", "do", "else", "return", "sizeof", "decltype"}


def blank(text):
    """text with comments and literals replaced by spaces (line breaks kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isdigit():  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):
            # A preprocessor line (and its continuations) is not code here.
            j = i
            while True:
                k = text.find("\n", j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != "\\":
                    break
                j = k + 1
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
        else:
            out.append(c)
            i += 1
    return "".join(out)


def function_name(header):
    """The declarator's name when `header` (the text before '{') declares a
    function, else None."""
    h = header.strip()
    if not h or "(" not in h:
        return None
    h = re.sub(r"^template\s*<[^{};]*?>\s*", "", h)
    # Attributes that take parentheses before the name.
    h = re.sub(r"\b(__launch_bounds__|alignas)\s*\([^()]*\)", " ", h)
    h = re.sub(r"__attribute__\s*\(\([^()]*(\([^()]*\)[^()]*)*\)\)", " ", h)
    if "(" not in h:
        return None
    first = re.match(r"[A-Za-z_]\w*", h)
    if first and first.group(0) in {"class", "struct", "union", "enum", "namespace", "extern"}:
        return None
    before = h[: h.index("(")]
    if "=" in before.replace("operator=", "").replace("operator==", ""):
        return None
    m = re.search(r"((?:[A-Za-z_]\w*\s*::\s*)*~?[A-Za-z_]\w*(?:\s*operator\s*\S+)?)\s*$", before)
    if not m:
        return None
    name = re.sub(r"\s+", "", m.group(1))
    if name.split("::")[-1] in CONTROL:
        return None
    return name


def functions(path, text):
    code = blank(text)
    stack = []  # for each open '{': "function" or "scope"
    start = 0   # where the current header began
    found = []
    line_of = [0] * (len(code) + 1)
    line = 1
    for i, c in enumerate(code):
        line_of[i] = line
        if c == "\n":
            line += 1
    opened = []  # (name, first line) of open function bodies
    for i, c in enumerate(code):
        if c == "{":
            inside_function = "function" in stack
            name = None if inside_function else function_name(code[start:i])
            if name:
                header = code[start:i]
                at = start + len(header) - len(header.lstrip())
                name_pos = code.find(name.split("::")[0], at, i)
                opened.append((name, line_of[name_pos if name_pos >= 0 else at]))
                stack.append("function")
            else:
                stack.append("scope")
            start = i + 1
        elif c == "}":
            kind = stack.pop() if stack else "scope"
            if kind == "function":
                name, first = opened.pop()
                found.append((line_of[i] - first + 1, path, first, name))
            start = i + 1
        elif c == ";":
            start = i + 1
        elif c == ":" and "function" not in stack:
            # "public:" and friends end a header.
            if re.search(r"\b(public|private|protected)\s*$", code[start:i]):
                start = i + 1
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--root", default=".")
    ap.add_argument("--exclude", action="append", default=[], help="path prefix to leave out")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    try:
        names = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                               check=True).stdout.split("\n")
    except (subprocess.CalledProcessError, FileNotFoundError):
        names = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs]
    found = []
    for name in sorted(names):
        if not name.endswith(SOURCE_ENDINGS) or any(name.startswith(p) for p in args.exclude):
            continue
        with open(os.path.join(root, name), errors="replace") as f:
            found += functions(name, f.read())
    found.sort(key=lambda r: (-r[0], r[1], r[2]))
    for lines, path, first, name in found[: args.top]:
        print(f"{lines:5d}  {path}:{first}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
