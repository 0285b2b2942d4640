"""nnd-suites new-adapter NAME --type TYPE: scaffold an adapter's contribution unit."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.builder.adapter_folders import not_loaded_note
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say
from nnd_suites.declarative.notes import check_notes
from nnd_suites.errors import NNDError
from nnd_suites.scaffold.declarative import write_declarative
from nnd_suites.scaffold.writer import ANNOTATION_TYPES, write_adapter

NEXT_STEPS = """\
Next steps (CONTRIBUTING.md walks through each):
  1. adapters/{name}/adapter.py: read your source's own format in `read`, fill in `metadata`.
  2. quality_maps/{name}.yaml: declare the quality rule (labels, tiers, rating rule, hierarchy)
     and replace its description's TODO.
  3. adapters/{name}/fixtures/: replace the stub's sample (sample.jsonl; a numeric stub's
     release/ folder) with a small sample of the real source, derive its pair counts by hand
     and write them into expected_stats.json.
  4. adapters/{name}/README.md: replace every TODO (source, license, citation, rule, pairs).
  5. Run the harness: python -m pytest tests/adapters/test_harness.py -q -k {name}
     then: git add -A && pre-commit run --all-files   (the hooks skip untracked files)
  6. Build the full source: nnd-suites build {name} --source PATH_OR_URL"""


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "new-adapter",
        help="scaffold a new adapter: a class stub, fixture and quality map (--type), or a "
        "source.yaml proposed from your table (--declarative --sample FILE)",
    )
    parser.add_argument("name", help="adapter name: a lower-case identifier, e.g. wmt_mqm")
    parser.add_argument(
        "--declarative",
        action="store_true",
        help="a source.yaml (no Python) for a source that is one table; needs --sample",
    )
    parser.add_argument(
        "--sample", type=Path, help="with --declarative: your file (its header is read)"
    )
    parser.add_argument(
        "--type",
        choices=ANNOTATION_TYPES,
        dest="annotation_type",
        help="annotation type of the source",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=Path("."),
        help="root of the nnd-suites clone (default: the current folder)",
    )
    parser.set_defaults(func=run)


DECLARATIVE_STEPS = """\
Next steps (CONTRIBUTING.md, "Declare a source"):
  1. adapters/{name}/source.yaml: check every proposed column (text, system, ratings or the
     winner and its verdicts, group.key, group.context) and replace every TODO (metadata);
     delete each '# CHECK:' note once decided (the harness names every one left).
  2. quality_maps/{name}.yaml: the rule (the gap that makes an output better, or the verdicts)
     and its description (a TODO).
  3. adapters/{name}/fixtures/: a small sample you may ship (synthetic if the license forbids an
     excerpt) in the file's exact format, and expected_stats.json with the counts it gives
     (nnd-suites build {name} --source adapters/{name}/fixtures/FILE; derive them by hand too).
  4. adapters/{name}/README.md: replace every TODO; then run
     python -m pytest tests/adapters/test_harness.py -q -k {name}"""


def run(args: argparse.Namespace) -> int:
    root = args.root.resolve()
    if args.declarative and args.annotation_type is not None:
        raise NNDError(
            "--type writes a class stub, --declarative a source.yaml (its type proposed from "
            "the sample): give one of the two"
        )
    if args.sample is not None and not args.declarative:
        raise NNDError(
            f"--sample {args.sample} is read with --declarative only: add "
            "--declarative (a source.yaml proposed from it), or drop --sample for a class stub"
        )
    if args.declarative:
        if args.sample is None:
            raise NNDError("new-adapter --declarative needs --sample FILE (your table)")
        written, columns = write_declarative(args.root, args.name, args.sample)
        for path in written:
            say(f"wrote {path.resolve().relative_to(root)}")
        say(f"columns found in {args.sample.name}: {', '.join(columns)}")
        for path in (f"adapters/{args.name}/source.yaml", f"quality_maps/{args.name}.yaml"):
            for number, mark, what in check_notes((root / path).read_text("utf-8")):  # as marked
                say(f"{path}:{number}: {mark} {what}")
        say(DECLARATIVE_STEPS.format(name=args.name))
        _warn_if_not_loaded(root, args.name)
        return 0
    if args.annotation_type is None:
        raise NNDError("new-adapter needs --type TYPE (or --declarative --sample FILE)")
    written = write_adapter(args.root, args.name, args.annotation_type)
    for path in written:
        say(f"wrote {path.resolve().relative_to(root)}")
    say(NEXT_STEPS.format(name=args.name))
    _warn_if_not_loaded(root, args.name)
    return 0


def _warn_if_not_loaded(root: Path, name: str) -> None:
    """Written, but outside the clone this nnd-suites loads: the files may be meant for a
    package of the user's own, so they are kept, and the user is told they are not loaded."""
    note = not_loaded_note(root, name, ADAPTERS.builtin_folders())
    if note:
        say(f"warning: {note}", file=sys.stderr)
