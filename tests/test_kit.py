"""The teacher's kit in docs/: its generated sections match the reference records, the
workshop's blocks cover the series and follow its limits, the half day fits in four hours,
the instructor's sheet has an entry per question and exercise, the hardware page names only
machines with records, every name a page cites exists, and every glossary term has an
anchor of its own."""

from __future__ import annotations

import re

import pytest

from hetero_tutorial.app import run_times
from hetero_tutorial.core import results
from tools.docs import answers, kit, readme, teaching, workshop


def test_the_kit_pages_generated_sections_match_the_reference_records():
    for page, sections in kit.PAGES.items():
        text = (kit.DOCS_DIR / page).read_text()
        for name, build in sections.items():
            assert readme.section(text, name) == build(), (
                f"docs/{page} section {name!r} is stale: run `make docs` (python -m "
                "tools.docs regenerate)"
            )


def test_every_notebook_is_in_exactly_one_workshop_block():
    numbers = [number for block in workshop.BLOCKS for number in block.notebooks]
    assert sorted(numbers) == [name[:2] for name in run_times.series_notebooks()]


def _run_times(mode: str, cells: dict[str, list[float]], cores: int = 2) -> results.Record:
    machine = {"cpu_model": "Test CPU", "cpu_logical_cores": cores, "usable_cores": cores,
               "memory_bytes": 2**33, "accelerator": None}  # fmt: skip
    provenance = {"fingerprint": machine, "date": "2026-12-01T00:00:00+00:00", "command": "t",
                  "quick": mode == "quick"}  # fmt: skip
    data = {
        "mode": mode,
        "notebook_seconds": {name: sum(seconds) for name, seconds in cells.items()},
        "cell_seconds": {
            name: [{"cell": i, "seconds": s, "section": f"part {i}"} for i, s in enumerate(sec)]
            for name, sec in cells.items()
        },
    }
    return results.Record("run.times", data, provenance)


def test_a_block_runs_in_full_mode_in_class_only_within_the_series_limits(monkeypatch):
    names = run_times.series_notebooks()
    block = workshop.Block("test", (names[0][:2],))
    fits = _run_times("full", {name: [10.0, 20.0] for name in names})
    assert workshop.in_class(block, [fits]) == "full mode"
    long_cell = _run_times("full", {name: [10.0, 20.0] for name in names} | {names[0]: [200.0]})
    assert "00 has a cell of 3.3 min" in workshop.in_class(block, [long_cell])
    long_notebook = _run_times("full", {name: [100.0] * 4 for name in names})
    assert "longer than 5 min" in workshop.in_class(block, [long_notebook])
    assert workshop.in_class(block, []) == "quick mode (full mode not recorded)"
    monkeypatch.setattr(results, "load_references", lambda kind=None: [fits])
    table = workshop.workshop_blocks()
    assert "On Test CPU (2 cores, no GPU), the medians of 0 quick and 1 full recorded runs" in table
    assert (
        f"| {workshop.BLOCKS[0].title} | 00 | not recorded | 30 s | 20 s (00: *part 1*) |" in table
    )


def test_the_hardware_page_names_only_machines_with_records(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "REFERENCE_DIR", tmp_path)
    assert "holds no records yet" in kit.reference_machines()
    results.save(_run_times("full", {}, cores=2), directory=tmp_path / "small-cpu")
    server = _run_times("full", {}, cores=64)
    results.save(server, directory=tmp_path / "big-server")
    cuda = _run_times("full", {})
    cuda.provenance["fingerprint"]["accelerator"] = {"type": "cuda", "name": "Test GPU"}
    results.save(cuda, directory=tmp_path / "test-gpu")
    text = kit.reference_machines()
    assert "3 reference machines, 1 with an accelerator." in text
    assert "- a laptop or desktop with an NVIDIA GPU (CUDA): `test-gpu`" in text
    assert f"- a server with {kit.SERVER_CORES} or more usable cores: `big-server`" in text
    assert "- Apple silicon (MPS): **none yet**" in text


def test_the_hardware_page_names_each_cpu_a_machines_records_came_from(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "REFERENCE_DIR", tmp_path)
    older, newer = _run_times("full", {}), _run_times("quick", {})
    identity = {"family": "25", "model": "17", "vector_isa": "AVX512"}
    newer.provenance["fingerprint"]["cpu_identity"] = identity
    results.save(older, directory=tmp_path / "test-cpu-2-cores", tag="older")
    results.save(newer, directory=tmp_path / "test-cpu-2-cores")
    line = next(line for line in kit.reference_machines().splitlines() if "test-cpu" in line)
    cpus = line.split(" | ")[1].split(" or ")
    assert sorted(cpus) == ["Test CPU", "Test CPU (family 25, model 17, AVX512)"]


GLOSSARY = kit.DOCS_DIR / "glossary.md"
BRIEF_TERMS = ("IQR", "Pinned memory", "non_blocking", "NVML", "Policy lag", "Meta device",
               "Dispatcher")  # fmt: skip


def test_every_glossary_term_is_a_heading_with_an_anchor_of_its_own():
    slugify = pytest.importorskip("myst_parser.slugs").github_slugify  # what the book uses
    terms = re.findall(r"^## (.+)$", GLOSSARY.read_text(), re.M)
    anchors = [slugify(term) for term in terms]
    assert len(set(anchors)) == len(anchors) and all(anchors)
    assert terms == sorted(terms, key=str.lower), "terms in alphabetical order"
    assert {"iqr", "pinned-memory", "non_blocking", "nvml", "policy-lag"} <= set(anchors)
    assert all(term in terms for term in BRIEF_TERMS)


def _singulars(word: str) -> set[str]:
    """``word`` and what it may be the plural of (``copies``: copy, ``minibatches``: minibatch)."""
    found = {word}
    for plural, singular in (("ies", "y"), ("es", ""), ("s", "")):
        if word.endswith(plural):
            found.add(word[: -len(plural)] + singular)
    return found


def test_every_word_in_italics_in_the_glossary_has_an_entry():
    text = GLOSSARY.read_text()
    names = set()
    for term in re.findall(r"^## (.+)$", text, re.M):
        names |= {term.lower(), *re.split(r", | and ", term.lower())}
    references = set(re.findall(r"(?<![*\w])\*([^*\n]+)\*(?!\*)", text))
    unknown = [word for word in references if not _singulars(word.lower()) & names]
    assert not unknown, f"in italics with no entry of their own: {sorted(unknown)}"


def test_reading_time_counts_the_prose_a_learner_reads_not_the_code():
    import nbformat

    from tools.docs import cards

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("Time the update, twice: 2.5 ms."),
        nbformat.v4.new_code_cell("print('these words are code, not prose')"),
    ]
    assert cards.prose_words(notebook) == 6
    minutes = cards.reading_minutes("00_devices_and_timing.ipynb")
    assert 1 < minutes < 60  # a notebook is read in minutes, not seconds or hours


def test_the_half_day_fits_in_three_and_a_half_hours_with_its_prerequisites_met():
    machines = workshop.by_machine()
    (session,) = teaching.HALF_DAY.sessions
    totals = {
        hw: teaching.session_minutes(session, modes, teaching.HALF_DAY.questions)
        for hw, modes in machines.items()
    }
    known = {hw: total for hw, total in totals.items() if total is not None}
    assert known, "no machine has recorded every notebook of the half day"
    assert teaching.HALF_DAY_MINUTES == 210
    assert all(total <= teaching.HALF_DAY_MINUTES for total in known.values()), known
    assert teaching.unmet_prerequisites(teaching.HALF_DAY) == []
    assert teaching.unmet_prerequisites(teaching.FULL_PATH) == []
    taught = [n for path in teaching.PATHS[1:] for day in path.sessions for n in day]
    assert sorted(taught) == [name[:2] for name in run_times.series_notebooks()]


def test_a_path_that_skips_a_prerequisite_is_told_what_it_leaves_unmet():
    skips = teaching.TeachingPath("skips 03", (("00", "01", "06", "10"),))
    unmet = teaching.unmet_prerequisites(skips)
    assert "06 needs 03 taught first" in unmet
    assert "10 reads 02's records" in unmet and "10 reads 09's records" in unmet
    assert teaching.prerequisites("10")[1] >= {"00", "01", "02", "03", "04", "05", "09"}


def test_every_exercise_has_an_estimate_and_printed_words_are_priced():
    named = {name for found in answers.notebook_exercises().values() for name in found}
    assert named == set(teaching.EXERCISE_MINUTES)
    modes = {"quick": [_printed({"00_devices_and_timing.ipynb": 1500})]}
    assert teaching.printed_minutes("00", modes) == 10.0
    assert teaching.teaching_minutes("00", modes)["read"] > 10.0


def _printed(words: dict[str, int]):
    provenance = {"fingerprint": {"cpu_model": "T", "cpu_logical_cores": 2}, "date": "2026",
                  "command": "t", "quick": True}  # fmt: skip
    data = {"mode": "quick", "notebook_seconds": dict.fromkeys(words, 10.0), "printed_words": words}
    return results.Record("run.times", data, provenance)


def test_the_sheet_has_one_entry_per_question_and_per_exercise():
    text = (kit.DOCS_DIR / "answers.md").read_text()
    questions = sum(len(found) for found in answers.discussion_questions().values())
    exercises = sum(len(found) for found in answers.notebook_exercises().values())
    assert len(re.findall(r"^- \*\*Q\d+\.\*\*", text, re.M)) == questions
    assert len(re.findall(r"^- \*\*Exercise `\w+`\.\*\*", text, re.M)) == exercises
    assert answers.MISSING not in text
    from hetero_tutorial.notebook.solutions import SOLUTIONS

    names = [name for found in answers.notebook_exercises().values() for name in found]
    assert sorted(names) == sorted(SOLUTIONS), "every solution's exercise is in a notebook"
    signs = readme.section(text, "seat-signs")
    for sign in ("py-spy refused", "Ray slow", "a GPU", "one usable core", "a busy machine"):
        assert f"**{sign}" in signs


def test_the_keys_markdown_has_figure_slots_the_sheet_fills_and_says_what_is_wrong(tmp_path):
    """The key's prose is Markdown (tools/docs/answer_key.md); each ``{slot}`` in it names a
    figure of answers.FIGURES, and an entry written wrong is refused, saying how to write it."""
    from tools.docs import answer_key

    entries = (*answer_key.QUESTIONS.values(), *answer_key.EXERCISES.values())
    texts = [t for a in entries for t in (a.expected, a.surprise)]
    texts += [sign.means for sign in answer_key.SEAT_SIGNS]
    slots = {slot for text in texts for slot in re.findall(r"\{(\w+)\}", text)}
    assert slots and slots <= set(answers.FIGURES), slots - set(answers.FIGURES)
    assert all("\n" not in text and "  " not in text for text in texts)  # wrapped lines joined
    key = tmp_path / "key.md"
    key.write_text("## Questions\n\n### 00 Q1\n\nExpect: x\n\n## Exercises\n## When a seat shows\n")
    with pytest.raises(ValueError, match="one starting 'Surprise: '"):
        answer_key.read(key)
    key.write_text(
        "## Questions\n\n### Q1\n\nExpect: x\n\nSurprise: y\n\n## Exercises\n## When a seat shows\n"
    )
    with pytest.raises(ValueError, match="'00 Q1'"):
        answer_key.read(key)
    key.write_text("## Questions\n")
    with pytest.raises(ValueError, match="no section ## Exercises, ## When a seat shows"):
        answer_key.read(key)


def _subcommands(parser) -> set[str]:
    import argparse

    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(actions[0].choices)


def _unknown_names(text: str) -> list[str]:
    """What a docs page names that does not exist: a test file, a notebook (file or title),
    a make target, a ``python -m hetero_tutorial`` or ``python -m tools.docs`` subcommand, a
    module's name (the package's or the tools'), a parameter."""
    import importlib

    import nbformat

    from hetero_tutorial.core.paths import REPO_DIR

    unknown = [path for path in re.findall(r"\btests/[\w/]+\.py\b", text)]
    unknown = [path for path in unknown if not (REPO_DIR / path).is_file()]
    unknown += [
        name
        for name in re.findall(r"\b\d\d_\w+\.ipynb\b", text)
        if not (REPO_DIR / "notebooks" / name).is_file()
    ]
    titles = {}
    for name in run_times.series_notebooks():
        heading = nbformat.read(REPO_DIR / "notebooks" / name, as_version=4).cells[0].source
        titles[name[:2]] = heading.splitlines()[0].removeprefix(f"# {name[:2]} · ")
    for number, title in re.findall(r"^#+ (\d\d) · (.+)$", text, re.M):
        if not titles.get(number, "").startswith(title):
            unknown.append(f"{number} · {title}")
    makefile = (REPO_DIR / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))
    unknown += [t for t in re.findall(r"`make ([a-z][\w-]*)", text) if t not in targets]
    unknown += [t for t in re.findall(r"\bmake ([a-z][\w-]*)`", text) if t not in targets]
    from hetero_tutorial.app import cli
    from tools.docs.__main__ import build_parser

    programs = {"hetero_tutorial": cli.build_parser(), "tools.docs": build_parser()}
    for program, parser in programs.items():
        commands = _subcommands(parser)
        used = re.findall(rf"python -m {re.escape(program)}\s+([a-z][\w-]*)", text)
        unknown += [f"{program} {c}" for c in used if c not in commands]
    for dotted in re.findall(r"\b(?:hetero_tutorial|tools\.docs)(?:\.\w+)+", text):
        parts, found = dotted.split("."), None
        for cut in range(len(parts), 0, -1):
            try:
                found = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for attribute in parts[cut:]:
                found = getattr(found, attribute, None)
            break
        if found is None:
            unknown.append(dotted)
    folders = (REPO_DIR / "hetero_tutorial", REPO_DIR / "tools")
    sources = "\n".join(p.read_text() for folder in folders for p in folder.rglob("*.py"))
    notebooks = "\n".join(p.read_text() for p in (REPO_DIR / "notebooks").glob("*.ipynb"))
    for name in re.findall(r"`([A-Z][A-Z0-9_]{2,})(?:\s*=[^`]*)?`", text):
        if not re.search(rf"\b{name}\b", sources + notebooks + makefile):
            unknown.append(name)
    return list(dict.fromkeys(unknown))


@pytest.mark.parametrize("page", sorted(p.name for p in kit.DOCS_DIR.glob("*.md")))
def test_every_name_a_docs_page_cites_exists(page):
    assert _unknown_names((kit.DOCS_DIR / page).read_text()) == []


def test_the_name_check_finds_what_does_not_exist():
    page = (
        "Run `.venv/bin/pytest tests/test_nope.py`, open 42_nothing.ipynb, `make nothing`, "
        "`python -m hetero_tutorial frobnicate`, `tools.docs.kit.NO_SUCH`, set "
        "`NO_SUCH_PARAMETER = 1`.\n\n## 00 · A notebook that is not there\n"
        "Fine: tests/test_kit.py, `make book-test`, `python -m hetero_tutorial doctor`, "
        "`tools.docs.kit.PAGES`, `python -m tools.docs regenerate`, `NATIVE = True`, "
        "`HETERO_TUTORIAL_QUICK=1`. Not fine: `python -m tools.docs frobnicate`."
    )
    assert _unknown_names(page) == [
        "tests/test_nope.py", "42_nothing.ipynb", "00 · A notebook that is not there",
        "nothing", "hetero_tutorial frobnicate", "tools.docs frobnicate",
        "tools.docs.kit.NO_SUCH", "NO_SUCH_PARAMETER",
    ]  # fmt: skip


def test_a_longest_cell_under_a_notebooks_old_title_is_named_by_todays():
    from tools.docs import cards

    name = run_times.series_notebooks()[-1]
    record = _run_times("full", {name: [1.0, 5.0]})
    record.data["cell_seconds"][name][1]["section"] = "08 · A title the notebook once had"
    section, seconds = cards.longest_cell([record], name)
    assert section == f"{name[:2]} · {cards.title(name)}" and seconds == 5.0


def test_a_piece_that_never_pays_back_reads_as_never_on_the_sheet():
    record = results.Record(
        "bench.compile",
        {"speedups": [{"piece": "act", "size": 8, "break_even_calls": None},
                      {"piece": "update", "size": 256, "break_even_calls": 1547.0}]},
    )  # fmt: skip
    assert answers._break_even(record) == (
        "act at 8 never (no steady gain), update at 256 1,547 calls"
    )
