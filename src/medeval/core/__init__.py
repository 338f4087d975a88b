"""The shared layer below ``experiments`` and ``runtime``: what a chapter is made of.

* :mod:`medeval.core.claims`: the vocabulary of verdicts and the rules that decide a paper's claims;
* :mod:`medeval.core.schema`: the parameter-schema base every chapter's parameters subclass;
* :mod:`medeval.core.chapter`: the chapter protocol (``run``, ``claim_inputs``, the claims registry) that every
  chapter module follows.

It imports nothing of medeval outside itself, so that ``experiments`` and ``runtime`` both build on it and
neither imports the other for it (``tests/test_layers.py``).
"""
