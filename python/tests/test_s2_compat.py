"""The Semantic Scholar-compatible API of `novelty serve`, tested the way a Semantic Scholar
client uses it. The client below is written against that API's published documentation
(https://api.semanticscholar.org/api-docs/graph: paper relevance search, title match, paper
details, paper batch, recommendations for a paper, the x-api-key header, Error400/Error404
bodies) and the Python standard library alone; it knows nothing of this project except the base
URL. The first test sends the request AI-Scientist's novelty check makes, parameter for
parameter, and formats the answer with that pipeline's own string template."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import CLI, ROOT, run_cli

AI_SCIENTIST_FIELDS = "title,authors,venue,year,abstract,citationStyles,citationCount"


class S2Client:
    """A minimal Graph API client: base URL, optional API key, JSON in and out."""

    def __init__(self, base: str, api_key: str | None = None) -> None:
        self.base = base.rstrip("/")
        self.api_key = api_key

    def call(self, method: str, path: str, params: dict[str, Any] | None = None,
             body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        url = self.base + path + ("?" + urllib.parse.urlencode(params) if params else "")
        data = json.dumps(body).encode() if body is not None else None
        all_headers = {"X-API-KEY": self.api_key} if self.api_key else {}
        all_headers.update(headers or {})
        if data is not None:
            all_headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=all_headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def search(self, **params: Any) -> tuple[int, Any]:
        return self.call("GET", "/graph/v1/paper/search", params)

    def match(self, **params: Any) -> tuple[int, Any]:
        return self.call("GET", "/graph/v1/paper/search/match", params)

    def paper(self, paper_id: str, **params: Any) -> tuple[int, Any]:
        return self.call("GET", "/graph/v1/paper/" + urllib.parse.quote(paper_id, safe=":/"), params)

    def batch(self, ids: list[str], **params: Any) -> tuple[int, Any]:
        return self.call("POST", "/graph/v1/paper/batch", params, {"ids": ids})

    def recommendations(self, paper_id: str, **params: Any) -> tuple[int, Any]:
        return self.call("GET", "/recommendations/v1/papers/forpaper/" + urllib.parse.quote(paper_id, safe=":"), params)


def serve(corpus: str, *flags: str) -> tuple[subprocess.Popen[str], str]:
    """Starts `novelty serve` on a free port; returns the process and its base URL."""
    process = subprocess.Popen([str(CLI), "serve", "--corpus", corpus, "--port", "0", "--threads", "2", *flags],
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert process.stderr is not None
    for line in process.stderr:
        found = re.search(r"on (http://[0-9.]+:\d+) ", line)
        if found:
            return process, found.group(1)
    process.wait(timeout=30)
    raise AssertionError(f"novelty serve did not start (exit code {process.returncode})")


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.wait(timeout=60)


@pytest.fixture(scope="module")
def demo(demo_dir: str) -> Iterator[S2Client]:
    process, base = serve(demo_dir)
    try:
        yield S2Client(base)
    finally:
        stop(process)


@pytest.fixture(scope="module")
def s2_corpus(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("s2") / "corpus"
    fixtures = ROOT / "tests" / "fixtures" / "import" / "s2"
    run_cli("corpus", "import", "-q", "--format", "s2", "--out", str(out), "--in",
            *(str(fixtures / name) for name in ("papers-part0.jsonl", "papers-part1.jsonl.gz",
                                                  "abstracts-part0.jsonl", "embeddings-specter_v2-part0.jsonl")))
    return str(out)


@pytest.fixture(scope="module")
def keyed(s2_corpus: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    token = tmp_path_factory.mktemp("token") / "token.txt"
    token.write_text("k3y-for-tests\n", encoding="utf-8")
    process, base = serve(s2_corpus, "--token-file", str(token))
    try:
        yield base, "k3y-for-tests"
    finally:
        stop(process)


def test_the_ai_scientist_request_gets_a_well_formed_answer(demo: S2Client) -> None:
    query = "Gaussian splatting SLAM with loop closure"
    status, results = demo.call("GET", "/graph/v1/paper/search",
                                {"query": query, "limit": 10, "fields": AI_SCIENTIST_FIELDS},
                                headers={"X-API-KEY": "unused-without-a-token"})
    assert status == 200, results
    assert set(results) == {"total", "offset", "next", "data"}
    assert results["total"] >= 10 and results["offset"] == 0 and results["next"] == 10
    papers = results["data"]
    assert len(papers) == 10
    for paper in papers:
        assert set(paper) == {"paperId", "title", "authors", "venue", "year", "abstract", "citationStyles",
                              "citationCount"}
        assert isinstance(paper["title"], str) and paper["title"]
        assert isinstance(paper["authors"], list)
        assert isinstance(paper["year"], int)
        assert paper["citationStyles"]["bibtex"].startswith("@")
        assert paper["citationCount"] is None or isinstance(paper["citationCount"], int)
    # The demo corpus holds the paper this query describes (LoopSplat, 3DV 2025).
    assert "LoopSplat" in " ".join(p["title"] for p in papers[:3])
    # AI-Scientist's own formatting of the results.
    lines = ["""{i}: {title}. {authors}. {venue}, {year}.\nNumber of citations: {cites}\nAbstract: {abstract}""".format(
        i=i, title=p["title"], authors=p["authors"], venue=p["venue"], year=p["year"], cites=p["citationCount"],
        abstract=p["abstract"]) for i, p in enumerate(papers)]
    assert len("\n\n".join(lines)) > 1000


def test_paging_walks_one_ranking(demo: S2Client) -> None:
    query = "robot grasping with tactile sensing"
    _, first = demo.search(query=query, limit=10)
    _, second = demo.search(query=query, limit=10, offset=10)
    _, both = demo.search(query=query, limit=20)
    assert second["offset"] == 10 and second["next"] == 20
    assert [p["paperId"] for p in first["data"] + second["data"]] == [p["paperId"] for p in both["data"]]
    assert set(first["data"][0]) == {"paperId", "title"}  # the default fields
    _, last = demo.search(query=query, limit=10, offset=990)
    assert last["total"] == 1000 and "next" not in last and len(last["data"]) == 10


def test_filters_hold_for_every_result(demo: S2Client) -> None:
    query = "learning representations"
    fields = "year,venue,fieldsOfStudy,citationCount,publicationDate"

    def data(**params: Any) -> list[dict]:
        status, reply = demo.search(query=query, limit=100, fields=fields, **params)
        assert status == 200, reply
        assert reply["data"], params
        return reply["data"]

    assert all(2016 <= p["year"] <= 2020 for p in data(year="2016-2020"))
    assert all(p["year"] <= 1999 for p in data(year="-1999"))
    assert all(p["year"] >= 2024 for p in data(year="2024-"))
    assert all(p["year"] == 2019 for p in data(year="2019"))
    assert all(p["venue"] in ("iros", "icra") for p in data(venue="iros,icra"))
    assert all(p["fieldsOfStudy"] == ["biomed"] for p in data(fieldsOfStudy="biomed"))
    assert all(p["citationCount"] >= 50 for p in data(minCitationCount=50))
    dated = data(publicationDateOrYear="2021-01-01:2021-06-30", fieldsOfStudy="biomed")
    assert all("2021-01-01" <= p["publicationDate"] <= "2021-06-30" for p in dated if p["publicationDate"])
    assert all(p["year"] == 2021 for p in dated)
    # Each ranking mode ranks one query; BM25 finds only papers sharing a term.
    for mode in ("hybrid", "dense", "bm25"):
        status, reply = demo.search(query="protein structure", ranking=mode, limit=5)
        assert status == 200 and len(reply["data"]) == 5, (mode, reply)


def test_bad_parameters_get_the_apis_statuses(demo: S2Client) -> None:
    for params in ({"limit": 101}, {"limit": "ten"}, {"offset": 995, "limit": 10}, {"year": "19x9"},
                   {"publicationDateOrYear": "2020-02-30:"}, {"fields": "title,bogus"}, {"minCitationCount": -3}):
        status, reply = demo.search(query="graph neural networks", **params)
        assert status == 400, params
        assert isinstance(reply["error"], str), reply
    status, reply = demo.search(query="graph", fields="title,bogus,garbage")
    assert reply == {"error": "Unrecognized or unsupported fields: [bogus, garbage]"}
    assert demo.search()[0] == 400
    status, reply = demo.match(query="totalGarbageNonsense")
    assert (status, reply) == (404, {"error": "Title match not found"})
    status, reply = demo.paper("DOI:10.0000/not-here")
    assert status == 404 and reply == {"error": "Paper with id DOI:10.0000/not-here not found"}
    assert demo.batch(["x"] * 501)[0] == 400


def test_every_id_form_names_the_same_paper(keyed: tuple[str, str]) -> None:
    base, key = keyed
    client = S2Client(base, key)
    for paper_id in ("1001", "CorpusId:1001", "DOI:10.1000/ABC.1", "ARXIV:2101.00001",
                     "URL:https://arxiv.org/abs/2101.00001"):
        status, paper = client.paper(paper_id, fields="title,externalIds,corpusId,authors,year")
        assert status == 200, (paper_id, paper)
        assert paper["paperId"] == "1001" and paper["corpusId"] == 1001 and paper["year"] == 2021
        assert paper["externalIds"]["DOI"] == "10.1000/ABC.1" and paper["externalIds"]["ArXiv"] == "2101.00001"
        assert paper["authors"] == [{"authorId": "10010", "name": "Author 1001"}]
    assert client.paper("PMID:31000001")[1]["paperId"] == "1002"
    status, papers = client.batch(["CorpusId:1004", "PMID:31000001", "CorpusId:424242"], fields="title")
    assert status == 200
    assert [p and p["paperId"] for p in papers] == ["1004", "1002", None]
    status, reply = client.recommendations("CorpusId:1001", limit=2, fields="title,year", **{"from": "all-cs"})
    assert status == 200 and [p["paperId"] for p in reply["recommendedPapers"]] == ["1004", "1002"]
    status, reply = client.match(query="Sparse Attention for Long Documents", fields="year")
    assert status == 200
    assert reply["data"][0]["paperId"] == "1003" and reply["data"][0]["matchScore"] > 0.99
    status, paper = client.paper("1001", fields="embedding")
    assert paper["embedding"]["model"] == "specter_v2" and paper["embedding"]["vector"] == [1, 0, 0, 0]


def test_the_api_key_header_is_the_servers_token(keyed: tuple[str, str]) -> None:
    base, key = keyed
    assert S2Client(base).paper("1001")[0] == 403
    assert S2Client(base, "wrong").paper("1001")[0] == 403
    assert S2Client(base, key).paper("1001")[0] == 200
    status, _ = S2Client(base).call("GET", "/graph/v1/paper/1001", headers={"Authorization": f"Bearer {key}"})
    assert status == 200
