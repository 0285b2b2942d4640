"""nnd-suites publish SUITE ... --repo ORG/NAME: export and upload to a Hub dataset repository."""

from __future__ import annotations

import argparse
from pathlib import Path

from nnd_suites.cli.options import add_suites_argument
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say
from nnd_suites.cli.suites import load_suites
from nnd_suites.infra.formatting import plural


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "publish",
        help="publish suites to a Hugging Face Hub dataset repository",
        description="Export the suites (one config each) and upload them in one commit with "
        "huggingface_hub; configs already in the repository are kept and the card "
        "lists them all. The token comes from HF_TOKEN or `hf auth login`.",
    )
    add_suites_argument(parser)
    parser.add_argument(
        "--repo", required=True, metavar="ORG/NAME", help="dataset repository (created if missing)"
    )
    parser.add_argument(
        "--private",
        action="store_true",
        help="create the repository as private (an existing one is unchanged)",
    )
    parser.add_argument("--tag", metavar="vX.Y", help="tag the commit with this version")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="build the folder and list what would be uploaded; no Hub access",
    )
    parser.add_argument(
        "--folder", type=Path, help="staging folder to build (and keep); default: a temporary one"
    )
    parser.add_argument("--message", help="commit message")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: the Hub layer imports datasets and huggingface_hub; `nnd-suites list` must not
    from nnd_suites.hub import publish_suites
    from nnd_suites.hub.remote import check_tag

    if args.tag is not None:  # before the suites are loaded (or built): a dry run too
        check_tag(args.tag)
    suites = load_suites(args.suites, check_card=False)  # re-exported: a new card
    result = publish_suites(
        suites,
        args.repo,
        private=args.private,
        tag=args.tag,
        dry_run=args.dry_run,
        folder=args.folder,
        commit_message=args.message,
    )
    if result.dry_run:
        say(f"dry run: would upload to {result.url} (nothing was sent):")
    else:
        say(f"published to {result.url}" + (f" ({result.commit_url})" if result.commit_url else ""))
    for name in result.files:
        size = (result.folder / name).stat().st_size if result.folder.exists() else None
        say(f"  {name}" + (f" ({plural(size, 'byte')})" if size is not None else ""))
    say(f"configs in the card: {', '.join(result.configs)}")
    if result.dry_run:
        say(f"folder kept for inspection: {result.folder}")
        say("when published, configs already in the repository are kept and listed too")
        if result.tag:
            say(f"would tag the commit {result.tag}")
    elif result.tag:
        say(
            f"tagged {result.tag}: load it with revision={result.tag!r} or "
            f"hub:{result.repo_id}/CONFIG@{result.tag}"
        )
    return 0
