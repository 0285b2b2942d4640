"""Reading a dataset card: as a bounded data file, its YAML front matter within the bounds of
our parser (huggingface_hub's recurses without bound and turns 5,000 digits into a
traceback); deciding whose card it is reads its tags without a :class:`DatasetCard`."""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

import yaml
from huggingface_hub import DatasetCard
from huggingface_hub.repocard import REGEX_YAML_BLOCK

from nnd_suites.errors import NNDError
from nnd_suites.hub.layout import CARD_FILE
from nnd_suites.infra.reading import DataFileError, read_front_matter

#: a card is text and a little YAML; any README this large is not ours to parse
CARD_FILE_LIMIT = 16 * 2**20

logger = logging.getLogger(__name__)


def load_card(path: Path) -> DatasetCard:
    """The dataset card at ``path``, read as a bounded data file: a regular file of bounded size
    whose YAML front matter is within the nesting and integer bounds (huggingface_hub's parser
    recurses without bound and turns 5,000 digits into a traceback). Its callers read it, never
    change it: one text is parsed once (:func:`_card`)."""
    return _card(_read_card(path)[0], path)


# Each parse once per text: the configs of a folder are each checked against its card (whose
# card it is, the configs it lists, its metadata), and an export checks the card before it takes
# the folder's lock and again under it; PyYAML's pure-Python parser takes a good part of a
# second for the front matter of a card of many configs. The same text gives the same answer.
@functools.lru_cache(maxsize=4)
def _card(text: str, path: Path) -> DatasetCard:
    try:
        return DatasetCard(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise NNDError(f"{path}: unreadable dataset card ({exc})") from None


def card_has_tag(path: Path, tag: str) -> bool:
    """Whether the front matter of the card at ``path`` has a ``tags`` list holding ``tag`` (a
    string that merely contains it does not), read as :func:`load_card` reads it but without a
    :class:`DatasetCard`, whose parser would read the front matter a second time."""
    tags = _read_card(path)[1].get("tags")
    return isinstance(tags, list) and tag in tags


def _read_card(path: Path) -> tuple[str, dict[str, Any]]:
    """The text of the card at ``path`` and its YAML front matter, parsed within the bounds
    before huggingface_hub parses it (once per text); a front matter that is not a mapping is
    an error, as it is to huggingface_hub."""
    try:
        text, metadata = read_front_matter(path, "dataset card", CARD_FILE_LIMIT, REGEX_YAML_BLOCK)
    except DataFileError as exc:
        raise NNDError(f"{exc}; not a readable dataset card") from None
    if metadata is not None and not isinstance(metadata, dict):
        raise NNDError(
            f"{path}: unreadable dataset card (its YAML front matter is a "
            f"{type(metadata).__name__}, not a mapping)"
        )
    return text, metadata or {}


def card_config_names(folder: Path) -> list[str]:
    """Config names the card of an export folder declares (empty without a card)."""
    # lazy: datasets loads only when an exported suite is read
    from datasets.utils.metadata import MetadataConfigs

    card = folder / CARD_FILE
    if not card.is_file():
        return []
    try:
        names = MetadataConfigs.from_dataset_card_data(load_card(card).data)
    except NNDError as exc:
        unreadable_card(str(exc))
        return []
    except (ValueError, TypeError, yaml.YAMLError):  # configs metadata: card_problems names it
        return []
    return sorted(name for name in names if isinstance(name, str))


@functools.lru_cache(maxsize=16)  # once per card and fault: each of its configs reads it
def unreadable_card(fault: str) -> None:
    """Say that a README.md beside suite folders exists but cannot be read as a card (``fault``
    names it): whose it is cannot be told, so its folders are read as plain suites."""
    logger.warning(
        "%s; whose card it is cannot be told, so the suite folders beside it are read as plain "
        "suites, unchecked against it; fix its YAML front matter, or move it away and write the "
        "card with `nnd-suites export`",
        fault,
    )
