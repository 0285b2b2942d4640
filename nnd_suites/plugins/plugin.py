"""What every plugin class shares, whatever its kind: its metadata's summary and description,
its registered name, its folder and the harness cases beside its module."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.errors import PluginError

#: Beside each built-in plugin's module: ``{"examples": [{KIND: NAME, ...}, ...]}``.
EXAMPLES_FILE = "examples.json"


class PluginMetadata(BaseModel):
    """What every plugin kind declares about a plugin (a kind's model adds its own fields)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    summary: str = Field(min_length=1, max_length=72, description="one line for listings")
    description: str = Field(
        min_length=1, description="what the plugin does and when a user would pick it"
    )


class Plugin:
    """What every plugin class shares: ``name`` (set by its registration) and its folder."""

    name: ClassVar[str]
    #: the key naming the plugin in each entry of its examples file ("transformation", "slice")
    examples_key: ClassVar[str] = "plugin"
    #: the harness cases' file, beside the plugin's module
    examples_file: ClassVar[str] = EXAMPLES_FILE
    #: harness cases every built-in plugin of the kind needs (nnd_suites.plugins.harness)
    min_examples: ClassVar[int] = 2

    @classmethod
    def folder(cls) -> Path:
        """The folder of the module that defines the class (its data, fixtures, README)."""
        return Path(sys.modules[cls.__module__].__file__).parent  # type: ignore[arg-type]

    @classmethod
    def examples_in(cls, folder: Path) -> list[dict[str, Any]]:
        """Every harness case in ``folder``'s examples file, each naming its plugin under
        ``examples_key`` (several plugins may share a folder and its file)."""
        path = folder / cls.examples_file
        if not path.is_file():
            return []
        key = cls.examples_key
        try:
            cases = json.loads(path.read_text(encoding="utf-8"))["examples"]
            if not all(isinstance(case, dict) and isinstance(case[key], str) for case in cases):
                raise TypeError
        except json.JSONDecodeError as exc:
            raise PluginError(f"{path}: not JSON ({exc})") from None
        except (KeyError, TypeError):
            raise PluginError(
                f'{path}: write {{"examples": [{{"{key}": NAME, ...}}, ...]}}, each case an '
                f"object naming its {key} plugin"
            ) from None
        return cases

    @classmethod
    def examples(cls) -> list[dict[str, Any]]:
        """This plugin's harness cases, from the examples file beside its module."""
        key = cls.examples_key
        return [example for example in cls.examples_in(cls.folder()) if example[key] == cls.name]
