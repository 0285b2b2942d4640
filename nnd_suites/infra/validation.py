"""pydantic models, strict and told in one line.

:class:`StrictModel` is the base of every record, option set and result the project reads or
writes: a field it does not know is refused, so a file written by a newer version, or a misspelt
field, fails loudly instead of being read with the field dropped. :func:`validation_problems`
is pydantic's ValidationError in one line: a message names each field at fault, what it must be
and what it holds, instead of pydantic's dump (a header, then two lines per error and a URL)."""

from __future__ import annotations

import re
import reprlib
from collections.abc import Callable, Iterable
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    ValidationError,
)
from pydantic_core import PydanticCustomError, core_schema

#: pydantic's own words for an int or float it refuses, and its error type
_WANTED = {"int": ("a valid integer", "int_type"), "float": ("a valid number", "float_type")}


def _refusing_booleans(schema: Any) -> Any:
    """``schema`` (pydantic's core schema) with each int and float in it refusing a boolean,
    numpy's numbers still taken (strict mode refuses those)."""
    if isinstance(schema, list):
        return [_refusing_booleans(s) for s in schema]
    if not isinstance(schema, dict) or schema.get("metadata") == _WANTED:  # done already
        return schema
    if schema.get("type") in _WANTED:
        wanted, error = _WANTED[schema["type"]]

        def not_a_boolean(value: Any) -> Any:
            if isinstance(value, bool):
                raise PydanticCustomError(error, f"Input should be {wanted}, not true or false")
            return value

        return core_schema.no_info_before_validator_function(
            not_a_boolean, schema, metadata=_WANTED
        )
    return {
        key: value if key in ("serialization", "metadata") else _refusing_booleans(value)
        for key, value in schema.items()
    }


class StrictModel(BaseModel):
    """A pydantic model that forbids unknown fields and takes no boolean for a number (pydantic
    reads `true` as 1: an edited count or figure, a YAML `yes`)."""

    model_config = ConfigDict(extra="forbid")

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> Any:
        return _refusing_booleans(handler(source))


def _said(value: str) -> str:
    if not value.strip():
        raise ValueError(f"{value!r} is only spaces; write what it is")
    return value


#: a text field that must say something: empty or only spaces is refused
NonBlank = Annotated[str, Field(min_length=1), AfterValidator(_said)]


def listed_once(values: list[Any], what: str = "") -> list[Any]:
    """``values`` when none is listed twice; else a ValueError naming the repeated ones and
    ``what`` a repeat does (each listing is read, so a repeat counts again)."""
    repeated = [value for value in dict.fromkeys(values) if values.count(value) > 1]
    if repeated:
        raise ValueError(f"{repeated} listed more than once{what}; list each once")
    return values


def once_each(what: str) -> tuple[AfterValidator, Any]:
    """Metadata for ``Annotated[list[...], *once_each(what)]``: a list whose items are listed
    once each (:func:`listed_once`; ``what``, from ': ', says what a repeat would do), as the
    JSON schema says too (``uniqueItems``)."""
    return (
        AfterValidator(lambda values: listed_once(values, what)),
        Field(json_schema_extra={"uniqueItems": True}),
    )


def validation_problems(exc: ValidationError, data: Any, limit: int = 3) -> str:
    """``field.sub: what pydantic wants (got VALUE)`` for the first ``limit`` errors, joined by
    ``; `` (with how many more there are); each field by its path in ``data`` (the input
    validated), a union's branches taken out (:func:`user_errors`); values shortened, so a huge
    one stays one line."""
    errors = user_errors(exc, data)
    shown = "; ".join(
        f"{'.'.join(map(str, error['loc'])) or 'value'}: {error['msg']} "
        f"(got {reprlib.repr(error['input'])})"
        for error in errors[:limit]
    )
    more = len(errors) - limit
    return shown + (f"; and {more} more" if more > 0 else "")


M = TypeVar("M", bound=BaseModel)


def validated_rows(
    model: type[M],
    rows: Iterable[dict[str, Any]],
    fault: Callable[[int, dict[str, Any], str], Exception],
) -> list[M]:
    """Each of ``rows`` (a table's, in order) as ``model``; the first that is not one raises
    ``fault(index, row, problems)`` (:func:`validation_problems` of it), so every table reader
    names the file, the row and the field in its own words."""
    records = []
    for index, row in enumerate(rows):
        try:
            records.append(model.model_validate(row))
        except ValidationError as exc:
            raise fault(index, row, validation_problems(exc, row)) from None
    return records


#: the names pydantic gives a union's branches in ``loc`` (a type, a model's class, a validator
#: around one), matched whole: a key that merely starts like one ('strength') is a key
BRANCH = re.compile(r"(constrained-)?(str|int|float|bool|none)|[A-Z]\w*|[a-z-]+\[.*\]")
#: a branch's kind -> what it takes, in words, and the types of such a value once read
_KINDS: dict[str, tuple[str, tuple[type, ...]]] = {
    "str": ("a text", (str,)),
    "literal": ("a text", (str,)),
    "int": ("a whole number", (int,)),
    "float": ("a number", (int, float)),
    "bool": ("true or false", (bool,)),
    "none": ("nothing (null)", (type(None),)),
    "list": ("a list", (list,)),
    "tuple": ("a list", (list,)),
    "set": ("a list", (list,)),
    "dict": ("a mapping", (dict,)),
}


def _takes(branch: str) -> tuple[str, tuple[type, ...]]:
    """What a union's ``branch`` (as ``loc`` names it) takes: a model's keys, or a kind."""
    inner = re.fullmatch(
        r"function-[\w-]+\[.*, ([\w-]+(\[.*\])?)\]", branch
    )  # a validator around one
    name = inner.group(1) if inner else branch
    kind = _KINDS.get(name.removeprefix("constrained-").split("[")[0])
    if kind is not None:
        return kind
    models = [m for m in _models(StrictModel) if m.__name__ == name]
    fields = models[0].model_fields if len(models) == 1 else {}
    keys = ", ".join(f.alias or k for k, f in fields.items())
    return (f"a mapping (keys: {keys})" if keys else "a mapping"), (dict,)


def _models(base: type[BaseModel]) -> list[type[BaseModel]]:
    found = []
    for model in base.__subclasses__():
        found += [model, *_models(model)]
    return found


def _is(value: Any, types: tuple[type, ...]) -> bool:
    return isinstance(value, types) and (bool in types or not isinstance(value, bool))


def _walk(error: Any, data: Any) -> tuple[tuple, list[tuple[tuple, str, Any]]]:
    """``error``'s path in ``data`` and each union branch its ``loc`` went through: (the
    union's path, the branch, the value there)."""
    path: list[Any] = []
    branches = []
    node, loc = data, error["loc"]
    for index, part in enumerate(loc):
        found = isinstance(node, dict) and part in node
        found = found or (isinstance(node, list) and isinstance(part, int) and part < len(node))
        if found:
            path.append(part)
            node = node[part]
        elif index < len(loc) - 1 or (error["type"] != "missing" and BRANCH.fullmatch(str(part))):
            branches.append((tuple(path), str(part), node))  # a branch, or a tagged union's tag
        else:  # a missing key, a dict's [key]
            path.append(part)
    return tuple(path), branches


def _taken(branches: list[str], value: Any) -> str | None:
    """The branch that takes a value of this kind; else the one branch that takes more than
    null (its own error says more than "takes a number or nothing"); else None."""
    taken = [b for b in branches if _is(value, _takes(b)[1])]
    taken = taken or [b for b in branches if _takes(b)[1] != (type(None),)]
    return taken[0] if len(taken) == 1 or (taken and _is(value, _takes(taken[0])[1])) else None


def user_errors(exc: ValidationError, data: Any) -> list[dict[str, Any]]:
    """pydantic's errors with ``loc`` as the path in ``data``, the input validated: of each
    union (a column or {value: X}; a number or null) only the errors of the branch that takes
    a value of the kind given are kept, or, when none does, one saying what the union takes
    (``pydantic_loc`` keeps pydantic's own)."""
    errors = [(e, *_walk(e, data)) for e in exc.errors(include_url=False)]
    unions = {where: node for _, _, branches in errors for where, _, node in branches}
    for where in sorted(unions, key=len):  # an outer union decides which inner ones remain
        node = unions[where]
        branches = list({b: 0 for _, _, found in errors for w, b, _ in found if w == where})
        taken, kept = _taken(branches, node), []
        for error in errors:
            branch = next((b for w, b, _ in error[2] if w == where), None)
            if branch is None or branch == taken:
                kept.append(error)
            elif taken is None and branches:  # the union's first error says what it takes
                kinds = dict.fromkeys(_takes(b)[0] for b in branches)
                if "a number" in kinds:  # int | float
                    kinds.pop("a whole number", None)
                said = f"takes {' or '.join(kinds)}"
                kept.append(
                    ({"loc": where, "msg": said, "type": "union", "input": node}, where, [])
                )
                branches = []
        errors = kept
    return [{**error, "loc": path, "pydantic_loc": error["loc"]} for error, path, _ in errors]
