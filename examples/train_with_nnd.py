"""Fine-tune a tiny GPT-2-shaped model on CPU with NND evaluation every N steps (paper 5.4).

The model (random weights, a tokenizer trained on the suite's text) learns the teachers' accepted
questions of the first Quiz Design groups, as plain text after their contexts; ``NNDCallback``
scores it on those groups every ``--every`` steps, and the script plots pass rate per category
against step (the shape of the paper's Figure 4). Nothing is downloaded.

    python examples/train_with_nnd.py --out runs/train_example --steps 300 --every 50
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    Trainer,
    TrainingArguments,
)

import nnd_suites
from nnd_suites.evaluation.prepared import prepare_suites
from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm
from nnd_suites.evaluation.training import NNDCallback
from nnd_suites.infra.atomic import atomic_path, atomic_write_text
from nnd_suites.infra.formatting import percent, plural
from nnd_suites.records.templates import render_template as render


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/train_example"))
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--every", type=int, default=50)
    parser.add_argument("--groups", type=int, default=40, help="Quiz Design groups to use")
    args = parser.parse_args(argv)

    suite = nnd_suites.load_suite("quiz_design")
    folder = tiny_causal_lm(args.out / "model", suite_texts([suite]), n_positions=512)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.pad_token = tokenizer.eos_token
    plan = prepare_suites(suite, limit=args.groups).plans[0]
    texts = sorted({render(plan.template, p.context) + " " + p.high.text for p in plan.suite.pairs})
    data = [tokenizer(text, truncation=True, max_length=512) for text in texts]

    trainer = Trainer(
        model=model,
        args=TrainingArguments(
            output_dir=str(args.out / "trainer"),
            max_steps=args.steps,
            per_device_train_batch_size=4,
            learning_rate=2e-3,
            logging_steps=args.every,
            save_strategy="no",
            report_to="none",
            use_cpu=True,
            seed=0,
        ),
        train_dataset=data,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
        processing_class=tokenizer,
    )
    callback = NNDCallback.attach(
        trainer, suites=[suite], every_n_steps=args.every, limit=args.groups, batch_size=8
    )
    began = time.perf_counter()
    start = callback.score(model, tokenizer, step=0)  # prepares and tokenises, once
    callback.history.insert(0, (0, start, time.perf_counter() - began))
    trainer.train()

    history = [{"step": step, **metrics} for step, metrics, _ in callback.history]
    atomic_write_text(args.out / "history.json", json.dumps(history, indent=2) + "\n")
    plot(history, args.out / "pass_rates.png")
    first, last = history[0], history[-1]
    for key in sorted(k for k in first if k != "step"):
        print(
            f"{key:<36} step {first['step']:>4}: {percent(first[key]):>6}   step "
            f"{last['step']:>4}: {percent(last[key]):>6}   of {plural(callback.rated[key], 'test')}"
        )
    seconds = [s for _, _, s in callback.history]  # the step-0 call prepares and tokenises
    print(
        f"scoring calls: first (prepares the suite) {seconds[0]:.2f} s, later median "
        f"{sorted(seconds[1:])[len(seconds[1:]) // 2]:.2f} s"
        if len(seconds) > 1
        else ""
    )
    print(f"wrote {args.out / 'history.json'} and {args.out / 'pass_rates.png'}")
    return 0


def plot(history: list[dict], path: Path) -> None:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4), layout="constrained")
    axis = figure.subplots()
    steps = [row["step"] for row in history]
    for key in sorted(k for k in history[0] if k != "step"):
        label = key.split("/")[-1]
        axis.plot(steps, [100 * row[key] for row in history], marker="o", label=label)
    axis.set_xlabel("training step")
    axis.set_ylabel("NND pass rate (%)")
    axis.set_title("Quiz Design pass rates during fine-tuning")
    axis.legend()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
