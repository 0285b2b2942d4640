"""One data-parallel rank of a library call: ``python -m nnd_suites.evaluation.rank FOLDER``.

Started by :func:`nnd_suites.evaluation.rank_job.run_in_ranks` (through
:func:`nnd_suites.evaluation.parallel.launch`, which sets ``RANK``, ``WORLD_SIZE``...), never by
hand. It reads the job in ``FOLDER``, makes the same library call as every other rank (no
command line is parsed: the CLI is not involved), and writes what the launcher needs back into
``FOLDER``: rank 0 its result, any rank its error on bad input or the traceback of any other
error (the launcher shows it or, when a peer's death caused it, keeps it to debug logging).
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.parallel import current_rank, die_with_launcher
from nnd_suites.evaluation.rank_job import (
    CRASH_STATUS,
    read_job,
    write_crash,
    write_failure,
    write_result,
)


def entry_points() -> dict[str, Callable[..., Any]]:
    """The library calls a rank can make, by :class:`RankJob` entry name."""
    # here, not at the top: each module imports rank_job to start ranks (no import circle)
    from nnd_suites.evaluation.evaluator import evaluate
    from nnd_suites.evaluation.multi import evaluate_models
    from nnd_suites.evaluation.verify.run import verify_suite

    return {f.__name__: f for f in (evaluate, evaluate_models, verify_suite)}


def main(argv: list[str] | None = None) -> int:
    die_with_launcher()  # first: a launcher killed from here on takes this rank with it
    argv = sys.argv[1:] if argv is None else argv
    rank = current_rank()
    if len(argv) != 1 or rank is None:
        print("usage: started by nnd_suites.evaluation.rank_job.run_in_ranks only", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    job = read_job(folder)
    # the launcher's level for nnd-suites' own lines; other libraries keep to their warnings
    logging.basicConfig(
        level=logging.WARNING, format="nnd-suites %(levelname)s: %(message)s", stream=sys.stderr
    )
    logging.getLogger("nnd_suites").setLevel(job.log_level)
    try:
        result = entry_points()[job.entry](**job.arguments)
    except (NNDError, OSError) as error:  # bad input: the launcher raises it again, as it was
        write_failure(folder, rank.rank, error)
        return error.exit_status if isinstance(error, NNDError) else NNDError.exit_status
    except KeyboardInterrupt:  # forwarded by the launcher, which says so itself
        return 130
    except Exception:  # a bug, or a collective that lost a peer: the launcher tells which
        write_crash(folder, rank.rank, traceback.format_exc())
        return CRASH_STATUS
    if rank.main:
        write_result(folder, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
