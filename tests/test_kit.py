"""The teacher's kit in docs/: its generated sections match the reference records, the
workshop's blocks cover the series and follow its limits, the hardware page names only
machines with records, and every glossary term has an anchor of its own."""

from __future__ import annotations

import re

import pytest

from hetero_tutorial.app import kit, readme
from hetero_tutorial.core import results


def test_the_kit_pages_generated_sections_match_the_reference_records():
    for page, sections in kit.PAGES.items():
        text = (kit.DOCS_DIR / page).read_text()
        for name, build in sections.items():
            assert readme.section(text, name) == build(), (
                f"docs/{page} section {name!r} is stale: run python -m hetero_tutorial "
                "ledger --readme"
            )


def test_every_notebook_is_in_exactly_one_workshop_block():
    numbers = [number for block in kit.BLOCKS for number in block.notebooks]
    assert sorted(numbers) == [name[:2] for name in readme.series_notebooks()]


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
    names = readme.series_notebooks()
    block = kit.Block("test", (names[0][:2],))
    fits = _run_times("full", {name: [10.0, 20.0] for name in names})
    assert kit._in_class(block, [fits]) == "full mode"
    long_cell = _run_times("full", {name: [10.0, 20.0] for name in names} | {names[0]: [200.0]})
    assert "00 has a cell of 3.3 min" in kit._in_class(block, [long_cell])
    long_notebook = _run_times("full", {name: [100.0] * 4 for name in names})
    assert "longer than 5 min" in kit._in_class(block, [long_notebook])
    assert kit._in_class(block, []) == "quick mode (full mode not recorded)"
    monkeypatch.setattr(results, "load_references", lambda kind=None: [fits])
    table = kit.workshop_blocks()
    assert "On Test CPU (2 cores, no GPU), the medians of 0 quick and 1 full recorded runs" in table
    assert f"| {kit.BLOCKS[0].title} | 00 | not recorded | 30 s | 20 s (00: *part 1*) |" in table


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

    from hetero_tutorial.app import cards

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("Time the update, twice: 2.5 ms."),
        nbformat.v4.new_code_cell("print('these words are code, not prose')"),
    ]
    assert cards.prose_words(notebook) == 6
    minutes = cards.reading_minutes("00_devices_and_timing.ipynb")
    assert 1 < minutes < 60  # a notebook is read in minutes, not seconds or hours
