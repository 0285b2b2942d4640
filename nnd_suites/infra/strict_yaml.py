"""The strict YAML of the files a user writes by hand (quality maps, the catalogue, systems and
option files): within :class:`~nnd_suites.infra.reading.BoundedYAML`'s bounds, and every
choice PyYAML would make silently refused at its line."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from nnd_suites.infra.reading import BoundedYAML

#: explicit tags a strict file may write (`!!str 1` is "1"): the kinds plain YAML reads anyway
PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{kind}" for kind in ("str", "int", "float", "bool", "null", "map", "seq")
)


class StrictYAML(BoundedYAML):
    """YAML as quality maps, the catalogue and option files are read (nesting and integer digits
    bounded): a repeated key, an alias or a non-scalar key is a ``yaml.YAMLError`` at its mark,
    never a silent choice; the line of every key and list item is recorded in ``node_lines``."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.node_lines: dict[int, dict[Any, int]] = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        # A map needs no anchors or aliases; refusing them rules out alias bombs (an alias
        # repeated a billion times over) and a map whose parts silently share values.
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None,
                None,
                f"alias *{event.anchor} is not allowed (no anchors or aliases); write it out",
                event.start_mark,
            )
        event = self.peek_event()
        tag = getattr(event, "tag", None)
        if tag is not None and tag not in PLAIN_TAGS:
            # !!set reads {a, b} unordered, !!omap or !!binary as no plain value: not data
            shown = tag.replace("tag:yaml.org,2002:", "!!")
            raise yaml.composer.ComposerError(
                None,
                None,
                f"tag {shown} is not allowed (only plain texts, numbers, lists and mappings); "
                "remove it and write the value plainly (a list as [a, b], in its order)",
                event.start_mark,
            )
        return super().compose_node(parent, index)

    def construct_lined_map(self, node: yaml.MappingNode) -> Iterator[dict[Any, Any]]:
        data: dict[Any, Any] = {}
        yield data
        lines: dict[Any, int] = {}
        written: dict[Any, str] = {}  # each key as the file writes it
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode):  # a list or mapping used as a key
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    "a key must be a plain name, not a list or mapping",
                    key_node.start_mark,
                )
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if isinstance(key, (str, int, float, bool)) and key in lines:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    _repeated_key(key, key_node.value, written, lines, line),
                    key_node.start_mark,
                )
            lines[key] = line
            written.setdefault(key, key_node.value)
        data.update(self.construct_mapping(node, deep=True))
        self.node_lines[id(data)] = lines

    def construct_lined_seq(self, node: yaml.SequenceNode) -> Iterator[list[Any]]:
        data: list[Any] = []
        yield data
        data.extend(self.construct_sequence(node, deep=True))
        lines = {index: item.start_mark.line + 1 for index, item in enumerate(node.value)}
        self.node_lines[id(data)] = lines


def _repeated_key(
    key: Any, as_written: str, written: dict[Any, str], lines: dict[Any, int], line: int
) -> str:
    """Why a key repeats: written twice alike, or two spellings YAML reads as one key (unquoted
    1 and yes are the number 1 and the boolean true, and true equals 1)."""
    first = written[key]
    if first == as_written:
        return (
            f"key {as_written!r} appears twice (lines {lines[key]} and {line}): the second "
            "would silently replace the first; keep one"
        )
    return (
        f"keys {first!r} (line {lines[key]}) and {as_written!r} (line {line}) are one key once "
        "YAML reads them unquoted (numbers, yes, no, on, off, true and false are not texts, and "
        f'true equals 1); quote the keys ("{first}": ..., "{as_written}": ...)'
    )


StrictYAML.add_constructor("tag:yaml.org,2002:map", StrictYAML.construct_lined_map)
StrictYAML.add_constructor("tag:yaml.org,2002:seq", StrictYAML.construct_lined_seq)
