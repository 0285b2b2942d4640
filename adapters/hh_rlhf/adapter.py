"""Anthropic HH-RLHF (Bai et al., 2022): crowdworkers chose the less harmful of two replies."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

from nnd_suites.builder.adapter import Adapter, AdapterMetadata, register_adapter
from nnd_suites.errors import SourceFormatError
from nnd_suites.records.conversation import Turn, encode_turns, split_final_reply
from nnd_suites.records.judgments import JudgedGroup, Judgment
from nnd_suites.sources import ReadLog, read_jsonl, require_fields

CITATION = """@article{bai2022training,
  title={Training a Helpful and Harmless Assistant with Reinforcement Learning from Human
         Feedback},
  author={Bai, Yuntao and Jones, Andy and Ndousse, Kamal and Askell, Amanda and Chen, Anna and
          DasSarma, Nova and Drain, Dawn and Fort, Stanislav and Ganguli, Deep and Henighan, Tom
          and others},
  journal={arXiv preprint arXiv:2204.05862},
  year={2022}
}"""

#: A turn starts with a blank line and the speaker's name (the release's own transcript format).
TURN_MARK = re.compile(r"\n\n(Human|Assistant):")
ROLES = {"Human": "user", "Assistant": "assistant"}
DIFFERENT_CONTEXTS = "transcripts differ before the final reply"


def parse_transcript(text: str, path: Path, line: int, field: str) -> list[Turn]:
    """The turns of one transcript (``\\n\\nHuman: ...\\n\\nAssistant: ...``). The one space after
    the speaker's name is the format's, not the turn's; everything else is kept verbatim."""
    if not isinstance(text, str):
        raise SourceFormatError(
            str(path), line, f"{field!r} must be a JSON string, got {type(text).__name__}"
        )
    parts = TURN_MARK.split(text)
    if parts[0] or len(parts) < 3 or parts[1] != "Human":
        raise SourceFormatError(
            str(path),
            line,
            f"{field!r} is not an HH transcript: it must start with '\\n\\nHuman:'",
            f"it starts with {text[:40]!r}",
        )
    turns = [
        Turn(role=ROLES[speaker], content=content[1:] if content.startswith(" ") else content)
        for speaker, content in zip(parts[1::2], parts[2::2], strict=True)
    ]
    if turns[-1].role != "assistant":
        raise SourceFormatError(
            str(path), line, f"{field!r} does not end with an assistant reply to compare"
        )
    return turns


@register_adapter("hh_rlhf")
class HHRLHFAdapter(Adapter):
    """One group per conversation context; one judgment per row (chosen beats rejected)."""

    quality_map = "hh_rlhf"
    context_fields = ("dialogue",)
    # The release's own rendering: the turns, then the opening of the assistant's reply.
    default_template = "{dialogue:transcript}\n\nAssistant:"
    breakdown_fields = ("conversation",)
    default_source = "test.jsonl.gz"
    metadata = AdapterMetadata(
        task="dialogue (harmlessness preference)",
        languages=["en"],
        annotation_type="pairwise",
        license="MIT",
        citation=CITATION,
        source_urls=["https://github.com/anthropics/hh-rlhf/tree/master/harmless-base"],
        description="Anthropic HH-RLHF harmless-base test split: crowdworkers, trying to make "
        "an assistant say something harmful, chose the less harmful of two final replies. "
        "Contains offensive and upsetting content by design.",
    )

    def read(self, path: Path, log: ReadLog) -> Iterator[JudgedGroup]:
        groups: dict[str, JudgedGroup] = {}  # context -> its group, in first-seen order
        for line, row in read_jsonl(path, log):
            with log.each_row():
                require_fields(row, ("chosen", "rejected"), path, line, "row")
                where = f"{path.name}:{line}"
                chosen = split_final_reply(parse_transcript(row["chosen"], path, line, "chosen"))
                rejected = split_final_reply(
                    parse_transcript(row["rejected"], path, line, "rejected")
                )
                assert chosen is not None and rejected is not None  # parse_transcript checked
                if chosen[0] != rejected[0]:  # not a test of the final reply: counted, not guessed
                    log.skip(DIFFERENT_CONTEXTS, where)
                    continue
                dialogue = encode_turns(chosen[0])
                if dialogue not in groups:
                    humans = sum(turn.role == "user" for turn in chosen[0])
                    groups[dialogue] = JudgedGroup(
                        id=hashlib.sha256(dialogue.encode("utf-8")).hexdigest()[:16],
                        context={"dialogue": dialogue},
                        judgments=[],
                        breakdown={"conversation": "single-turn" if humans == 1 else "multi-turn"},
                        where=where,
                    )
                groups[dialogue].judgments.append(
                    Judgment(response_a=chosen[1], response_b=rejected[1], verdict="a", where=where)
                )
        yield from groups.values()
