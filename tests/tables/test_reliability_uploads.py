"""Bounded uploads and numbers (issue 12, findings 6 and 7): XLSX decompression bombs are refused from the sheet
metadata or by streaming rows, before any spreadsheet parser runs and with little memory; CSV and TOML have the
same kind of limits (size, rows, nesting depth); integer flags and scenario fields cannot overflow.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from econ.cli import main
from econ.errors import DataError, InvalidInputError
from econ.tables.quote_files import read_quotes
from econ.io.scenario import MAX_SCENARIO_BYTES, Scenario, from_toml, load_toml_file
from econ.tables.uploads import MAX_TABLE_ROWS, inspect_xlsx, read_table_bytes

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
HEADER = ["provider", "model", "usd_per_m_input_tokens", "usd_per_m_output_tokens"]

_CT = (b'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
       b'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships'
       b'+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" '
       b'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override '
       b'PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.'
       b'spreadsheetml.worksheet+xml"/></Types>')
_RELS = (b'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
         b'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
         b'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>')
_WB = (b'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/'
       b'main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet '
       b'name="Quotes" sheetId="1" r:id="rId1"/></sheets></workbook>')
_WB_RELS = (b'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            b'2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            b'relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>')


def _cell(ref: str, text: str) -> bytes:
    return f'<c r="{ref}" t="inlineStr"><is><t>{text}</t></is></c>'.encode()


def xlsx(rows: int, *, dimension: str | None = None, numbered: bool = False, extra_parts=None,
         head: bytes = b"", sheet_rows=None, row: bytes | None = None, level: int = 1) -> bytes:
    """A minimal XLSX whose first sheet holds a header and ``rows`` identical data rows, written in
    1 MB blocks so a 10 M-row sheet (a few hundred MB of XML) compresses to well under 1 MB."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as zf:
        zf.writestr("[Content_Types].xml", _CT)
        zf.writestr("_rels/.rels", _RELS)
        zf.writestr("xl/workbook.xml", _WB)
        zf.writestr("xl/_rels/workbook.xml.rels", _WB_RELS)
        for name, data in (extra_parts or {}).items():
            zf.writestr(name, data)
        with zf.open("xl/worksheets/sheet1.xml", "w") as fh:
            fh.write(head + b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats'
                     b'.org/spreadsheetml/2006/main">')
            if dimension:
                fh.write(f'<dimension ref="{dimension}"/>'.encode())
            fh.write(b"<sheetData>")
            fh.write(b'<row r="1">' + b"".join(_cell(f"{c}1", h) for c, h in zip("ABCD", HEADER)) + b"</row>")
            if sheet_rows is not None:
                fh.write(sheet_rows)
            else:
                row = row or b"<row>" + b"".join(f'<c t="inlineStr"><is><t>{v}</t></is></c>'.encode() for v in
                                          ["acme", "llama-3.1-8b", "0.1", "0.2"]) + b"</row>"
                if numbered:
                    for i in range(2, rows + 2):
                        fh.write(row.replace(b"<row>", f'<row r="{i}">'.encode()))
                else:
                    block = row * max(1, (1 << 20) // len(row))
                    per = (1 << 20) // len(row)
                    done = 0
                    while rows - done >= per:
                        fh.write(block)
                        done += per
                    fh.write(row * (rows - done))
            fh.write(b"</sheetData></worksheet>")
    return buf.getvalue()


@pytest.fixture(scope="module")
def bomb_path(tmp_path_factory):
    """The issue's decompression bomb: 10 M rows in a file far under the 20 MB upload limit."""
    p = tmp_path_factory.mktemp("bomb") / "bomb.xlsx"
    p.write_bytes(xlsx(10_000_000, row=b"<row><c><v>1</v></c></row>", level=9))
    return p


def test_the_bomb_is_small_on_disk(bomb_path):
    assert bomb_path.stat().st_size < 2_000_000  # the was 6.6 MB; the upload limit is 20 MB


_READ_IN_CHILD = """
import json, resource, sys
from econ.tables.catalog import load_catalog
from econ.errors import DataError, InvalidInputError
from econ.tables.quote_files import read_quotes
cat = load_catalog()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    read_quotes(sys.argv[1], cat)
    msg = "accepted"
except DataError as exc:
    msg = str(exc)
print(json.dumps({"message": msg, "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "before_kib": before}))
"""


def test_xlsx_bomb_is_refused_without_parsing_the_rest(bomb_path):
    """Finding 6: the 10 M-row XLSX was parsed whole (3.7 GB) before the row limit; now refused within a few MB."""
    r = subprocess.run([sys.executable, "-c", _READ_IN_CHILD, str(bomb_path)], capture_output=True, text=True,
                       env=ENV, cwd=str(ROOT), check=True)
    res = json.loads(r.stdout)
    assert re.search(r"bomb\.xlsx: decompresses to 260 MB; at most 200 MB", res["message"]), res
    growth_mib = (res["peak_kib"] - res["before_kib"]) / 1024
    assert growth_mib < 100, growth_mib  # the 10 M rows would need gigabytes


def test_a_bomb_under_the_size_cap_is_stopped_by_streaming_rows():
    data = xlsx(2_000_000, row=b"<row><c><v>1</v></c></row>", level=9)  # 54 MB of XML in a small file
    with pytest.raises(DataError, match=r"b\.xlsx: more than 10,000 rows \(the sheet continues past row [\d,]+\)"):
        read_table_bytes(data, "b.xlsx")


@pytest.mark.parametrize("make, pattern", [
    pytest.param(lambda: xlsx(3, dimension="A1:D10000000"), r"the sheet's dimension is 10,000,000 rows",
                 id="dimension-says-10M"),
    pytest.param(lambda: xlsx(MAX_TABLE_ROWS + 5, dimension="A1:D3", numbered=True), r"more than 10,000 rows",
                 id="dimension-lies"),
    pytest.param(lambda: xlsx(0, sheet_rows=b'<row r="10000000">' + _cell("A10000000", "x") + b"</row>"),
                 r"continues past row 10,000,000", id="one-row-at-10M"),
    pytest.param(lambda: xlsx(0, sheet_rows=b'<row r="2">' + _cell("XFD2", "x") + b"</row>"),
                 r"16,384 columns; at most 500", id="16k-columns"),
    pytest.param(lambda: xlsx(1, dimension="A1:XFD2"), r"dimension is 16,384 columns", id="dimension-wide"),
    pytest.param(lambda: xlsx(1, head=b'<!DOCTYPE x [<!ENTITY a "aaaa">]>'), r"declares a DTD or entity",
                 id="entity"),
    pytest.param(lambda: xlsx(1, extra_parts={"xl/sharedStrings.xml": b" " * 210_000_000}),
                 r"decompresses to 210 MB; at most 200 MB", id="shared-strings-bomb"),
    pytest.param(lambda: b"PK\x03\x04 not really a zip", r"not a readable XLSX file", id="not-a-zip"),
])
def test_xlsx_limits_are_checked_before_parsing(make, pattern):
    with pytest.raises(DataError, match=pattern):
        read_table_bytes(make(), "up.xlsx", max_rows=MAX_TABLE_ROWS)


def test_a_real_workbook_within_the_limits_reads(catalog):
    import xlsxwriter
    buf = io.BytesIO()
    wb = xlsxwriter.Workbook(buf)
    ws = wb.add_worksheet("Quotes")
    ws.write_row(0, 0, HEADER)
    for i in range(3):
        ws.write_row(i + 1, 0, ["acme", "llama-3.1-8b", 0.1 + i, 0.2 + i])
    wb.close()
    info = inspect_xlsx(buf.getvalue(), "mine.xlsx")
    assert info["sheet"] == "xl/worksheets/sheet1.xml" and info["rows"] == 4 and info["columns"] == 4
    q = read_quotes(buf.getvalue(), catalog, name="mine.xlsx")
    assert q.height == 3 and q["usd_per_m_output_tokens"].to_list() == [0.2, 1.2, 2.2]


def test_exactly_the_row_limit_is_accepted():
    raw = read_table_bytes(xlsx(MAX_TABLE_ROWS, numbered=True), "full.xlsx")
    assert raw.height == MAX_TABLE_ROWS


@pytest.fixture(scope="module")
def catalog():
    from econ.tables.catalog import load_catalog
    return load_catalog()


# ----------------------------------------------------------------------------------------- CSV

def _csv(rows: int, tail: str = "") -> bytes:
    return (",".join(HEADER) + "\n" + "acme,llama-3.1-8b,0.1,0.2\n" * rows + tail).encode()


def test_csv_row_limit_stops_parsing():
    with pytest.raises(DataError, match=r"more than 10,000 rows"):
        read_table_bytes(_csv(MAX_TABLE_ROWS + 1), "q.csv")
    with pytest.raises(DataError, match=r"more than 10,000 rows"):
        read_table_bytes(_csv(MAX_TABLE_ROWS, tail="\n" * 50 + "acme,x,1,2\n"), "q.csv")  # rows after blank lines
    assert read_table_bytes(_csv(MAX_TABLE_ROWS, tail="\n\n"), "q.csv").height == MAX_TABLE_ROWS


def test_csv_too_many_columns():
    with pytest.raises(DataError, match=r"1,000 columns; at most 500"):
        read_table_bytes((",".join(f"c{i}" for i in range(1000)) + "\n").encode(), "wide.csv")


def test_quote_checker_page_reports_the_bomb(bomb_path, catalog):
    from dashboards.pages.quote_checker import quotes_to_check
    q, err = quotes_to_check(catalog, include_catalog=True, upload=bomb_path.read_bytes(), upload_name="bomb.xlsx")
    assert err and "bomb.xlsx: decompresses to 260 MB" in err
    assert q is not None and q.height > 0  # the catalog's quotes are still checked


def test_assumptions_upload_is_bounded_too():
    from dashboards.pages.assumptions import read_upload
    with pytest.raises(DataError, match=r"uploaded accelerators\.csv: more than 10,000 rows"):
        read_upload(b"id\n" + b"x\n" * (MAX_TABLE_ROWS + 20), "accelerators")
    with pytest.raises(DataError, match=r"an XLSX workbook; this table is read from CSV only"):
        read_upload(xlsx(1), "accelerators")


# ----------------------------------------------------------------------------------------- TOML

DEEP = {
    "arrays": "model = " + "[" * 5000 + "]" * 5000,
    "inline-tables": "model = " + "{a = " * 5000 + "1" + "}" * 5000,
    "dotted-keys": "model" + ".a" * 5000 + " = 1",
    "tables": "[" + ".".join(["a"] * 5000) + "]\nx = 1",
}


@pytest.mark.parametrize("text", DEEP.values(), ids=DEEP.keys())
def test_toml_nested_5000_deep_is_a_warning_not_a_recursion_error(text):
    sc, warnings = from_toml(text)
    assert sc == Scenario()
    assert len(warnings) == 1 and re.search(r"nests arrays/tables \d+ deep; at most 16|unknown scenario field 'a'",
                                            warnings[0]), warnings


@pytest.mark.parametrize("text, field, pattern", [
    ("batch_size = " + "9" * 400, "batch_size", r"batch_size=a 400-digit integer is outside \[1, 1048576\]"),
    ("batch_size = -" + "9" * 400, "batch_size", r"batch_size=a 400-digit integer is outside"),
    ('batch_size = "' + "9" * 400 + '"', "batch_size", r"batch_size=9{40,}\.\.\. \(400 characters\) is outside"),
    ("input_len = 1e400", "input_len", r"input_len=inf is outside"),
    ("pue = nan", "pue", r"pue=nan is outside"),
    ("num_gpus = " + "1" * 4000, "num_gpus", r"num_gpus=a 4000-digit integer is outside"),
    ("num_gpus = " + "1" * 5000, "num_gpus", r"holds a value TOML cannot read \(Exceeds the limit \(4300 digits\)"),
    ('model = "' + "x" * 100_000 + '"', "model", r"unknown model id 'x{40,}\.\.\.' \(100,000 characters\)"),
    ("compare_hardware = [[1], [2]]", "compare_hardware", r"must be a list of ids \(text\), not <list of 2"),
])
def test_huge_or_odd_scenario_values_warn_with_a_bounded_message(catalog, text, field, pattern):
    sc, warnings = from_toml(text, catalog)
    assert getattr(sc, field) == getattr(Scenario(), field) and sc == Scenario()
    assert len(warnings) == 1 and re.search(pattern, warnings[0]), warnings
    assert len(warnings[0]) < 400


def test_oversized_scenario_file(tmp_path, capsys):
    p = tmp_path / "big.toml"
    p.write_text("# pad\n" * (MAX_SCENARIO_BYTES // 6 + 10))
    sc, warnings = from_toml(p.read_bytes())
    assert sc == Scenario() and "at most 1,000,000 are read" in warnings[0]
    with pytest.raises(InvalidInputError, match=r"larger than 1,000,000 bytes"):
        load_toml_file(p)
    assert main(["cost", "--scenario", str(p)]) == 2
    err = capsys.readouterr().err
    assert "larger than 1,000,000 bytes" in err and "Traceback" not in err


def test_cli_scenario_with_a_400_digit_batch_is_refused_with_a_bounded_message(tmp_path, capsys):
    p = tmp_path / "s.toml"
    p.write_text('model = "llama-3.1-8b"\nhardware = "h100-sxm"\nbatch_size = ' + "9" * 400 + "\n")
    assert main(["cost", "--scenario", str(p)]) == 2  # a scenario field that cannot be used is refused (issue 21)
    out, err = capsys.readouterr()
    assert "batch_size=a 400-digit integer is outside" in err and "Traceback" not in err and len(err) < 400


def test_cli_scenario_nested_5000_deep(tmp_path, capsys):
    p = tmp_path / "deep.toml"
    p.write_text('model = "llama-3.1-8b"\nhardware = "h100-sxm"\nx = ' + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["cost", "--scenario", str(p), "--model", "llama-3.1-8b", "--hardware", "h100-sxm"]) == 2
    assert "nests arrays/tables 5000 deep" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------- integer flags

BIG = str(9 * 10**400)


@pytest.mark.parametrize("argv, pattern", [
    (["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--gpus", BIG], r"--gpus=a 401-digit integer"),
    (["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--context", BIG], r"--context=a 401-digit"),
    (["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--output-len", BIG], r"--output-len=a 401-dig"),
    (["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--batch", BIG], r"--batch=a 401-digit"),
    (["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--batch", f"1,{BIG},8"], r"--batch=a 401-digit"),
    (["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--pue", "1e400"], r"--pue=inf is outside"),
    (["quotes", "check", "--output-len", BIG], r"--output-len=a 401-digit integer is outside"),
    (["export", "cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--tp", BIG, "-o", "x.csv"],
     r"--tp=a 401-digit integer"),
])
def test_integer_flags_above_1e308_are_range_errors(argv, pattern, capsys, tmp_path, monkeypatch):
    """Finding 7: an integer flag above ~1e308 raised OverflowError in check_range."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert re.search(pattern, err) and "Traceback" not in err and len(err) < 300


def test_every_cli_path_argument_survives_a_300_character_name(tmp_path, capsys):
    long = str(tmp_path / ("n" * 300 + ".csv"))
    for argv in (["quotes", "check", "--file", long], ["list", "models", "--data-dir", long],
                 ["cost", "--scenario", long], ["export", "cost", "--model", "llama-3.1-8b", "--hardware",
                                                "h100-sxm", "-o", long]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


# ----------------------------------------------------------------------------------------- every numeric flag

BASE = {
    "cost": ["--model", "llama-3.1-8b", "--hardware", "h100-sxm"],
    "export cost": ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "-o", "out.csv"],
    "cluster": ["--hardware", "h100-sxm"],
    "fleet size": ["--hardware", "h100-sxm", "--power-mw", "10"],
    "fleet train": ["--hardware", "h100-sxm", "--gpus", "1024", "--model", "llama-3.1-8b"],
    "optimize": ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--max-gpus", "8"],
    "frontier": ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--max-gpus", "8"],
    "quotes check": ["--model", "llama-3.1-8b"],
    "list": ["models"],
}


def _numeric_flags():
    import argparse

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import fuzz_cli
    for path, parser in fuzz_cli.walk():
        cmd = " ".join(path)
        base = BASE.get(cmd) or (["--hardware", "h100-sxm", "--gpus", "1024"] if path[0] == "fleet" else [])
        for a in parser._actions:
            if isinstance(a, argparse._HelpAction) or a.type not in (int, float) or not a.option_strings:
                continue
            for v in ([BIG, "-" + BIG] if a.type is int else ["1e400", "-1e400", "nan"]):
                yield pytest.param([*path, *base, f"{a.option_strings[0]}={v}"], id=f"{cmd}{a.option_strings[0]}={v[:6]}")


@pytest.mark.parametrize("argv", list(_numeric_flags()))
def test_every_numeric_flag_takes_a_huge_or_non_finite_value_without_a_traceback(argv, capsys, tmp_path,
                                                                                  monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: not a number of that type
        code = exc.code
    out, err = capsys.readouterr()
    assert code in (0, 2) and "Traceback" not in out + err, (code, err[-500:])
    if code == 2 and "usage:" not in err:
        assert err.startswith("econ") and len(err) < 2000, err
