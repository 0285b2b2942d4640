"""Encoder-decoder Hugging Face models (``AutoModelForSeq2SeqLM``).

``shared`` runs the encoder once per context (a batch of contexts, right-padded) and the decoder
over all candidates of those contexts at once, each reading its context's encoder output.
``naive`` is the reference loop (encoder and decoder per request, batch 1).
"""

from __future__ import annotations

from nnd_suites.evaluation.backend import BackendMetadata
from nnd_suites.evaluation.backends.hf import HFBackend
from nnd_suites.evaluation.backends.padding import pad_rows
from nnd_suites.evaluation.batching import Budget, Chunk, grouped_chunks
from nnd_suites.evaluation.scoring import (
    CandidateTooLong,
    Layout,
    context_tokens,
    encode_distinct,
    fit_encoder,
    seq2seq_layout,
)
from nnd_suites.infra.batching_strategies import HF_STRATEGIES

#: Candidates per chunk (the encoder output is gathered once per candidate).
CANDIDATES_PER_CHUNK = 64


class HFSeq2SeqBackend(HFBackend):
    name = "hf_seq2seq"
    metadata = BackendMetadata(
        summary="Hugging Face encoder-decoder LM, encoder run once per context",
        description="A Hugging Face encoder-decoder LM (AutoModelForSeq2SeqLM, e.g. BART, T5): "
        "the encoder runs once per context, the decoder batched over its candidates.",
    )
    auto_class = "AutoModelForSeq2SeqLM"
    strategies = HF_STRATEGIES["hf_seq2seq"]
    causal = False

    @property
    def decoder_start(self) -> int:
        for value in (
            getattr(self.config, "decoder_start_token_id", None),
            getattr(getattr(self.model, "generation_config", None), "decoder_start_token_id", None),
            self.tokenizer.pad_token_id,
            self.traits.bos,
        ):
            if isinstance(value, int):
                return value
        return 0

    def layouts(self, requests) -> list[Layout | str]:
        contexts = encode_distinct(self.tokenizer, [r.context for r in requests], special=True)
        candidates = encode_distinct(self.tokenizer, [r.candidate for r in requests], special=False)
        encoded: dict[str, tuple[tuple[int, ...], int]] = {}
        window, start = self.window, self.decoder_start
        layouts = []
        for request in requests:
            if request.context not in encoded:
                ids, _ = context_tokens(
                    contexts[request.context], self.traits, self.mode, causal=False
                )
                encoded[request.context] = fit_encoder(ids, self.traits, window)
            ids, cut = encoded[request.context]
            try:
                layout = seq2seq_layout(
                    ids,
                    candidates[request.candidate],
                    self.traits,
                    self.mode,
                    start,
                    window,
                    describe=f"candidate {request.candidate[:60]!r}",
                )
            except CandidateTooLong as exc:
                layouts.append(str(exc))  # its reason: the test is skipped and counted
                continue
            layouts.append(Layout(layout.prefix, layout.inputs, layout.targets, layout.first, cut))
        return layouts

    def chunks(self, layouts: list[Layout], strategy: str) -> list[Chunk]:
        groups: dict[tuple[int, ...], list[int]] = {}
        for index, layout in enumerate(layouts):
            groups.setdefault(layout.prefix, []).append(index)
        return grouped_chunks(groups, lambda i: len(layouts[i].inputs), CANDIDATES_PER_CHUNK)

    def run_batch(
        self, batch: list[Chunk], layouts: list[Layout], budget: Budget, strategy: str
    ) -> list[tuple[int, float]]:
        # lazy: transformers loads with a model only (`import nnd_suites` stays torch-free)
        from transformers.modeling_outputs import BaseModelOutput

        ids, mask = pad_rows([chunk.prefix for chunk in batch], self.pad_id)
        mask = mask.to(self.device)
        encoded = self.model.get_encoder()(
            input_ids=ids.to(self.device), attention_mask=mask
        ).last_hidden_state
        members = [(b, index) for b, chunk in enumerate(batch) for index in chunk.requests]
        longest = max(len(layouts[i].inputs) for _, i in members)
        # the decoder's logits cover every decoder position: keep them within the head budget
        step = max(1, budget.head_positions // longest)
        results: list[tuple[int, float]] = []
        for s in range(0, len(members), step):
            part = members[s : s + step]
            rows = self.tensor([b for b, _ in part])
            inputs = [layouts[index].inputs for _, index in part]
            dec, dec_mask = pad_rows(inputs, self.pad_id, width=longest)
            logits = self.model(
                encoder_outputs=BaseModelOutput(last_hidden_state=encoded[rows]),
                attention_mask=mask[rows],
                decoder_input_ids=dec.to(self.device),
                decoder_attention_mask=dec_mask.to(self.device),
                use_cache=False,
            ).logits
            row_index, positions, targets, owners = [], [], [], []
            for r, (_, index) in enumerate(part):
                layout = layouts[index]
                row_index += [r] * len(layout.targets)
                positions += range(layout.first, layout.first + len(layout.targets))
                targets += layout.targets
                owners += [index] * len(layout.targets)
            logprobs = self.target_logprobs(
                logits[self.tensor(row_index), self.tensor(positions)], self.tensor(targets)
            )
            sums: dict[int, float] = {}
            for owner, value in zip(owners, logprobs.double().tolist(), strict=True):
                sums[owner] = sums.get(owner, 0.0) + value
            results += sums.items()
        return results

    def naive_sum(self, layout: Layout) -> float:
        logits = self.model(
            input_ids=self.tensor([layout.prefix]),
            decoder_input_ids=self.tensor([layout.inputs]),
            use_cache=False,
        ).logits[0]
        rows = logits[layout.first : layout.first + len(layout.targets)]
        return float(self.target_logprobs(rows, self.tensor(layout.targets)).double().sum())
