"""The models nnd-suites makes itself: ``--model`` names that need no download, listed by
``nnd-suites list`` (kept apart from :mod:`nnd_suites.evaluation.tiny`, which makes them, so the
listing imports nothing heavy)."""

from __future__ import annotations

#: ``--model`` name of the embedded model: made on the spot, nothing downloaded. Not a Hub id
#: (those have no ``:``), so it cannot shadow a real model.
EMBEDDED = "nnd-suites:tiny-random"
#: what every built-in model name starts with
BUILTIN_PREFIX = "nnd-suites:"

#: every built-in ``--model`` name -> what it is, in one line
BUILTIN_MODELS = {
    EMBEDDED: "tiny GPT-2-shaped model with random weights, made on the spot (nothing "
    "downloaded): a pipeline check, its pass rates mean nothing",
}


def builtin_models() -> dict[str, str]:
    return dict(BUILTIN_MODELS)
