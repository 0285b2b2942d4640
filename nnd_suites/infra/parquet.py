"""Bounded reading of parquet files from elsewhere (a suite's pairs and candidates, a run's
outcomes): a file of a few kB can hold texts that expand to gigabytes, compressed (its metadata
declares the size) or dictionary-encoded (one long text repeated on every row). A file, the
sizes its metadata declares and its texts once decoded are each capped at
:func:`max_parquet_bytes` before anything that large is allocated; past it, a
:class:`ParquetTooLargeError` names the file, what is too large and how to raise the cap.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from nnd_suites.infra.paths import positive_setting
from nnd_suites.infra.reading import DataFileError, open_regular_file

MAX_PARQUET_BYTES_ENV = "NND_SUITES_MAX_PARQUET_BYTES"
#: the decoded bytes of each value an index of a repeated leaf costs (an offset, a level)
_BYTES_PER_VALUE = 8


class ParquetTooLargeError(DataFileError):
    """A parquet file, or what it declares or decodes to, is over :func:`max_parquet_bytes`."""


def max_parquet_bytes() -> int:
    """``$NND_SUITES_MAX_PARQUET_BYTES`` or 4 GiB: suites and outcomes are megabytes."""
    return int(positive_setting(MAX_PARQUET_BYTES_ENV, 4 << 30, "bytes"))


def _too_large(path: str | os.PathLike, what: str, size: int, limit: int) -> DataFileError:
    return ParquetTooLargeError(
        path,
        f"{what} {size:,} bytes, over the {limit:,} a parquet file may hold (a compression "
        f"bomb, or the wrong file?); if the file is right, raise the limit with "
        f"{MAX_PARQUET_BYTES_ENV}=BYTES",
    )


def parquet_buffer(path: str | os.PathLike, what: str) -> pa.BufferReader:
    """The bytes of the regular file ``path`` (at most :func:`max_parquet_bytes`), for pyarrow
    to read from memory (see :func:`nnd_suites.suite.storage.read_parquet`)."""
    limit = max_parquet_bytes()
    with os.fdopen(open_regular_file(path, what), "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        # never read(limit + 1): Python allocates that much before reading a byte
        data = handle.read(size + 1) if size <= limit else b""
    if size > limit or len(data) > limit:
        raise _too_large(path, "it is", max(size, len(data)), limit)
    return pa.BufferReader(data)


def read_bounded_table(
    buffer: pa.BufferReader, path: str | os.PathLike, columns: list[str] | None = None
) -> pa.Table:
    """``pq.read_table`` of ``buffer`` (:func:`parquet_buffer`; ``columns`` of it), once the
    sizes its metadata declares and its texts once decoded are within :func:`max_parquet_bytes`:
    texts are read dictionary-encoded first, so a text repeated on a million rows is counted,
    not allocated a million times."""
    limit = max_parquet_bytes()
    metadata = pq.read_metadata(buffer)
    # a row group's own totals, never its column chunks' metadata: pyarrow aborts the whole
    # process (std::terminate) on a chunk whose statistics are damaged, where reading it raises
    groups = [metadata.row_group(index) for index in range(metadata.num_row_groups)]
    declared = sum(group.total_byte_size for group in groups)
    declared += _BYTES_PER_VALUE * sum(group.num_rows * group.num_columns for group in groups)
    if declared > limit:
        raise _too_large(path, "its metadata declares", declared, limit)
    texts = [
        column.path
        for column in (metadata.schema.column(i) for i in range(metadata.num_columns))
        if column.physical_type in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY")
    ]
    buffer.seek(0)
    encoded = pq.ParquetFile(buffer, read_dictionary=texts).read(columns=columns)
    decoded = sum(_decoded_bytes(chunk) for column in encoded.columns for chunk in column.chunks)
    if decoded > limit:
        raise _too_large(path, "its texts decode to", decoded, limit)
    del encoded
    buffer.seek(0)
    return pq.read_table(buffer, columns=columns)  # within the bounds: read as it always was


def _decoded_bytes(array: pa.Array) -> int:
    """The bytes ``array`` takes once its dictionaries are decoded (an upper bound)."""
    if isinstance(array, pa.DictionaryArray):
        lengths = pc.binary_length(array.dictionary).take(array.indices)
        return array.indices.nbytes + (pc.sum(lengths).as_py() or 0)
    if isinstance(array, pa.StructArray):
        own = array.buffers()[0].size if array.buffers()[0] else 0
        return own + sum(_decoded_bytes(array.field(i)) for i in range(array.type.num_fields))
    if isinstance(array, (pa.ListArray, pa.LargeListArray)):
        return array.offsets.nbytes + _decoded_bytes(array.values)
    return array.nbytes
