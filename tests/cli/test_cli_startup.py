"""CLI start-up (issue 8): `econ --help` imports no command module, no Polars/NumPy/SciPy, and lists exactly
what the full parser lists; a command imports only its own module."""

from __future__ import annotations

import subprocess
import sys

from econ.cli import build_parser


def _help(parser) -> str:
    return parser.format_help()


def test_the_lazy_command_list_equals_the_full_one():
    assert _help(build_parser(["--help"])) == _help(build_parser())


def test_help_imports_nothing_heavy():
    code = ("import sys, contextlib, io\nfrom econ.cli import main\n"
            "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n    main(['--help'])\n"
            "heavy = sorted(m for m in ('polars', 'numpy', 'scipy', 'econ.engine', 'econ.commands.cost') "
            "if m in sys.modules)\nprint(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_a_command_registers_its_own_module_and_stubs_the_rest():
    parser = build_parser(["list", "models"])
    sub = next(a for a in parser._actions if a.dest == "command")
    assert sub.choices["list"].format_help() == next(
        a for a in build_parser()._actions if a.dest == "command").choices["list"].format_help()
    assert "--precision" not in sub.choices["cost"].format_help()  # a stub: name and help only


def test_a_mistyped_command_still_gets_did_you_mean(capsys):
    from econ.cli import main
    try:
        main(["cots"])
    except SystemExit as exc:
        assert exc.code == 2
    assert "did you mean 'cost'" in capsys.readouterr().err


def test_a_one_row_cost_imports_no_scipy_and_no_other_command(tmp_path):
    """Issue 20.6: the p99 TTFT of `econ cost` needs no SciPy (Erlang C by recursion), and only the running
    subcommand's module is imported."""
    code = ("import sys, contextlib, io\nfrom econ.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['cost', '--model', 'llama-3.3-70b', '--hardware', 'h100-sxm'])\n"
            "print(','.join(sorted(m for m in sys.modules if m == 'scipy' or m.startswith('econ.commands.'))))")
    env = {**__import__("os").environ, "ECON_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "econ.commands._common,econ.commands.cost"
