"""Decoder-only Hugging Face models (``AutoModelForCausalLM``).

Three batched strategies reuse each context for all its candidates; ``auto`` picks the first one
that reproduces the plain forward on a small probe when the model is loaded:

- ``packed`` (shared-prefix rows): a context and its candidates form one row, in one pass; a 4-D
  attention mask lets each candidate see the context and its own earlier tokens only, and position
  ids restart after the context for every candidate. Every context token is computed once.
- ``kv``: the contexts run first (right-padded, plain causal attention, nothing to mask); then all
  candidates of a context run as one row on top of that context's key/value cache, with the same
  kind of 4-D mask and position ids. No cache is copied per candidate.
- ``expand``: the contexts run left-padded; their key/value cache is copied for every candidate,
  which then runs with an ordinary 2-D padding mask: slower, but it needs nothing beyond what
  generation with padding needs (models that reject 4-D masks, sliding-window attention).

All three compute hidden states only, then apply the LM head at the positions that predict a
target. ``naive`` is the reference loop (one plain forward per request, batch 1).

A row of ``packed`` and ``kv`` holds as many of a context's candidates as is cheapest (row_span in
packing.py): a long context keeps all its candidates in one row, a short one shared by many
candidates (pmi's neutral context) is repeated over short rows rather than attending over a row
thousands of tokens long.
"""

from __future__ import annotations

import torch

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.backend import BackendMetadata
from nnd_suites.evaluation.backends.hf import HFBackend
from nnd_suites.evaluation.backends.packing import (
    cached_mask,
    packed_mask,
    packed_row,
    pad_packed,
    row_span,
    shared_split,
)
from nnd_suites.evaluation.backends.padding import pad_rows
from nnd_suites.evaluation.batching import Budget, Chunk, grouped_chunks
from nnd_suites.evaluation.scoring import Layout, causal_layouts
from nnd_suites.infra.batching_strategies import HF_STRATEGIES

#: Rows longer than this are split (each part repeats the context) when no budget says otherwise.
DEFAULT_ROW_CAP = 4096
#: Candidates per chunk in the expand strategy (the cache is copied once per candidate).
EXPAND_CANDIDATES = 64
#: The strategies whose 4-D attention mask knows no sliding window (_sliding_window).
WINDOWLESS = ("packed", "kv")


class HFCausalBackend(HFBackend):
    name = "hf_causal"
    metadata = BackendMetadata(
        summary="Hugging Face decoder-only LM, each context encoded once per group",
        description="A Hugging Face decoder-only LM (AutoModelForCausalLM): contexts encoded "
        "once per group (shared-prefix rows or key/value cache), LM head at targets only. "
        "The backend of every causal LM on the Hub or on disk.",
    )
    auto_class = "AutoModelForCausalLM"
    strategies = HF_STRATEGIES["hf_causal"]
    causal = True

    def __init__(self, model_ref: str, config, *, strategy: str = "auto", **options) -> None:
        if strategy in WINDOWLESS and _sliding_window(config):
            usable = [s for s in ("auto", *self.strategies) if s not in WINDOWLESS]
            raise NNDError(
                f"strategy {strategy!r} cannot score model {model_ref!r}: it has sliding-window "
                f"attention, which the 4-D masks of {' and '.join(WINDOWLESS)} cannot express; "
                f"strategies that can: {', '.join(usable)}"
            )
        super().__init__(model_ref, config, strategy=strategy, **options)

    @property
    def body(self):
        return self.model.base_model

    @property
    def head(self):
        return self.model.get_output_embeddings()

    # ------------------------------------------------------------------ layouts
    def layouts(self, requests) -> list[Layout | str]:
        return causal_layouts(requests, self.tokenizer, self.traits, self.mode, self.window)

    # ------------------------------------------------------------------- chunks
    def chunks(self, layouts: list[Layout], strategy: str) -> list[Chunk]:
        groups: dict[tuple[int, ...], list[int]] = {}
        for index, layout in enumerate(layouts):
            groups.setdefault(shared_split(layout)[0], []).append(index)
        if strategy == "expand":
            return grouped_chunks(
                groups, lambda i: len(shared_split(layouts[i])[1]), EXPAND_CANDIDATES
            )
        # A row may exceed the per-batch token budget (it then runs alone): the attention scores
        # of one row bound its length, and below that the cost of repeating the context against
        # attending over the row's every pair (row_span).
        budget = self.budget()
        memory_cap = int(budget.attention**0.5) if budget.attention else DEFAULT_ROW_CAP
        # per token a layer's projections and 4x-wide MLP take ~12 width**2 multiply-adds, its
        # attention 2 width per pair of tokens: linear work per token / work per pair ~ 6 width
        pair_ratio = 6 * self.model.get_input_embeddings().weight.shape[1]
        chunks = []
        for prefix, members in groups.items():
            # packed: the row holds the context too; kv: the candidates' row follows the cache
            start = len(prefix) if strategy == "packed" else 0
            cap = min(memory_cap, start + row_span(len(prefix), pair_ratio))
            row: list[int] = []
            length = start
            for index in sorted(members, key=lambda i: len(layouts[i].inputs)):
                extra = len(shared_split(layouts[index])[1])
                if row and length + extra > cap:
                    chunks.append(self._chunk(prefix, row, length, strategy))
                    row, length = [], start
                row.append(index)
                length += extra
            chunks.append(self._chunk(prefix, row, length, strategy))
        return chunks

    @staticmethod
    def _chunk(prefix: tuple[int, ...], requests: list[int], length: int, strategy: str) -> Chunk:
        if strategy == "packed":
            return Chunk(prefix, requests, ((1, length, length),))
        return Chunk(
            prefix, requests, ((1, len(prefix), len(prefix)), (1, length, len(prefix) + length))
        )

    def run_batch(
        self, batch: list[Chunk], layouts: list[Layout], budget: Budget, strategy: str
    ) -> list[tuple[int, float]]:
        run = {"kv": self._run_kv, "packed": self._run_packed, "expand": self._run_expand}
        return run[strategy](batch, layouts, budget)

    # ----------------------------------------------------------------------- kv
    def _run_kv(
        self, batch: list[Chunk], layouts: list[Layout], budget: Budget
    ) -> list[tuple[int, float]]:
        lengths = [len(chunk.prefix) for chunk in batch]
        width = max(lengths)
        # right padding: real tokens never see the padding
        ids, _ = pad_rows([chunk.prefix for chunk in batch], self.pad_id)
        out = self.body(input_ids=ids.to(self.device), use_cache=True)
        context_hidden = out.last_hidden_state
        rows = [packed_row(chunk, layouts, with_prefix=False) for chunk in batch]
        span = max(len(row[0]) for row in rows)
        candidate_hidden = None
        if span:
            row_ids, positions, segments = pad_packed(rows, self.pad_id, span)
            mask = cached_mask(torch.tensor(lengths), width, segments, self.dtype)
            candidate_hidden = self.body(
                input_ids=row_ids.to(self.device),
                attention_mask=mask.to(self.device),
                position_ids=positions.to(self.device),
                past_key_values=out.past_key_values,
                use_cache=True,
            ).last_hidden_state
        picked, targets, owners = [], [], []
        for b, (_, _, _, query, row_targets, row_owners) in enumerate(rows):
            for (in_context, where), target, owner in zip(
                query, row_targets, row_owners, strict=True
            ):
                picked.append(
                    context_hidden[b, where] if in_context else candidate_hidden[b, where]
                )
                targets.append(target)
                owners.append(owner)
        return self._sum_targets(torch.stack(picked), targets, owners, budget)

    # ------------------------------------------------------------------- packed
    def _run_packed(
        self, batch: list[Chunk], layouts: list[Layout], budget: Budget
    ) -> list[tuple[int, float]]:
        rows = [packed_row(chunk, layouts, with_prefix=True) for chunk in batch]
        length = max(len(ids) for ids, *_ in rows)
        ids, positions, segments = pad_packed(rows, self.pad_id, length)
        row_index, query, targets, owners = [], [], [], []
        for b, (_, _, _, row_query, row_targets, row_owners) in enumerate(rows):
            row_index += [b] * len(row_query)
            query += [where for _, where in row_query]
            targets += row_targets
            owners += row_owners
        mask = packed_mask(segments, self.dtype).to(self.device)
        hidden = self.body(
            input_ids=ids.to(self.device),
            attention_mask=mask,
            position_ids=positions.to(self.device),
            use_cache=False,
        ).last_hidden_state
        picked = hidden[self.tensor(row_index), self.tensor(query)]
        return self._sum_targets(picked, targets, owners, budget)

    # ------------------------------------------------------------------- expand
    def _run_expand(
        self, batch: list[Chunk], layouts: list[Layout], budget: Budget
    ) -> list[tuple[int, float]]:
        # lazy: transformers loads with a model only (`import nnd_suites` stays torch-free)
        from transformers import DynamicCache

        prefixes = [chunk.prefix for chunk in batch]
        width = max(len(p) for p in prefixes)
        # left padding: every context ends at column -1
        ids, mask = pad_rows(prefixes, self.pad_id, left=True)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        mask = mask.to(self.device)
        out = self.body(
            input_ids=ids.to(self.device),
            attention_mask=mask,
            position_ids=positions.to(self.device),
            # every key kept: a sliding-window layer's own cache holds only the last window - 1,
            # which the candidates' pass below would read against the whole padded mask
            past_key_values=DynamicCache(),
            use_cache=True,
        )
        last = out.last_hidden_state[:, -1]
        layers = [(layer.keys, layer.values) for layer in out.past_key_values.layers]

        members = [(b, index) for b, chunk in enumerate(batch) for index in chunk.requests]
        picked, targets, owners = [], [], []
        conts = [shared_split(layouts[i])[1] for _, i in members]
        longest = max(len(c) for c in conts)
        step = max(1, (budget.tokens or 1 << 30) // max(longest + width, 1))
        for start in range(0, len(members), step):
            part = members[start : start + step]
            part_conts = conts[start : start + step]
            hidden = None
            if longest:
                rows = self.tensor([b for b, _ in part])
                cont_ids, cont_mask = pad_rows(part_conts, self.pad_id, width=longest)
                lengths = mask.sum(-1)[rows]
                cache = DynamicCache([(k[rows], v[rows]) for k, v in layers])
                hidden = self.body(
                    input_ids=cont_ids.to(self.device),
                    attention_mask=torch.cat([mask[rows], cont_mask.to(self.device)], dim=1),
                    position_ids=lengths[:, None] + torch.arange(longest, device=self.device),
                    past_key_values=cache,
                    use_cache=True,
                ).last_hidden_state
            for r, (b, index) in enumerate(part):
                layout = layouts[index]
                prefix_len = len(shared_split(layout)[0])
                for j, target in enumerate(layout.targets):
                    seq = layout.first + j
                    picked.append(last[b] if seq == prefix_len - 1 else hidden[r, seq - prefix_len])
                    targets.append(target)
                    owners.append(index)
        return self._sum_targets(torch.stack(picked), targets, owners, budget)

    # -------------------------------------------------------------------- shared
    def _sum_targets(
        self, hidden: torch.Tensor, targets: list[int], owners: list[int], budget: Budget
    ) -> list[tuple[int, float]]:
        """Apply the LM head at the picked positions only (in slices), fp32 log-softmax, and sum
        the target log-probabilities per request."""
        target_ids = self.tensor(targets)
        logprobs = torch.cat(
            [
                self.target_logprobs(
                    self.head(hidden[s : s + budget.head_positions]),
                    target_ids[s : s + budget.head_positions],
                )
                for s in range(0, len(targets), budget.head_positions)
            ]
        )
        order = list(dict.fromkeys(owners))
        slot = {index: k for k, index in enumerate(order)}
        sums = torch.zeros(len(order), dtype=torch.float64, device=logprobs.device)
        sums.index_add_(0, self.tensor([slot[o] for o in owners]), logprobs.double())
        return list(zip(order, sums.tolist(), strict=True))

    def naive_sum(self, layout: Layout) -> float:
        ids = self.tensor([[*layout.prefix, *layout.inputs]])
        logits = self.model(input_ids=ids, use_cache=False).logits[0]
        rows = logits[layout.first : layout.first + len(layout.targets)]
        return float(self.target_logprobs(rows, self.tensor(layout.targets)).double().sum())

    # ------------------------------------------------------------------ strategy
    def _choose_strategy(self) -> str:
        """The first batched strategy that reproduces the plain forward on a probe."""
        # packed first: on CPU it beats kv, whose cache concatenation costs more than the
        # attention packed spends on masked-out pairs (benchmarks/bench_evaluator.py)
        options = [] if _sliding_window(self.config) else list(WINDOWLESS)
        for strategy in [*options, "expand"]:
            try:
                difference = self._probe(strategy)
            except Exception as exc:  # a model that cannot take this strategy's inputs
                self.probe_report[strategy] = f"failed: {type(exc).__name__}: {exc}"[:200]
                continue
            tolerance = 1e-3 if self.dtype == torch.float32 else 0.15
            self.probe_report[strategy] = f"max difference {difference:.2e}"
            if difference <= tolerance:
                return strategy
        return "naive"

    def _probe(self, strategy: str) -> float:
        vocab = self.head.weight.shape[0]
        generator = torch.Generator().manual_seed(0)

        def tokens(n: int) -> tuple[int, ...]:
            return tuple(torch.randint(0, vocab, (n,), generator=generator).tolist())

        probe = []
        for prefix_len, cont_lens in ((7, (3, 0, 2)), (3, (4,)), (5, (1, 2))):
            prefix = tokens(prefix_len)
            for n in cont_lens:
                cont = tokens(n)
                probe.append(Layout(prefix, cont, (*cont, tokens(1)[0]), prefix_len - 1))
        budget = self.budget()
        with torch.inference_mode():
            fast = dict(self.run_batch(self.chunks(probe, strategy), probe, budget, strategy))
            return max(abs(fast[i] - self.naive_sum(layout)) for i, layout in enumerate(probe))


def _sliding_window(config) -> bool:
    """Sliding-window attention is not reproduced by a custom 4-D mask: such models use expand."""
    layer_types = getattr(config, "layer_types", None) or ()
    if any("sliding" in str(t) for t in layer_types):
        return True
    window = getattr(config, "sliding_window", None)
    return bool(window) and getattr(config, "use_sliding_window", True) is not False
