"""Every field of the C++ option structs is reachable from Python, and the type stubs say so."""

import ast
import pathlib
import re
import subprocess

import prefix_scorer
from prefix_scorer import _core
from prefix_scorer.scorer import OPTION_NAMES

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cpp_fields(struct: str) -> set:
    """The data members of `struct` in include/prefix_scorer/types.h, with those of the struct it derives from."""
    text = (ROOT / "include" / "prefix_scorer" / "types.h").read_text()
    match = re.search(r"struct " + struct + r"(?: : (\w+))? \{(.*?)\n\};", text, re.S)
    assert match, struct
    body = re.sub(r"//[^\n]*", "", match.group(2))
    fields = set(re.findall(r"(\w+)(?: = [^;]*)?;", body))
    return fields | (cpp_fields(match.group(1)) if match.group(1) else set())


def test_every_cpp_option_is_bound_and_settable():
    fields = cpp_fields("PrefixScorerOptions")
    assert {"max_length", "max_batch_bytes", "cascade_min_prefix_len", "on_progress"} <= fields
    bound = {name for name in dir(_core.PrefixScorerOptions) if not name.startswith("_")}
    assert fields == bound, f"not bound: {sorted(fields - bound)}; bound but not in C++: {sorted(bound - fields)}"
    assert OPTION_NAMES == fields - {"on_progress"}  # on_progress has its own keyword


def test_every_option_reaches_the_native_scorer():
    defaults = _core.PrefixScorerOptions()
    changed = {}
    for name in OPTION_NAMES:
        value = getattr(defaults, name)
        changed[name] = (not value) if isinstance(value, bool) else value + 1
    scorer = prefix_scorer.PrefixScorer.from_pretrained("synthetic:tiny", **changed)
    for name, value in changed.items():
        assert getattr(scorer._core.options, name) == value, name


def test_stubs_ship_and_list_every_option():
    package = pathlib.Path(prefix_scorer.__file__).parent
    assert (package / "py.typed").is_file()
    stub = ast.parse((package / "_core.pyi").read_text())
    classes = {node.name: node for node in stub.body if isinstance(node, ast.ClassDef)}
    annotated = {n.target.id for n in classes["PrefixScorerOptions"].body if isinstance(n, ast.AnnAssign)}
    assert annotated == cpp_fields("PrefixScorerOptions")
    assert not [name for name in dir(_core) if "fail" in name]  # the tests' hooks live in prefix_scorer._testing
    runtime = {name for name in dir(_core) if not name.startswith("_")}
    stubbed = set(classes) | {n.name for n in stub.body if isinstance(n, ast.FunctionDef)}
    assert runtime <= stubbed, f"not in _core.pyi: {sorted(runtime - stubbed)}"


def option_defaults() -> list:
    """(name, default as text) of each option but the progress hook, in the order the bindings declare them."""
    defaults = _core.PrefixScorerOptions()
    return [(name, str(getattr(defaults, name)).lower()) for name in bound_option_order()]


def bound_option_order() -> list:
    """The options in the order of the class's own attributes (pybind11 keeps the order they were defined in)."""
    return [name for name in vars(_core.PrefixScorerOptions) if name in OPTION_NAMES]


def test_options_table_lists_every_option_with_its_default():
    section = (ROOT / "docs" / "options.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| (\S+) \|", section, re.M)
    assert rows == option_defaults()


def flag_help(text: str) -> dict:
    """Each flag of a usage text with its meaning, continuation lines joined."""
    entries, current = {}, None
    for line in text.splitlines():
        match = re.match(r"  --([\w-]+) \S+\s+(.*)", line)
        if match:
            current = match.group(1)
            entries[current] = match.group(2)
        elif current and line.startswith(" " * 20):
            entries[current] += " " + line.strip()
        else:
            current = None
    return entries


def test_benchmark_has_a_flag_for_every_option_with_its_default(bench):
    text = subprocess.run([str(bench), "--help"], capture_output=True, text=True, check=True).stdout
    entries = flag_help(text)
    for name, default in option_defaults():
        flag = name.replace("_", "-")
        assert flag in entries, flag
        assert entries[flag].endswith(f"[{default}]"), (flag, entries[flag])
