"""Columns and tables as the Rust extension hands them over.

A numeric column crosses as ``(numpy dtype, little-endian bytes)`` and is
read without a copy; a string column crosses as a list of ``str``. Every
module that receives tables from ``netheat._netheat`` reads them here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa


def column(spec: tuple[str, bytes]) -> np.ndarray[Any, Any]:
    """A numeric column: ``(numpy dtype, little-endian bytes)`` as an array (no copy)."""
    dtype, raw = spec
    return np.frombuffer(raw, dtype=np.dtype(dtype))


def arrow_column(spec: Any) -> Any:
    """A numeric column as a numpy array, or a list of strings as an Arrow string array."""
    if isinstance(spec, tuple):
        return column(spec)
    return pa.array(spec, pa.string())


def arrow_table(columns: dict[str, Any]) -> pa.Table:
    """An Arrow table from the extension's columns, in their order."""
    return pa.table({name: arrow_column(c) for name, c in columns.items()})
