"""The contract on the queries people type: a surname, a full name, a few
keywords, a real word the index lacks, a typo (docs/matching.md, "How a
query is read"), the same on every engine."""

import json

import pytest

from searchengine import querylang

from .conftest import BUILDERS, ENGINES

FILLER = "a study of methods and results for readers"


def _record(number: int, title: str, abstract: str, authors: list[str], year: int = 2024) -> dict:
    return {
        "id": f"p{number:03d}",
        "title": title,
        "abstract": abstract,
        "authors": authors,
        "categories": ["cs.CV"],
        "year": year,
    }


def _records() -> list[dict]:
    records = []

    def add(title, abstract, authors, year=2024):
        records.append(_record(len(records) + 1, title, abstract, authors, year))

    # Andrea Vedaldi's papers; "veda" and "ldi" are words of other abstracts.
    add("Point tracking for video", "Tracking points across frames. " + FILLER, ["Zihang Lai", "Andrea Vedaldi"], 2025)
    add("Mesh dynamics in world space", "Simulating meshes. " + FILLER, ["Andrea Vedaldi"], 2026)
    add("Sanskrit veda corpora", "The veda ldi tagging of corpora. " + FILLER, ["Ravi Shastri"], 2023)
    add("Low dose imaging", "A ldi veda study. " + FILLER, ["Mina Park"], 2023)
    # Yann LeCun wrote two; three papers mention him, one in its title too.
    add("Joint embedding predictive architectures", "World models. " + FILLER, ["Yann LeCun", "Emma Stone"], 2025)
    add("Temporal differences for vision", "Representation learning. " + FILLER, ["Y. LeCun"], 2026)
    for number in range(3):
        add(
            f"Yann LeCun on chatbots {number}",
            "Yann LeCun argues that LeCun's view of learning differs. " + FILLER,
            ["Paul Dubois"],
            2026,
        )
    # A surname two people share, and a surname that is also a common word.
    add("Rigid registration", "Registration of scans. " + FILLER, ["Wei Zhangsun"], 2022)
    add("Soft registration", "Registration of shapes. " + FILLER, ["Li Zhangsun"], 2021)
    add("Residual networks", "Deep residual learning. " + FILLER, ["Amar Deep"], 2020)
    add("Machine learning for PDEs", "Solving equations. " + FILLER, ["Weinan E"], 2021)
    for number in range(12):
        add(f"Deep learning survey {number}", "Deep networks. " + FILLER, ["Kim Lee"], 2020)
    # Sanja Fidler; "filler" is common in abstracts.
    add("Flow map distillation", "Distilling flows. " + FILLER, ["Sanja Fidler"], 2025)
    for number in range(30):
        add(f"Filler words {number}", "Filler words in speech, filler tokens. " + FILLER, ["Ana Costa"], 2019)
    # Four keywords: two papers hold all four, others three of them.
    add("Benchmark driven compilation agent", "An agent for compilation. " + FILLER, ["Jo Kim"], 2026)
    add("Compilation agents", "A benchmark driven study of the compilation agent. " + FILLER, ["Jo Kim"], 2025)
    for number in range(6):
        add(
            f"Compilation agent benchmark {number}",
            "Compilation agent benchmark agent benchmark. " + FILLER,
            ["Jo Kim"],
            2024,
        )
    # A typo one abstract writes, and the word it misspells.
    add("Speech tranformer", "A tranformer for speech. " + FILLER, ["Kai Tran"], 2024)
    for number in range(150):
        add(f"Transformer model {number}", "A transformer model. " + FILLER, ["Kai Ito"], 2024)
    # "neurino", one edit from the real word neutrino, which no paper holds.
    add("NeurINO segmentation", "The neurino code segments neurons. " + FILLER, ["Yik Cheng"], 2026)
    return records


@pytest.fixture(scope="module", params=ENGINES)
def index(request, tmp_path_factory):
    """The records above, indexed on each engine."""
    source = tmp_path_factory.mktemp("everyday") / "records.jsonl"
    source.write_text("\n".join(json.dumps(record) for record in _records()) + "\n", encoding="utf-8")
    opened, drop = BUILDERS[request.param](tmp_path_factory, source)
    yield opened
    drop()
    opened.close()


def _titles(results) -> list[str]:
    return [hit.title for hit in results.hits]


def test_a_surname_typed_alone_is_neither_split_nor_corrected(index):
    found = index.search("Vedaldi")
    assert found.corrected is None and found.suggestion is None
    assert found.total == 2
    assert _titles(found) == ["Mesh dynamics in world space", "Point tracking for video"]
    assert found.author == {
        "query": "Vedaldi",
        "filter": "Vedaldi",
        "papers": 2,
        "names": [{"name": "Andrea Vedaldi", "papers": 2}],
    }
    assert found.notes[0].startswith("also searched as the author Andrea Vedaldi: 2 papers listed first")


def test_a_full_name_lists_the_authors_papers_before_papers_that_mention_it(index):
    found = index.search("Yann LeCun")
    # His two papers (one gives only the initial), newest first, then the three that mention him.
    assert _titles(found)[:2] == ["Temporal differences for vision", "Joint embedding predictive architectures"]
    assert [title.startswith("Yann LeCun on chatbots") for title in _titles(found)] == [False, False, True, True, True]
    assert found.total == 5 and found.author["papers"] == 2 and found.page["pages"] == 1
    # Listed by date, not scored: the author's papers carry score 0, the rest their scores in order.
    scores = [hit.score for hit in found.hits]
    assert scores[:2] == [0.0, 0.0] and scores[2] > 0 and scores[2:] == sorted(scores[2:], reverse=True)
    assert found.to_dict()["author"]["names"] == [
        {"name": "Y. LeCun", "papers": 1},
        {"name": "Yann LeCun", "papers": 1},
    ]
    assert _titles(index.search("LeCun, Y."))[:2] == _titles(found)[:2]
    # Paging goes on past the author's papers, each paper once.
    pages = [hit.id for number in (1, 2, 3) for hit in index.search("Yann LeCun", limit=2, page=number).hits]
    assert pages == [hit.id for hit in found.hits]


def test_a_surname_several_people_share_names_them_all(index):
    found = index.search("Zhangsun")
    assert found.author["names"] == [{"name": "Li Zhangsun", "papers": 1}, {"name": "Wei Zhangsun", "papers": 1}]
    assert "the author Li Zhangsun, Wei Zhangsun: 2 papers" in found.notes[0]


def test_a_word_more_common_in_text_than_as_a_surname_is_not_read_as_a_name(index):
    found = index.search("deep")
    assert found.author is None and found.total == 13
    assert found.hits[0].title != "Residual networks" or found.hits[0].score > 0
    # A letter alone names too many people (Weinan E) to be read as one.
    assert index.search("E").author is None and index.search("é,").author is None
    # Under an author filter, or sorted otherwise, no name is read either.
    assert index.search("Vedaldi", sort="newest").author is None
    assert index.search("Vedaldi", author="Lai").author is None


def test_a_word_of_an_author_name_is_not_corrected_to_a_common_word(index):
    found = index.search("Fidler")
    assert found.corrected is None and found.suggestion is None
    assert _titles(found) == ["Flow map distillation"]


def test_four_keywords_need_every_word(index):
    found = index.search("compilation agent benchmark driven")
    assert found.total == 2 and not found.relaxed
    assert sorted(_titles(found)) == ["Benchmark driven compilation agent", "Compilation agents"]
    # No paper holds all five: relaxed to papers holding some of them.
    relaxed = index.search("compilation agent benchmark driven neurons")
    assert relaxed.relaxed and relaxed.total > 2


@pytest.mark.parametrize(
    ("query", "tree"),
    [
        ("compilation agent benchmark driven", "(compilation AND agent AND benchmark AND driven)"),
        ("sparse matrix gpu kernel format tuning", "(sparse AND matrix AND gpu AND kernel AND format AND tuning)"),
        # A question (stop words between its words) needs a share of them, as does a longer query.
        ("what is the buzz of an aileron wing flutter", "(buzz aileron wing flutter)>=2"),
        ("sparse matrix gpu kernel format tuning study", "(sparse matrix gpu kernel format tuning study)>=2"),
    ],
)
def test_keyword_queries_need_every_word_questions_a_share(query, tree):
    assert str(querylang.parse(query).tree) == tree


def test_a_real_word_no_paper_holds_is_left_as_typed(index):
    found = index.search("neutrino")
    assert found.corrected is None and found.total == 0
    assert found.suggestion != "neurino"


def test_a_typo_one_abstract_writes_is_suggested(index):
    found = index.search("tranformer")
    assert found.suggestion == "transformer" and found.corrected is None
