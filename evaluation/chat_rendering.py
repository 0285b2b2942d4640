"""The one renderer of chat templates: Jinja code from a model's repository, run as data.

A chat template (``chat_template`` in tokenizer_config.json or ``chat_template.jinja``) comes
with the model, not with nnd-suites, so rendering it is bounded like any untrusted input:

- jinja2's ``ImmutableSandboxedEnvironment`` (no attribute access to Python internals, no
  mutation of the conversation), with transformers' own filters, globals and ``{% generation %}``
  tag, so a template renders as ``apply_chat_template`` renders it;
- ``range`` yields at most :data:`MAX_RANGE` numbers;
- ``*``, ``**``, ``%`` and ``+`` are checked before they run (``'x' * 3000000000`` would ask for
  3 GB at once): no result may exceed :data:`MAX_OUTPUT` characters or items; so are calls and
  filters (no number argument or ``str.format`` width above it: ``'x'.ljust(3000000000)``,
  ``|center``, ``|indent``, ``tojson(indent=...)``; no result above it), and ``~`` and blocks
  (a text joined from parts);
- a macro calling itself, or brackets nested thousands deep, end at Python's recursion limit;
- ``lipsum`` is refused: random text (a prompt differing run to run), made outside the clock's
  reach (``lipsum(999999)`` runs for hours);
- rendering stops after :data:`MAX_SECONDS` (a nested loop over ranges runs for hours): the
  template's own frames are traced, and each of their steps checks the clock;
- the prompt may not exceed :data:`MAX_OUTPUT` characters.
- the prompt must hold the conversation's last turn, the one the response answers (or at
  least change with its text, for a template that escapes it): a template that leaves it out
  would have every test scored after text that is not its conversation.

Each bound, and each Jinja error, is one :class:`TemplateError` line naming the template's model
and the bound.
"""

from __future__ import annotations

import functools
import re
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from jinja2 import TemplateError as JinjaError
from jinja2.exceptions import SecurityError, TemplateSyntaxError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from nnd_suites.errors import TemplateError

#: The longest a template may render one prompt.
MAX_SECONDS = 5.0
#: The most characters of a prompt, and of any string or list a template builds on the way.
MAX_OUTPUT = 1_000_000
#: The most numbers one ``range`` yields.
MAX_RANGE = 10_000
#: ``%``-format widths and precisions (``'%3000000000s' % x``): each allocates its width.
_FORMAT_WIDTHS = re.compile(r"%[-#0 +]*(\d*)(?:\.(\d+))?")
#: the format spec of each ``str.format`` field (``'{:>3000000000}'``): its numbers allocate
_BRACE_SPECS = re.compile(r"\{[^{}:]*:([^{}]*)\}")


class RenderBound(Exception):
    """A template went past a bound (the message says which); raised inside the sandbox."""


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox with its sizes bounded: ``range`` and the operators that build large values
    are checked before they run."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        size = _result_size(operator, left, right)
        if size > MAX_OUTPUT:
            raise RenderBound(
                f"'{operator}' would build a value of {size:,} characters or items (at most "
                f"{MAX_OUTPUT:,})"
            )
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(__obj, "__name__", "")
        text = getattr(getattr(__obj, "__wrapped__", __obj), "__self__", None)  # str.format's
        if name in ("format", "format_map") and isinstance(text, str):
            width = max(
                (int(n) for s in _BRACE_SPECS.findall(text) for n in re.findall(r"\d+", s)),
                default=0,
            )
            if width > MAX_OUTPUT:
                raise RenderBound(f"a format width of {width:,} (at most {MAX_OUTPUT:,})")
        _check_growth(name, text, args, kwargs)
        return _bounded(super().call)(__context, __obj, *args, **kwargs)

    concat = staticmethod(lambda parts: _joined("".join, parts))


def _result_size(operator: str, left: Any, right: Any) -> int:
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
        widths = [int(w or 0) + int(p or 0) for w, p in _FORMAT_WIDTHS.findall(left)]
        return len(left) + max(widths, default=0)
    return 0


def _check_growth(name: str, text: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
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
        size = len(text) * len(items) + sum(len(i) for i in items if isinstance(i, str))
    elif name == "replace" and len(args) >= 2 and all(isinstance(a, str) for a in args[:2]):
        matches = text.count(args[0]) if args[0] else len(text) + 1
        size = len(text) + matches * len(args[1])
    elif name in ("indent", "expandtabs"):
        step = (*args, kwargs.get("width", kwargs.get("tabsize", 4)))[0]
        step = len(step) if isinstance(step, str) else step
        size = len(text) + (text.count("\n" if name == "indent" else "\t") + 1) * step
    else:
        return
    if size > MAX_OUTPUT:
        raise RenderBound(
            f"{name} would build a text of {size:,} characters (at most {MAX_OUTPUT:,})"
        )


def _bounded(function: Any, name: str = "") -> Any:
    """``function`` (a filter, or a call from the template) refusing a number argument above
    :data:`MAX_OUTPUT` (a width or an indent allocates it) before it runs, and a result above it
    after."""

    @functools.wraps(function)  # keeps a filter's pass_context marks
    def bounded(*args: Any, **kwargs: Any) -> Any:
        values = args[1:] if hasattr(function, "jinja_pass_arg") else args  # a filter's own
        if values:
            _check_growth(name, values[0], values[1:], kwargs)
        for value in (*args, *kwargs.values()):
            if isinstance(value, int) and value > MAX_OUTPUT:
                raise RenderBound(f"an argument of {value:,} (at most {MAX_OUTPUT:,})")
        result = function(*args, **kwargs)
        if isinstance(result, (str, bytes, list, tuple)) and len(result) > MAX_OUTPUT:
            raise RenderBound(f"a result of {len(result):,} characters or items")
        return result

    return bounded


def _joined(join: Any, parts: Any) -> str:
    """``join(parts)`` (``~``, a block's or a macro's text), refused past :data:`MAX_OUTPUT`."""
    kept, size = [], 0
    for part in parts:
        size += len(str(part))
        if size > MAX_OUTPUT:
            raise RenderBound(
                f"'~' or a block would build a text of more than {MAX_OUTPUT:,} characters"
            )
        kept.append(part)
    return join(kept)


def _no_lipsum(*args: Any, **kwargs: Any) -> None:
    raise SecurityError("lipsum (random text, made past the time bound) is not available")


def _bounded_range(*args: int) -> Iterator[int]:
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise RenderBound(f"range of {len(numbers):,} numbers (at most {MAX_RANGE:,})")
    return iter(numbers)


@functools.lru_cache(maxsize=16)
def _compiled(source: str):
    """``source`` compiled in a bounded environment that has what transformers gives a chat
    template (its filters such as ``tojson``, globals such as ``raise_exception``, and the
    ``{% generation %}`` extension), taken from transformers' own environment. The sandbox does
    not fold the intercepted operators at compile time: they run, checked, when rendering."""
    # lazy: transformers is needed only when a model's chat template is rendered
    from transformers.utils.chat_template_utils import _compile_jinja_template

    # an empty template: compiling ``source`` there would fold its constants ('x' * 3000000000)
    # at compile time, outside every bound
    reference = _compile_jinja_template("").environment
    environment = BoundedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[type(extension) for extension in reference.extensions.values()],
    )
    environment.filters.update(reference.filters)
    # |format is '%' (its widths checked as the operator's)
    environment.filters["format"] = lambda value, *args, **kwargs: environment.call_binop(
        None, "%", str(value), kwargs or args
    )
    environment.filters = {name: _bounded(f, name) for name, f in environment.filters.items()}
    environment.globals.update(reference.globals)
    environment.globals["range"] = _bounded_range
    environment.globals["lipsum"] = _no_lipsum
    template = environment.from_string(source)
    names = template.root_render_func.__globals__  # the compiled module's: '~' joins with these
    for join in ("str_join", "markup_join"):
        names[join] = functools.partial(_joined, names[join])
    return template


def render_chat_template(tokenizer: Any, turns: Sequence[Mapping[str, str]]) -> str:
    """``tokenizer``'s chat template over ``turns``, ending with the opening of the assistant's
    turn (``add_generation_prompt``), with the variables ``apply_chat_template`` gives it (the
    special tokens, ``tools`` and ``documents`` None), within the bounds above."""
    model = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
    where = (
        f"model {model!r}: its chat template (chat_template in tokenizer_config.json or "
        "chat_template.jinja)"
    )
    fix = (
        "Fix or remove the model's chat template, or score the suite with its own text "
        "template (without --template chat)"
    )
    prompt = _rendered(tokenizer, turns, where, fix)
    # A template that leaves out the turn the response answers (a constant prompt, roles
    # without their text) would have every test scored after text that is not its
    # conversation, and the figures would say otherwise. The last turn's text is usually in
    # the prompt as it is (stripped: many templates trim); when it is not (a template may
    # escape it, as tojson does), the prompt must at least change when that text changes.
    # Only the last turn is asked for: some templates drop or rewrite earlier turns on purpose.
    last = str(turns[-1].get("content", "")).strip() if turns else ""
    if last and last not in prompt:
        probe = [*turns[:-1], {**turns[-1], "content": last + " (nnd-suites probe)"}]
        if _rendered(tokenizer, probe, where, fix) == prompt:
            raise TemplateError(
                f"{where} leaves out the conversation's last turn ({turns[-1].get('role')}: "
                f"{last[:60]!r}{'...' if len(last) > 60 else ''}): the model would be scored "
                f"after text that is not the conversation (rendered: {prompt[:80]!r}). {fix}"
            )
    return prompt


def _rendered(tokenizer: Any, turns: Sequence[Mapping[str, str]], where: str, fix: str) -> str:
    """One rendering of ``tokenizer``'s chat template over ``turns`` within the bounds; each
    failure is the TemplateError ``where ... fix``."""
    variables = {
        **tokenizer.special_tokens_map,
        "messages": [dict(turn) for turn in turns],
        "tools": None,
        "documents": None,
        "add_generation_prompt": True,
    }
    try:
        template = _compiled(tokenizer.get_chat_template())
        prompt = _within_time(lambda: _prompt(template.generate(**variables)))
    except RenderBound as exc:
        raise TemplateError(f"{where} went past a bound: {exc}. {fix}") from None
    except RecursionError:
        raise TemplateError(
            f"{where} went past a bound: it nests deeper than Python's recursion limit "
            f"({sys.getrecursionlimit():,}). {fix}"
        ) from None
    except MemoryError:
        raise TemplateError(f"{where} ran out of memory. {fix}") from None
    except (JinjaError, ValueError, TypeError) as exc:  # the template's own failure
        what = (
            "tried something the sandbox forbids (unsafe; nothing of it ran)"
            if isinstance(exc, SecurityError)
            else "is malformed"
            if isinstance(exc, TemplateSyntaxError)
            else "failed on this conversation"
        )
        detail = str(exc).strip().splitlines()[0].rstrip(".") if str(exc).strip() else ""
        raise TemplateError(f"{where} {what}: {type(exc).__name__}: {detail}. {fix}") from exc
    return prompt


def _prompt(chunks: Iterator[str]) -> str:
    """The rendered ``chunks`` joined; past :data:`MAX_OUTPUT` characters the rest is only
    counted (within the time bound), not kept, for the error to say how long it was."""
    kept, size = [], 0
    for chunk in chunks:
        size += len(chunk)
        if size <= MAX_OUTPUT:
            kept.append(chunk)
    if size > MAX_OUTPUT:
        raise RenderBound(f"a prompt of {size:,} characters (at most {MAX_OUTPUT:,})")
    return "".join(kept)


def _within_time(render, seconds: float | None = None) -> str:
    """``render()``, stopped with :class:`RenderBound` once it has run ``seconds`` (default
    :data:`MAX_SECONDS`): every line
    the template's compiled code runs (it is Python code named after the template) checks the
    clock, so a loop that prints nothing is stopped too. Only this thread is traced."""
    seconds = MAX_SECONDS if seconds is None else seconds  # read now: a test may lower it
    deadline = time.monotonic() + seconds

    def in_template(frame, event, _arg):
        if time.monotonic() > deadline:
            raise RenderBound(f"it ran longer than {seconds:g} seconds")
        return in_template

    def on_call(frame, event, arg):
        # the template's compiled functions carry its file name, "<template>"; others run untraced
        return in_template(frame, event, arg) if frame.f_code.co_filename == "<template>" else None

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        return render()
    finally:
        sys.settrace(previous)
