"""``python -m nnd_suites.evaluation.tiny OUT``: a tiny random model (a package's ``__main__``,
so runpy finds no half-imported module: the evaluator imports the package itself)."""

from nnd_suites.evaluation.tiny import main

raise SystemExit(main())
