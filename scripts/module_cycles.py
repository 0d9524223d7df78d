#!/usr/bin/env python3
"""Fails when hand-written modules of src/ depend on each other in a circle.

Two graphs are checked:
- files: an edge a.rs -> b.rs when a.rs names an item of b.rs (`use` trees, inline
  `crate::`/`super::`/`self::` paths, and a parent's relative paths to its children;
  re-exports in a folder's mod.rs are followed to the file that defines the item);
- folders: the same edges between the top-level components (`server`, `metadata`, ...;
  a top-level file such as `config.rs` is a component of its own).

The generated codec (`src/protocol/messages/`) is one node. Test code is left out: inline
`#[cfg(test)] mod x { ... }` blocks and the modules declared `#[cfg(test)] mod x;` may use any
part of the crate, as integration tests do (a handler's tests start a whole node).
Usage: module_cycles.py [src]
"""

import re
import sys
from pathlib import Path

GENERATED = ("protocol", "messages")
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_path(src: Path, file: Path) -> tuple:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    if tuple(parts[:2]) == GENERATED:
        parts = list(GENERATED)
    return tuple(parts)


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    # String literals may hold `::` that are not paths.
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def expand_use_tree(tree: str) -> list:
    """`a::{b, c::{d, e}}` -> [[a, b], [a, c, d], [a, c, e]]."""
    tree = re.sub(r"\s+as\s+" + IDENT, "", tree)
    tree = re.sub(r"\s+", "", tree)
    results = []

    def walk(prefix, s):
        depth, start, items = 0, 0, []
        for i, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                items.append(s[start:i])
                start = i + 1
        items.append(s[start:])
        for item in items:
            if not item:
                continue
            brace = item.find("{")
            if brace >= 0 and item.endswith("}"):
                head = [p for p in item[:brace].split("::") if p]
                walk(prefix + head, item[brace + 1 : -1])
            else:
                results.append(prefix + [p for p in item.split("::") if p])

    walk([], tree)
    return results


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    src = Path(args[0] if args else "src")
    files = sorted(p for p in src.rglob("*.rs") if p.name != "main.rs")
    texts = {f: strip_test_code(strip_comments(f.read_text())) for f in files}
    # `#[path = "x_tests.rs"] mod tests;` makes x_tests.rs a child of the declaring file.
    paths_of = {f: module_path(src, f) for f in files}
    for f, text in texts.items():
        for m in re.finditer(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:pub\s+)?mod\s+(' + IDENT + r")\s*;", f.read_text()):
            paths_of[(f.parent / m.group(1)).resolve()] = module_path(src, f) + (m.group(2),)
    paths_of = {f.resolve(): p for f, p in paths_of.items()}

    def module_path_of(f: Path) -> tuple:
        return paths_of.get(f.resolve(), module_path(src, f))

    # Files of test-only modules, and everything under them, are left out.
    test_only = set()
    for f in files:
        for m in re.finditer(TEST_MODULE, strip_comments(f.read_text())):
            parent = module_path_of(f)
            test_only.add(parent + (m.group(1),))
    files = [f for f in files
             if not any(module_path_of(f)[:len(t)] == t for t in test_only)]
    texts = {f: texts[f] for f in files}

    modules = {}
    for f in files:
        modules.setdefault(module_path_of(f), f)

    # Re-exports: (module, item) -> module path the item comes from.
    reexports = {}
    for f, text in texts.items():
        here = module_path_of(f)
        children = declared_children(f, text)
        for m in re.finditer(r"\bpub\s+use\s+([^;]+);", text):
            for path in expand_use_tree(m.group(1)):
                target = resolve_relative(here, path, children)
                if target:
                    reexports[(here, path[-1])] = tuple(target[:-1])

    def resolve(path: list):
        """The module a path ends in (the longest known module prefix, re-exports followed)."""
        best = None
        for n in range(len(path), 0, -1):
            if tuple(path[:n]) in modules:
                best = tuple(path[:n])
                break
        if best is None:
            return None
        if len(path) > len(best):
            seen = set()
            while (best, path[len(best)]) in reexports and (best, path[len(best)]) not in seen:
                seen.add((best, path[len(best)]))
                target = reexports[(best, path[len(best)])]
                if target in modules:
                    best = target
                    break
                break
        return best

    edges = {}
    for f, text in texts.items():
        here = module_path_of(f)
        children = declared_children(f, text)
        spans = inline_modules(text)

        def depth(pos):
            return sum(1 for a, b in spans if a < pos < b)

        paths = []
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            paths.extend((p, depth(m.start())) for p in expand_use_tree(m.group(1)))
        for m in re.finditer(r"\b(?:crate|super|self)(?:::(?:" + IDENT + r"|\*))+", text):
            paths.append((m.group(0).split("::"), depth(m.start())))
        # Names that stand for modules here: declared children, and modules brought in by
        # `use` (`use super::handlers;` then `handlers::fetch::handle`).
        aliases = {child: list(here) + [child] for child in children}
        for path, inline_depth in list(paths):
            absolute = resolve_relative(here, path, children, inline_depth)
            if absolute and tuple(absolute) in modules:
                aliases[path[-1]] = absolute
        for alias, target in aliases.items():
            for m in re.finditer(r"(?<![:\w])" + alias + r"(?:::" + IDENT + r")+", text):
                paths.append((["crate"] + target + m.group(0).split("::")[1:], 0))
        for path, inline_depth in paths:
            absolute = resolve_relative(here, path, children, inline_depth)
            if not absolute or any(tuple(absolute[: len(t)]) == t for t in test_only):
                continue
            target = resolve(absolute)
            if target is not None and target != here:
                edges.setdefault(here, set()).add(target)

    if "-v" in sys.argv:
        for a in sorted(edges):
            print("::".join(a), "->", ", ".join(sorted("::".join(b) for b in edges[a])))
    failed = False
    for name, graph in (("file", edges), ("folder", folder_graph(edges))):
        for cycle in strongly_connected(graph):
            failed = True
            print(f"{name} cycle: " + " <-> ".join(sorted("::".join(m) or "crate" for m in cycle)))
    if not failed:
        print(f"no module cycles among {len(modules)} modules")
    return 1 if failed else 0


TEST_MODULE = r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+(" + IDENT + r")\s*;"


def strip_test_code(text: str) -> str:
    """`text` without `#[cfg(test)]` inline modules and test-only module declarations."""
    text = re.sub(TEST_MODULE, "", text)
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+" + IDENT + r"\s*\{", text)
        if not m:
            return text
        depth, end = 0, len(text)
        for i in range(m.end() - 1, len(text)):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    end = i + 1
                    break
        text = text[: m.start()] + text[end:]


def declared_children(f: Path, text: str) -> set:
    """The file modules a folder's mod.rs (or lib.rs) declares with `mod name;`."""
    if f.name not in ("mod.rs", "lib.rs"):
        return set()
    return set(re.findall(r"\bmod\s+(" + IDENT + r")\s*;", text))


def resolve_relative(here: tuple, path: list, children=(), inline_depth: int = 0):
    """An absolute module path for `path` as written in module `here` (inside `inline_depth`
    inline `mod x { }` blocks), or None if it names another crate or a glob."""
    if not path or path[-1] == "*":
        return None
    head = path[0]
    if head == "crate":
        return list(path[1:])
    if head in children:
        return list(here) + list(path)
    if head in ("self", "super"):
        base = list(here)
        rest = list(path)
        # `super` first leaves the inline blocks, then the file, then folders.
        while rest and rest[0] in ("self", "super"):
            if rest[0] == "super":
                if inline_depth:
                    inline_depth -= 1
                elif base:
                    base.pop()
            rest.pop(0)
        return base + rest
    return None


def inline_modules(text: str) -> list:
    """(start, end) of every inline `mod name { ... }` block."""
    spans = []
    for m in re.finditer(r"\bmod\s+" + IDENT + r"\s*\{", text):
        depth = 0
        for i in range(m.end() - 1, len(text)):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    spans.append((m.start(), i))
                    break
    return spans


def folder_graph(edges: dict) -> dict:
    def component(m):
        return m[:1]

    graph = {}
    for a, targets in edges.items():
        for b in targets:
            if component(a) != component(b) and component(a) and component(b):
                graph.setdefault(component(a), set()).add(component(b))
    return graph


def strongly_connected(graph: dict) -> list:
    """Tarjan's algorithm; returns the components with more than one node."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]
    nodes = set(graph) | {t for ts in graph.values() for t in ts}

    def visit(v):
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            advanced = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    members.append(w)
                    if w == node:
                        break
                if len(members) > 1:
                    out.append(members)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    sys.exit(main())
