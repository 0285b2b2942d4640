"""nnd-suites validate SUITE: check a suite (folder, exported config, Hub suite) against its
schema, its content hash and its invariants; an export folder, each config and the card's
metadata that `datasets.load_dataset` follows (:mod:`nnd_suites.hub.folder_check`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from nnd_suites.cli.options import SUITE_HELP
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say, say_cleaned, say_not_publishable
from nnd_suites.infra.atomic import recover_dead_writers
from nnd_suites.infra.formatting import plural

if TYPE_CHECKING:
    from nnd_suites.suite import Suite


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="validate a suite (folder or any suite name) or an export folder",
        description="Validate a suite: its schema, content hash and invariants (an edit of any "
        "manifest field, of the pairs or of the candidates is named). Given a folder written "
        "by `export` or `build --all`, validate each config and the card's data_files, "
        "Features and row counts as datasets.load_dataset reads them.",
    )
    parser.add_argument("suite", help=f"{SUITE_HELP}; or an export folder")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: nnd_suites.suite imports pyarrow and numpy, which --help and list do not need
    from nnd_suites.resolve import load_suite, refuse_ambiguous
    from nnd_suites.suite import Suite, has_manifest

    # a folder is read as one (a damaged or foreign folder is named as such); any other
    # spec goes through the resolver (hub:ORG/NAME/CONFIG, a built-in name); a bare built-in
    # name that is also a folder here is refused as the resolver refuses it
    refuse_ambiguous(args.suite)
    path = Path(args.suite)
    if not path.is_dir():
        _say_valid(args.suite, load_suite(args.suite))
        return 0
    if not has_manifest(path) and _is_export_folder(path):
        return _validate_export_folder(path)
    suite = Suite.load(path)
    in_card = False
    if (path.parent / "README.md").is_file():
        # lazy: the Hub layer imports datasets; a suite folder without a card beside it needs none
        from nnd_suites.hub.folder_check import check_config_in_card

        in_card = check_config_in_card(path)
    _say_valid(args.suite, suite)
    if in_card:
        say(f"  the card of {path.parent} reads config {path.name!r} from these files")
    return 0


def _is_export_folder(folder: Path) -> bool:
    """A folder holding nnd-suites' dataset card, or suite configs (a card gone missing)."""
    # lazy: the Hub layer imports datasets and huggingface_hub, for a folder only
    from nnd_suites.hub.export import holds_nnd_card
    from nnd_suites.hub.layout import exported_configs

    return holds_nnd_card(folder) or bool(exported_configs(folder))


def _validate_export_folder(folder: Path) -> int:
    """Every config of an export folder and its card, as `datasets.load_dataset` reads them."""
    from nnd_suites.hub.folder_check import check_export_folder  # lazy: as above

    # a killed export's temporary copy and lock would stay until that config is written again
    say_cleaned(folder, recover_dead_writers(folder))
    checked = check_export_folder(folder)
    for config in checked.configs:
        say(
            f"  {config.name}: valid suite, {plural(config.num_examples, 'pair')}, content hash "
            f"{config.manifest.content_hash[:12]}"
        )
    for name, suite_name in checked.left_out.items():
        say(f"  {name}: holds suite {suite_name!r}, left out of the card (not a config)")
    say(
        f"{folder}: valid export folder, {plural(len(checked.configs), 'config')}; its card "
        f"({folder / 'README.md'}) reads each one from its own files"
    )
    return 0


def _say_valid(spec: str, suite: Suite) -> None:
    say(
        f"{spec}: valid suite {suite.name!r}, {plural(len(suite), 'pair')}, "
        f"content hash {suite.manifest.content_hash[:12]}"
    )
    say_not_publishable(suite.manifest)  # valid, but not yet to be published
