"""Configuration files read strictly, and the ``results`` directory checked, before any job runs.

Snakemake reads a ``--configfile`` with a YAML loader that keeps the last of
two equal keys and expands every alias. The Snakefile therefore reads the
same files again here (:func:`read_config_file`), and refuses:

* a key given twice in one mapping (``seeds: 2`` then ``seeds: 50``), naming
  the key and both lines;
* a file larger than :data:`MAX_CONFIG_BYTES`, and one whose YAML aliases
  (``*name``) expand to more than :data:`MAX_CONFIG_VALUES` values (an "alias
  bomb": a few lines that grow to gigabytes), or refer to themselves.

:func:`check_results` then refuses a ``results`` path that the workflow
would misread (a leading ``~``, braces) and an existing ``results``
directory that nllbench did not write (:func:`check_results_directory`).
Errors are one line: ``FILE:LINE: config key KEY: what is wrong``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Largest configuration file read, in bytes (the shipped ones are under 5 kB).
MAX_CONFIG_BYTES = 1_000_000
#: Most values (mappings, lists and scalars, each alias counted as what it stands for) a file may hold.
MAX_CONFIG_VALUES = 100_000
#: The keys that name a path the workflow uses as given (no ``~``, no braces).
PATH_KEYS = ("results", "sweep.truth")
#: What the results directory's :data:`nllbench.store.MARKER` says it holds.
RESULTS_KIND = "workflow results"


@dataclass(frozen=True)
class ConfigFile:
    """One configuration file read strictly.

    path : the file as given; data : its top-level mapping;
    lines : dotted key (``sweep.seeds``, ``sweep.clutter_rates[1]``) -> 1-based line where it is set.
    """

    path: str
    data: dict
    lines: Mapping[str, int]


def _dotted(prefix: str, key) -> str:
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    return f"{prefix}.{key}" if prefix else str(key)


class _Walk:
    """One pass over a composed YAML node graph: duplicate keys, lines, and the expanded size.

    Each node is visited once (an alias is the node it names): the expanded
    size of a node is 1 plus that of its children, memoised, so an alias bomb
    is measured without being expanded.
    """

    def __init__(self, path: str):
        self.path = path
        self.sizes: dict[int, int] = {}
        self.open: set[int] = set()
        self.lines: dict[str, int] = {}

    def error(self, node, key: str, what: str) -> ValueError:
        line = node.start_mark.line + 1
        return ValueError(f"{self.path}:{line}: config key {key or '(top level)'}: {what}")

    def size(self, node, key: str) -> int:
        import yaml

        if id(node) in self.sizes:
            return self.sizes[id(node)]
        if id(node) in self.open:
            raise self.error(node, key, "a YAML alias refers to the value that contains it; write it out")
        self.open.add(id(node))
        total = 1
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for k, v in node.value:
                name = k.value if isinstance(k, yaml.ScalarNode) else None
                if name == "<<":  # a merge key: its mappings are walked, not counted as a key
                    total += self.size(v, key)
                    continue
                sub = _dotted(key, name)
                line = k.start_mark.line + 1
                if name is not None and name in seen:
                    raise self.error(
                        k,
                        sub,
                        f"given twice, at lines {seen[name]} and {line} (YAML keeps only the last); keep one",
                    )
                if name is not None:
                    seen[name] = line
                    self.lines.setdefault(sub, line)
                total += self.size(v, sub)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                self.lines.setdefault(_dotted(key, i), v.start_mark.line + 1)
                total += self.size(v, _dotted(key, i))
        self.open.discard(id(node))
        if total > MAX_CONFIG_VALUES:
            raise self.error(
                node,
                key,
                f"expands to more than {MAX_CONFIG_VALUES} values through YAML aliases (*name); "
                "write the values out, without aliases",
            )
        self.sizes[id(node)] = total
        return total


def _shown(path) -> str:
    """``path`` relative to the working directory when it lies below it (Snakemake makes them absolute)."""
    text = str(path)
    if os.path.isabs(text):
        rel = os.path.relpath(text)
        if not rel.startswith(".."):
            return rel
    return text


def read_config_file(path: str | os.PathLike) -> ConfigFile:
    """A YAML (or JSON) configuration file, refused when a key is given twice or it is too large.

    Raises ValueError naming the file and line (and the key where there is
    one): a file over :data:`MAX_CONFIG_BYTES` bytes, not UTF-8, not YAML,
    not a mapping at top level, a key given twice in one mapping, aliases
    expanding to more than :data:`MAX_CONFIG_VALUES` values or referring to
    themselves. The file is composed into nodes first, measured without
    expanding its aliases, and only then built into Python values.
    """
    import yaml

    name = _shown(path)
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise ValueError(f"{name}: cannot read the configuration file ({exc.strerror})") from None
    if size > MAX_CONFIG_BYTES:
        raise ValueError(
            f"{name}: expected a configuration file of at most {MAX_CONFIG_BYTES} bytes, got {size}"
        )
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{name}: expected UTF-8 text, got byte {exc.object[exc.start]:#x} at {exc.start}"
        ) from None
    except OSError as exc:
        raise ValueError(f"{name}: cannot read the configuration file ({exc.strerror})") from None
    loader = yaml.SafeLoader(text)
    walk = _Walk(name)
    try:
        node = loader.get_single_node()
        if not isinstance(node, yaml.MappingNode):
            got = "nothing" if node is None else f"a {node.id}"
            raise ValueError(f"{name}:1: expected a mapping of config keys at top level, got {got}")
        walk.size(node, "")
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ValueError(f"{name}{line}: not valid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"{name}: not valid YAML: {exc}") from None
    except RecursionError:
        raise ValueError(f"{name}: expected a configuration, got values nested too deeply") from None
    finally:
        loader.dispose()
    return ConfigFile(name, data, dict(walk.lines))


def read_config_files(paths: Sequence[str | os.PathLike]) -> list[ConfigFile]:
    """Every configuration file of a run, read strictly (:func:`read_config_file`), in order."""
    return [read_config_file(p) for p in paths]


def _value(data, key: str):
    node = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def config_origin(key: str, files: Sequence[ConfigFile], overrides: Mapping | None = None) -> str:
    """Where ``key`` gets its value: ``FILE:LINE`` of the last file setting it, or ``--config``.

    ``overrides`` are the values given with ``snakemake --config`` (they win over every file).
    """
    if overrides and _value(overrides, key) is not None:
        return "--config"
    for f in reversed(files):
        if key in f.lines:
            return f"{f.path}:{f.lines[key]}"
    return "config"


def check_path_value(key: str, value, where: str) -> None:
    """Refuse a path the workflow would misread: a leading ``~``, braces (ValueError naming ``where``).

    Snakemake and nllbench take paths as written: ``~/out`` would be a
    directory named ``~`` under the working directory (and a home directory
    can differ between the machines of a cluster, so it is not expanded
    here either); ``{...}`` in an output path is a Snakemake wildcard.
    """
    if value is None:
        return
    text = str(value)
    if text.startswith("~"):
        raise ValueError(
            f"{where}: config key {key}: expected the full path, got {text!r}: '~' is not expanded "
            f"(it would be a directory named {text.split('/')[0]!r}); write the home directory out"
        )
    if "{" in text or "}" in text:
        raise ValueError(
            f"{where}: config key {key}: expected a path without braces, got {text!r}: "
            "Snakemake reads {...} in a path as a wildcard"
        )


def check_results_directory(results: str | os.PathLike, where: str = "config") -> None:
    """Refuse an existing ``results`` directory that nllbench did not write (ValueError).

    Accepted: a path that does not exist yet, an empty directory (or one
    holding only temporaries of killed nllbench runs), and a directory
    carrying :data:`nllbench.store.MARKER` (written by
    :func:`mark_results_directory` when the workflow first runs there, or
    shipped, as in the repository's ``results/``). Anything else might hold a
    file named like an output, which Snakemake would delete before the job
    that writes it runs: the directory is refused before any job, dry runs
    included.
    """
    from nllbench.store import MARKER, is_temporary

    path = Path(results)
    if not path.exists():
        return
    if not path.is_dir():
        raise ValueError(f"{where}: config key results: expected a directory, got the file {str(path)!r}")
    if (path / MARKER).is_file():
        return
    names = sorted(p.name for p in path.iterdir() if not is_temporary(p))
    if not names:
        return
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    raise ValueError(
        f"{where}: config key results: refusing {str(path)!r}, a directory that nllbench did not write "
        f"(it holds {shown}; no {MARKER} marker), since Snakemake would delete any file in it named like "
        f"an output. Give a new or empty directory; if an earlier nllbench run wrote it, mark it: "
        f"touch {str(path / MARKER)!r}"
    )


def check_results(config: Mapping, files: Sequence[ConfigFile], overrides: Mapping | None = None) -> None:
    """Every check of the workflow's paths before any job: :func:`check_path_value` on
    :data:`PATH_KEYS`, then :func:`check_results_directory`; errors name ``FILE:LINE`` and the key."""
    for key in PATH_KEYS:
        check_path_value(key, _value(config, key), config_origin(key, files, overrides))
    check_results_directory(config["results"], config_origin("results", files, overrides))


def mark_results_directory(results: str | os.PathLike) -> Path:
    """Create ``results`` if needed and give it :data:`nllbench.store.MARKER` (kept when present).

    Called when a run starts (not by a dry run), so that a later run accepts
    the directory (:func:`check_results_directory`). Returns the marker's path.
    """
    from nllbench.store import MARKER, write_text
    from nllbench.store.provenance import nllbench_version

    marker = Path(results) / MARKER
    if not marker.is_file():
        marker.parent.mkdir(parents=True, exist_ok=True)
        record = {"written_by": "nllbench", "version": nllbench_version(), "holds": RESULTS_KIND}
        write_text(marker, json.dumps(record, sort_keys=True) + "\n")
    return marker
