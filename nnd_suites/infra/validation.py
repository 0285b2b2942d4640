"""pydantic models, strict and told in one line.

:class:`StrictModel` is the base of every record, option set and result the project reads or
writes: a field it does not know is refused, so a file written by a newer version, or a misspelt
field, fails loudly instead of being read with the field dropped. :func:`validation_problems`
is pydantic's ValidationError in one line: a message names each field at fault, what it must be
and what it holds, instead of pydantic's dump (a header, then two lines per error and a URL)."""

from __future__ import annotations

import reprlib
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError


class StrictModel(BaseModel):
    """A pydantic model that forbids unknown fields."""

    model_config = ConfigDict(extra="forbid")


def _said(value: str) -> str:
    if not value.strip():
        raise ValueError(f"{value!r} is only spaces; write what it is")
    return value


#: a text field that must say something: empty or only spaces is refused
NonBlank = Annotated[str, Field(min_length=1), AfterValidator(_said)]


def validation_problems(exc: ValidationError, limit: int = 3) -> str:
    """``field.sub: what pydantic wants (got VALUE)`` for the first ``limit`` errors, joined by
    ``; `` (with how many more there are); values shortened, so a huge one stays one line."""
    errors = exc.errors(include_url=False)
    shown = "; ".join(
        f"{'.'.join(map(str, error['loc'])) or 'value'}: {error['msg']} "
        f"(got {reprlib.repr(error['input'])})"
        for error in errors[:limit]
    )
    more = len(errors) - limit
    return shown + (f"; and {more} more" if more > 0 else "")
