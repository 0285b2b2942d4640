"""The Transformation base class: declared metadata, validated parameters, a pure text rewrite.

A plugin subclasses :class:`Transformation`, declares ``name``, ``version``, ``metadata`` and (when
it takes any) a ``Params`` model, and implements ``transform_text(text, rng)``. The rewrite is a
pure function of the text, the validated parameters and the ``random.Random`` it is handed: no
global random state. Seeded plugins receive a generator derived from their seed and a sha256 of
the text itself (:func:`derive_rng`), so a result depends neither on the order texts are visited
in nor on the machine or Python version, and the same text becomes the same output wherever it
appears (a context shared by a group stays one context; identical candidates stay identical).
"""

from __future__ import annotations

import hashlib
import json
import random
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

from pydantic import Field, ValidationError

from nnd_suites.errors import PluginError
from nnd_suites.infra.formatting import clip
from nnd_suites.plugins.params import PluginParams, parse_params, parse_plugin_spec
from nnd_suites.plugins.plugin import Plugin, PluginMetadata
from nnd_suites.plugins.registry import Registry

Touches = Literal["context", "candidates", "both"]
Kind = Literal["normalization", "perturbation"]


class TransformationMetadata(PluginMetadata):
    """What a transformation rewrites and how (beside every plugin kind's summary and
    description); shown by `nnd-suites list` and in manifests."""

    touches: Touches = Field(description="what it rewrites by default (parameter `on` overrides)")
    kind: Kind = Field(
        description="normalization (match a model's text conventions) or "
        "perturbation (probe robustness)"
    )
    seeded: bool = Field(description="draws random choices from a seeded generator")
    languages: list[str] = Field(min_length=1, description="BCP-47 codes, or ['*'] for any")


class TransformationParams(PluginParams):
    """Base of every plugin's parameters; ``on`` is common to all of them."""

    on: Touches | None = Field(
        None,
        description="rewrite the context, the candidates or both (default: the plugin's "
        "declared `touches`)",
    )


class SeededParams(TransformationParams):
    """Base of a seeded plugin's parameters."""

    seed: int = Field(0, ge=0, description="seed of the per-text random generators")


def derive_rng(seed: int, *key: str) -> random.Random:
    """A generator seeded from ``seed`` and ``key`` through sha256 (never the salted ``hash()``).

    ``random.Random(int)`` is seeded the same way on every platform and Python version.
    """
    payload = json.dumps([seed, *key], ensure_ascii=False).encode("utf-8")
    return random.Random(int.from_bytes(hashlib.sha256(payload).digest()[:8], "big"))


class Transformation(Plugin, ABC):
    """Rewrite texts of a suite: a normalisation or a perturbation.

    Instantiate with parameters (validated); ``apply(text)`` rewrites one text.
    """

    version: ClassVar[str] = "1.0.0"
    examples_key: ClassVar[str] = "transformation"  # examples.json: {"transformation": NAME, ...}
    metadata: ClassVar[TransformationMetadata]
    Params: ClassVar[type[TransformationParams]] = TransformationParams

    def __init__(self, **params: Any) -> None:
        self.params = parse_params("transformation", self.name, self.Params, params)

    @abstractmethod
    def transform_text(self, text: str, rng: random.Random) -> str:
        """Return ``text`` rewritten; draw any random choice from ``rng`` only."""

    # ----------------------------------------------------------------- applying
    def apply(self, text: str) -> str:
        """Rewrite one text; seeded plugins use a generator derived from the seed and the text.
        Anything but a string is a plugin error here, not a traceback in the suite's checks."""
        new = self.transform_text(text, derive_rng(self.seed or 0, self.name, text))
        if not isinstance(new, str):
            raise PluginError(
                f"transformation {self.spec} returned {type(new).__name__} {clip(repr(new), 60)} "
                f"for {clip(repr(text), 60)}; transform_text returns the rewritten text (a str): "
                "fix the plugin"
            )
        return new

    def rng_for(self, *key: str) -> random.Random:
        """A generator for ``key`` (e.g. one number), for choices that must agree across texts."""
        return derive_rng(self.seed or 0, self.name, *key)

    @property
    def seed(self) -> int | None:
        return getattr(self.params, "seed", None)

    @property
    def touches(self) -> Touches:
        return self.params.on or self.metadata.touches

    @property
    def rewrites_context(self) -> bool:
        return self.touches in ("context", "both")

    @property
    def rewrites_candidates(self) -> bool:
        return self.touches in ("candidates", "both")

    def params_dict(self) -> dict[str, Any]:
        """All parameters, defaults included and ``on`` resolved (what a manifest records)."""
        return {**self.params.model_dump(mode="json"), "on": self.touches}

    @property
    def spec(self) -> str:
        """``NAME[:param=value,...]`` with the parameters given, for labels: the plugin's own
        parameters in declared order, then ``seed`` and ``on`` (``typos:rate=0.05,seed=1``)."""
        given = self.labelled_params(exclude_unset=True)
        if not given:
            return self.name
        return self.name + ":" + ",".join(f"{key}={value}" for key, value in given)

    def labelled_params(self, **dump_options: Any) -> list[tuple[str, Any]]:
        """Parameters as (name, value) in label order: the plugin's own, then seed and on."""
        values = self.params.model_dump(mode="json", **dump_options)
        common = [key for key in ("seed", "on") if key in values]
        ordered = [key for key in values if key not in common] + common
        return [(key, values[key]) for key in ordered]

    def __repr__(self) -> str:
        return f"<transformation {self.spec}>"

    @classmethod
    def summary_line(cls) -> str:
        """``kind, touches[, seeded] (param=default, ...): summary`` for `nnd-suites list`."""
        meta = cls.metadata
        defaults = cls().labelled_params(exclude={"on"})
        params = ", ".join(f"{key}={json.dumps(value)}" for key, value in defaults)
        return (
            f"{meta.kind}, {meta.touches}{', seeded' if meta.seeded else ''}"
            f"{f' ({params})' if params else ''}: {meta.summary}"
        )


def validate_transformation(cls: type[Transformation]) -> None:
    """Registry hook: a plugin must declare complete, consistent metadata."""
    where = f"transformation {getattr(cls, 'name', cls.__name__)} ({cls.__module__})"
    if not isinstance(getattr(cls, "metadata", None), TransformationMetadata):
        raise PluginError(f"{where}: 'metadata' must be a TransformationMetadata")
    if not (isinstance(cls.Params, type) and issubclass(cls.Params, TransformationParams)):
        raise PluginError(f"{where}: 'Params' must subclass TransformationParams")
    if not isinstance(cls.version, str) or not cls.version:
        raise PluginError(f"{where}: 'version' must be a non-empty string")
    has_seed = "seed" in cls.Params.model_fields
    if cls.metadata.seeded != has_seed:
        raise PluginError(
            f"{where}: metadata says seeded={cls.metadata.seeded} but its Params "
            f"{'has' if has_seed else 'has no'} 'seed' (subclass SeededParams)"
        )
    try:
        cls.Params()
    except ValidationError as exc:
        raise PluginError(f"{where}: every parameter needs a default: {exc}") from exc


TRANSFORMATIONS: Registry[Transformation] = Registry(
    "transformation",
    "nnd_suites.transformations",
    base=lambda: Transformation,
    builtin_package="nnd_suites.transformations",
    plugins_are_folders=True,
    validate=validate_transformation,
)
#: ``@register_transformation("name")`` on a Transformation subclass registers it.
register_transformation = TRANSFORMATIONS.register


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``typos:rate=0.05,seed=1`` into ``("typos", {"rate": "0.05", "seed": "1"})``."""
    return parse_plugin_spec("transformation", spec)


def make_transformation(spec: str | Transformation) -> Transformation:
    """An instance from a spec string as typed on the command line, ``NAME[:param=value,...]``
    (unknown names and parameters raise a clear error)."""
    if isinstance(spec, Transformation):
        return spec
    name, params = parse_spec(spec)
    return TRANSFORMATIONS.get(name)(**params)
