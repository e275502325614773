"""The package's layers point one way (docs/architecture.md):

    cli > render > ops > {server, spark, recovery} > protocol > {storage, decoders}
        > format > schema > base modules (errors, constants)

Every import of the package's own modules is read (``ast``: module level and inside
functions alike), and each must point down this order: never up, never sideways between
the packages of one level, and no cycle between packages."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "kafkalog_cli"

#: package (or top-level module) -> its level, highest on top
LEVELS = {
    "__main__": 10,
    "cli": 9,
    "render": 8,
    "ops": 7,
    "server": 6, "spark": 6, "recovery": 6,
    "protocol": 5,
    # Schema Registry: reads the _schemas partition (storage) beside the decoders
    "registry": 5,
    "storage": 4, "decoders": 4,
    # produce's input formats (lines, JSON Lines, raw): read like the record format
    "format": 3, "inputs": 3,
    "schema": 2,
    # base modules; the package root is the lazy public API, whose module-level code
    # imports _version only (its names are imported by importlib on first use)
    "errors": 1, "constants": 1, "crc": 1, "schemas": 1, "javaorder": 1, "": 1,
    "_version": 0,
}


def _unit(module: str) -> str:
    """``kafkalog_cli.storage.log`` -> ``storage``; ``kafkalog_cli`` -> ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports() -> list[tuple[str, str, str]]:
    """``(importing module, imported module, where)`` for every import of the package's
    own modules."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts.pop()
        module = ".".join(parts)
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            where = f"{rel}.py:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "kafkalog_cli":
                        out.append((module, alias.name, where))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = parts if is_pkg else parts[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != "kafkalog_cli":
                    continue
                if node.module is None or target == "kafkalog_cli":
                    # ``from . import x`` / ``from kafkalog_cli import x``: submodules
                    for alias in node.names:
                        out.append((module, f"{target}.{alias.name}", where))
                else:
                    out.append((module, target, where))
    return out


def test_every_unit_has_a_level():
    units = {_unit(m) for m, _, _ in _imports()} | {_unit(t) for _, t, _ in _imports()}
    units |= {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
              if (p.suffix == ".py" or (p / "__init__.py").exists()) and p.name != "__init__.py"}
    assert not units - set(LEVELS), f"give these a level: {sorted(units - set(LEVELS))}"


def test_imports_point_down_the_layers():
    wrong = []
    for src, dst, where in _imports():
        a, b = _unit(src), _unit(dst)
        if a != b and LEVELS[a] <= LEVELS[b]:
            wrong.append(f"{where}: {a or 'kafkalog_cli'} -> {b or 'kafkalog_cli'} ({dst})")
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


def test_no_cycle_between_packages():
    graph: dict[str, set[str]] = defaultdict(set)
    for src, dst, _ in _imports():
        a, b = _unit(src), _unit(dst)
        if a != b:
            graph[a].add(b)
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            assert cycle is None, "a cycle between packages: " + " -> ".join(cycle)


def test_the_reader_sees_function_level_imports(tmp_path):
    """The check is only as good as its reader: an import inside a function counts."""
    found = [(s, d) for s, d, _ in _imports()
             if s == "kafkalog_cli.cli.commands.produce" and d.endswith("ops.produce")]
    assert found, "the import inside produce() was not read"


def test_every_exception_class_lives_in_errors_and_is_a_kafkalog_error():
    """One exception hierarchy (errors.py), rooted at KafkalogError. The one class defined
    elsewhere is schema/flexible.py's KafkaReadError: construct's ValidationError, which
    construct must see while it parses (the base modules import no construct); it never
    leaves schema (``java_message`` turns it into text)."""
    import kafkalog_cli.errors as errors

    elsewhere = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and (
                    node.name.endswith(("Error", "Exception")) or any(
                        ast.unparse(b).endswith(("Error", "Exception", "EOFError"))
                        for b in node.bases)):
                elsewhere.append(f"{path.relative_to(PACKAGE)}:{node.name}")
    assert elsewhere == ["schema/flexible.py:KafkaReadError"]
    for name in dir(errors):
        obj = getattr(errors, name)
        if isinstance(obj, type) and issubclass(obj, BaseException) and \
                obj.__module__ == errors.__name__:
            assert issubclass(obj, errors.KafkalogError), name
