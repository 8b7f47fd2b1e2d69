"""`manage.py eval_understanding`: how well each understanding decision reads people's words (DESIGN §15).

Prints, per decision, the accuracy per split and language, the abstention rate, the confusion table and the time
training and evaluation took. `--choose-thresholds` first picks each decision's thresholds on the train split
(never the held-out one) and writes them to lomote/understanding/thresholds.yaml.
"""

import time

from django.core.management.base import BaseCommand, CommandError

from lomote.understanding.banks import SPLITS, bank_load, thresholds_load, thresholds_save
from lomote.understanding.classifier import DECISIONS, decision_forget
from lomote.understanding.evaluation import evaluate, thresholds_choose
from lomote.understanding.language_id import language_evaluate
from lomote.understanding.subject import examples_load, subject_evaluate

SUBJECT = "subject"  # the subject tagger: spans, not labels (lomote/understanding/subject.py)


class Command(BaseCommand):
    help = "Measure the understanding layer's decisions on their labelled sets (accuracy, abstentions, confusion)."

    def add_arguments(self, parser):
        parser.add_argument("--decision", choices=(*DECISIONS, SUBJECT), help="one decision (default: all)")
        parser.add_argument("--split", choices=SPLITS, help="one split (default: both)")
        parser.add_argument(
            "--choose-thresholds", action="store_true", help="choose thresholds on the train split and save them"
        )
        parser.add_argument("--misses", action="store_true", help="list every case read wrong")

    def handle(self, *args, decision, split, choose_thresholds, misses, **options):
        names = [decision] if decision else [*DECISIONS, SUBJECT]
        started = time.monotonic()
        if SUBJECT in names:
            names.remove(SUBJECT)
            self._print_subject(subject_evaluate(split), misses)
        if choose_thresholds:
            chosen = thresholds_load()
            for name in names:
                chosen[name] = thresholds_choose(name)
                self.stdout.write(f"{name}: thresholds chosen on the train split: {chosen[name]}")
                decision_forget(name)
            thresholds_save(chosen)
        for name in names:
            try:
                report = evaluate(name, split)
            except (OSError, ValueError) as error:
                raise CommandError(f"{name}: {error}") from error
            self._print(report, misses)
        if names:
            self._print_languages(names)
        self.stdout.write(f"total time (training + evaluation): {time.monotonic() - started:.1f} s")

    def _print_languages(self, names):
        tally = language_evaluate(tuple(names))
        right, total = sum(r for r, _ in tally.values()), sum(n for _, n in tally.values())
        self.stdout.write("")
        self.stdout.write(
            f"== language (identifier trained on the banks, read on these labelled texts): {right}/{total}"
        )
        for language, (right, total) in tally.items():
            self.stdout.write(f"  {language}  {right:3}/{total:3}  {right / total:.1%}")

    def _print_subject(self, report, misses):
        out = self.stdout.write
        out("")
        out(f"== subject: {len(examples_load('bank'))} exemplars (spans), exact / normalised span accuracy")
        for (split, language), (exact, loose, total) in report.by_split_language.items():
            out(
                f"  {split:8} {language}  {exact:3}/{total:3} exact {exact / total:.1%}  normalised {loose / total:.1%}"
            )
        for split in SPLITS:
            pairs = [t for (each, _), t in report.by_split_language.items() if each == split]
            if pairs:
                total = sum(t[2] for t in pairs)
                exact, loose = report.accuracy(split, exact=True), report.accuracy(split)
                out(f"  {split:8} all {total:3} cases  exact {exact:.1%}  normalised {loose:.1%}")
        out(f"time: training {report.seconds_train:.2f} s, evaluation {report.seconds_eval:.2f} s")
        if misses:
            for case, read in report.misses:
                out(f"  miss [{case.split} {case.language}] {case.subject!r} -> {read!r}: {case.text}")

    def _print(self, report, misses):
        out = self.stdout.write
        bank = bank_load(report.decision)
        out("")
        out(f"== {report.decision}: {len(bank.texts)} exemplars, threshold {report.threshold:.2f}")
        out(f"cases {report.cases}  accuracy {report.accuracy:.1%}  abstained {report.abstention_rate:.1%}")
        for (split, language), (right, total) in report.by_split_language.items():
            out(f"  {split:8} {language}  {right:3}/{total:3}  {right / total:.1%}")
        for split in SPLITS:
            pairs = [tally for (each, _), tally in report.by_split_language.items() if each == split]
            if pairs:
                right, total = sum(r for r, _ in pairs), sum(n for _, n in pairs)
                out(f"  {split:8} all {right:3}/{total:3}  {right / total:.1%}")
        out("confusion (expected -> read: count), errors only:")
        errors = sorted(((e, r, n) for (e, r), n in report.confusion.items() if e != r), key=lambda x: -x[2])
        for expected, read, count in errors or [("-", "-", 0)]:
            out(f"  {expected:28} -> {read:28} {count}")
        out(f"time: training {report.seconds_train:.2f} s, evaluation {report.seconds_eval:.2f} s")
        if misses:
            for case, read in report.misses:
                out(f"  miss [{case.split} {case.language}] {'+'.join(sorted(case.expected))} -> {read}: {case.text}")
