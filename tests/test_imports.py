"""The package's modules import one another one way: no import cycle, lazy imports included."""

import ast
import re
from pathlib import Path

import zerochess

ROOT = Path(zerochess.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path, name: str) -> set[str]:
    """Every module named by an import statement anywhere in the file (function bodies too:
    a lazy import still ties the two modules together)."""
    if path.suffix == ".pyx":
        return set(re.findall(r"^\s*(?:from|c?import)\s+(zerochess[\w.]*)", path.read_text(), re.M))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(kept + ([base] if base else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}  # "from pkg import module"
    return out


def import_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for ext in ("*.py", "*.pyx") for p in ROOT.rglob(ext)}
    return {name: {d for d in imported_names(path, name) if d in files and d != name}
            for name, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        path.append(v)
        for w in sorted(graph[v]):
            if state.get(w) == 1:
                return path[path.index(w):] + [w]
            if w not in state and (cycle := visit(w)):
                return cycle
        path.pop()
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state and (cycle := visit(v)):
            return cycle
    return None


def test_the_cycle_finder_sees_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_graph_sees_lazy_imports():
    graph = import_graph()
    # neural/backends.py imports the network loader inside make_evaluator
    assert "zerochess.neural.api" in graph["zerochess.neural.backends"]


def test_no_import_cycles_in_the_package():
    assert find_cycle(import_graph()) is None


#: The packages from the bottom up: a module may import only from its own package or from a
#: lower layer. The chess knows nothing of the network, the network nothing of the search,
#: and only the commands (uci, tools, train, cli) sit on top. The client of other UCI
#: engines (match runner, teacher) needs nothing of zerochess: it sits at the bottom.
LAYERS = [
    {"_version", "atomic", "lazy"},
    {"chess", "client"},
    {"neural"},
    {"search", "book"},
    {"match"},
    {"uci", "tools", "tune"},
    {"train"},
    {"cli"},
    {"__main__"},
]


def layer_of(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    if top == "__init__":
        return 0
    for rank, names in enumerate(LAYERS):
        if top in names:
            return rank
    raise AssertionError(f"{module}: package {top!r} has no layer in LAYERS")


def test_imports_go_down_the_layers():
    upward = sorted(f"{a} -> {d}" for a, deps in import_graph().items() for d in deps
                    if a.split(".")[:2] != d.split(".")[:2] and layer_of(d) >= layer_of(a)
                    and layer_of(a) > 0)
    assert upward == []


def test_the_layer_check_sees_an_upward_import():
    assert layer_of("zerochess.chess.board") < layer_of("zerochess.neural.backends")
    assert layer_of("zerochess.search.search") > layer_of("zerochess.neural.evaluator")
