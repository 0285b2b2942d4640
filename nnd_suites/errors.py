"""Errors that name the file, line or item at fault and say what to do about it."""

from __future__ import annotations

import difflib
import re
import unicodedata

#: bidirectional controls reorder what a terminal shows (U+202E turns "txt.exe" around)
_BIDI_CONTROLS = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A)) | {0x200E, 0x200F}


def printable(text: str, *, json: bool = False) -> str:
    """``text`` safe to print on a terminal: control characters (ESC, BEL, CR, NUL: escape
    sequences that retitle a window or rewrite a line) and bidirectional controls escaped as
    ``\\x1b`` or ``\\u202e``; line breaks and tabs kept. For every message and line that quotes
    source data (a column name, a label, a file name). ``json=True``: ``text`` is a JSON
    document, and each one is written ``\\u001b`` (the same JSON value, nothing raw)."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(
        char
        if char in "\n\t" or not (unicodedata.category(char) == "Cc" or ord(char) in _BIDI_CONTROLS)
        else char.encode("unicode_escape").decode("ascii")
        if ord(char) < 0x100 and not json
        else f"\\u{ord(char):04x}"
        for char in text
    )


class NNDError(Exception):
    """Base class for every error nnd-suites raises on bad input.

    Each class has its own ``exit_status``, so a script calling the CLI can tell a data fault from
    a model that would not load or a Hub failure without parsing the message.
    """

    exit_status: int = 2

    def __str__(self) -> str:  # messages quote source data: never raw terminal controls
        return printable(super().__str__())


class SourceFormatError(NNDError):
    """A source file (annotation data) is missing or malformed: names the file and the line (a
    missing one is a fault of the source, as a missing map is a QualityMapError, not usage).

    ``detail`` is what only this row has (the rater, where the row it repeats is), written after
    the message: a skipped row's reason is the message alone, so repeats count under one reason.
    A message that quotes the row's own value (``'x' is not a number``) gives ``counted_as``,
    the same words without it, and ``value``, shown beside the row's place among the examples.
    """

    exit_status = 3

    def __init__(
        self,
        path: str,
        line: int | None,
        message: str,
        hint: str = "",
        detail: str = "",
        *,
        counted_as: str | None = None,
        value: str = "",
    ) -> None:
        self.path, self.line, self.reason, self.hint = str(path), line, message, hint
        #: the reason a skipped row is counted under (its value left out, so repeats group)
        self.counted_as, self.value = message if counted_as is None else counted_as, value
        self.detail = detail
        where = f"{path}:{line}" if line is not None else str(path)
        text = f"{where}: {message}" + (f" ({detail})" if detail else "")
        if hint:
            text += f" ({hint})"
        super().__init__(text)

    def with_hint(self, hint: str) -> SourceFormatError:
        """The same error saying ``hint`` (what to do) instead."""
        return SourceFormatError(
            self.path,
            self.line,
            self.reason,
            hint,
            self.detail,
            counted_as=self.counted_as,
            value=self.value,
        )

    @classmethod
    def at(cls, where: str, message: str, hint: str = "") -> SourceFormatError:
        """An error at ``where``, a place as groups and candidates note it (``FILE:LINE``,
        ``FILE:LINE question 2``, or a group id), its line kept as the line."""
        found = re.fullmatch(r"(.+?):(\d+)(?: (.+))?", where, re.DOTALL)
        if found is None:
            return cls(where, None, message, hint)
        path, line, rest = found.groups()
        return cls(path, int(line), f"{rest}: {message}" if rest else message, hint)


class QualityMapError(NNDError):
    """A quality map is invalid (schema, cycle, contradiction) or does not cover the data."""

    exit_status = 4

    def __init__(self, map_name: str, message: str, labels: list[str] | None = None) -> None:
        self.map_name, self.labels = map_name, list(labels or [])
        super().__init__(f"quality map {map_name}: {message}")


class SuiteValidationError(NNDError):
    """A suite on disk or in memory does not satisfy its schema or invariants."""

    exit_status = 5


class UnknownItemError(NNDError, KeyError):
    """An unknown adapter, quality map, transformation, backend or suite was asked for.

    The message suggests the closest known names ("did you mean") before listing them all.
    """

    exit_status = 6

    def __init__(self, kind: str, name: str, known: list[str], hint: str = "") -> None:
        self.kind, self.name, self.known = kind, name, list(known)
        close = difflib.get_close_matches(str(name), self.known, n=3, cutoff=0.6)
        text = f"unknown {kind} {name!r}"
        if close:
            text += f"; did you mean {' or '.join(repr(c) for c in close)}?"
        text += f" (known: {', '.join(sorted(self.known)) or 'none'})"
        if hint:
            text += f"; {hint}"
        super().__init__(text)

    def __str__(self) -> str:  # KeyError would quote the message
        return printable(self.args[0])


class PluginError(NNDError):
    """A plugin (adapter, transformation, backend) is declared incorrectly."""

    exit_status = 7


class ParameterError(NNDError):
    """A user gave a plugin (adapter, transformation, slice, backend) a parameter it does not
    take or a value it refuses: a usage error (exit status 2) naming the plugin, the parameter
    and the parameters it takes."""

    exit_status = 2


class ArgumentError(NNDError):
    """A Python API function (``nnd_suites.evaluate``...) was given an argument of the wrong type
    or meaning, which the CLI would have refused while parsing: names the argument, what was
    given, and what to give (instead of a TypeError deep inside, or a silent other meaning)."""

    exit_status = 2


class TemplateError(NNDError):
    """A context template is malformed, unsafe or names a field the suite does not have."""

    exit_status = 8


class ModelLoadError(NNDError):
    """A model or tokenizer could not be loaded, or is unfit for scoring (says which and why)."""

    exit_status = 9


class HubError(NNDError):
    """The Hugging Face Hub could not be reached or refused a request (repo, revision, auth)."""

    exit_status = 10


class ScoringError(NNDError):
    """Scoring produced no trustworthy result (an engine failed its check, most tests tied...)."""

    exit_status = 11


class CacheMismatchError(ScoringError):
    """The score cache answers for a model that no longer gives those scores (another model
    served behind the same URL and id): the cache is refused, never read."""


class PairBudgetError(NNDError):
    """A group or a suite would give more pairs than its budget (says how many, and the option
    that raises the limit): refused before the pairs are built, so memory stays bounded."""


class OutputFolderError(NNDError):
    """An output folder (``--out``, ``--to``) holds something nnd-suites did not write.

    A usage error (exit status 2, like the base class): nothing was written and nothing was
    deleted; the message says what is there and how to choose another folder.
    """

    exit_status = 2


class NoSystemsError(NNDError):
    """A suite whose candidates name no system that generated them (pairwise preferences such as
    HH-RLHF's): there is no system to give a human score (``systems``) or to verify (``verify``).
    A usage error (exit status 2) naming the suite."""

    exit_status = 2


class AmbiguousSuiteError(NNDError):
    """A bare suite name that is both a built-in suite and a folder in the current directory:
    refused rather than guessed; the message says how to name each one."""

    exit_status = 2


class DeclarationError(NNDError):
    """A declarative source (``adapters/NAME/source.yaml``) is invalid or does not fit its table:
    names ``source.yaml:line`` (and the data file's line where a row is at fault)."""

    exit_status = 3


class UnsafeArchiveError(SourceFormatError):
    """An archive member would be written outside its folder (an absolute path, a ``..`` escape,
    a link pointing out) or is not a file, folder or inner link (a device, a fifo): the archive is
    data from elsewhere, so it is refused, naming the archive and the member."""

    def __init__(self, archive: str, member: str, reason: str) -> None:
        self.member = member
        super().__init__(
            archive,
            None,
            f"member {member!r} {reason}",
            "archives are extracted only when every member stays inside its folder: "
            "extract it yourself after checking it, or ask its publisher for a clean one",
        )
