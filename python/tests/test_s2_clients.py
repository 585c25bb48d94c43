"""Real Semantic Scholar clients, unchanged, against `novelty serve`: the `semanticscholar`
package (PyPI, pinned in scripts/requirements.txt) through every public method that maps to an
endpoint the server answers, synchronously and asynchronously, and the request sequence of
paper-qa's Semantic Scholar provider (title match, then the paper by DOI), written here from
that project's documented behaviour. AI-Scientist's request is in test_s2_compat.py.

The corpus is made here in the Semantic Scholar datasets' format (docs/formats.md, "s2"): six
papers with authors, DOIs, S2 URLs, 4-d vectors, and references between them and to one work
outside the corpus, so every answer can be checked exactly."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from semanticscholar import AsyncSemanticScholar, SemanticScholar
from semanticscholar.SemanticScholarException import BadQueryParametersException, ObjectNotFoundException

from conftest import ROOT, run_cli
from test_s2_compat import serve, stop

SHA = "{:040x}"  # the 40-hex paper id of the fixture's URLs: the corpus id in hex

PAPERS: list[dict[str, Any]] = [
    {"corpusid": 2001, "title": "Attention is all you need for translation", "year": 2017, "date": "2017-06-12",
     "venue": "NeurIPS", "cites": 900, "authors": [("501", "Ada Lovelace"), ("502", "Alan Turing")], "refs": [],
     "abstract": "Transformers replace recurrence with attention for machine translation.",
     "vector": [1, 0, 0, 0], "doi": "10.5555/attn.1", "arxiv": "1706.03762"},
    {"corpusid": 2002, "title": "Graph attention networks", "year": 2018, "date": "2018-02-01", "venue": "ICLR",
     "cites": 400, "authors": [("502", "Alan Turing"), ("503", "Grace Hopper")],
     "refs": [2001, "DOI:10.9999/outside.1"], "abstract": "Attention over graph neighbourhoods for node classification.",
     "vector": [0.8, 0.6, 0, 0], "doi": "10.5555/gat.2"},
    {"corpusid": 2003, "title": "Sparse graph transformers", "year": 2020, "date": "2020-07-01", "venue": "ICML",
     "cites": 50, "authors": [("503", "Grace Hopper")], "refs": [2001, 2002],
     "abstract": "Sparse attention lets graph transformers scale to large graphs.",
     "vector": [0.6, 0.8, 0, 0], "doi": "10.5555/sgt.3"},
    {"corpusid": 2004, "title": "Protein structure prediction with transformers", "year": 2021,
     "date": "2021-03-15", "venue": "Nature", "cites": 1200, "authors": [("504", "Barbara McClintock")],
     "refs": [2001, 2003], "abstract": "A transformer predicts protein structure from sequence.",
     "vector": [0, 0, 1, 0], "doi": "10.5555/prot.4", "types": ["JournalArticle"],
     "pdf": "https://example.org/prot.pdf"},
    {"corpusid": 2005, "title": "Gut microbiome shifts after antibiotics", "year": 2019, "date": "2019-09-09",
     "venue": "Cell", "cites": 30, "authors": [("504", "Barbara McClintock")], "refs": [],
     "abstract": "Antibiotic treatment changes the gut microbiome for months.",
     "vector": [0, 0, 0, 1], "doi": "10.5555/gut.5", "types": ["JournalArticle", "Review"]},
    {"corpusid": 2006, "title": "Self-supervised graph learning: a survey", "year": 2022, "date": "2022-01-20",
     "venue": "TPAMI", "cites": 80, "authors": [("501", "Ada Lovelace")], "refs": [2002, 2003, 2004],
     "abstract": "We survey self-supervised learning on graphs.", "vector": [0, 1, 0, 0], "doi": "10.5555/ssl.6"},
]


def write_s2_files(folder: Path, papers: list[dict[str, Any]], name: str) -> list[str]:
    """The papers as the three S2 datasets files (papers, abstracts, embeddings)."""
    folder.mkdir(parents=True, exist_ok=True)
    paper_lines, abstract_lines, vector_lines = [], [], []
    for p in papers:
        ids = {"CorpusId": str(p["corpusid"]), "DOI": p["doi"], "ArXiv": p.get("arxiv")}
        record = {"corpusid": p["corpusid"], "externalids": ids, "title": p["title"], "year": p["year"],
                  "publicationdate": p["date"], "venue": p["venue"], "citationcount": p["cites"],
                  "url": "https://www.semanticscholar.org/paper/" + SHA.format(p["corpusid"]),
                  "authors": [{"authorId": a, "name": n} for a, n in p["authors"]],
                  "publicationtypes": p.get("types"), "references": p["refs"],
                  "s2fieldsofstudy": [{"category": "Computer Science", "source": "s2-fos-model"}]}
        if "pdf" in p:  # kept in the record's extra, where openAccessPdf is read from
            record["openaccessinfo"] = {"url": p["pdf"], "status": "GOLD", "license": "CCBY"}
        paper_lines.append(json.dumps(record))
        abstract_lines.append(json.dumps({"corpusid": p["corpusid"], "abstract": p["abstract"]}))
        vector_lines.append(json.dumps({"corpusid": p["corpusid"], "model": "specter_v2", "vector": json.dumps(p["vector"])}))
    files = []
    for kind, lines in (("papers", paper_lines), ("abstracts", abstract_lines), ("embeddings-specter_v2", vector_lines)):
        path = folder / f"{kind}-{name}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        files.append(str(path))
    return files


@pytest.fixture(scope="module")
def graph_corpus(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("s2graph")
    out = folder / "corpus"
    run_cli("corpus", "import", "-q", "--format", "s2", "--out", str(out), "--in",
            *write_s2_files(folder / "in", PAPERS, "part0"))
    return str(out)


KEYWORDS = (("attention", "translation", "transformer", "transformers"), ("graph", "graphs"),
            ("protein", "structure", "sequence"), ("microbiome", "gut", "antibiotic", "antibiotics"))


def keyword_vector(text: str) -> list[float]:
    """The test's text encoder: one dimension per keyword group, a small bias so none is zero."""
    words = [w.strip(".,:;").lower() for w in text.split()]
    return [0.05 + sum(words.count(k) for k in group) for group in KEYWORDS]


class EmbeddingHandler(BaseHTTPRequestHandler):
    """An OpenAI-compatible /v1/embeddings endpoint serving keyword_vector as "specter_v2"."""

    def do_POST(self) -> None:  # noqa: N802 (the http.server name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        reply = json.dumps({"data": [{"index": i, "embedding": keyword_vector(t)} for i, t in enumerate(texts)]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def embedding_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EmbeddingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def base(graph_corpus: str, embedding_server: str) -> Iterator[str]:
    process, url = serve(graph_corpus, "--embedder", embedding_server, "--embed-model", "specter_v2")
    try:
        yield url
    finally:
        stop(process)


@pytest.fixture(scope="module")
def sch(base: str) -> SemanticScholar:
    return SemanticScholar(api_url=base, retry=False, timeout=60)


def titles(items: Any) -> list[str]:
    return [p.title for p in items]


def test_get_paper_with_the_clients_default_fields_answers_every_one(sch: SemanticScholar) -> None:
    paper = sch.get_paper("CorpusId:2003")  # Paper.FIELDS: nested authors, citations, references, ...
    assert paper.paperId == "2003" and paper.title == "Sparse graph transformers"
    assert paper.externalIds["DOI"] == "10.5555/sgt.3" and paper.corpusId == 2003
    assert [a.name for a in paper.authors] == ["Grace Hopper"]
    hopper = paper.authors[0]
    assert hopper.authorId == "503" and hopper.paperCount == 2 and hopper.citationCount == 450 and hopper.hIndex == 2
    assert hopper.affiliations == [] and hopper.homepage is None
    assert sorted(c.paperId for c in paper.citations) == ["2004", "2006"]
    assert [r.paperId for r in paper.references] == ["2001", "2002"]
    assert paper.referenceCount == 2 and paper.citationCount == 50
    assert paper.embedding["model"] == "specter_v2" and paper.embedding["vector"] == pytest.approx([0.6, 0.8, 0, 0])
    assert paper.tldr is None and paper.journal is None and paper.publicationVenue is None
    assert paper.publicationDate.year == 2020 and paper.s2FieldsOfStudy[0]["category"] == "Computer Science"
    assert paper.url == "https://www.semanticscholar.org/paper/" + SHA.format(2003)
    assert paper.citationStyles["bibtex"].startswith("@inproceedings{hopper2020sparse,")


def test_every_id_form_names_the_same_paper(sch: SemanticScholar) -> None:
    for paper_id in ("2001", "CorpusId:2001", "DOI:10.5555/attn.1", "ARXIV:1706.03762", SHA.format(2001),
                     "URL:https://www.semanticscholar.org/paper/" + SHA.format(2001),
                     "URL:https://arxiv.org/abs/1706.03762"):
        assert sch.get_paper(paper_id, fields=["title"]).paperId == "2001", paper_id
    # The client tells found ids by the papers' externalIds, so they are asked for.
    papers, missing = sch.get_papers(["CorpusId:2004", "DOI:10.5555/gut.5", "CorpusId:4242"],
                                     fields=["title", "year", "externalIds"], return_not_found=True)
    assert [(p.paperId, p.year) for p in papers] == [("2004", 2021), ("2005", 2019)]
    assert missing == ["CorpusId:4242"]


def test_citations_references_and_authors_of_a_paper(sch: SemanticScholar) -> None:
    citing = sch.get_paper_citations("2001", fields=["title", "year", "contexts", "isInfluential"])
    assert sorted(c.paper.paperId for c in citing) == ["2002", "2003", "2004"]
    assert all(c.contexts == [] and c.isInfluential is None for c in citing)
    refs = sch.get_paper_references("DOI:10.5555/gat.2", fields=["title", "externalIds"])
    assert [r.paper.paperId for r in refs] == ["2001", None]
    assert refs[0].paper.title == "Attention is all you need for translation"
    assert refs[1].paper.externalIds == {"DOI": "10.9999/outside.1"} and refs[1].paper.title is None
    authors = sch.get_paper_authors("2002")
    assert [(a.authorId, a.name) for a in authors] == [("502", "Alan Turing"), ("503", "Grace Hopper")]
    assert [a.paperCount for a in authors] == [2, 2]


def test_relevance_search_and_its_filters(sch: SemanticScholar) -> None:
    found = sch.search_paper("graph attention networks", limit=3)
    assert found.total == 6 and found[0].paperId == "2002" and len(found.items) == 3
    assert [p.paperId for p in found] == [p.paperId for p in sch.search_paper("graph attention networks", limit=100)]
    only = sch.search_paper("transformers", publication_types=["JournalArticle"], open_access_pdf=True,
                            year="2020-2022", fields=["title", "openAccessPdf", "publicationTypes"])
    assert [p.paperId for p in only] == ["2004"]
    assert only[0].openAccessPdf == {"url": "https://example.org/prot.pdf", "status": "GOLD", "license": "CCBY"}
    assert [p.paperId for p in sch.search_paper("graph", venue=["ICML"], min_citation_count=10)] == ["2003"]
    # Hybrid ranking ranks every paper in the range (its dense half reaches them all).
    dated = sch.search_paper("graph", publication_date_or_year="2018-01:2020-12", fields=["year"])
    assert sorted(p.paperId for p in dated) == ["2002", "2003", "2005"] and dated[0].paperId in ("2002", "2003")


def test_title_match(sch: SemanticScholar) -> None:
    paper = sch.search_paper("sparse graph transformers", match_title=True, fields=["year", "externalIds"])
    assert paper.paperId == "2003" and paper.year == 2020 and paper.raw_data["matchScore"] == 1.0
    with pytest.raises(ObjectNotFoundException):
        sch.search_paper("entirely unrelated words", match_title=True)


def test_bulk_search_with_the_query_syntax_and_sort(sch: SemanticScholar) -> None:
    def bulk(query: str, sort: str | None = None, **filters: Any) -> list[str]:
        return [p.paperId for p in sch.search_paper(query, bulk=True, sort=sort, fields=["title"], **filters)]

    assert bulk("graph") == ["2002", "2003", "2006"]  # default order: paperId ascending
    assert bulk("graph -sparse") == ["2002", "2006"]
    assert bulk("graph + transformers") == ["2003"]
    assert bulk("microbiome | protein") == ["2004", "2005"]
    assert bulk('"graph transformers"') == ["2003"]
    assert bulk("transform*", sort="citationCount:desc") == ["2004", "2001", "2003"]
    assert bulk("(graph | protein) -survey", sort="publicationDate:asc") == ["2002", "2003", "2004"]
    assert bulk("mikrobiome~2") == ["2005"]  # within edit distance 2
    assert bulk("attention", year="2018-") == ["2002", "2003"]
    with pytest.raises(BadQueryParametersException):
        bulk('"unclosed phrase')
    with pytest.raises(BadQueryParametersException):
        bulk("graph", sort="title:asc")


def test_authors(sch: SemanticScholar) -> None:
    author = sch.get_author("504")  # Author.FIELDS, with every papers.* field
    assert author.name == "Barbara McClintock" and author.paperCount == 2 and author.citationCount == 1230
    assert sorted(p.title for p in author.papers) == ["Gut microbiome shifts after antibiotics",
                                                      "Protein structure prediction with transformers"]
    assert [a and a.name for a in sch.get_authors(["501", "503"])] == ["Ada Lovelace", "Grace Hopper"]
    papers = sch.get_author_papers("501", fields=["title", "year"])
    assert [(p.paperId, p.year) for p in papers] == [("2001", 2017), ("2006", 2022)]
    found = sch.search_author("turing")
    assert [(a.authorId, a.name) for a in found] == [("502", "Alan Turing")] and found.total == 1
    with pytest.raises(ObjectNotFoundException):
        sch.get_author("999999")


def test_recommendations(sch: SemanticScholar) -> None:
    # 2002 is (0.8, 0.6, 0, 0): 2003 (0.96) then 2001 (0.8) are nearest.
    assert [p.paperId for p in sch.get_recommended_papers("2002", limit=2)] == ["2003", "2001"]
    # Minus 2006 (0, 1, 0, 0) the query turns toward 2001: (0.8, -0.4) scores 2001 at 0.89, 2003 at 0.18.
    lists = sch.get_recommended_papers_from_lists(["2002"], ["2006"], limit=2, fields=["title", "year"])
    assert [p.paperId for p in lists] == ["2001", "2003"] and lists[0].year == 2017
    with pytest.raises(ObjectNotFoundException):
        sch.get_recommended_papers_from_lists(["CorpusId:4242"])


def test_autocomplete_and_snippets(sch: SemanticScholar) -> None:
    matches = sch.get_autocomplete("sparse gra")
    assert [(m.id, m.title, m.authors_year) for m in matches] == [("2003", "Sparse graph transformers", "Hopper, 2020")]
    snippets = sch.search_snippet("microbiome antibiotic", limit=3)
    assert snippets[0].paper.title == "Gut microbiome shifts after antibiotics"
    assert snippets[0].snippet.snippet_kind == "abstract" and snippets[0].score > 0
    assert "microbiome" in snippets[0].text
    offset = snippets[0].snippet.snippet_offset
    abstract = next(p["abstract"] for p in PAPERS if p["corpusid"] == 2005)
    assert abstract[offset["start"]:offset["end"]] == snippets[0].text
    assert sch.search_snippet("attention", authors=["Grace Hopper"], year="2018")[0].paper.title == "Graph attention networks"


def test_bad_ids_and_parameters_get_the_apis_statuses(base: str, sch: SemanticScholar) -> None:
    with pytest.raises(ObjectNotFoundException):
        sch.get_paper("CorpusId:4242")
    with pytest.raises(BadQueryParametersException):
        sch.search_paper("graph", year="20x9")
    with pytest.raises(BadQueryParametersException):
        sch.get_paper("2001", fields=["title", "bogus"])
    for path, params in (("/graph/v1/paper/2001/citations", {"limit": 1001}), ("/graph/v1/author/search", {}),
                         ("/graph/v1/paper/search/bulk", {"token": "x"}), ("/graph/v1/snippet/search", {"query": "a", "limit": 0}),
                         ("/graph/v1/paper/autocomplete", {}), ("/graph/v1/paper/2001", {"fields": "authors.bogus"})):
        reply = httpx.get(base + path, params=params)
        assert reply.status_code == 400 and isinstance(reply.json()["error"], str), (path, reply.text)
    for path in ("/graph/v1/paper/nope/citations", "/graph/v1/paper/nope/references", "/graph/v1/author/nope/papers"):
        reply = httpx.get(base + path)
        assert reply.status_code == 404 and isinstance(reply.json()["error"], str), (path, reply.text)
    reply = httpx.post(base + "/recommendations/v1/papers/", json={"negativePaperIds": ["2001"]})
    assert reply.status_code == 400 and "positivePaperIds" in reply.json()["error"]


def test_the_async_client(base: str) -> None:
    async def run() -> None:
        client = AsyncSemanticScholar(api_url=base, retry=False, timeout=60)
        paper = await client.get_paper("DOI:10.5555/prot.4")
        assert paper.title == "Protein structure prediction with transformers"
        assert [r.paperId for r in paper.references] == ["2001", "2003"] and [c.paperId for c in paper.citations] == ["2006"]
        found = await client.search_paper("graph", bulk=True, sort="citationCount:asc")
        assert [p.paperId async for p in found] == ["2003", "2006", "2002"]
        citing = await client.get_paper_citations("2003")
        assert sorted(c.paper.paperId for c in citing) == ["2004", "2006"]
        refs = await client.get_paper_references("2006")
        assert [r.paper.paperId for r in refs] == ["2002", "2003", "2004"]
        assert (await client.get_author("503")).paperCount == 2
        assert [a.name for a in await client.search_author("lovelace")] == ["Ada Lovelace"]
        assert [p.paperId for p in await client.get_author_papers("503")] == ["2002", "2003"]
        assert [p.paperId for p in await client.get_recommended_papers_from_lists(["2004"], limit=1)] == ["2001"]
        assert [p.paperId for p in await client.get_recommended_papers("2001", limit=1)] == ["2002"]
        assert [m.id for m in await client.get_autocomplete("protein struct")] == ["2004"]
        assert (await client.search_snippet("sequence"))[0].paper.title.startswith("Protein structure")
        assert [p.paperId for p in await client.get_papers(["2005", "2006"])] == ["2005", "2006"]
        assert [a.authorId for a in await client.get_authors(["502"])] == ["502"]
        assert [a.name for a in await client.get_paper_authors("2001")] == ["Ada Lovelace", "Alan Turing"]
        match = await client.search_paper("graph attention networks", match_title=True)
        assert match.paperId == "2002"

    asyncio.run(run())


def test_the_paper_qa_provider_sequence(base: str) -> None:
    """paper-qa's Semantic Scholar provider: a title match with its fields, the paper's DOI taken
    from externalIds (an arXiv id first, as 10.48550/arXiv.ID), then the paper by DOI."""
    fields = ("title,externalIds,authors,publicationDate,year,journal,url,openAccessPdf,citationStyles,"
              "isOpenAccess,influentialCitationCount,publicationTypes,venue,citationCount")

    async def run() -> None:
        async with httpx.AsyncClient(base_url=base, timeout=60, headers={"x-api-key": "unused"}) as client:
            reply = await client.get("/graph/v1/paper/search/match",
                                     params={"query": "Graph attention networks", "fields": fields})
            reply.raise_for_status()
            data = reply.json()
            entry = data["data"][0]
            assert entry["title"] == "Graph attention networks" and entry["matchScore"] == 1.0
            ids = entry["externalIds"]
            doi = "10.48550/arXiv." + ids["ArXiv"] if "ArXiv" in ids else ids["DOI"]
            assert doi == "10.5555/gat.2"
            assert [a["name"] for a in entry["authors"]] == ["Alan Turing", "Grace Hopper"]
            assert entry["citationStyles"]["bibtex"].split("{")[1].split(",")[0] == "turing2018graph"
            assert (entry["journal"] or {}).get("name") is None and (entry["openAccessPdf"] or {}).get("url") is None
            by_doi = await client.get(f"/graph/v1/paper/DOI:{doi}", params={"fields": fields})
            by_doi.raise_for_status()
            assert by_doi.json() == {k: v for k, v in entry.items() if k != "matchScore"}
            missing = await client.get("/graph/v1/paper/search/match", params={"query": "no such title at all", "fields": fields})
            assert missing.status_code == 404 and missing.json() == {"error": "Title match not found"}

    asyncio.run(run())


def test_the_citation_graph_survives_corpus_add(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    run_cli("corpus", "import", "-q", "--format", "s2", "--out", str(out), "--in",
            *write_s2_files(tmp_path / "a", PAPERS[:3], "part0"))
    later = [dict(PAPERS[3]), dict(PAPERS[5], refs=[2002, 2003, 2004, 2001])]
    run_cli("corpus", "add", str(out), "-q", "--format", "s2", "--in", *write_s2_files(tmp_path / "b", later, "part1"))
    process, url = serve(str(out))
    try:
        sch = SemanticScholar(api_url=url, retry=False, timeout=60)
        assert sorted(c.paper.paperId for c in sch.get_paper_citations("2001")) == ["2002", "2003", "2004", "2006"]
        assert [r.paper.paperId for r in sch.get_paper_references("2006")] == ["2002", "2003", "2004", "2001"]
        assert sch.get_paper("2002", fields=["citations"]).citations[0].paperId in ("2003", "2006")
    finally:
        stop(process)


def test_openalex_referenced_works_make_the_graph(tmp_path: Path) -> None:
    import numpy as np

    works = [
        {"id": "https://openalex.org/W1", "doi": "https://doi.org/10.7/a", "title": "Origins of graph search",
         "publication_date": "2015-01-01", "referenced_works": []},
        {"id": "https://openalex.org/W2", "doi": "https://doi.org/10.7/b", "title": "Graph search revisited",
         "publication_date": "2018-01-01", "referenced_works": ["https://openalex.org/W1", "https://openalex.org/W99"],
         "authorships": [{"author": {"id": "https://openalex.org/A7", "display_name": "Edsger Dijkstra"}}]},
    ]
    source = tmp_path / "works.jsonl"
    source.write_text("\n".join(json.dumps(w) for w in works) + "\n", encoding="utf-8")
    out = tmp_path / "corpus"
    run_cli("corpus", "import", "-q", "--format", "openalex", "--out", str(out), "--in", str(source))
    np.save(tmp_path / "v.npy", np.array([[1, 0, 0, 0], [0, 1, 0, 0]], dtype=np.float32))
    (tmp_path / "ids.txt").write_text("W1\nW2\n", encoding="utf-8")
    run_cli("corpus", "add-vectors", str(out), "-q", "--vectors", str(tmp_path / "v.npy"), "--ids",
            str(tmp_path / "ids.txt"), "--embedder", "test-4d")
    process, url = serve(str(out))
    try:
        sch = SemanticScholar(api_url=url, retry=False, timeout=60)
        refs = sch.get_paper_references("DOI:10.7/b", fields=["title", "externalIds"])
        assert [r.paper.paperId for r in refs] == ["W1", None]
        assert refs[1].paper.externalIds == {"OpenAlex": "W99"}
        assert [c.paper.paperId for c in sch.get_paper_citations("W1")] == ["W2"]
        assert sch.get_author("A7").name == "Edsger Dijkstra"
        assert [p.paperId for p in sch.get_author_papers("A7")] == ["W2"]
    finally:
        stop(process)


def pubmed_article(pmid: int, title: str, year: int, references: list[str]) -> str:
    refs = "".join(f'<Reference><Citation>ref</Citation><ArticleIdList>{r}</ArticleIdList></Reference>'
                   for r in references)
    return (f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><Journal><JournalIssue><PubDate>"
            f"<Year>{year}</Year></PubDate></JournalIssue><Title>J</Title></Journal><ArticleTitle>{title}</ArticleTitle>"
            f"</Article></MedlineCitation><PubmedData><ArticleIdList><ArticleId IdType=\"pubmed\">{pmid}</ArticleId>"
            f"</ArticleIdList><ReferenceList>{refs}</ReferenceList></PubmedData></PubmedArticle>")


def test_pubmed_reference_lists_make_the_graph(tmp_path: Path) -> None:
    import numpy as np

    articles = [pubmed_article(11, "Sleep and memory", 2001, []),
                pubmed_article(12, "Sleep and learning", 2005,
                               ['<ArticleId IdType="pubmed">11</ArticleId>', '<ArticleId IdType="doi">10.1/out</ArticleId>',
                                "<ArticleId IdType=\"pii\">x</ArticleId>"])]
    source = tmp_path / "pubmed.xml"
    source.write_text("<PubmedArticleSet>\n" + "\n".join(articles) + "\n</PubmedArticleSet>\n", encoding="utf-8")
    out = tmp_path / "corpus"
    run_cli("corpus", "import", "-q", "--format", "pubmed", "--out", str(out), "--in", str(source))
    np.save(tmp_path / "v.npy", np.array([[1, 0], [0, 1]], dtype=np.float32))
    (tmp_path / "ids.txt").write_text("11\n12\n", encoding="utf-8")
    run_cli("corpus", "add-vectors", str(out), "-q", "--vectors", str(tmp_path / "v.npy"), "--ids",
            str(tmp_path / "ids.txt"), "--embedder", "test-2d")
    process, url = serve(str(out))
    try:
        sch = SemanticScholar(api_url=url, retry=False, timeout=60)
        refs = sch.get_paper_references("PMID:12", fields=["title", "externalIds"])
        assert [r.paper.paperId for r in refs] == ["11", None]
        assert refs[0].paper.externalIds == {"PubMed": "11"} and refs[1].paper.externalIds == {"DOI": "10.1/out"}
        assert [c.paper.paperId for c in sch.get_paper_citations("PMID:11")] == ["12"]
    finally:
        stop(process)


def test_the_documented_example_runs(demo_dir: str, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/integrations.md's example, run as written against the demo corpus served here."""
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    block = text.split("<!-- example: s2-client -->\n```python\n", 1)[1].split("```", 1)[0]
    assert 'api_url="http://127.0.0.1:8080"' in block
    process, url = serve(demo_dir)
    try:
        exec(compile(block.replace("http://127.0.0.1:8080", url), "integrations.md", "exec"), {})
    finally:
        stop(process)
    out = capsys.readouterr().out
    assert "match: 3dv2025:" in out and "LoopSplat" in out
    assert "similar: [" in out and "bulk: " in out and "completions: ['LoopSplat" in out
