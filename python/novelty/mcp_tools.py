"""The tools of `novelty mcp` (docs/integrations.md) as plain functions over the Python API: each
returns (structured result, short text). No MCP here: novelty/mcp_server.py publishes them with
the MCP SDK. Engine errors are raised unchanged (the server turns them into tool errors)."""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from . import _core
from ._claims import ClaimsChecker
from ._dedup import dedup
from ._index import Index
from ._retrieve import retrieve
from ._score import score

#: The id a search query gets; a corpus paper of this id would be left out of its own results.
QUERY_ID = "novelty-mcp:query"

OFFLINE_NOTE = ("offline approximation of the LLM method: claims are extracted and graded without an LLM "
                "(start the server with --llm to use one)")


def _paper_fields(index: Index, row: int) -> dict[str, Any]:
    paper = index.corpus.paper(row)
    return {"date": paper["date"], "venue": paper["venue"], "field": paper["field"], "citations": paper["citations"]}


def _idea_records(ideas: Sequence[Mapping[str, Any]], what: str) -> list[dict[str, Any]]:
    """Ideas as the engine's records; an idea without an id gets '<what>-N' (1-based)."""
    records = []
    for i, idea in enumerate(ideas):
        record = {k: v for k, v in idea.items() if v is not None}
        record.setdefault("id", f"{what}-{i + 1}")
        records.append(record)
    return records


def _title(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


class NoveltyTools:
    """The five tools over one index (its corpus) and, made on first use, one claims checker."""

    def __init__(self, index: Index, claims_settings: Mapping[str, Any] | None = None) -> None:
        self.index = index
        self.claims_settings = dict(claims_settings or {})
        self._checker: ClaimsChecker | None = None

    def search_papers(self, query: str, k: int = 10, cutoff: str | None = None, method: str = "hybrid",
                      filters: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], str]:
        """novelty.retrieve of one query with one method, each result with its paper's date, venue,
        field and citations."""
        if not query.strip():
            raise _core.UsageError("query is empty: give the words or the text to search for")
        record = retrieve(self.index, [{"id": QUERY_ID, "text": query}], k=k, methods=[method], cutoff=cutoff,
                          filter=dict(filters) if filters else None)[0]
        results = [dict(r, **_paper_fields(self.index, r["row"])) for r in record["results"][method]]
        out = {"query": query, "method": method, "cutoff": record["cutoff"], "searchable": record["searchable"],
               "results": results}
        where = f"published by {record['cutoff']}" if record["cutoff"] else "in the corpus"
        lines = [f"{len(results)} of {record['searchable']} papers {where}, by {method} relevance:"]
        lines += [f"{r['rank']}. {r['id']} ({r['date'] or 'undated'}) {_title(r['title'])}" for r in results]
        return out, "\n".join(lines)

    def get_paper(self, id: str) -> tuple[dict[str, Any], str]:
        """A corpus paper's metadata by id; `extra` holds the import's other keys."""
        row = self.index.corpus.find_row(id)
        if row is None:
            raise _core.UsageError(f"no paper with id '{id}' in the corpus {self.index.corpus.dir}")
        paper = dict(self.index.corpus.paper(row))
        extra_json = paper.pop("extra_json")
        paper["extra"] = json.loads(extra_json) if extra_json else {}
        return paper, f"{paper['id']} ({paper['date'] or 'undated'}, {paper['venue'] or 'no venue'}): {paper['title']}"

    def score_ideas(self, ideas: Sequence[Mapping[str, Any]], p: int = 100, q: int = 50,
                    evidence: int = 5) -> tuple[dict[str, Any], str]:
        """novelty.score with RND and HD, each idea's nearest papers as evidence."""
        if not ideas:
            raise _core.UsageError("ideas is empty: give at least one idea")
        records = score(self.index, _idea_records(ideas, "idea"), p=p, q=q, methods=("rnd", "hd"), evidence=evidence)
        lines = []
        for r in records:
            nearest = r["neighbors"][0] if r["neighbors"] else None
            near = f"; nearest {nearest['id']} (cosine {nearest['sim']:.3f}) {_title(nearest['title'], 60)}" if nearest else ""
            lines.append(f"{r['id']}: RND {r['scores']['rnd']}, HD {r['scores']['hd']}{near}")
        return {"results": records}, "\n".join(lines)

    def check_claims(self, proposal: Mapping[str, Any], cutoff: str | None = None,
                     pool: Sequence[str] | None = None) -> tuple[dict[str, Any], str]:
        """The ClaimNov check of one proposal: its claims' anticipation profile, the verdict and its
        source paper; `mode` says whether an LLM or the offline approximation ran."""
        if self._checker is None:
            self._checker = ClaimsChecker(self.index.corpus, **self.claims_settings)
        record = self._checker.check(_idea_records([proposal], "proposal"), cutoff=cutoff,
                                     pool=None if pool is None else list(pool))[0]
        verdict = record.get("verdict") or {}
        source = verdict.get("source")
        source_paper = None
        if source:
            row = self.index.corpus.find_row(source)
            if row is not None:
                paper = self.index.corpus.paper(row)
                source_paper = {"id": source, "title": paper["title"], "date": paper["date"]}
        mode = OFFLINE_NOTE if record.get("approximate") else "LLM"
        out = {"record": record, "source_paper": source_paper, "mode": mode}
        if record.get("error"):
            return out, f"{record['id']}: not judged ({record['error']})"
        text = (f"{record['id']}: {verdict.get('decision')}, novelty {record.get('novelty')}"
                f"{'; source ' + source + ' ' + _title(source_paper['title'], 60) if source_paper else ''}")
        return out, text + (f" [{mode}]" if record.get("approximate") else "")

    def find_duplicates(self, ideas: Sequence[Mapping[str, Any]], threshold: float = 0.8) -> tuple[dict[str, Any], str]:
        """novelty.dedup of the ideas among themselves and against the corpus's papers."""
        if not ideas:
            raise _core.UsageError("ideas is empty: give at least one idea")
        clusters = dedup(self.index, _idea_records(ideas, "idea"), threshold=threshold, against_corpus=True)
        groups = [c for c in clusters if c["size"] > 1]
        repeats = [m for c in clusters for m in c["members"] if m.get("archive")]
        lines = [f"{len(ideas)} ideas in {len(clusters)} clusters at cosine >= {threshold}: "
                 f"{len(groups)} with duplicates, {len(repeats)} ideas repeat a corpus paper"]
        lines += [f"cluster {c['cluster']}: {', '.join(m['id'] for m in c['members'])} (kept {c['representative']})"
                  for c in groups]
        lines += [f"{m['id']} repeats {m['archive']['id']} (cosine {m['archive']['sim']:.3f})" for m in repeats]
        return {"threshold": threshold, "clusters": clusters}, "\n".join(lines)
