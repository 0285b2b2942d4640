"""Damage for JSON and parquet files, shared by the fuzz tests of the files nnd-suites writes
and reads back (suite folders, run folders): a byte changed, a JSON value replaced by another
type, a key repeated, deep nesting, a parquet column dropped, nulled or of another type, rows
dropped or repeated."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

STRANGE = [None, [], {}, "", True, -1, 1.5, "x" * 5000, 10**400, "\ud800", ["a"], {"a": 1}]
STRANGE += [1e308, "2.3", "99.0", "1.99999"]
DEEP = "[" * 5000 + "]" * 5000


def flip_byte(data: st.DataObject, raw: bytes) -> bytes:
    at = data.draw(st.integers(0, max(len(raw) - 1, 0)))
    return raw[:at] + bytes([data.draw(st.integers(0, 255))]) + raw[at + 1 :]


def _replace_one(data: st.DataObject, value: Any) -> Any:
    children = list(value) if isinstance(value, dict) else []
    children = list(range(len(value))) if isinstance(value, list) else children
    if children and data.draw(st.integers(0, 3)):
        key = data.draw(st.sampled_from(children))
        value[key] = _replace_one(data, value[key])
        return value
    return data.draw(st.sampled_from(STRANGE))


def change_json(data: st.DataObject, raw: bytes) -> bytes:
    """A value replaced, a key repeated with another value, or deep nesting."""
    how = data.draw(st.sampled_from(["value", "repeat", "deep"]))
    value = json.loads(raw)
    if how == "value":
        return json.dumps(_replace_one(data, value)).encode()
    key = data.draw(st.sampled_from(sorted(value)))
    text = json.dumps(value)
    extra = DEEP if how == "deep" else json.dumps(data.draw(st.sampled_from(STRANGE)))
    return text.replace("{", f"{{{json.dumps(key)}: {extra}, ", 1).encode()


def change_table(data: st.DataObject, raw: bytes) -> bytes:
    """A column dropped, nulled or of another type, or rows dropped or repeated."""
    table = pq.read_table(pa.BufferReader(raw))
    how = data.draw(st.sampled_from(["drop", "null", "string", "rows", "repeat"]))
    column = data.draw(st.integers(0, table.num_columns - 1))
    if how == "drop":
        table = table.remove_column(column)
    elif how in ("null", "string"):
        field = table.schema.field(column)
        values = (
            pa.nulls(len(table), field.type)
            if how == "null"
            else pa.array([str(v) for v in table.column(column).to_pylist()])
        )
        table = table.set_column(column, field.name, values)
    elif how == "rows":
        table = table.slice(0, data.draw(st.integers(0, max(len(table) - 1, 0))))
    else:
        table = pa.concat_tables([table, table.slice(0, 1)])
    out = pa.BufferOutputStream()
    pq.write_table(table, out)
    return out.getvalue().to_pybytes()
