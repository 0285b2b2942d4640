"""The partial order of a map: tiers and ``better_than`` edges, their cycles and closure.

Everything here is iterative (no recursion), so a chain of thousands of labels neither overflows
the stack nor costs quadratic memory: the closure is one bit set (a Python int) per label.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise


def show_chain(chain: Sequence[str], joiner: str = " > ", keep: int = 5) -> str:
    """A cycle or path for a message, its middle elided when long."""
    if len(chain) <= 2 * keep + 2:
        return joiner.join(chain)
    hidden = len(chain) - 2 * keep
    return joiner.join([*chain[:keep], f"... ({hidden} more)", *chain[-keep:]])


class Order:
    """Labels as nodes, "better than" as edges; ``beats`` is the transitive closure."""

    def __init__(
        self,
        labels: Iterable[str],
        tiers: Sequence[Sequence[str]],
        edges: Iterable[tuple[str, str]],
    ) -> None:
        self.graph: dict[str, set[str]] = {label: set() for label in labels}
        # Consecutive tiers are enough: the closure adds every later tier.
        for upper, lower in pairwise(tiers):
            for better in upper:
                self.graph[better].update(lower)
        for better, worse in edges:
            self.graph[better].add(worse)
        self._index = {label: bit for bit, label in enumerate(self.graph)}
        self._closure: dict[str, int] = {}

    def find_cycle(self) -> list[str] | None:
        """One cycle as a label path closing on itself (``[a, b, a]``), else ``None``.

        An iterative depth-first search; as a side effect it computes the closure of an acyclic
        graph from its post-order (a label's successors are finished before it is)."""
        state: dict[str, int] = {}  # 1: on the current path, 2: finished
        for root in sorted(self.graph):
            if root in state:
                continue
            path, pending = [root], [iter(sorted(self.graph[root]))]
            state[root] = 1
            while path:
                node = next(pending[-1], None)
                if node is None:
                    done = path.pop()
                    pending.pop()
                    state[done] = 2
                    self._close(done)
                elif state.get(node) == 1:
                    return [*path[path.index(node) :], node]
                elif node not in state:
                    state[node] = 1
                    path.append(node)
                    pending.append(iter(sorted(self.graph[node])))
        return None

    def _close(self, label: str) -> None:
        bits = 0
        for worse in self.graph[label]:
            bits |= (1 << self._index[worse]) | self._closure[worse]
        self._closure[label] = bits

    def beats(self, better: str, worse: str) -> bool:
        """Is ``better`` above ``worse`` in the order (call after :meth:`find_cycle`)?"""
        return bool(self._closure[better] >> self._index[worse] & 1)

    def unordered(self) -> list[str]:
        """Labels that are above or below no other label: they can never form a pair."""
        below = {worse for worses in self.graph.values() for worse in worses}
        return [label for label, worses in self.graph.items() if not worses and label not in below]


def hierarchy_cycle(parents: dict[str, str]) -> list[str] | None:
    """A cycle in child -> parent links (``[a, b, a]``), else ``None``; linear time."""
    finished: set[str] = set()
    for start in parents:
        path: list[str] = []
        on_path: set[str] = set()
        node = start
        while node in parents and node not in finished:
            if node in on_path:
                return [*path[path.index(node) :], node]
            on_path.add(node)
            path.append(node)
            node = parents[node]
        finished.update(path)
    return None
