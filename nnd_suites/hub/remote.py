"""Turn huggingface_hub failures into NNDErrors that say what went wrong and what to do."""

from __future__ import annotations

import contextlib
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

from nnd_suites.errors import NNDError

LOGIN_HINT = "run `hf auth login` or set HF_TOKEN"


def check_repo_id(repo_id: str) -> str:
    """``ORG/NAME`` as the Hub accepts it."""
    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        raise NNDError(f"invalid Hub repository id {repo_id!r}: {exc}") from exc
    if repo_id.count("/") != 1:
        raise NNDError(f"invalid Hub repository id {repo_id!r}: expected ORG/NAME")
    return repo_id


def offline() -> bool:
    return bool(constants.HF_HUB_OFFLINE)


@contextlib.contextmanager
def hub_errors(action: str, repo_id: str) -> Iterator[None]:
    """Re-raise what a Hub call raises as an NNDError naming ``action`` and ``repo_id``."""
    try:
        yield
    except OfflineModeIsEnabled as exc:
        raise NNDError(
            f"{action}: HF_HUB_OFFLINE is set, so the Hub cannot be reached; unset it to go online"
        ) from exc
    except RevisionNotFoundError as exc:
        raise NNDError(
            f"{action}: dataset {repo_id} has no such revision (tag, branch or "
            "commit); check the name after '@'"
        ) from exc
    except GatedRepoError as exc:
        raise NNDError(
            f"{action}: dataset {repo_id} is gated; accept its conditions on the Hub "
            f"and {LOGIN_HINT}"
        ) from exc
    except RepositoryNotFoundError as exc:
        raise NNDError(
            f"{action}: no dataset repository {repo_id} is visible with your "
            f"credentials; check the name, or for a private repository {LOGIN_HINT}"
        ) from exc
    except LocalEntryNotFoundError as exc:
        reason = "HF_HUB_OFFLINE is set" if offline() else "the Hub could not be reached"
        raise NNDError(
            f"{action}: {reason} and no copy of dataset {repo_id} is cached; "
            "connect (unset HF_HUB_OFFLINE) and try again"
        ) from exc
    except HfHubHTTPError as exc:
        status = getattr(exc.response, "status_code", None)
        detail = exc.server_message or str(exc).splitlines()[0]
        if status == 401:
            raise NNDError(
                f"{action}: the Hub rejected your token (401: invalid or expired); {LOGIN_HINT}"
            ) from exc
        if status == 403:
            raise NNDError(
                f"{action}: dataset {repo_id} is not writable with your token (403); "
                "use a token with write access to that user or organisation"
            ) from exc
        if status == 409:
            raise NNDError(f"{action}: conflict on the Hub (409): {detail}") from exc
        raise NNDError(f"{action}: the Hub answered {status}: {detail}") from exc
