"""The package graph of ``tuner/`` read from its source (issue 39 §1): packages as boxes, imports as arrows, in layers.

Every ``import tuner.x`` / ``from tuner.x import y`` / ``from tuner import x`` in every module under ``--root``'s
``tuner/`` is read with ``ast`` (nothing is imported) and sorted by where it stands:

- **top** — at module level: runs when the module is imported;
- **lazy** — inside a function or method: runs when that code first runs (heavy or optional dependencies, and the
  usual way to hide a circle);
- **typing** — under ``if TYPE_CHECKING:``: never runs; left out of the graph.

A box is a first-level name under ``tuner/`` (a package such as ``study``, or a module such as ``canary``); an arrow
A → B says some module of A imports B (top or lazy). Boxes are placed in layers: a box sits one layer above the
highest box it imports, so every arrow points down, except the arrows of a circle:

- **circles** — groups of boxes that reach each other through top and lazy arrows (strongly connected components);
  their members share a layer;
- **back-arrows** — the arrows inside a circle, which run against the layering (marked "lazy" where an import inside a
  function is all that keeps the circle out of import time).

The same is read one level down, module by module (``tuner.retrieval._keys`` → ``tuner.retrieval._base``): **module
circles** are modules that reach each other through imports of any kind, ``TYPE_CHECKING`` ones included (a lower
module that names an upper one in a type is still a circle in the design, and the usual way to hide one), so a circle
inside a package (``_config`` ↔ ``_samplers``) or through a package's ``__init__`` is found too. ``from tuner.x import
y`` is an arrow to the module ``tuner.x.y`` where that is a module, else to ``tuner.x`` (a submodule's import also
runs its package's ``__init__`` first, as every import of a submodule does: that is not an arrow).

Output: a text diagram on stdout (layers bottom-up, each box with the boxes it imports), and with ``--svg FILE`` a
picture of the same layers in which only the arrows of the transitive reduction are drawn (an arrow implied by a
longer path is left out, so the picture stays readable; the text lists all), back-arrows in red.

    python tools/module_graph.py                                  # this checkout
    python tools/module_graph.py --root /tmp/before --svg docs/module_graph_before.svg
"""

from __future__ import annotations

import argparse
import ast
import html
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Graph:
    """``top[a]`` / ``lazy[a]``: the boxes box ``a`` imports at module level / inside functions (never itself)."""

    boxes: set[str] = field(default_factory=set)
    top: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    lazy: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    modules: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def runtime(self, box: str) -> set[str]:
        return self.top[box] | self.lazy[box]


def _box(dotted: str, names: set[str]) -> str | None:
    """``tuner.study._run`` → ``study``; None for ``tuner`` itself, a name of ``tuner/__init__.py`` (``__version__``) or
    anything outside it. ``names``: the first-level modules and packages under ``tuner/``."""
    parts = dotted.split(".")
    if parts[0] != "tuner" or len(parts) < 2 or parts[1] not in names:
        return None
    return parts[1]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module, package: str, modules: set[str] | None = None) -> list[tuple[str, str]]:
    """(target dotted name, "top" | "lazy" | "typing") for every import of ``tree``; ``package`` resolves ``from .``.
    With ``modules`` (dotted names), ``from a.b import c`` gives ``a.b.c`` where that is one of them (the name is a
    submodule), else ``a.b``."""
    found: list[tuple[str, str]] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for inner in child.body:
                    visit_one(inner, "typing")
                for inner in child.orelse:
                    visit_one(inner, where)
                continue
            visit_one(child, where)

    def visit_one(child: ast.AST, where: str) -> None:
        if isinstance(child, ast.Import):
            found.extend((alias.name, where) for alias in child.names)
        elif isinstance(child, ast.ImportFrom):
            base = child.module or ""
            if child.level:
                anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base == "tuner":  # from tuner import study: the name is the box
                found.extend((f"tuner.{alias.name}", where) for alias in child.names)
            elif modules is not None:
                found.extend((f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base, where)
                             for alias in child.names)
            else:
                found.append((base, where))
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            visit(child, "lazy" if where == "top" else where)
        else:
            visit(child, where)

    visit(tree, "top")
    return found


def read_graph(root: Path) -> Graph:
    graph = Graph()
    source = root / "tuner"
    names = {path.stem for path in source.glob("*.py")} | {path.parent.name for path in source.glob("*/__init__.py")}
    names -= {"__init__", "__main__"}
    for path in sorted(source.rglob("*.py")):
        relative = path.relative_to(root).with_suffix("")
        parts = list(relative.parts)
        is_package = parts[-1] == "__init__"
        dotted = ".".join(parts[:-1] if is_package else parts)
        box = _box(dotted, names)
        if box is None:
            continue
        graph.boxes.add(box)
        graph.modules[box] += 1
        package = dotted if is_package else ".".join(parts[:-1])
        for target, where in _imports(ast.parse(path.read_text("utf-8")), package):
            other = _box(target, names)
            if other is None or other == box or where == "typing":
                continue
            graph.boxes.add(other)
            (graph.top if where == "top" else graph.lazy)[box].add(other)
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """Strongly connected components of more than one box over top and lazy arrows (Tarjan)."""
    return components(graph.boxes, graph.runtime)


def components(nodes: set[str], arrows: Callable[[str], set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node of the graph ``arrows`` (node → the nodes it points to),
    each sorted, in sorted order (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(box: str) -> None:
        index[box] = low[box] = len(index)
        stack.append(box)
        on_stack.add(box)
        for other in sorted(arrows(box)):
            if other not in index:
                connect(other)
                low[box] = min(low[box], low[other])
            elif other in on_stack:
                low[box] = min(low[box], index[other])
        if low[box] == index[box]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == box:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for box in sorted(nodes):
        if box not in index:
            connect(box)
    return sorted(found)


def read_modules(root: Path) -> dict[str, dict[str, str]]:
    """Every module under ``root``'s ``tuner/`` (dotted, a package by its ``__init__``) → the tuner modules it imports,
    each with the strongest kind it is imported by: "top" over "lazy" over "typing"."""
    source = root / "tuner"
    dotted_of: dict[str, Path] = {}
    for path in sorted(source.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        dotted_of[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    rank = {"top": 0, "lazy": 1, "typing": 2}
    modules: dict[str, dict[str, str]] = {}
    for dotted, path in dotted_of.items():
        package = dotted if path.name == "__init__.py" else dotted.rpartition(".")[0]
        imported: dict[str, str] = {}
        for target, where in _imports(ast.parse(path.read_text("utf-8")), package, set(dotted_of)):
            if target not in dotted_of or target == dotted:
                continue
            if target not in imported or rank[where] < rank[imported[target]]:
                imported[target] = where
        modules[dotted] = imported
    return modules


def module_circles(modules: dict[str, dict[str, str]]) -> list[list[str]]:
    """Modules that import each other, through imports of any kind (top, lazy, ``TYPE_CHECKING``)."""
    return components(set(modules), lambda module: set(modules[module]))


def layers(graph: Graph) -> dict[str, int]:
    """Layer of each box over top and lazy arrows: 0 for a box that imports no other, else 1 + the highest layer it
    imports; the boxes of one circle share a layer (the circle's arrows are the back-arrows)."""
    ring_of = {box: tuple(ring) for ring in circles(graph) for box in ring}
    layer: dict[str, int] = {}

    def place(box: str) -> int:
        if box not in layer:
            members = ring_of.get(box, (box,))
            below = [place(other) for member in members for other in graph.runtime(member) if other not in members]
            for member in members:
                layer[member] = 1 + max(below) if below else 0
        return layer[box]

    for box in sorted(graph.boxes):
        place(box)
    return layer


def back_arrows(graph: Graph, layer: dict[str, int]) -> list[tuple[str, str]]:
    """Arrows that do not point down: those that close a circle."""
    return sorted((a, b) for a in graph.boxes for b in graph.runtime(a) if layer[b] >= layer[a])


def reduced(graph: Graph) -> set[tuple[str, str]]:
    """The top and lazy arrows not implied by a longer path of top and lazy arrows (transitive reduction)."""
    reach: dict[str, set[str]] = {}

    def reachable(box: str, seen: frozenset[str] = frozenset()) -> set[str]:
        if box in reach:
            return reach[box]
        out: set[str] = set()
        for other in graph.runtime(box):
            if other not in seen:
                out |= {other} | reachable(other, seen | {box})
        if not seen:
            reach[box] = out
        return out

    kept = set()
    for a in graph.boxes:
        for b in graph.runtime(a):
            via = [c for c in graph.runtime(a) if c != b and b in reachable(c) and a not in reachable(c)]
            if not via:
                kept.add((a, b))
    return kept


def text_diagram(graph: Graph, root: Path) -> str:
    layer = layers(graph)
    backs = back_arrows(graph, layer)
    rings = circles(graph)
    edges = sum(len(graph.runtime(b)) for b in graph.boxes)
    lines = [f"tuner package graph of {root}: {len(graph.boxes)} boxes, {edges} arrows "
             f"({sum(len(graph.top[b]) for b in graph.boxes)} top, "
             f"{sum(len(graph.lazy[b] - graph.top[b]) for b in graph.boxes)} lazy only), "
             f"{len(backs)} back-arrows, {len(rings)} circles", ""]
    for level in range(max(layer.values()) + 1):
        lines.append(f"layer {level}")
        for box in sorted(b for b in graph.boxes if layer[b] == level):
            top = ", ".join(sorted(graph.top[box])) or "-"
            lazy = sorted(graph.lazy[box] - graph.top[box])
            extra = f"   lazy: {', '.join(lazy)}" if lazy else ""
            lines.append(f"  [{box}] ({graph.modules[box]} modules) → {top}{extra}")
    lines += ["", "back-arrows (inside a circle):"]
    lines += [f"  {a} ⇢ {b}{' (lazy)' if b not in graph.top[a] else ''}" for a, b in backs] or ["  none"]
    lines += ["", "circles (boxes that import each other, top or lazy):"]
    lines += [f"  {' ↔ '.join(ring)}" for ring in rings] or ["  none"]
    modules = read_modules(root)
    lines += ["", f"module circles ({len(modules)} modules; modules that import each other, top, lazy or typing):"]
    for ring in module_circles(modules):
        arrows = [f"{a} → {b} ({modules[a][b]})" for a in ring for b in ring if b in modules[a]]
        lines.append(f"  {' ↔ '.join(ring)}: {'; '.join(arrows)}")
    if lines[-1].endswith("top, lazy or typing):"):
        lines.append("  none")
    return "\n".join(lines)


def svg(graph: Graph, title: str) -> str:
    """The layers as rows of boxes (layer 0 at the bottom), the reduced arrows from box to box; back-arrows red."""
    layer = layers(graph)
    backs = set(back_arrows(graph, layer))
    rows = max(layer.values()) + 1
    by_row = [sorted(b for b in graph.boxes if layer[b] == level) for level in range(rows)]
    box_w, box_h, gap_x, gap_y, margin = 112, 26, 14, 70, 30
    width = margin * 2 + max(len(row) for row in by_row) * (box_w + gap_x)
    height = margin * 2 + 30 + rows * (box_h + gap_y)
    where: dict[str, tuple[float, float]] = {}
    for level, row in enumerate(by_row):
        y = height - margin - (level + 1) * (box_h + gap_y) + gap_y
        offset = (width - len(row) * (box_w + gap_x)) / 2
        for i, box in enumerate(row):
            where[box] = (offset + i * (box_w + gap_x), y)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" font-family="sans-serif" '
           'font-size="11">',
           '<defs><marker id="a" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto">'
           '<path d="M0,0 L10,5 L0,10 z" fill="#666"/></marker>'
           '<marker id="r" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto">'
           '<path d="M0,0 L10,5 L0,10 z" fill="#c00"/></marker></defs>',
           f'<rect width="100%" height="100%" fill="white"/><text x="{margin}" y="20" font-size="13">{html.escape(title)}</text>']
    for level in range(rows):
        y = where[by_row[level][0]][1] + box_h / 2 + 4
        out.append(f'<text x="4" y="{y:.0f}" fill="#999">L{level}</text>')
    for a, b in sorted(reduced(graph) | backs):
        (ax, ay), (bx, by) = where[a], where[b]
        x1, x2 = ax + box_w / 2, bx + box_w / 2
        y1, y2 = (ay, by + box_h) if by > ay else (ay + box_h, by) if by < ay else (ay, by)
        back = (a, b) in backs
        colour, marker, extra = ("#c00", "r", ' stroke-width="1.6"') if back else ("#999", "a", ' stroke-opacity="0.6"')
        if by == ay:  # same row: an arc above the boxes
            out.append(f'<path d="M{x1:.0f},{y1:.0f} Q{(x1 + x2) / 2:.0f},{y1 - 40:.0f} {x2:.0f},{y2:.0f}" fill="none" '
                       f'stroke="{colour}"{extra} marker-end="url(#{marker})"/>')
        else:
            out.append(f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" stroke="{colour}"{extra} '
                       f'marker-end="url(#{marker})"/>')
    ringed = {box for ring in circles(graph) for box in ring}
    for box, (x, y) in where.items():
        stroke = "#c00" if box in ringed else "#335"
        out.append(f'<rect x="{x:.0f}" y="{y:.0f}" width="{box_w}" height="{box_h}" rx="4" fill="#eef" stroke="{stroke}"/>'
                   f'<text x="{x + box_w / 2:.0f}" y="{y + 17:.0f}" text-anchor="middle">{html.escape(box)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1], help="a tree holding tuner/")
    parser.add_argument("--svg", type=Path, help="also write the picture here")
    parser.add_argument("--title", default="", help="title of the picture (default: the root)")
    args = parser.parse_args()
    graph = read_graph(args.root)
    print(text_diagram(graph, args.root))
    if args.svg:
        args.svg.write_text(svg(graph, args.title or str(args.root)), "utf-8")


if __name__ == "__main__":
    main()
