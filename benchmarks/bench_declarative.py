"""Declarative vs class: the cost of reading a table through ``source.yaml`` against a hand-written
adapter class that reads the same file into the same groups.

The largest of the table-shaped sources is SimpEval's ``simpeval_past.csv`` (1.26 MB, 2,400 rows x
5 raters); it is not shipped (no license), so pass your copy with ``--source``; without it the
largest shipped one, Topical-Chat USR (669 KB JSON), is used. Printed: the median time of reading
every group (``read``) and of the whole build (``build_suite``, pairs included) for each, their
ratio, and whether both gave the same groups. Exit status 1 when they differ.

Run: ``python benchmarks/bench_declarative.py [--source PATH/simpeval_past.csv] [--repeats 7]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from nnd_suites import build_suite
from nnd_suites.builder.adapter import ADAPTERS, Adapter
from nnd_suites.records.groups import Candidate, Group
from nnd_suites.sources import ReadLog, parse_number, read_json_array
from nnd_suites.sources.delimited import read_csv


class SimpEvalClass(Adapter):
    """What a contributor would write for simpeval_past without a declaration."""

    def read(self, path: Path, log: ReadLog) -> Iterator[Group]:
        groups: dict[str, Group] = {}
        for line, row in read_csv(path, log):
            where = f"{path.name}:{line}"
            group = groups.setdefault(
                row["original_id"],
                Group(
                    id=row["original_id"],
                    context={"original": row["original"]},
                    candidates=[],
                    where=where,
                ),
            )
            group.candidates.append(
                Candidate(
                    text=row["processed_generation"],
                    systems=[row["system"]],
                    ratings={
                        "rating": [
                            parse_number(
                                row[f"rating_{i}"], path, line, f"rating_{i}", low=0, high=100
                            )
                            for i in range(1, 6)
                        ]
                    },
                    where=where,
                )
            )
        yield from groups.values()


class TopicalChatClass(Adapter):
    """What a contributor would write for topical_chat_usr without a declaration."""

    aspects = ("understandability", "naturalness", "coherence", "engagingness", "groundedness")

    def read(self, path: Path, log: ReadLog) -> Iterator[Group]:
        groups: dict[tuple[str, str], Group] = {}
        for line, item in read_json_array(path, log):
            key = (item["source"], item["context"])
            group = groups.setdefault(
                key,
                Group(
                    id=" | ".join(key),
                    context={"history": item["source"], "fact": item["context"]},
                    candidates=[],
                    where=f"{path.name}:{line}",
                ),
            )
            group.candidates.append(
                Candidate(
                    text=item["system_output"],
                    systems=[item["system_id"]],
                    ratings={
                        aspect: [parse_number(item["scores"][aspect], path, line, key=aspect)]
                        for aspect in (*self.aspects, "overall")
                    },
                    where=f"{path.name}:{line}",
                )
            )
        yield from groups.values()


def _class_like(name: str, reader: type[Adapter]) -> type[Adapter]:
    declared = ADAPTERS.get(name)
    attributes = {
        key: getattr(declared, key)
        for key in ("quality_map", "context_fields", "default_template", "metadata", "name")
    }
    return type(reader.__name__, (reader,), {**attributes, "__module__": __name__})


def _medians(first: Callable[[], object], second: Callable[[], object], repeats: int):
    """Median seconds of each, run alternately (first/second, then second/first) so that drift
    in the machine's load falls on both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    for repeat in range(repeats):
        order = (0, 1) if repeat % 2 == 0 else (1, 0)
        for index in order:
            start = time.perf_counter()
            (first, second)[index]()
            times[index].append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, help="your simpeval_past.csv")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if args.source is not None:
        name, reader, source = "simpeval_past", SimpEvalClass, args.source
    else:
        name, reader = "topical_chat_usr", TopicalChatClass
        source = ADAPTERS.get(name).default_source_path()
    declarative, by_class = ADAPTERS.get(name)(), _class_like(name, reader)()
    same = [g.model_dump() for g in declarative.read(source, ReadLog())] == [
        g.model_dump() for g in by_class.read(source, ReadLog())
    ]
    print(f"{name}: {source.name}, {source.stat().st_size:,} bytes; same groups: {same}")
    for what, run in (
        ("read", lambda a: list(a.read(source, ReadLog()))),
        ("build", lambda a: build_suite(a, source)),
    ):
        yaml_s, class_s = _medians(
            lambda run=run: run(declarative), lambda run=run: run(by_class), args.repeats
        )
        print(
            f"  {what:<6} declarative {yaml_s * 1000:8.1f} ms   class {class_s * 1000:8.1f} ms"
            f"   ratio {yaml_s / class_s:.2f}"
        )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
