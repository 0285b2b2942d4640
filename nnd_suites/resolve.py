"""Resolve what a user calls a suite, in one place: the evaluator, every CLI command and
``nnd_suites.load_suite`` come through :func:`load_suite`.

- a suite folder: what ``nnd-suites build`` writes, which is also a config folder of an export
  (``FOLDER/CONFIG``), read by the one reader :meth:`Suite.load` (older layouts included);
- a built-in adapter name, built on the fly from its shipped source (``nnd_suites.builder.suites``),
or
  ``builtin:NAME``; a bare name that is also a folder in the current directory is refused as
  ambiguous (``./NAME`` names the folder, ``builtin:NAME`` the built-in suite), and a spec with a
  path separator is always a path;
- a config of a folder written by ``nnd-suites export``: ``load_suite(FOLDER, CONFIG)``;
- a config of a Hub dataset repository: ``hub:ORG/NAME/CONFIG[@REVISION]``, or
  ``load_suite("ORG/NAME", CONFIG, revision=...)`` (``nnd_suites.hub``).

This module sits above the builders and the Hub, which never resolve names themselves; it
imports them where they are used, so that importing it stays light (no datasets, no Hub client).
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterable
from pathlib import Path

from nnd_suites.builder.adapter import ADAPTERS, shipping_their_source
from nnd_suites.errors import AmbiguousSuiteError, ArgumentError, NNDError, UnknownItemError
from nnd_suites.infra.formatting import plural
from nnd_suites.suite import MANIFEST_FILE, Suite, has_manifest

SPEC_FORMS = [
    "a folder written by `nnd-suites build` (or FOLDER/CONFIG of one written by `nnd-suites "
    "export`)",
    "hub:ORG/NAME/CONFIG[@REVISION] for a suite published on the Hugging Face Hub",
]
HUB_PREFIX = "hub:"  # nnd_suites.hub.HUB_PREFIX, not imported: it would import the Hub client
#: names the built-in suite whatever the current directory holds: ``builtin:quiz_design``
BUILTIN_PREFIX = "builtin:"


def load_suite(
    spec: str | Path,
    name: str | None = None,
    revision: str | None = None,
    *,
    check_card: bool = True,
) -> Suite:
    """Load a suite (validated) from any of the forms above.

    With ``name``, ``spec`` is an export folder or a Hub repository id and ``name`` the config
    (the suite's name); ``revision`` (tag, branch or commit) applies to Hub repositories only.
    A bare name (``str``) that is both a built-in suite and a folder in the current directory is
    an AmbiguousSuiteError; a ``Path`` object holding a suite is read as that folder.
    A suite folder that is a config of a dataset folder whose card nnd-suites wrote must be
    what the card reads under its name (``datasets.load_dataset`` follows the card), unless
    ``check_card`` is False: a writer of the card (``export``, ``publish``) reads the files.
    """
    if not isinstance(spec, (str, Path)):
        raise ArgumentError(f"load_suite({reprlib.repr(spec)}): not a suite spec; " + _FORMS)
    text = str(spec)
    if isinstance(spec, str) and not spec.strip():  # Path("") would be the current folder
        raise NNDError("an empty suite name; " + _FORMS)
    if text.startswith(HUB_PREFIX):
        return _load_hub_spec(text, name, revision)
    if text.startswith(BUILTIN_PREFIX):
        if name is not None or revision is not None:
            raise NNDError(f"{text}: a built-in suite takes no config name or revision")
        return builtin_suite(text[len(BUILTIN_PREFIX) :])
    path = Path(spec)
    if isinstance(spec, str) and name is None:
        refuse_ambiguous(spec)
    if name is not None and not has_manifest(path):
        return _load_config(path, name, revision)
    if revision is not None:
        raise NNDError(f"{text}: a revision applies to suites on the Hub (hub:ORG/NAME/CONFIG)")
    if has_manifest(path):  # a fifo or folder there is named by the loader
        suite = Suite.load(path)
        if name is not None and suite.name != name:
            raise NNDError(f"{path} holds suite {suite.name!r}, not {name!r}")
        if check_card and (path.parent / "README.md").is_file():
            from nnd_suites.hub.folder_check import check_config_in_card  # datasets: if needed

            check_config_in_card(path, listed_only=True)
        return suite
    if text in ADAPTERS.names():
        return _build_shipped(text)
    if path.is_dir():
        present = [config.name for config in dataset_configs(path)]
        if present:
            raise NNDError(_name_one(path, present))
        raise NNDError(f"{path}: a folder, but not a suite (no {MANIFEST_FILE}); " + _FORMS)
    if path.name == MANIFEST_FILE and path.is_file():  # the suite's manifest: name its folder
        raise NNDError(f"{path}: a suite's manifest; name its folder, {path.parent}")
    if path.exists():
        raise NNDError(f"{path}: not a folder; " + _FORMS)
    if _looks_like_a_path(text):
        raise NNDError(f"{path}: no such folder; " + _FORMS)
    raise UnknownItemError("suite", text, ADAPTERS.names(), hint=_FORMS)


def _name_one(path: Path, present: list[str]) -> str:
    """What ``path``, a dataset folder given where one suite is taken, holds, as ``validate``
    says it: its configs, and the suite folders named after no suite of theirs (no config: left
    out of its card, and ``load_suite(FOLDER, NAME)`` refuses them)."""
    from nnd_suites.hub.export import misnamed_suites  # the Hub client: only when needed

    left_out = misnamed_suites(path)
    configs = [name for name in present if name not in left_out]
    held = ", ".join(f"{name} holds suite {suite!r}" for name, suite in left_out.items())
    first = (configs or list(left_out))[0]
    return (
        f"{path} is an export folder with configs {configs}"
        + (f" and suite folders that are no config ({held})" if left_out else "")
        + f"; name one: {path / first}"
        + (f" (or load_suite({str(path)!r}, {first!r}))" if configs else "")
        + "; where several suites are taken (evaluate, robustness, export, publish), the folder "
        + ("stands for every config and suite folder" if left_out else "stands for every config")
    )


_FORMS = "a suite is " + "; or ".join(
    [f"a built-in adapter name (or {BUILTIN_PREFIX}NAME)", *SPEC_FORMS]
)


def builtin_suite(name: str) -> Suite:
    """The built-in suite ``name``, built from its shipped source, whatever the current
    directory holds (what ``builtin:NAME`` and ``all`` name)."""
    if name not in ADAPTERS.names():
        raise UnknownItemError("built-in suite", name, ADAPTERS.names(), hint=_FORMS)
    return _build_shipped(name)


def refuse_ambiguous(text: str) -> None:
    """A bare built-in name that is also a folder here could mean either: refuse, saying how to
    name each (a folder built with another quality map or an older release would otherwise be
    scored under the built-in's name without a word)."""
    if text in ADAPTERS.names() and Path(text).is_dir():
        raise AmbiguousSuiteError(
            f"suite {text!r} is ambiguous: it is a built-in suite and a folder in the current "
            f"directory ({Path(text).resolve()}); name the folder as ./{text} (any path with a "
            f"separator is a folder) or the built-in suite as {BUILTIN_PREFIX}{text} (or move "
            "or rename the folder)"
        )


def _looks_like_a_path(text: str) -> bool:
    return any(mark in text for mark in ("/", "\\", "~")) or text.startswith(".")


#: the suite spec that stands for every built-in suite whose source ships with nnd-suites
ALL = "all"


def shipped_suites() -> list[str]:
    """The built-in adapters whose annotation source ships with nnd-suites (what ``all`` is)."""
    return _built_in(shipped=True)


def unshipped_suites() -> list[str]:
    """The built-in adapters whose annotation source does not ship: ``all`` leaves them out."""
    return _built_in(shipped=False)


def _built_in(shipped: bool) -> list[str]:
    return [name for name, ships in shipping_their_source().items() if ships == shipped]


def expand_suite_specs(specs: list[str | Path | Suite]) -> list[str | Path | Suite]:
    """``all`` replaced by every shipped suite not given already, and a dataset folder (written
    by ``export``, ``build --all`` or ``build --catalogue``) by the folder of each of its
    configs; the rest kept in order."""
    expanded: list[str | Path | Suite] = []
    for spec in specs:
        if isinstance(spec, str) and spec == ALL:
            expanded += [name for name in shipped_suites() if name not in expanded]
        else:
            expanded += dataset_configs(spec) or [spec]
    return expanded


def dataset_configs(spec: str | Path | Suite) -> list[Path]:
    """The config folders of the dataset folder ``spec`` names (empty: no such folder)."""
    if isinstance(spec, Suite) or str(spec).startswith((HUB_PREFIX, BUILTIN_PREFIX)):
        return []
    if isinstance(spec, str) and spec in ADAPTERS.names():
        return []  # the built-in suite, or ambiguous with the folder: load_suite says which
    folder = Path(spec)
    if not folder.is_dir() or has_manifest(folder):
        return []
    from nnd_suites.hub import card_reading, export  # the Hub client: only when needed

    present = export.present_configs(folder)
    listed = card_reading.card_config_names(folder) if export.holds_nnd_card(folder) else []
    gone = [name for name in listed if name not in present]
    if gone:  # the folder stands for every config of its card, never for the part still there
        raise NNDError(
            f"{folder / 'README.md'}: the card lists config {gone[0]!r}, whose folder "
            f"{folder / gone[0]} is gone, so {folder} would stand for only "
            f"{plural(len(present), 'config')} of its card's {len(listed)}; put the folder "
            "back, name the configs wanted (FOLDER/CONFIG), or regenerate the card from those "
            f"present with `nnd-suites export {folder / present[0] if present else 'SUITE'} "
            f"--to {folder}`"
        )
    return [folder / name for name in present]


def suite_specs(suites: object) -> list[str | Path | Suite]:
    """``suites`` (one spec, or any iterable of them, read once) as a list; anything that is not
    a spec (None, a number, a report) is refused by name, never a TypeError deep inside."""
    if isinstance(suites, (str, Path, Suite)):
        return [suites]
    given = list(suites) if isinstance(suites, Iterable) else [suites]
    odd = [spec for spec in given if not isinstance(spec, (str, Path, Suite))]
    if odd:
        raise ArgumentError(
            f"suites: {reprlib.repr(odd[0])} ({type(odd[0]).__name__}) is not a suite; give a "
            "suite folder, a built-in name, hub:ORG/NAME/CONFIG or a Suite object, or a list "
            "of them"
        )
    return given


def suite_origins(suites: object) -> list[str | None]:
    """For each suite :func:`resolve_suites` gives for ``suites`` (in its order, once it has
    resolved them), the spec that names it again wherever the command runs: a folder's absolute
    path, ``builtin:NAME`` or the ``hub:`` spec; None for a Suite object given in memory."""
    origins: list[str | None] = []
    for spec in expand_suite_specs(suite_specs(suites)):
        text = str(spec)
        if isinstance(spec, Suite):
            origins.append(None)
        elif text.startswith((HUB_PREFIX, BUILTIN_PREFIX)):
            origins.append(text)
        elif has_manifest(Path(spec)):
            origins.append(str(Path(spec).resolve()))
        else:  # a built-in name (a bare name that is also a folder is refused as ambiguous)
            origins.append(BUILTIN_PREFIX + text)
    return origins


def resolve_suites(suites: object, *, check_card: bool = True) -> list[Suite]:
    """One suite or several (folders, names, specs, ``all`` or Suite objects), resolved and
    validated (``check_card``: as :func:`load_suite`); a Suite object carries the content hash
    of what it holds now (:meth:`Suite.resealed`)."""
    given = suite_specs(suites)
    # the suites `all` adds are the built-in ones, whatever folders the current directory holds
    named = {spec for spec in given if isinstance(spec, str)}
    from_all = set(shipped_suites()) - named if ALL in named else set()
    resolved = [
        # a Suite object may have been edited in memory since it was built or loaded
        spec.resealed()
        if isinstance(spec, Suite)
        else builtin_suite(spec)
        if isinstance(spec, str) and spec in from_all
        else load_suite(spec, check_card=check_card)
        for spec in expand_suite_specs(given)
    ]
    if not resolved:
        raise NNDError("no suite given: pass at least one suite folder or built-in adapter name")
    return resolved


def _build_shipped(name: str) -> Suite:
    from nnd_suites.builder.suites import build_suite  # the builders import every adapter's readers

    if ADAPTERS.get(name).default_source_path() is None:
        raise NNDError(
            f"suite {name!r}: its annotation source is not shipped; build it first "
            f"(`nnd-suites build {name} --source PATH_OR_URL --out suites/{name}`) and pass "
            f"that folder (suites/{name})"
        )
    return build_suite(name)


def _load_config(source: Path, config: str, revision: str | None) -> Suite:
    """``config`` of an export folder when ``source`` is a folder, else of a Hub repository."""
    from nnd_suites.hub import load_hub_config, read_exported_config  # the Hub client, datasets

    if source.is_dir():
        if revision is not None:
            raise NNDError(f"{source}: a revision applies to Hub repositories, not to a folder")
        return read_exported_config(source, config)
    return load_hub_config(str(source), config, revision)


def _load_hub_spec(text: str, name: str | None, revision: str | None) -> Suite:
    from nnd_suites.hub import load_hub_config, parse_hub_spec  # the Hub client, datasets

    hub = parse_hub_spec(text)
    if name is not None and name != hub.config:
        raise NNDError(f"{text} names config {hub.config!r}, the call asks for {name!r}")
    if revision is not None and hub.revision is not None and revision != hub.revision:
        raise NNDError(f"{text} pins revision {hub.revision!r}, the call asks for {revision!r}")
    return load_hub_config(hub.repo_id, hub.config, hub.revision or revision)
