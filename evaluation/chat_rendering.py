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
- a value printed or turned into text (``{{ list }}``, ``|string``, ``|tojson``, ``|pprint``,
  ``~``, ``%``, ``str.format``, ``|join``: a list of 3,000 references to one long text) has its
  text's length reckoned first; ``|sum`` over lists counts their items and adds them once;
- ``lipsum`` and ``|random`` are refused: a prompt differing run to run (scores not
  reproducible, the cache mixing them); ``strftime_now`` (templates that state today's date)
  reads the clock once per process, with a warning, so one run's prompts all hold one date;
- rendering stops after :data:`MAX_SECONDS` (a nested loop over ranges runs for hours): the
  template's own frames are traced, and each of their steps checks the clock, and every
  hundredth of a second the process's memory: a loop that keeps each value it makes (each below
  the bounds above) stops once the render holds :data:`MAX_MEMORY` more; a filter's items
  (``|map('upper')`` over 3,000 references to one long text) are counted as they are made;
- the prompt may not exceed :data:`MAX_OUTPUT` characters.
- the prompt must hold the conversation's last turn, the one the response answers (or at
  least change with its text, for a template that escapes it): a template that leaves it out
  would have every test scored after text that is not its conversation.

Each bound, and each Jinja error, is one :class:`TemplateError` line naming the template's model
and the bound.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from jinja2 import TemplateError as JinjaError
from jinja2.exceptions import SecurityError, TemplateSyntaxError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from nnd_suites.errors import TemplateError
from nnd_suites.evaluation.chat_sizes import (
    KEEPS_CONTAINERS,
    MAX_OUTPUT,
    RenderBound,
    bounded_sum,
    check_format,
    check_growth,
    check_text,
    result_size,
    text_size,
)

logger = logging.getLogger(__name__)

#: The longest a template may render one prompt.
MAX_SECONDS = 5.0
#: The most memory a render may add to the process's (its resident size, read every 10 ms).
MAX_MEMORY = 1 << 30
#: The most numbers one ``range`` yields.
MAX_RANGE = 10_000


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox with its sizes bounded: ``range`` and the operators that build large values
    are checked before they run."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        size = result_size(operator, left, right)
        if size > MAX_OUTPUT:
            raise RenderBound(
                f"'{operator}' would build a value of {size:,} characters or items (at most "
                f"{MAX_OUTPUT:,})"
            )
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(__obj, "__name__", "")
        text = getattr(getattr(__obj, "__wrapped__", __obj), "__self__", None)  # str.format's
        check_format(name, text, args, kwargs)
        check_growth(name, text, args, kwargs)
        return _bounded(super().call)(__context, __obj, *args, **kwargs)

    concat = staticmethod(lambda parts: _joined("".join, parts))


def _bounded(function: Any, name: str = "") -> Any:
    """``function`` (a filter, or a call from the template) refusing a number argument above
    :data:`MAX_OUTPUT` (a width or an indent allocates it) before it runs, and a result above it
    after."""

    @functools.wraps(function)  # keeps a filter's pass_context marks
    def bounded(*args: Any, **kwargs: Any) -> Any:
        values = args[1:] if hasattr(function, "jinja_pass_arg") else args  # a filter's own
        if values:
            check_growth(name, values[0], values[1:], kwargs)
        for value in (*args, *kwargs.values()):
            if isinstance(value, int) and value > MAX_OUTPUT:
                raise RenderBound(f"an argument of {value:,} (at most {MAX_OUTPUT:,})")
        if values and name and name not in KEEPS_CONTAINERS:  # a filter making text of it
            options = {
                **dict(zip(("", "indent", "separators"), values[1:], strict=False)),
                **kwargs,
            }
            indent, separators = options.get("indent") or 0, options.get("separators") or ""
            indent = len(indent) if isinstance(indent, str) else indent
            check_text(f"|{name}", values[0], gap=len("".join(separators)) or 2, indent=indent)
        result = function(*args, **kwargs)
        if isinstance(result, Iterator):  # |map, |select...: values made one by one
            return _counted(result, name)
        if isinstance(result, (str, bytes, list, tuple)) and len(result) > MAX_OUTPUT:
            raise RenderBound(f"a result of {len(result):,} characters or items")
        return result

    return bounded


def _counted(items: Iterator[Any], name: str) -> Iterator[Any]:
    """``items``, refused once the values yielded make more than :data:`MAX_OUTPUT` characters
    of text together: each may be a new value (``|map('upper')``), all of them kept (``|list``)."""
    size = 0
    for item in items:
        size += text_size(item, MAX_OUTPUT - size)
        if size > MAX_OUTPUT:
            raise RenderBound(
                f"|{name} would yield values of more than {MAX_OUTPUT:,} characters together"
            )
        yield item


def _resident_bytes() -> int:
    """The process's resident memory (Linux's /proc/self/statm; 0 where there is none, and the
    memory bound is then not checked)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _joined(join: Any, parts: Any) -> str:
    """``join(parts)`` (``~``, a block's or a macro's text), refused past :data:`MAX_OUTPUT`."""
    kept, size = [], 0
    for part in parts:
        size += text_size(part, MAX_OUTPUT - size)
        if size > MAX_OUTPUT:
            raise RenderBound(
                f"'~' or a block would build a text of more than {MAX_OUTPUT:,} characters"
            )
        kept.append(part)
    return join(kept)


def _refused(name: str, why: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise SecurityError(f"{name} ({why}) is not available")

    return refuse


_RANDOM = "a prompt differing run to run: scores not reproducible, the cache mixing them"


@functools.cache
def _first_clock_reading() -> datetime:
    now = datetime.now()
    logger.warning(
        "a chat template reads today's date (strftime_now): this run's prompts hold %s, the "
        "time of its first rendering; a run on another day scores other prompts (cached apart)",
        now.isoformat(timespec="seconds"),
    )
    return now


def _strftime_now(format: str) -> str:
    """transformers' ``strftime_now`` with the clock read once per process: its own reads it at
    each call, so prompts of one run (a checkpoint's and the next one's, during training) would
    differ by the time they were rendered."""
    return _first_clock_reading().strftime(format)


def _bounded_range(*args: int) -> Iterator[int]:
    numbers = range(*args)
    count = max(0, (numbers.stop - numbers.start) // -numbers.step * -1)  # len() overflows
    if count > MAX_RANGE:
        raise RenderBound(f"range of {count:,} numbers (at most {MAX_RANGE:,})")
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
        finalize=functools.partial(check_text, "printing a value"),  # {{ [big] * 3000 }}
        extensions=[type(extension) for extension in reference.extensions.values()],
    )
    environment.filters.update(reference.filters)
    # |format is '%' (its widths checked as the operator's)
    environment.filters["format"] = lambda value, *args, **kwargs: environment.call_binop(
        None, "%", str(value), kwargs or args
    )
    environment.filters.update(sum=bounded_sum, random=_refused("random", _RANDOM))
    environment.filters = {name: _bounded(f, name) for name, f in environment.filters.items()}
    environment.globals.update(reference.globals)
    environment.globals["range"] = _bounded_range
    environment.globals["strftime_now"] = _strftime_now
    environment.globals["lipsum"] = _refused(
        "lipsum", f"random text, made past the time bound; {_RANDOM}"
    )
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
    # the template's own failure: Python's errors raised in its expressions (1/0, a format key
    # missing, an overflow, a filter's assert) as much as Jinja's
    except (JinjaError, ValueError, TypeError, ArithmeticError, LookupError, AssertionError) as exc:
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
    memory_ceiling = _resident_bytes() + MAX_MEMORY
    next_memory_check = 0.0

    def in_template(frame, event, _arg):
        nonlocal next_memory_check
        now = time.monotonic()
        if now > deadline:
            raise RenderBound(f"it ran longer than {seconds:g} seconds")
        if now > next_memory_check:
            next_memory_check = now + 0.01
            if _resident_bytes() > memory_ceiling:
                raise RenderBound(f"it held more than {MAX_MEMORY >> 20:,} MiB of memory")
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
