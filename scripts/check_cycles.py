#!/usr/bin/env python3
"""Finds dependency cycles between the files of each server-side module.

A file depends on another when it names a type declared there (struct, enum, class, actor,
protocol; comments and string literals ignored). A cycle means two files cannot be understood, moved
or tested apart. Swift has no tool that reports this, so it is done here by name, which is enough
for a code base that gives every type a distinct name.
"""
import os
import re
import sys
from collections import defaultdict

DECL = re.compile(
    r"^(?:@\w+\s+)*(?:(?:public|internal|private|fileprivate|final|package|indirect)\s+)*"
    r"(struct|enum|class|actor|protocol|extension)\s+([A-Z]\w*)"
)


def module_graph(root):
    text, owner = {}, {}
    for directory, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".swift"):
                continue
            path = os.path.relpath(os.path.join(directory, name), root)
            kept = []
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                for line in handle:
                    match = DECL.match(line)
                    if match and match.group(1) != "extension":
                        owner[match.group(2)] = path
                    line = re.sub(r"//.*", "", line)
                    kept.append(re.sub(r'"(?:[^"\\]|\\.)*"', '""', line))
            text[path] = "".join(kept)
    words = {path: set(re.findall(r"\b[A-Z]\w*\b", body)) for path, body in text.items()}
    edges = defaultdict(dict)
    for path in text:
        for type_name in words[path]:
            target = owner.get(type_name)
            if target and target != path:
                edges[path].setdefault(target, []).append(type_name)
    return text, edges


def cycles(nodes, edges):
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on.add(node)
        for nxt in edges.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return found


def main():
    roots = sys.argv[1:] or sorted(os.path.join("Sources", d) for d in os.listdir("Sources"))
    problems = 0
    for root in roots:
        text, edges = module_graph(root)
        for component in cycles(text, edges):
            problems += 1
            print(f"{root}: a cycle of {len(component)} files")
            members = set(component)
            for source in component:
                for target, names in sorted(edges[source].items()):
                    if target in members:
                        print(f"  {source} -> {target} ({', '.join(sorted(set(names)))})")
    print(f"check-cycles: {problems} cycle(s) in {len(roots)} module(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
