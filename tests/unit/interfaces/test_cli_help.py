"""Every ``provsql-dp`` command prints its ``--help`` (a '%' in a help text once made argparse
raise ValueError for ``shell --help`` and ``serve --help``)."""

import pytest

from provsql_dp.interfaces import cli


@pytest.mark.parametrize("argv", [[], ["demo"], ["shell"], ["serve"]])
def test_help_prints(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main([*argv, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: provsql-dp")
    if argv[:1] in (["shell"], ["serve"]):  # the guard rails' default is shown, once, unexpanded
        assert "(default 50%;" in out
