"""The checks of the Python API's arguments (``evaluate``, ``prepare_suites``, and what
``robustness`` and ``verify_suite`` hand on to evaluate): what the CLI refuses while parsing, the
API refuses with an :class:`~nnd_suites.errors.ArgumentError` naming the argument, before any
suite is loaded or model scored. Without them ``template=123`` was a TypeError deep inside,
``normalize="lowercase"`` was read letter by letter, ``limit=1.0`` kept one group where the CLI
refuses ``--limit 1.0``, and ``batch_size=True`` was a batch of one."""

from __future__ import annotations

import os
import reprlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nnd_suites.errors import ArgumentError, NNDError
from nnd_suites.evaluation.backend import Backend
from nnd_suites.hub.export import holds_nnd_card
from nnd_suites.infra.atomic import real_target
from nnd_suites.infra.key_values import require_unique
from nnd_suites.infra.output_folder import held_kind
from nnd_suites.infra.paths import cache_root
from nnd_suites.transformations import make_transformation

#: arguments that take True or False only
_FLAGS = ("cache", "progress", "trust_remote_code", "log_samples")
#: arguments that take a string, or None where the default is None
_TEXTS = ("device", "dtype", "strategy")
_TEXTS_OR_NONE = ("template", "compat", "backend", "revision", "device_map")
#: arguments (and their defaults) that load a model by name: a model object in memory is scored
#: where it sits, as it is, and a loaded Backend as it was loaded
_LOADING = {
    "device": "auto",
    "dtype": "auto",
    "revision": None,
    "device_map": None,
    "trust_remote_code": False,
    "backend_options": None,
}
_BACKEND_LOADING = {**_LOADING, "batch_size": "auto", "strategy": "auto"}


def resolve_mode(compat: str | None) -> str:
    """``--compat reference`` selects the paper's scoring; nothing (or ``none``) the default."""
    if compat in (None, "", "none", "default"):
        return "default"
    if compat == "reference":
        return "reference"
    raise NNDError(
        f"unknown --compat {compat!r}: the only compatibility mode is 'reference' "
        "(the paper's reference implementation)"
    )


def _refuse(function: str, name: str, value: object, what: str) -> ArgumentError:
    return ArgumentError(f"{function}({name}={reprlib.repr(value)}): {what}")


def _whole(value: object, low: int) -> bool:
    """An int (not a bool: True is 1 to Python, never a count to a user) of at least ``low``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def check_preparation(function: str, template: object, normalize: object, limit: object) -> None:
    """The arguments that fix how suites are prepared (``prepare_suites`` and ``evaluate``)."""
    if template is not None and not isinstance(template, str):
        raise _refuse(function, "template", template, "give a template name or string, or None")
    if isinstance(normalize, str) or not isinstance(normalize, Sequence):
        raise _refuse(
            function,
            "normalize",
            normalize,
            "give a list of normalisation specs, e.g. normalize=['lowercase'] (a string would "
            "be read letter by letter)",
        )
    for spec in normalize:
        if not isinstance(spec, str):
            raise _refuse(function, "normalize", normalize, f"{spec!r} is not a spec string")
    # as written by the plugin (name and options): one spelled two ways is still one
    # applied again, the suite would be reported as NAME.lowercase.lowercase
    given = [make_transformation(spec).spec for spec in normalize]
    require_unique(given, "normalization", "--normalize")
    fraction = isinstance(limit, float) and 0 < limit < 1
    if limit is not None and not fraction and not _whole(limit, 1):
        raise _refuse(
            function,
            "limit",
            limit,
            "give a whole number of context groups >= 1 (limit=1) or a fraction strictly "
            "between 0 and 1 (limit=0.5), as --limit takes",
        )


def check_models(function: str, models: object) -> None:
    """``evaluate_models``' list of models (a lone string would be scored letter by letter)."""
    if isinstance(models, (str, Path)) or not isinstance(models, Sequence):
        raise _refuse(
            function,
            "models",
            models,
            "give a list of models, e.g. ['gpt2'] (a lone name would be read letter by letter)",
        )


def check_evaluate_arguments(arguments: Mapping[str, Any], function: str = "evaluate") -> None:
    """Every argument of :func:`nnd_suites.evaluate` that has a type or range to keep: its
    ``locals()`` on entry, or the part of them a caller hands on (``robustness``'s and
    ``verify_suite``'s options; one left out takes evaluate's default, which passes). The
    backend classes and suite specs are checked where they are used."""
    if "model" in arguments:
        check_model(function, "model", arguments["model"])
    check_preparation(
        function,
        arguments.get("template"),
        arguments.get("normalize", ()),
        arguments.get("limit"),
    )
    batch = arguments.get("batch_size", "auto")
    if batch != "auto" and not _whole(batch, 1):
        raise _refuse(function, "batch_size", batch, "give 'auto' or a whole number >= 1")
    for name in _FLAGS:
        if name in arguments and not isinstance(arguments[name], bool):
            raise _refuse(function, name, arguments[name], "give True or False")
    for name in _TEXTS:
        if name in arguments and not isinstance(arguments[name], str):
            raise _refuse(function, name, arguments[name], "give a string")
    for name in _TEXTS_OR_NONE:
        if arguments.get(name) is not None and not isinstance(arguments[name], str):
            raise _refuse(function, name, arguments[name], "give a string, or None")
    for name in ("cache_dir", "out"):
        if arguments.get(name) is not None and not isinstance(arguments[name], (str, Path)):
            raise _refuse(function, name, arguments[name], "give a folder path, or None")
    check_cache_outside_out(function, arguments)
    scorers = arguments.get("scorers", "")
    if isinstance(scorers, Sequence) and not isinstance(scorers, str) and not scorers:
        raise _refuse(function, "scorers", scorers, "no scorer given; name at least one")
    if not isinstance(scorers, str) and not (
        isinstance(scorers, Sequence) and scorers and all(isinstance(s, str) for s in scorers)
    ):
        raise _refuse(function, "scorers", scorers, "give a scorer name or a list of them")
    options = arguments.get("backend_options")
    if options is not None and not isinstance(options, Mapping):
        raise _refuse(function, "backend_options", options, "give a dict of options, or None")
    check_loading(function, arguments)


def check_cache_outside_out(function: str, arguments: Mapping[str, Any]) -> None:
    """The score cache (``cache_dir``, else the cache root) must lie outside ``out``: the run
    wrote its cache there, scored every request, then refused the folder for holding what its
    writer did not put there, so the report was lost and every rerun failed the same way. Nor
    may it lie in a suite, dataset, report or model folder (:func:`_foreign_to_a_cache`)."""
    if not arguments.get("cache", True):
        return
    given = arguments.get("cache_dir")
    cache = Path(os.path.realpath(given if given is not None else cache_root()))
    out = arguments.get("out")
    target = None if out is None else real_target(out)
    if target is not None and (cache == target or target in cache.parents):
        where = "is" if cache == target else "is inside"
        raise ArgumentError(
            f"{function}: the score cache {cache} {where} the output folder {out}, which is "
            "replaced as a whole and may hold only what its writer puts there; give a cache "
            "folder outside it (--cache-dir, $NND_SUITES_CACHE), or another --out"
        )
    for folder in (cache, *cache.parents):
        what = _foreign_to_a_cache(folder)
        if what is not None:
            raise ArgumentError(
                f"{function}: the score cache {cache} {'is' if folder == cache else 'is inside'} "
                f"{folder}, {what}, which may hold only its own files (its scores.sqlite would "
                "break it, or be published with it); nothing was scored: give a cache folder "
                "outside it (--cache-dir, $NND_SUITES_CACHE)"
            )


def _foreign_to_a_cache(folder: Path) -> str | None:
    """What ``folder`` is when a score cache must not be put in it: a suite or a report folder
    nnd-suites wrote, a dataset folder (our card: a folder that merely holds a suite folder, as
    a home folder after ``build --out ~/NAME`` does, is none), or a model folder (config.json
    and weights, whose files are the model's identity)."""
    held = held_kind(folder)
    if held is not None:
        return f"{held.title} written by nnd-suites"
    if holds_nnd_card(folder):
        return "a dataset folder"
    weights = any(folder.glob("*.safetensors")) or any(folder.glob("*.bin"))
    return "a model folder" if weights and (folder / "config.json").is_file() else None


def check_loading(function: str, arguments: Mapping[str, Any]) -> None:
    """Refuse what would load a model by name beside a model that is already loaded: evaluate
    dropped ``device="cuda"`` or ``dtype=...`` without a word and scored where the model was."""
    model = arguments.get("model")
    if not isinstance(model, (tuple, Backend)):
        return
    loading = dict(_BACKEND_LOADING if isinstance(model, Backend) else _LOADING)
    if isinstance(arguments.get("reference_model"), (str, Path)):
        del loading["device"], loading["dtype"]  # the ratio scorer's reference loads with them
    for name, default in loading.items():
        if arguments.get(name, default) != default:
            raise _refuse(
                function,
                name,
                arguments[name],
                "applies to a model loaded by name (a Hub id or folder); a model object in "
                "memory is scored where it sits, as it is (move or cast it first: "
                "model.to('cuda:0'), model.to(torch.bfloat16)), a loaded Backend as it was loaded",
            )


def check_model(function: str, name: str, model: object) -> None:
    """A model as :func:`nnd_suites.evaluate` takes it."""
    if isinstance(model, tuple) and len(model) != 2:
        raise _refuse(
            function, name, model, f"give a (model, tokenizer) pair, not {len(model)} items"
        )
    if not isinstance(model, (str, Path, Backend, tuple)):
        raise _refuse(
            function,
            name,
            model,
            "give a Hub id or a folder, a loaded Backend, or a (model, tokenizer) pair",
        )


def check_system_models(function: str, systems: object) -> None:
    """``verify_suite``'s systems: each annotated system's name to its model (a Hub id or a
    folder: each is loaded by name, so that every rank of a parallel run can load it)."""
    if not isinstance(systems, Mapping):
        raise _refuse(
            function, "systems", systems, "give a dict of system name -> model (Hub id or folder)"
        )
    for name, model in systems.items():
        if not isinstance(name, str) or not isinstance(model, (str, Path)):
            raise _refuse(
                function,
                "systems",
                systems,
                f"system {name!r}: give its name as a string and its model as a Hub id or folder",
            )


def check_bootstrap(function: str, resamples: object, seed: object, confidence: object) -> None:
    """``verify_suite``'s bootstrap, before any model is scored (numpy takes no negative seed;
    the report, no interval without resamples or a level outside (0, 1))."""
    if not _whole(resamples, 1):
        raise _refuse(function, "resamples", resamples, "give a whole number >= 1")
    if not _whole(seed, 0):
        raise _refuse(function, "seed", seed, "give a whole number >= 0")
    if not (isinstance(confidence, float) and 0 < confidence < 1):
        raise _refuse(function, "confidence", confidence, "give a level between 0 and 1 (0.95)")
