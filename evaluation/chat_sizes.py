"""The sizes a chat template's values would reach, reckoned before they are built.

A list may hold 3,000 references to one long text; printing it, joining it, formatting it or
dumping it as JSON would then ask for gigabytes at once. Each check here counts the result's
characters (or items) first and raises :class:`RenderBound` past :data:`MAX_OUTPUT`;
``evaluation/chat_rendering.py`` calls them from its sandbox.
"""

from __future__ import annotations

import itertools
import re
import string
from collections.abc import Mapping, MappingView, Sequence
from typing import Any

from jinja2.filters import make_attrgetter
from jinja2.utils import Namespace, pass_environment

#: The most characters of a prompt, and of any string or list a template builds on the way.
MAX_OUTPUT = 1_000_000
#: ``%``-format widths and precisions (``'%3000000000s' % x``): each allocates its width.
_FORMAT_WIDTHS = re.compile(r"%[-#0 +]*(\d*)(?:\.(\d+))?")
#: the format spec of each ``str.format`` field (``'{:>3000000000}'``): its numbers allocate
_BRACE_SPECS = re.compile(r"\{[^{}:]*:([^{}]*)\}")


class RenderBound(Exception):
    """A template went past a bound (the message says which); raised inside the sandbox."""


def result_size(operator: str, left: Any, right: Any) -> int:
    """How large ``left operator right`` would be, without computing it (0: small)."""
    sized = (str, bytes, list, tuple)
    if operator == "*":
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, sized) and isinstance(count, int):
                return len(seq) * max(count, 0)
    if operator == "+" and isinstance(left, sized) and isinstance(right, sized):
        return len(left) + len(right)
    if operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0:
        return (abs(left).bit_length() * right) // 3  # decimal digits, about
    if operator == "%" and isinstance(left, str):
        right = right if isinstance(right, (tuple, Mapping)) else (right,)
        star = max((v for v in right if isinstance(v, int)), default=0)  # '%*s' % (n, x)
        found = _FORMAT_WIDTHS.findall(left.replace("*", str(star)))
        widths = [int(w or 0) + int(p or 0) for w, p in found]
        keys = re.findall(r"%\(([^)]*)\)", left)  # '%(a)s' * 200000 % {'a': big}
        if isinstance(right, Mapping) and keys:
            right = [right.get(key) for key in keys]
        return len(left) + max(widths, default=0) + text_size(right)
    return 0


def text_size(value: Any, limit: int = MAX_OUTPUT, gap: int = 2, indent: int = 0) -> int:
    """At least how many characters ``value`` makes as text (``str``, ``repr``, ``json.dumps``,
    ``pformat``: a list of 3,000 references to one long text makes 3 GB), counted without
    building it: each item of a container adds ``gap`` (its separator) and ``indent`` (json's,
    per level); the count stops past ``limit``."""
    if isinstance(value, str):
        return len(value)
    value = value._Namespace__attrs if isinstance(value, Namespace) else value
    if isinstance(value, Mapping):
        value = itertools.chain.from_iterable(value.items())
    elif not isinstance(value, (list, tuple, set, frozenset, MappingView)):
        return 1
    size = 2
    for item in value:
        size += text_size(item, limit - size, gap + indent, indent) + gap + indent
        if size > limit:
            break
    return size


def check_text(what: str, value: Any, **json: int) -> Any:
    """``value``, refused if the text it makes (:func:`text_size`) would pass MAX_OUTPUT."""
    if not isinstance(value, str) and text_size(value, **json) > MAX_OUTPUT:
        raise RenderBound(f"{what} would build a text of more than {MAX_OUTPUT:,} characters")
    return value


def format_fields(text: str, args: Sequence[Any], named: Any, numbers: Any = None) -> Any:
    """(value, nested) for each field of ``text.format(*args, **named)``: the value it prints
    (``'{0}' * 200000``), or one a spec's field gives (nested: a width, ``'{0:>{1}}'``)."""
    automatic = numbers or itertools.count()
    for _literal, field, spec, _conversion in string.Formatter().parse(text):
        if field is not None:
            key = re.match(r"[^.\[]*", field).group()
            index = int(key) if key.isdigit() else next(automatic) if not key else None
            value = named.get(key) if index is None and isinstance(named, Mapping) else None
            yield args[index] if index is not None and index < len(args) else value, bool(numbers)
            yield from format_fields(spec or "", args, named, automatic)


def check_growth(name: str, text: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Refuse ``text.name(*args)`` (a method or a filter) that would multiply its inputs past
    :data:`MAX_OUTPUT`: ``replace`` (each match by the new text), ``indent`` (each line by the
    width), ``expandtabs`` (each tab by the tab size), ``join`` (10,000 copies of a long text,
    which a list holds as references), each input below the bound."""
    if name == "join" and isinstance(text, (list, tuple)):  # the filter: items, separator
        text, args = (args or [""])[0], [text]
    if not isinstance(text, str):
        return
    if name == "join" and isinstance(args[0] if args else None, (list, tuple)):
        items = args[0]
        others = [i for i in items if not isinstance(i, str)]  # made text: [[big] * 3000]
        size = len(text) * len(items) + sum(len(i) for i in items if isinstance(i, str))
        size += text_size(others, gap=0) if others else 0
    elif name == "replace" and len(args) >= 2 and all(isinstance(a, str) for a in args[:2]):
        matches = text.count(args[0]) if args[0] else len(text) + 1
        size = len(text) + matches * len(args[1])
    elif name in ("indent", "expandtabs"):
        step = (*args, kwargs.get("width", kwargs.get("tabsize", 4)))[0]
        step = len(step) if isinstance(step, str) else step
        size = len(text) + (text.count("\n" if name == "indent" else "\t") + 1) * step
    elif name == "wordwrap":  # a wrapstring between each line of width characters
        width, wrap = (*args, 79, "", "")[0], (*args[2:], kwargs.get("wrapstring"), "")[0]
        size = len(text) + (len(text) // max(width, 1) + 1) * len(wrap or "")
    else:
        return
    if size > MAX_OUTPUT:
        raise RenderBound(
            f"{name} would build a text of {size:,} characters (at most {MAX_OUTPUT:,})"
        )


def check_format(name: str, text: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Refuse ``text.format(*args)`` (or ``format_map``) past MAX_OUTPUT: a width, or its
    fields' texts."""
    if name in ("format", "format_map") and isinstance(text, str):
        named = kwargs if name == "format" else (args or [{}])[0]
        fields = list(format_fields(text, args, named))
        width = sum(int(n) for s in _BRACE_SPECS.findall(text) for n in re.findall(r"\d+", s))
        width += sum(v for v, nested in fields if nested and isinstance(v, int))
        if width > MAX_OUTPUT:
            raise RenderBound(f"a format width of {width:,} (at most {MAX_OUTPUT:,})")
        check_text(name, (" " * len(text), *(v for v, nested in fields if not nested)))


#: The filters that keep a list a list (their input's text is never built)
KEEPS_CONTAINERS = frozenset(
    "abs attr batch count d default dictsort first float groupby int items join last "  # noqa: SIM905
    "length list map max min reject rejectattr reverse round select selectattr slice sort sum "
    "unique".split()
)


@pass_environment
def bounded_sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    """jinja's ``|sum``, lists or tuples (``start=[]``) added once, their items counted first:
    ``sum`` adds them one by one (300,000 lists of one item: hours, out of the clock's reach)."""
    if attribute is not None:
        iterable = map(make_attrgetter(environment, attribute), iterable)
    if not isinstance(start, (list, tuple)):
        return sum(iterable, start)
    items = list(start)
    for part in iterable:
        if type(part) is not type(start):
            start[:0] + part  # the TypeError sum raises
        if len(items) + len(part) > MAX_OUTPUT:
            raise RenderBound(f"sum would build a list of more than {MAX_OUTPUT:,} items")
        items.extend(part)
    return type(start)(items)
