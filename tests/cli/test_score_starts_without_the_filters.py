"""``nllbench score`` starts without loading the reference filters, and every parser is as before.

The filter command's options come from the filters' settings classes; its
arguments are added when its parser is first used, and
:mod:`nllbench.filters` exports its names on first use, so building the
command line (and scoring) loads no filter module. Checked in a fresh
interpreter (``sys.modules``); the filter parser, once used, holds the
options it always held.
"""

from __future__ import annotations

from support.fresh_imports import modules_after

from nllbench.cli import build_parser
from nllbench.cli.common import DeferredParser

FILTER_MODULES = {
    "nllbench.filters.phd",
    "nllbench.filters.pmbm",
    "nllbench.filters.tpmb",
    "nllbench.filters.tpmbm",
    "nllbench.filters.runner",
    "nllbench.settings",
}


def test_parsing_a_score_command_loads_no_filter_module():
    loaded = modules_after(
        "from nllbench.cli import parse\n"
        "parse(['score', '--tracks-dir', 'r', '--scenario-dir', 'g', '--output-dir', 'o'])\n"
        "import nllbench.measures.run.evaluate, nllbench.trackers.score_runs"
    )
    assert "nllbench.filters.estimates" in loaded  # what the evaluation reads
    assert not loaded & FILTER_MODULES


def test_the_filter_parser_once_used_holds_its_options_and_imports_the_filters():
    loaded = modules_after(
        "from nllbench.cli import build_parser\n"
        "import argparse\n"
        "p = build_parser()\n"
        "sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))\n"
        "assert '--phd-cap' in sub.choices['filter'].format_help()"
    )
    assert {"nllbench.filters.phd", "nllbench.filters.pmbm", "nllbench.settings"} <= loaded


def test_a_deferred_parser_adds_its_arguments_on_any_read_of_its_actions():
    import argparse

    from nllbench.cli.common import add_deferred_parser

    calls = []

    def add(parser):
        calls.append(parser)
        parser.add_argument("--x", type=int, default=3)

    top = argparse.ArgumentParser(prog="t")
    sub = top.add_subparsers(dest="command")
    child = add_deferred_parser(sub, "c", add, help="a command")
    assert isinstance(child, DeferredParser) and child.deferred and not calls
    assert sub._parser_class is argparse.ArgumentParser  # restored for the next commands
    assert top.parse_args(["c", "--x", "5"]).x == 5
    assert calls == [child] and not child.deferred
    assert [a.dest for a in child._actions] == ["help", "x"]  # added once


def test_every_command_parser_lists_the_same_options_after_a_walk():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    flt = sub.choices["filter"]
    assert isinstance(flt, DeferredParser) and flt.deferred
    dests = [a.dest for a in flt._actions]  # the walk adds them
    assert not flt.deferred
    assert dests[:3] == ["help", "scenario_file", "filter"] and dests[-1] == "quiet"
    assert "phd_cap" in dests and dests.count("help") == 1


def test_filter_settings_object_gives_option_defaults_through_the_deferred_parser():
    from nllbench.cli import parse

    _, args = parse(["filter", "s.nc", "--filter", "phd", "--output", "p.nc", "--settings", '{"phd_cap": 7}'])
    assert args.phd_cap == 7 and args.filter == "phd"
