"""Understanding by meaning (DESIGN §15): the one layer that reads a person's words on the embedded default.

A leaf package: it imports no app and no Django (an import-linter contract in pyproject.toml), so every app can
ask it and it can be evaluated on its own (`python manage.py eval_understanding`). It owns the offline encoder
(encoder.py), the language list (languages.py), text normalisation (normalise.py) and one classifier per decision
(classifier.py), each trained on an exemplar bank kept as data (banks/<decision>.yaml) and measured on a labelled
set with a fixed held-out split (eval/<decision>.yaml). A phrasing it gets wrong is a missing exemplar, never a
missing `if` (STYLE rule 19).
"""

from lomote.understanding.classifier import DECISIONS, Decision, decide, decide_all, decision_get
from lomote.understanding.encoder import Encoder, EncoderUnavailable, RemoteEncoder, encoder_scope

__all__ = [
    "DECISIONS",
    "Decision",
    "Encoder",
    "EncoderUnavailable",
    "RemoteEncoder",
    "decide",
    "decide_all",
    "decision_get",
    "encoder_scope",
]
