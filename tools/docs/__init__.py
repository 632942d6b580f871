"""The press: everything that writes what a learner reads around the notebooks.

The README's and ``docs/``'s generated tables (:mod:`~tools.docs.readme`,
:mod:`~tools.docs.kit`), each notebook's run-time line (:mod:`~tools.docs.cards`), the
workshop plan (:mod:`~tools.docs.workshop`, :mod:`~tools.docs.teaching`), the instructor's
sheet (:mod:`~tools.docs.answers`, its prose in ``answer_key.md``) and its check against a
run (:mod:`~tools.docs.answer_check`), the Chinese page (:mod:`~tools.docs.chinese`), the
hosted runtime's install cell and Colab links (:mod:`~tools.docs.hosted`), the glossary's
links (:mod:`~tools.docs.glossary_links`), and the book (:mod:`~tools.docs.book`).

They live beside the package, not in it: a learner's ``pip install`` gets the series, not
its press. They read the package (records, the ledger, the solutions); the package never
imports them (``tests/test_layout.py`` checks both). Run them from the repository's root:
``python -m tools.docs --help``.
"""
