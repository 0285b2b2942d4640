"""nnd-suites export SUITE ... --to FOLDER: a Hub-ready dataset folder, one config per suite."""

from __future__ import annotations

import argparse
from pathlib import Path

from nnd_suites.cli.dataset_cards import replacing, say_how_to_load
from nnd_suites.cli.options import add_suites_argument
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say
from nnd_suites.cli.suites import load_suites
from nnd_suites.infra.formatting import plural


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "export",
        help="write suites as a Hugging Face dataset folder (parquet + card)",
        description="Write each suite as a config (split `test`) of a dataset folder that "
        "`datasets.load_dataset(FOLDER, CONFIG)` reads and `nnd-suites publish` "
        "uploads. Configs already in FOLDER are kept; the card is regenerated.",
    )
    add_suites_argument(parser)
    parser.add_argument(
        "--to",
        type=Path,
        required=True,
        metavar="FOLDER",
        help="dataset folder to write (created if missing)",
    )
    parser.add_argument(
        "--repo",
        metavar="ORG/NAME",
        help="Hub repository the card's usage examples name (default ORG/NAME)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: the Hub layer imports datasets and huggingface_hub; `nnd-suites list` must not
    from nnd_suites.hub import export_suites

    result = export_suites(load_suites(args.suites, check_card=False), args.to, args.repo)
    for config in result.configs:
        state = replacing(result.replaced.get(config.name), config.manifest) or (
            "written" if config.name in result.written else "kept"
        )
        say(f"  {config.name}: {plural(config.num_examples, 'test')} ({state})")
    say(
        f"wrote {result.folder} ({plural(len(result.configs), 'config')}; "
        f"card {result.folder}/README.md)"
    )
    say_how_to_load(result.folder, result.configs[0].name)
    return 0
