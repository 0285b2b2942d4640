"""nnd-suites build ADAPTER | --all | --catalogue: build suites from annotation sources."""

from __future__ import annotations

import argparse
from pathlib import Path

from nnd_suites.builder.budget import DEFAULT_MAX_PAIRS, DEFAULT_MAX_PAIRS_PER_GROUP
from nnd_suites.cli.commands.stats import print_stats
from nnd_suites.cli.dataset_cards import formers, say_card, say_card_of, wrote
from nnd_suites.cli.options import suite_name
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say, say_not_publishable
from nnd_suites.errors import NNDError
from nnd_suites.infra.formatting import plural
from nnd_suites.infra.key_values import parse_key_values


def parse_options(items: list[str]) -> dict[str, str]:
    return parse_key_values(items, "--option", "--option KEY=VALUE, once per key")


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser("build", help="build a suite from an annotation source")
    parser.add_argument("adapter", nargs="?", help="adapter name (see `nnd-suites list`)")
    parser.add_argument(
        "--all",
        action="store_true",
        help="build each adapter that ships its source, once with its default options, as a "
        "suite named after the adapter; a catalogue suite of other options (gpt3_summ_bbc) or "
        "of a downloaded source is built by --catalogue",
    )
    parser.add_argument(
        "--catalogue",
        action="store_true",
        help="build every catalogue suite whose source is shipped or in --source-dir, checking "
        "its declared figures (see `nnd-suites catalogue`)",
    )
    parser.add_argument(
        "--source-dir", type=Path, help="with --catalogue: a folder of downloaded sources"
    )
    parser.add_argument("--source", help="path or URL of the source (default: the shipped file)")
    parser.add_argument(
        "--out", type=Path, help="suite folder (default: suites/NAME; with --all: parent folder)"
    )
    parser.add_argument(
        "--source-sha256",
        metavar="HEX",
        help="refuse a source file (or download) whose sha256 differs from HEX",
    )
    parser.add_argument(
        "--name",
        type=suite_name,
        help="suite name: letters, digits, '_', '.' and '-', starting with a letter or digit "
        "(default: the adapter name)",
    )
    parser.add_argument("--quality-map", help="override the adapter's quality map (name or file)")
    parser.add_argument(
        "--skip-malformed",
        action="store_true",
        help="record malformed rows (with line numbers) instead of stopping",
    )
    for flag, default, what in (
        ("--max-pairs-per-group", DEFAULT_MAX_PAIRS_PER_GROUP, "one group"),
        ("--max-pairs", DEFAULT_MAX_PAIRS, "the suite"),
    ):  # refused before the pairs are built: a small source can ask for billions of pairs
        parser.add_argument(
            flag,
            type=int,
            default=default,
            metavar="N",
            help=f"most pairs {what} may give (default {default:,})",
        )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="adapter option (repeatable)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if sum([args.all, args.catalogue, bool(args.adapter)]) != 1:
        raise NNDError("name one ADAPTER, or pass --all or --catalogue")
    if args.source_dir is not None and not args.catalogue:
        raise NNDError("--source-dir goes with --catalogue; give one build's source with --source")
    if args.all or args.catalogue:
        single = {
            "--source": args.source,
            "--source-sha256": args.source_sha256,
            "--name": args.name,
            "--quality-map": args.quality_map,
            "--option": args.option,
        }
        budget = {"max_pairs_per_group": args.max_pairs_per_group, "max_pairs": args.max_pairs}
        if args.catalogue:  # each suite is built as declared: built otherwise, figures would fail
            single |= {
                "--skip-malformed": args.skip_malformed,
                "--max-pairs-per-group": args.max_pairs_per_group != DEFAULT_MAX_PAIRS_PER_GROUP,
                "--max-pairs": args.max_pairs != DEFAULT_MAX_PAIRS,
            }
        given = [flag for flag, value in single.items() if value]
        if given:  # each names one source or suite: applied to all, it would be wrong or ignored
            flag = "--all" if args.all else "--catalogue"
            how = "source as it is" if args.all else "suite as catalogue.yaml declares it"
            raise NNDError(
                f"{flag} builds each {how}; {', '.join(given)} "
                "belong(s) to one build: run `nnd-suites build ADAPTER ...` for that one"
            )
        if args.catalogue:
            return build_catalogue_folder(args.out or Path("suites"), args.source_dir)
        return build_all(args.out or Path("suites"), skip_malformed=args.skip_malformed, **budget)
    out = args.out or Path("suites") / (args.adapter if args.name is None else args.name)
    # the Hub layer (datasets) loads only for a build: not at every CLI start
    from nnd_suites.hub.building import build_suite
    from nnd_suites.hub.export import former_manifest

    before = former_manifest(out)  # a config it replaces is named, as export names it
    suite = build_suite(
        args.adapter,
        args.source,
        out,
        name=args.name,
        quality_map=args.quality_map,
        skip_malformed=args.skip_malformed,
        source_sha256=args.source_sha256,
        max_pairs_per_group=args.max_pairs_per_group,
        max_pairs=args.max_pairs,
        **parse_options(args.option),
    )
    wrote(out, plural(len(suite), "pair"), before, suite.manifest)
    print_stats(suite.stats())
    say_not_publishable(suite.manifest)
    say_card_of(out, suite.name)
    return 0


def build_all(parent: Path, **options: object) -> int:
    """`build --all`, each adapter built with ``options`` (skip_malformed, the pair limits)."""
    # the Hub layer (datasets) loads only for a build: not at every CLI start
    from nnd_suites.hub.building import build_shipped_suites

    before = formers(parent)  # each config replaced is named, as export names it
    for name, suite in build_shipped_suites(parent, **options):
        if suite is None:
            say(f"{name}: no shipped source; build it with --source PATH_OR_URL\n")
            continue
        wrote(parent / name, plural(len(suite), "pair"), before.get(name), suite.manifest)
        print_stats(suite.stats())
        say()
    say_card(parent)
    return 0


def build_catalogue_folder(parent: Path, source_dir: Path | None) -> int:
    # the Hub layer (datasets) loads only for a build: not at every CLI start
    from nnd_suites.catalogue.building import build_catalogue
    from nnd_suites.catalogue.entries import load_catalogue

    built, before = 0, formers(parent)  # each config replaced is named, as export names it
    for outcome in build_catalogue(load_catalogue(), parent, source_dir):
        if outcome.suite is None:
            say(f"{outcome.entry.name}: skipped, {outcome.skipped}\n")
            continue
        built += 1
        name, suite = outcome.entry.name, outcome.suite
        wrote(parent / name, plural(len(suite), "pair"), before.get(name), suite.manifest)
        figures = outcome.entry.figures  # what was checked, then the published figure, in words
        held = [plural(figures.tests, "test")] + [f"tests per {f}" for f in figures.breakdowns]
        held[1:1] = [plural(figures.groups, "group")] if figures.groups else []
        say(f"  declared figures hold ({', '.join(held)}); published: {figures.published}")
        print_stats(outcome.suite.stats())
        say()
    if not built:
        raise NNDError("no catalogue suite was built: none ships, and none is in --source-dir")
    say_card(parent)
    return 0
