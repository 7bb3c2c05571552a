"""A command's configuration from Python: a TOML file's path, TOML text, or a dict written as
TOML (nested dicts are tables, lists of dicts arrays of tables)."""
from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping

__all__ = ["config_text", "to_toml"]


def _value(value, key):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)  # the shortest text that reads back as the same double
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # JSON's escapes are TOML's
    if isinstance(value, os.PathLike):
        return json.dumps(os.fspath(value), ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v, key) for v in value) + "]"
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return _value(value.tolist(), key)
    raise ValueError(f"{key}: cannot write a {type(value).__name__} as TOML")


def _key(name):
    name = str(name)
    if name and all(c.isalnum() or c in "_-" for c in name):
        return name
    return json.dumps(name, ensure_ascii=False)


def _table(lines, path, table):
    plain = {k: v for k, v in table.items() if not _is_table(v) and not _is_table_list(v)}
    for k, v in plain.items():
        lines.append(f"{_key(k)} = {_value(v, '.'.join(path + [str(k)]))}")
    for k, v in table.items():
        if _is_table(v):
            lines += ["", "[" + ".".join(_key(p) for p in path + [k]) + "]"]
            _table(lines, path + [k], v)
        elif _is_table_list(v):
            for item in v:
                lines += ["", "[[" + ".".join(_key(p) for p in path + [k]) + "]]"]
                _table(lines, path + [k], item)


def _is_table(value):
    return isinstance(value, Mapping)


def _is_table_list(value):
    return isinstance(value, (list, tuple)) and value and all(isinstance(v, Mapping) for v in value)


def to_toml(config: Mapping) -> str:
    """The TOML text of a dict; floats keep every bit (the shortest round-trip form)."""
    if not isinstance(config, Mapping):
        raise ValueError("config: expected a dict of TOML tables and keys")
    lines = []
    _table(lines, [], config)
    return "\n".join(lines).lstrip("\n") + "\n"


def config_text(config) -> tuple:
    """(TOML text, source) of a configuration: a dict, TOML text (a str with a newline), or the
    path of a TOML file, read as bytes like the command line reads it (source: the path)."""
    if isinstance(config, Mapping):
        return to_toml(config), "<dict>"
    if isinstance(config, str) and "\n" in config:
        return config, "<text>"
    if isinstance(config, (str, os.PathLike)):
        path = os.fspath(config)
        try:
            with open(path, "rb") as f:
                return f.read(), path
        except OSError:
            raise ValueError(f"{path}: cannot open the file") from None
    raise ValueError("config: expected a dict, TOML text or the path of a TOML file")
