"""Turn huggingface_hub failures into HubErrors that say what went wrong and what to do."""

from __future__ import annotations

import contextlib
import importlib
import re
from collections.abc import Iterator

from huggingface_hub import constants
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    HFValidationError,
    LocalEntryNotFoundError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.utils import validate_repo_id

from nnd_suites.errors import HubError

LOGIN_HINT = "run `hf auth login` or set HF_TOKEN"


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Errors raised when no answer came back at all, whichever HTTP client huggingface_hub
    uses (httpx2 in recent releases, httpx or requests before)."""
    found: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for module, attribute in (
        ("httpx2", "TransportError"),
        ("httpx", "TransportError"),
        ("requests.exceptions", "ConnectionError"),
        ("requests.exceptions", "Timeout"),
    ):
        try:
            found.append(getattr(importlib.import_module(module), attribute))
        except (ImportError, AttributeError):
            continue
    return tuple(found)


_TRANSPORT_ERRORS = _transport_errors()


def check_repo_id(repo_id: str) -> str:
    """``ORG/NAME`` as the Hub accepts it."""
    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        raise HubError(f"invalid Hub repository id {repo_id!r}: {exc}") from exc
    if repo_id.count("/") != 1:
        raise HubError(f"invalid Hub repository id {repo_id!r}: expected ORG/NAME")
    return repo_id


#: what git refuses in a tag name (git check-ref-format), which the Hub's tags are; and '@':
#: the spec that names the tag, hub:ORG/NAME/CONFIG@TAG, holds one '@' (hub/load.py)
_BAD_TAG = re.compile(r"[\x00-\x20\x7f~^:?*\[\\@]|\.\.|//|^[-/.]|[/.]$|\.lock$|/\.")


def check_tag(tag: str) -> str:
    """A tag git and the Hub take (no space, line break, ``..``, ``~^:?*[\\``...), refused
    before anything is built, a dry run included."""
    if not isinstance(tag, str) or not tag or _BAD_TAG.search(tag):
        raise HubError(
            f"invalid tag {tag!r}: a tag is a git ref name (no spaces, line breaks or control "
            "characters, no '..', '~', '^', ':', '?', '*', '[', '\\' or '@'; not starting with '-' "
            "or '.'); give a version such as v1.0"
        )
    return tag


def offline() -> bool:
    return bool(constants.HF_HUB_OFFLINE)


@contextlib.contextmanager
def hub_errors(action: str, repo_id: str) -> Iterator[None]:
    """Re-raise what a Hub call raises as a HubError naming ``action`` and ``repo_id``."""
    try:
        yield
    except OfflineModeIsEnabled as exc:
        raise HubError(
            f"{action}: HF_HUB_OFFLINE is set, so the Hub cannot be reached; unset it to go online"
        ) from exc
    except RevisionNotFoundError as exc:
        raise HubError(
            f"{action}: dataset {repo_id} has no such revision (tag, branch or "
            "commit); check the name after '@'"
        ) from exc
    except GatedRepoError as exc:
        raise HubError(
            f"{action}: dataset {repo_id} is gated; accept its conditions on the Hub "
            f"and {LOGIN_HINT}"
        ) from exc
    except RepositoryNotFoundError as exc:
        raise HubError(
            f"{action}: no dataset repository {repo_id} is visible with your "
            f"credentials; check the name, or for a private repository {LOGIN_HINT}"
        ) from exc
    except LocalEntryNotFoundError as exc:
        if offline():
            reason, advice = "HF_HUB_OFFLINE is set", "unset HF_HUB_OFFLINE and try again"
        else:
            reason = "the Hub could not be reached"
            advice = "check your connection (or HF_ENDPOINT) and try again"
        raise HubError(
            f"{action}: {reason} and no copy of dataset {repo_id} is cached; {advice}"
        ) from exc
    except HfHubHTTPError as exc:
        status = getattr(exc.response, "status_code", None)
        detail = exc.server_message or str(exc).splitlines()[0]
        if status == 401:
            raise HubError(
                f"{action}: the Hub rejected your token (401: invalid or expired); {LOGIN_HINT}"
            ) from exc
        if status == 403:
            raise HubError(
                f"{action}: dataset {repo_id} is not writable with your token (403); "
                "use a token with write access to that user or organisation"
            ) from exc
        if status == 412:  # a parent_commit that is no longer the head
            raise HubError(
                f"{action}: dataset {repo_id} changed since it was read (another commit landed "
                "meanwhile; 412); nothing was committed: run the command again"
            ) from exc
        if status == 409:
            raise HubError(f"{action}: conflict on the Hub (409): {detail}") from exc
        raise HubError(f"{action}: the Hub answered {status}: {detail}") from exc
    except _TRANSPORT_ERRORS as exc:
        # No answer at all (DNS, refused connection, timeout): say which endpoint was tried.
        raise HubError(
            f"{action}: could not reach the Hub at {constants.ENDPOINT} "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no detail'}); "
            "check your connection or HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to use cached copies"
        ) from exc
