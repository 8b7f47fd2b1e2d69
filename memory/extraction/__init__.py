"""Extraction: from a piece of evidence's words to candidate memories ({content, subject, kind, scope}).

`candidate.py` is the contract every extractor's output is validated against, one candidate at a time;
`runner.py` asks the model extractor a higher app installed (memory.domain_events) and falls back to the
embedded, scripted one (`scripted.py`: rules over sentence structure, not a model), which reads words with
`reading.py` and `lexicon.py`. Pure functions: nothing here touches the database.
"""
