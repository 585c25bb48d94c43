"""The Semantic Scholar citations dataset (docs/formats.md, "s2"), imported beside the papers
and read back through the `semanticscholar` client unchanged: edges between corpus papers, an
edge to a paper outside the corpus (listed with paperId null, as the API lists them), and the
dataset's isInfluential, contexts and intents on the edges."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from semanticscholar import SemanticScholar

from conftest import run_cli
from test_s2_clients import PAPERS, write_s2_files
from test_s2_compat import serve, stop


def test_the_citations_dataset_fills_the_graph_with_its_edge_fields(tmp_path: Path) -> None:
    papers = [dict(p, refs=[]) for p in PAPERS[:3]]  # the records list no references: the dataset does
    files = write_s2_files(tmp_path / "in", papers, "part0")
    edges = [
        {"citationid": 1, "citingcorpusid": 2002, "citedcorpusid": 2001, "isinfluential": True,
         "contexts": ["as in the Transformer [3]"], "intents": [["methodology"]]},
        {"citationid": 2, "citingcorpusid": 2003, "citedcorpusid": 2001, "isinfluential": False,
         "contexts": ["attention [1]", "following [1]"], "intents": [["background"], ["methodology", "background"]]},
        {"citationid": 3, "citingcorpusid": 2003, "citedcorpusid": 2002, "isinfluential": None, "contexts": None,
         "intents": None},
        {"citationid": 4, "citingcorpusid": 2003, "citedcorpusid": 987654, "isinfluential": False, "contexts": [],
         "intents": []},
        {"citationid": 5, "citingcorpusid": 31337, "citedcorpusid": 2001, "isinfluential": False},  # citing not here
        {"citationid": 6, "citingcorpusid": 2002, "citedcorpusid": None},  # names no cited paper
    ]
    citations = tmp_path / "in" / "citations-part0.jsonl.gz"
    with gzip.open(citations, "wt", encoding="utf-8") as f:
        f.write("".join(json.dumps(e) + "\n" for e in edges))
    out = tmp_path / "corpus"
    run_cli("corpus", "import", "-q", "--format", "s2", "--out", str(out), "--in", *files, str(citations))
    process, url = serve(str(out))
    try:
        sch = SemanticScholar(api_url=url, retry=False, timeout=60)
        cited = sch.get_paper_citations("CorpusId:2001", fields=["title", "isInfluential", "contexts", "intents",
                                                                 "contextsWithIntent"])
        assert [c.paper.paperId for c in cited] == ["2002", "2003"]
        assert [c.isInfluential for c in cited] == [True, False]
        assert cited[0].contexts == ["as in the Transformer [3]"] and cited[0].intents == ["methodology"]
        assert cited[1].intents == ["background", "methodology"]
        assert cited[1].contextsWithIntent == [{"context": "attention [1]", "intents": ["background"]},
                                               {"context": "following [1]", "intents": ["methodology", "background"]}]
        refs = sch.get_paper_references("2003", fields=["title", "externalIds", "isInfluential", "contexts"])
        assert [r.paper.paperId for r in refs] == ["2001", "2002", None]
        assert refs[2].paper.externalIds == {"CorpusId": "987654"}
        assert [r.isInfluential for r in refs] == [False, None, False] and refs[1].contexts == []
        assert sch.get_paper("2003", fields=["referenceCount"]).referenceCount == 3
    finally:
        stop(process)
