"""nnd-suites transform SUITE --transform NAME[:param=value,...]: write a child suite."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from nnd_suites.cli.dataset_cards import card_of, config_replacing, say_card_of, wrote
from nnd_suites.cli.options import SUITE_HELP, suite_name
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say, say_json
from nnd_suites.cli.suites import load_suite
from nnd_suites.errors import NNDError
from nnd_suites.infra.formatting import plural


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "transform", help="apply a transformation plugin to a suite (child suite, parent ids kept)"
    )
    parser.add_argument("suite", help=SUITE_HELP)
    parser.add_argument(
        "--transform",
        required=True,
        action="append",  # given twice: refused in run(), not the last one kept
        metavar="NAME[:param=value,...]",
        help="transformation and its parameters, e.g. typos:rate=0.02,seed=1 "
        "(see `nnd-suites list`); one: transform the child again to chain another",
    )
    parser.add_argument(
        "--name",
        type=suite_name,
        help="child suite name, as build's --name (default: PARENT.NAME[-params])",
    )
    parser.add_argument("--out", type=Path, help="child suite folder (default: suites/CHILD_NAME)")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (the manifest's transformation record; card: the dataset "
        "card of --out's folder and whether it lists the child, null when there is none; "
        "replaced: what it replaced, as the text says, null when nothing)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: loads every transformation plugin; `nnd-suites list` stays < 1 s
    from nnd_suites.hub.building import claimed_suite_folder
    from nnd_suites.hub.export import former_manifest
    from nnd_suites.infra.output_folder import refuse_replacing_an_input
    from nnd_suites.suite.manifest import check_config_name
    from nnd_suites.transformations.apply import child_suite_name, refused_rewrites, transform_suite
    from nnd_suites.transformations.base import make_transformation

    if len(args.transform) > 1:
        raise NNDError(
            f"transform applies one transformation; --transform was given {len(args.transform)} "
            f"times ({', '.join(args.transform)}): transform the child again to chain another "
            "(nnd-suites transform CHILD_FOLDER --transform ...)"
        )
    (spec,) = args.transform
    parent, transformation = load_suite(args.suite), make_transformation(spec)
    name = args.name or child_suite_name(parent.name, transformation)
    check_config_name(  # as build refuses a --name: before the work
        name,
        lambda problem: (
            f"the child suite's name {name!r} cannot name its folder and Hub config "
            f"({problem}); give it one with --name NEW_NAME"
        ),
    )
    out = args.out or Path("suites") / name
    refuse_replacing_an_input(
        out,
        args.suite,
        f"the parent suite {parent.name!r}",
        f"choose another --out (default: suites/{name})",
    )
    # every check of --out before the work, as build's; in a dataset folder: one of its configs
    with claimed_suite_folder(out, name) as folder:
        child = transform_suite(parent, transformation, name=name)
        before = former_manifest(out)  # a config it replaces is named, as export names it
        folder.add(child, validated=True)  # validated by transform_suite
    info = child.manifest.transformation
    assert info is not None
    refused = refused_rewrites(child)
    if args.json:
        say_json(
            json.dumps(
                {
                    "suite": child.name,
                    "out": str(out),
                    "pairs": len(child),
                    **info.model_dump(),
                    "kept_unchanged": sum(s.count for s in refused),
                    "card": card_of(out, child.name),  # the dataset card that lists it, if any
                    "replaced": config_replacing(out, before, child.manifest),
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    what = f"{child.name}, {plural(len(child), 'test')}, parent {info.parent_suite}"
    wrote(out, what, before, child.manifest)
    say(
        f"  changed {info.changed:,}, identical {info.identical:,}, degenerate {info.degenerate:,}"
        " (both candidates became the same text: excluded from pass rates, counted apart)"
    )
    for skipped in refused:
        say(f"  {skipped.reason}: {skipped.count:,}")
    say_card_of(out, child.name, f"write it with --out {out.parent / child.name}")
    return 0
