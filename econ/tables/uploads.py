"""Bounded readers of user files: CSV and XLSX tables (catalog tables, quotes, dashboard uploads).

Every reader checks the size before it parses, and stops at the row limit without reading the rest:

- **CSV**: at most ``max_bytes`` are read, and Polars parses at most ``max_rows + 1`` rows
  (``n_rows``), so the rows beyond the limit are never materialized.
- **XLSX** (a zip of XML parts): before any spreadsheet parser runs, the archive is inspected with
  :mod:`zipfile`: the first worksheet's ``<dimension>`` (the sheet metadata), then its XML streamed
  in 1 MB chunks counting ``<row>`` elements and cell columns, stopping at ``max_rows + 1`` rows;
  the decompressed size of every part is capped at :data:`MAX_XLSX_UNCOMPRESSED_BYTES` (decompressed
  in chunks, so a decompression bomb costs at most that much work, never that much memory) and a
  part declaring a DTD or entity (no workbook needs one) is refused. A 0.6 MB file holding 10 M
  rows (260 MB of XML) is refused from its declared size, at once; one that understates its size or
  stays under the cap is refused within the first megabytes of rows streamed.
- Every cell is read as text (``pl.String``), blank rows are dropped (a trailing blank line is a
  normal edit), and at most :data:`MAX_COLUMNS` columns are accepted.

Failures raise :class:`~econ.errors.DataError` naming the file and the limit, never a traceback.
"""

from __future__ import annotations

import io
import re
import stat
import zipfile
from pathlib import Path, PurePosixPath

import polars as pl

from econ.errors import DataError

MAX_TABLE_ROWS = 10_000
"""Largest data table accepted (the shipped tables hold at most a few hundred rows). [rows]"""
MAX_TABLE_BYTES = 20_000_000
"""Largest table file read (10,000 rows of the widest shipped table are about 10 MB). [B]"""
MAX_COLUMNS = 500
"""Most columns accepted in a table (the widest shipped table has under 50)."""
MAX_XLSX_UNCOMPRESSED_BYTES = 200_000_000
"""Most bytes an XLSX may decompress to, all parts together. [B]"""
MAX_XLSX_PARTS = 10_000
"""Most parts (zip members) an XLSX may hold."""

_CHUNK = 1 << 20
_ROW_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?row\b([^>]*)>")
_ROW_NUM = re.compile(rb'\br="(\d{1,12})"')
_CELL_REF = re.compile(rb'<(?:[A-Za-z_][\w.-]*:)?c\b[^>]*?\br="([A-Za-z]{1,4})\d{1,12}"')
_DIMENSION = re.compile(rb'<(?:[A-Za-z_][\w.-]*:)?dimension\b[^>]*\bref="([A-Za-z]{0,4})(\d{0,12}):?([A-Za-z]{0,4})(\d{0,12})"')
_DTD = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)


def read_table_bytes(data: bytes, name: str, *, max_rows: int = MAX_TABLE_ROWS,
                     max_bytes: int = MAX_TABLE_BYTES, allow_xlsx: bool = True) -> pl.DataFrame:
    """A CSV or XLSX table (first sheet) with every cell as text, within the size and row limits.

    Parameters
    ----------
    data : bytes
        The file's content (an XLSX is recognised by its zip signature).
    name : str
        File name used in messages.
    max_rows : int
        Most data rows accepted (the header is not counted).
    max_bytes : int
        Most bytes accepted. [B]
    allow_xlsx : bool
        Whether an XLSX is accepted (else only CSV).

    Returns
    -------
    pl.DataFrame, every column ``pl.String`` (empty cells null), blank rows dropped.

    Raises
    ------
    DataError
        Too large, too many rows or columns, not readable as CSV/XLSX.
    """
    check_size(len(data), name, max_bytes, max_rows)
    if bytes(data[:2]) == b"PK":  # XLSX is a zip archive
        if not allow_xlsx:
            raise DataError(f"{name}: an XLSX workbook; this table is read from CSV only")
        return read_xlsx_bytes(data, name, max_rows=max_rows)
    return read_csv_bytes(data, name, max_rows=max_rows)


def read_file_bytes(path, max_bytes: int, *, what: str = "a CSV file", limit_text: str = "") -> bytes:
    """The content of a regular file, at most ``max_bytes``: the one bounded reader of every user file (tables,
    quotes, scenario TOML, LiteLLM JSON).

    The file is opened without blocking (``O_NONBLOCK``: a FIFO with no writer would block ``open`` forever) and
    examined on the open descriptor (``fstat``), so what is read is what was checked; anything but a regular file
    (a folder, a FIFO, a device such as ``/dev/zero``, a socket) is refused before a byte is read. The size the file
    system reports is not trusted (``/proc`` files report 0, a growing file more than it said): at most
    ``max_bytes + 1`` bytes are read, in chunks, and a file that holds more is refused.

    Parameters
    ----------
    path : str or Path
    max_bytes : int
        Most bytes accepted. [B]
    what : str
        What the file should be, for messages ("a CSV file", "a LiteLLM price JSON file").
    limit_text : str
        Words after the limit in the too-large message (" (10,000 rows)").

    Returns
    -------
    bytes

    Raises
    ------
    DataError
        Missing, not a regular file, unreadable (the reason in words), or larger than ``max_bytes``; the message
        names the path (cut to 200 characters).
    """
    import os

    shown = _cut(str(path))

    def refuse(reason: str, name: str = shown, too_large: bool = False):
        err = DataError(f"{name}: {reason}")
        err.reason = reason  # the words after the name, for a caller that names the file its own way
        err.too_large = too_large
        return err

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise refuse("file not found") from None
    except (OSError, ValueError, TypeError) as exc:
        raise refuse(f"cannot read ({_reason(exc)})") from None
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            raise refuse(f"is a folder, not {what}")
        if not stat.S_ISREG(mode):
            kind = ("a pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
            raise refuse(f"is {kind}, not {what}; give a regular file")
        if st.st_size > max_bytes:  # a stated size refuses at once; it never accepts (read below, bounded)
            raise refuse(f"{st.st_size / 1e6:,.1f} MB; at most {max_bytes / 1e6:g} MB{limit_text}", Path(shown).name,
                         True)
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise refuse(f"cannot read ({_reason(exc)})") from None
    finally:
        os.close(fd)
    if total > max_bytes:
        raise refuse(f"more than {max_bytes / 1e6:g} MB; at most {max_bytes / 1e6:g} MB{limit_text}", Path(shown).name,
                     True)
    return b"".join(chunks)


def read_table_file(path, *, max_rows: int = MAX_TABLE_ROWS, max_bytes: int = MAX_TABLE_BYTES,
                    allow_xlsx: bool = False) -> pl.DataFrame:
    """:func:`read_table_bytes` of a file, read with :func:`read_file_bytes` (a regular file within ``max_bytes``).

    Raises
    ------
    DataError
        Missing, a folder or another non-regular file, unreadable (the reason in words), too large, or not a
        readable table.
    """
    path = Path(path)
    data = read_file_bytes(path, max_bytes, what="a CSV file", limit_text=f" ({max_rows:,} rows) per file")
    return read_table_bytes(data, path.name, max_rows=max_rows, max_bytes=max_bytes, allow_xlsx=allow_xlsx)


def check_size(num_bytes: int, name: str, max_bytes: int, max_rows: int = MAX_TABLE_ROWS) -> None:
    """Raise DataError if a file of ``num_bytes`` is above ``max_bytes``."""
    if num_bytes > max_bytes:
        raise DataError(f"{name}: {num_bytes / 1e6:,.1f} MB; at most {max_bytes / 1e6:g} MB ({max_rows:,} rows) "
                        f"per file")


def read_csv_bytes(data: bytes, name: str, *, max_rows: int = MAX_TABLE_ROWS) -> pl.DataFrame:
    """A CSV (UTF-8, header row) as text columns, parsing at most ``max_rows + 1`` rows.

    Raises
    ------
    DataError
        Not readable CSV, more than ``max_rows`` data rows or :data:`MAX_COLUMNS` columns.
    """
    cap = max_rows + _BLANK_ALLOWANCE
    try:
        raw = pl.read_csv(io.BytesIO(data), infer_schema=False, null_values=[""], encoding="utf8", n_rows=cap)
    except Exception as exc:  # noqa: BLE001 - polars raises several exception types for bad CSV
        raise DataError(f"{name}: not a readable CSV ({_cut(str(exc), 300)})") from None
    if raw.height >= cap:  # parsing stopped at the cap: more rows follow, unread
        raise DataError(f"{name}: more than {max_rows:,} rows; at most {max_rows:,} rows per file (split the file)")
    return _finish(raw, name, max_rows)


_BLANK_ALLOWANCE = 16  # blank lines are dropped after parsing; a few may come on top of max_rows


def read_xlsx_bytes(data: bytes, name: str, *, max_rows: int = MAX_TABLE_ROWS) -> pl.DataFrame:
    """The first sheet of an XLSX as text columns, after :func:`inspect_xlsx` bounded the work.

    Raises
    ------
    DataError
        Not a readable workbook, above the row, column or decompressed-size limits.
    """
    inspect_xlsx(data, name, max_rows=max_rows)
    try:
        raw = pl.read_excel(io.BytesIO(data), infer_schema_length=0)
    except Exception as exc:  # noqa: BLE001 - polars/fastexcel raise several types for a bad file
        raise DataError(f"{name}: not a readable XLSX file ({_cut(str(exc), 300)})") from None
    return _finish(raw, name, max_rows)


def inspect_xlsx(data: bytes, name: str, *, max_rows: int = MAX_TABLE_ROWS, max_columns: int = MAX_COLUMNS,
                 max_uncompressed: int = MAX_XLSX_UNCOMPRESSED_BYTES) -> dict:
    """Bound an XLSX before parsing it: row and column counts of the first sheet, decompressed size.

    Parameters
    ----------
    data : bytes
    name : str
    max_rows, max_columns : int
        Most data rows (the header row is allowed on top) and columns of the first sheet.
    max_uncompressed : int
        Most bytes all parts may decompress to. [B]

    Returns
    -------
    dict with ``sheet`` (part name), ``rows`` (rows seen, header included), ``columns``.

    Raises
    ------
    DataError
        Not a zip, no worksheet, a DTD/entity declaration, the sheet's ``<dimension>`` or its rows
        beyond ``max_rows + 1``, columns beyond ``max_columns``, or more than ``max_uncompressed``
        bytes once decompressed. The sheet is read in 1 MB chunks and abandoned at the first excess.
    """
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        raise DataError(f"{name}: not a readable XLSX file ({exc})") from None
    if len(infos) > MAX_XLSX_PARTS:
        raise DataError(f"{name}: {len(infos):,} parts in the workbook; at most {MAX_XLSX_PARTS:,}")
    declared = sum(i.file_size for i in infos)
    if declared > max_uncompressed:
        raise DataError(f"{name}: decompresses to {declared / 1e6:,.0f} MB; at most {max_uncompressed / 1e6:g} MB "
                        f"(at most {max_rows:,} rows are accepted)")
    sheet = _first_sheet(zf, name)
    limit_rows = max_rows + 1  # the header row
    rows = cols = 0
    budget = [max_uncompressed]
    try:
        tail = b""
        with zf.open(sheet) as fh:
            head = True
            for chunk in _chunks(fh, budget, name, max_uncompressed):
                buf = tail + chunk
                if _DTD.search(buf):
                    raise DataError(f"{name}: the worksheet declares a DTD or entity; not accepted")
                if head:
                    rows, cols = _check_dimension(buf, name, limit_rows, max_rows, max_columns)
                    head = False
                cut = buf.rfind(b">") + 1  # scan whole tags only; keep the partial tag for the next chunk
                done, tail = buf[:cut], buf[cut:]
                if len(tail) > _CHUNK:
                    raise DataError(f"{name}: the worksheet holds a tag over 1 MB long; not a workbook this reads")
                for m in _ROW_TAG.finditer(done):
                    n = _ROW_NUM.search(m.group(1))
                    rows = max(rows + 1, int(n.group(1)) if n else 0)
                if rows > limit_rows:
                    raise DataError(f"{name}: more than {max_rows:,} rows (the sheet continues past row "
                                    f"{rows:,}); at most {max_rows:,} rows per file (split the file)")
                for m in _CELL_REF.finditer(done):
                    cols = max(cols, _column_index(m.group(1)))
                if cols > max_columns:
                    raise DataError(f"{name}: {cols:,} columns; at most {max_columns:,}")
        for info in infos:  # the other parts: decompressed size (chunked; CRC checked) and no DTD
            if info.filename == sheet:
                continue
            with zf.open(info) as fh:
                first = True
                for chunk in _chunks(fh, budget, name, max_uncompressed):
                    if first and _DTD.search(chunk[:4096]):
                        raise DataError(f"{name}: part {info.filename} declares a DTD or entity; not accepted")
                    first = False
    except DataError:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, RuntimeError) as exc:
        raise DataError(f"{name}: not a readable XLSX file ({_cut(str(exc), 200)})") from None
    return {"sheet": sheet, "rows": rows, "columns": cols}


def _chunks(fh, budget: list[int], name: str, max_uncompressed: int):
    while True:
        chunk = fh.read(_CHUNK)
        if not chunk:
            return
        budget[0] -= len(chunk)
        if budget[0] < 0:
            raise DataError(f"{name}: decompresses to more than {max_uncompressed / 1e6:g} MB; not accepted")
        yield chunk


def _check_dimension(buf: bytes, name: str, limit_rows: int, max_rows: int, max_columns: int) -> tuple[int, int]:
    """The sheet metadata ``<dimension ref="A1:J10001"/>``: refuse at once when it is beyond the limits.

    Returns (0, 0): the dimension may understate the sheet, so rows and columns are counted as they stream.
    """
    m = _DIMENSION.search(buf[:65536])
    if not m:
        return 0, 0
    last_col = m.group(3) or m.group(1)
    last_row = m.group(4) or m.group(2)
    rows = int(last_row) if last_row else 0
    cols = _column_index(last_col) if last_col else 0
    if rows > limit_rows:
        raise DataError(f"{name}: the sheet's dimension is {rows:,} rows; at most {max_rows:,} rows per file "
                        f"(split the file)")
    if cols > max_columns:
        raise DataError(f"{name}: the sheet's dimension is {cols:,} columns; at most {max_columns:,}")
    return 0, 0


def _column_index(letters: bytes) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ch - 64)
    return n


def _first_sheet(zf: zipfile.ZipFile, name: str) -> str:
    """Part name of the workbook's first sheet (workbook.xml order, resolved through its relationships)."""
    names = set(zf.namelist())
    try:
        wb = _small_part(zf, "xl/workbook.xml")
        rels = _small_part(zf, "xl/_rels/workbook.xml.rels")
    except KeyError:
        wb = rels = b""
    m = re.search(rb"<(?:\w+:)?sheet\b([^>]*)>", wb)
    rid = re.search(rb'\s\w+:id="([^"]+)"', m.group(1)) if m else None
    if rid:
        for rel in re.finditer(rb"<(?:\w+:)?Relationship\b([^>]*)>", rels):
            attrs = rel.group(1)
            i = re.search(rb'\bId="([^"]+)"', attrs)
            t = re.search(rb'\bTarget="([^"]+)"', attrs)
            if i and t and i.group(1) == rid.group(1):
                target = t.group(1).decode("utf-8", "replace")
                part = target.lstrip("/") if target.startswith("/") else str(PurePosixPath("xl") / target)
                if part in names:
                    return part
    sheets = sorted(n for n in names if re.fullmatch(r"xl/worksheets/[^/]+\.xml", n))
    if not sheets:
        raise DataError(f"{name}: not a readable XLSX file (no worksheet)")
    return sheets[0]


def _small_part(zf: zipfile.ZipFile, part: str, limit: int = 4_000_000) -> bytes:
    with zf.open(part) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise DataError(f"{part}: larger than {limit / 1e6:g} MB; not a workbook this reads")
    if _DTD.search(data):
        raise DataError(f"{part} declares a DTD or entity; not accepted")
    return data


def _finish(raw: pl.DataFrame, name: str, max_rows: int) -> pl.DataFrame:
    if raw.width > MAX_COLUMNS:
        raise DataError(f"{name}: {raw.width:,} columns; at most {MAX_COLUMNS:,}")
    raw = raw.with_columns(pl.col(c).cast(pl.String) for c in raw.columns if raw.schema[c] != pl.String)
    raw = drop_blank_rows(raw)
    if raw.height > max_rows:
        raise DataError(f"{name}: more than {max_rows:,} rows; at most {max_rows:,} rows per file (split the file)")
    return raw


def drop_blank_rows(raw: pl.DataFrame) -> pl.DataFrame:
    """Rows whose every cell is empty or blanks removed (a trailing blank line, ``,,,`` lines)."""
    if raw.width == 0 or raw.height == 0:
        return raw
    blank = pl.all_horizontal(
        (pl.col(c).is_null() | (pl.col(c).cast(pl.String).str.strip_chars() == "")) for c in raw.columns)
    return raw.filter(~blank)


def _reason(exc: Exception) -> str:
    from econ.safe_write import describe_os_error
    return describe_os_error(exc) if isinstance(exc, OSError) else str(exc)


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


__all__ = ["MAX_TABLE_ROWS", "MAX_TABLE_BYTES", "MAX_COLUMNS", "MAX_XLSX_UNCOMPRESSED_BYTES", "read_table_bytes",
           "read_file_bytes", "read_table_file", "read_csv_bytes", "read_xlsx_bytes", "inspect_xlsx", "drop_blank_rows", "check_size"]
