// The novelty web page (docs/ui.md): one module, no dependencies, talking only to the server's
// JSON API (docs/api.md). Rules that keep it safe with hostile corpus text: every string from
// the server or the user is inserted as a text node (textContent, never innerHTML); links get
// only http(s) URLs; the token lives in sessionStorage and travels only in the Authorization
// header, never in a URL.

const TOKEN_KEY = "novelty.token";
const LAST_KEY = "novelty.last";          // the last batch's job ids, for #/idea/ID and #/clusters
const IDEAS_KEY = "novelty.ideas.";       // + score job id: the ideas as sent (titles and texts)
const POLL_MS = 250;
const POOL_PAPERS = 30;                   // the claim check's pool: the idea's nearest papers

const state = {
  health: null,
  distribution: null,        // GET /v1/corpus/rnd
  batch: null,               // {scoreJob, triageJob, ideas: Map, results: [], triage: Map, papers: Map, threshold}
  sort: {key: null, dir: 1},
  claims: new Map(),         // idea id -> claims job result record
  running: false,
};

// --- DOM helpers: text only ---------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";
function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

/// A title shown as text, isolated from the surrounding text's direction (right-to-left marks).
function bdi(text) { return el("bdi", {text: text ?? ""}); }

/// An outside link, only for http(s) URLs; plain text otherwise.
function paperLink(title, url) {
  const label = title && title.trim() ? title : "(untitled)";
  if (typeof url === "string" && /^https?:\/\//i.test(url)) {
    return el("a", {href: url, target: "_blank", rel: "noopener noreferrer"}, bdi(label));
  }
  return bdi(label);
}

function fmt(value, digits) {
  if (value === null || value === undefined || Number.isNaN(value)) return "\u2013";
  return Number(value).toFixed(digits);
}

/// A table cell holding a number: shown rounded, the API's exact value in data-value.
function numCell(value, digits, extra = {}) {
  return el("td", {class: "num", "data-value": JSON.stringify(value ?? null), ...extra}, fmt(value, digits));
}

function yearOf(paper) {
  if (!paper) return null;
  if (paper.year !== null && paper.year !== undefined) return paper.year;
  return paper.date ? Number(String(paper.date).slice(0, 4)) : null;
}

function showAlert(message) {
  const box = document.getElementById("alert");
  if (!message) { box.hidden = true; box.textContent = ""; return; }
  box.textContent = message;
  box.hidden = false;
}

// --- the API --------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }

async function api(method, path, body) {
  const headers = {"Accept": "application/json"};
  if (token()) headers["Authorization"] = "Bearer " + token();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res;
  try {
    res = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body),
                             credentials: "omit", cache: "no-store"});
  } catch (e) {
    throw new ApiError(0, "The server did not answer (" + e.message + "). Is `novelty serve` still running?");
  }
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (res.status === 401) {
    throw new ApiError(401, token()
      ? "The server refused the API token (401 Unauthorized). Type the token from the server's --token-file above and press \u201cUse token\u201d."
      : "This server needs an API token (401 Unauthorized). Type the token from its --token-file above and press \u201cUse token\u201d.");
  }
  if (!res.ok) {
    const what = data && data.error ? data.error : res.statusText;
    throw new ApiError(res.status, `${method} ${path} failed (${res.status}): ${what}`);
  }
  return data;
}

async function waitForJob(id, onProgress) {
  for (;;) {
    const job = await api("GET", "/v1/jobs/" + encodeURIComponent(id));
    if (onProgress) onProgress(job);
    if (job.status === "done") return job;
    if (job.status === "failed") throw new ApiError(500, `The ${job.kind} job failed: ${job.error}`);
    await new Promise(r => setTimeout(r, POLL_MS));
  }
}

async function loadPapers(ids, into) {
  const wanted = [...new Set(ids.filter(id => id !== null && id !== undefined && !into.has(id)))];
  const limit = 500;
  for (let i = 0; i < wanted.length; i += limit) {
    const reply = await api("POST", "/v1/papers", {ids: wanted.slice(i, i + limit)});
    reply.results.forEach((p, j) => into.set(wanted[i + j], p));
  }
  return into;
}

async function loadDistribution() {
  if (!state.distribution) state.distribution = await api("GET", "/v1/corpus/rnd");
  return state.distribution;
}

// --- parsing what the user pasted -------------------------------------------------------------

/// Ideas from text: JSON Lines records (id, title, text/abstract, date) or one idea per line.
function parseIdeas(text) {
  const ideas = [];
  const seen = new Set();
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    let idea;
    if (line.startsWith("{")) {
      let rec;
      try { rec = JSON.parse(line); } catch (e) { throw new Error(`line ${i + 1}: not valid JSON (${e.message})`); }
      if (rec === null || typeof rec !== "object" || Array.isArray(rec)) throw new Error(`line ${i + 1}: not a JSON object`);
      idea = {id: rec.id !== undefined && rec.id !== null ? String(rec.id) : `line-${i + 1}`};
      for (const k of ["title", "text", "abstract", "date"]) if (typeof rec[k] === "string") idea[k] = rec[k];
      if (Array.isArray(rec.exclude)) idea.exclude = rec.exclude.map(String);
    } else {
      idea = {id: `line-${i + 1}`, title: line};
    }
    if (seen.has(idea.id)) throw new Error(`line ${i + 1}: the id '${idea.id}' appears twice`);
    seen.add(idea.id);
    ideas.push(idea);
  });
  if (!ideas.length) throw new Error("Paste at least one idea (one per line, or JSON Lines with id, title, text, date).");
  return ideas;
}

// --- routing ----------------------------------------------------------------------------------

function route() {
  const hash = location.hash || "#/";
  const [path, query] = hash.slice(1).split("?");
  const params = new URLSearchParams(query || "");
  const main = document.getElementById("main");
  for (const a of document.querySelectorAll(".top nav a")) a.removeAttribute("aria-current");
  showAlert("");
  document.body.removeAttribute("data-state");
  main.replaceChildren();
  const idea = path.match(/^\/idea\/(.+)$/);
  if (idea) return renderIdea(main, decodeURIComponent(idea[1]));
  if (path === "/clusters") {
    document.getElementById("nav-clusters").setAttribute("aria-current", "page");
    return renderClusters(main);
  }
  document.getElementById("nav-batch").setAttribute("aria-current", "page");
  return renderBatch(main, params);
}

function fail(e) {
  showAlert(e instanceof Error ? e.message : String(e));
  document.body.setAttribute("data-state", "error");
}

// --- the batch page ---------------------------------------------------------------------------

function renderBatch(main, params) {
  document.title = "Batch \u2013 novelty";
  main.append(el("h1", {text: "Score a batch of ideas"}));
  const fold = el("details", {class: "new-batch", id: "new-batch", open: !(state.batch || params.get("job"))},
                  el("summary", {}, "Ideas to score"), submitForm());
  main.append(fold);
  const results = el("section", {id: "results", "aria-label": "Results"});
  main.append(results);
  const job = params.get("job");
  if (job && (!state.batch || state.batch.scoreJob !== job)) {
    openBatch(results, job, params.get("triage"), Number(params.get("threshold")) || null).catch(fail);
  } else if (state.batch) {
    showBatch(results);
  } else {
    results.append(el("p", {class: "empty"}, "Scored ideas appear here: paste ideas above and press \u201cScore\u201d."));
  }
}

function submitForm() {
  const ideasBox = el("textarea", {id: "ideas", name: "ideas", rows: 6, spellcheck: "false",
    placeholder: 'Sparse attention for very long documents\n{"id": "idea-7", "title": "...", "text": "...", "date": "2021-06-01"}'});
  const file = el("input", {id: "ideas-file", type: "file", accept: ".jsonl,.txt,.json,text/plain"});
  file.addEventListener("change", async () => {
    if (file.files.length) ideasBox.value = await file.files[0].text();
  });
  const cutoff = el("input", {id: "cutoff", type: "text", placeholder: "YYYY, YYYY-MM or YYYY-MM-DD", "aria-describedby": "cutoff-hint"});
  const triage = el("input", {id: "triage", type: "checkbox"});
  const threshold = el("input", {id: "threshold", type: "number", value: "0.8", step: "0.01", min: "-1", max: "1"});
  const budget = el("input", {id: "budget", type: "number", value: "0", min: "0", step: "1", "aria-describedby": "budget-hint"});
  const button = el("button", {id: "submit", type: "submit", class: "primary"}, "Score");
  const form = el("form", {class: "submit-form", id: "submit-form"},
    el("div", {},
      el("label", {for: "ideas"}, "Ideas: one per line, or JSON Lines with id, title, text, date"),
      ideasBox,
      el("p", {class: "hint"}, el("label", {for: "ideas-file", class: "inline-label"}, "or read them from a file: "), file)),
    el("div", {class: "side"},
      el("div", {}, el("label", {for: "cutoff"}, "Cutoff date (optional)"), cutoff,
        el("p", {class: "hint", id: "cutoff-hint"}, "Only papers published on or before it count; an idea's own date wins.")),
      el("div", {class: "check"}, triage, " ", el("label", {for: "triage"}, "Also group near-duplicates and triage")),
      el("div", {class: "inline"},
        el("div", {}, el("label", {for: "threshold"}, "Dedup threshold"), threshold),
        el("div", {}, el("label", {for: "budget"}, "ClaimNov budget"), budget)),
      el("p", {class: "hint", id: "budget-hint"}, "Representatives checked with ClaimNov at most (0: the gate decides alone)."),
      button));
  form.addEventListener("submit", ev => {
    ev.preventDefault();
    submitBatch({text: ideasBox.value, cutoff: cutoff.value.trim(), triage: triage.checked,
                 threshold: Number(threshold.value), budget: Number(budget.value)}).catch(fail);
  });
  return form;
}

function progressView() {
  const bar = el("progress", {id: "progress", max: "1", value: "0", "aria-label": "Job progress"});
  const label = el("span", {id: "progress-label", class: "muted"}, "Submitting\u2026");
  return {node: el("div", {class: "progress", role: "status"}, bar, label), bar, label};
}

async function submitBatch(opts) {
  if (state.running) return;
  showAlert("");
  let ideas;
  try { ideas = parseIdeas(opts.text); } catch (e) { showAlert(e.message); return; }
  const results = document.getElementById("results");
  const progress = progressView();
  results.replaceChildren(progress.node);
  state.running = true;
  document.getElementById("submit").disabled = true;
  document.body.setAttribute("data-state", "running");
  try {
    const body = {ideas};
    if (opts.cutoff) body.cutoff = opts.cutoff;
    const scoreJob = (await api("POST", "/v1/score-job", body)).id;
    let triageJob = null;
    if (opts.triage) {
      const t = {...body, threshold: opts.threshold, budget: Math.max(0, Math.floor(opts.budget) || 0)};
      triageJob = (await api("POST", "/v1/triage", t)).id;
    }
    try { sessionStorage.setItem(IDEAS_KEY + scoreJob, JSON.stringify(ideas)); } catch (e) { /* too large: ids only */ }
    await openBatch(results, scoreJob, triageJob, opts.triage ? opts.threshold : null, progress);
    const q = new URLSearchParams({job: scoreJob});
    if (triageJob) { q.set("triage", triageJob); q.set("threshold", String(opts.threshold)); }
    history.replaceState(null, "", "#/?" + q.toString());
  } finally {
    state.running = false;
    const b = document.getElementById("submit");
    if (b) b.disabled = false;
  }
}

/// Waits for the batch's jobs, loads what the table needs, then shows it.
async function openBatch(results, scoreJob, triageJob, threshold, progress) {
  progress = progress || progressView();
  if (!progress.node.isConnected) results.replaceChildren(progress.node);
  const show = job => {
    const p = job.progress;
    if (job.kind === "score" && p && p.total) { progress.bar.max = p.total; progress.bar.value = p.done; }
    progress.label.textContent = p ? `${job.kind}: ${p.stage} ${p.done} of ${p.total}` : `${job.kind}: ${job.status}`;
  };
  const [score, triage] = await Promise.all([waitForJob(scoreJob, show),
                                             triageJob ? waitForJob(triageJob, show) : Promise.resolve(null)]);
  const finished = performance.now();
  progress.label.textContent = "Loading the nearest papers\u2026";
  const stored = sessionStorage.getItem(IDEAS_KEY + scoreJob);
  const ideas = new Map((stored ? JSON.parse(stored) : []).map(i => [i.id, i]));
  const batch = {scoreJob, triageJob, threshold, ideas, results: score.result.results,
                 triage: new Map(triage ? triage.result.results.map(r => [r.id, r]) : []),
                 triageSummary: triage ? triage.result.summary : null, papers: new Map()};
  await Promise.all([loadPapers(batch.results.map(r => r.neighbors.length ? r.neighbors[0].id : null), batch.papers),
                     loadDistribution().catch(() => null)]);
  state.batch = batch;
  state.sort = {key: null, dir: 1};
  sessionStorage.setItem(LAST_KEY, JSON.stringify({scoreJob, triageJob, threshold}));
  showBatch(results);
  const shown = performance.now();
  document.body.setAttribute("data-state", "ready");
  document.body.setAttribute("data-render-ms", String(shown - finished));
}

function nearestOf(r) { return r.neighbors.length ? r.neighbors[0] : null; }

function decisionOf(t) {
  if (!t) return null;
  if (t.verdict) return t.verdict.decision;
  return t.error ? "error" : "none";
}

/// The table's columns: key, header, the value sorted on, and the cell.
function columns(batch) {
  const cols = [
    {key: "idea", label: "Idea", value: r => (titleOf(batch, r.id) || r.id).toLowerCase(), cell: r => ideaCell(batch, r)},
    {key: "rnd", label: "RND", num: true, value: r => r.scores.rnd, cell: r => numCell(r.scores.rnd, 1)},
    {key: "hd", label: "HD", num: true, value: r => r.scores.hd, cell: r => numCell(r.scores.hd, 3)},
    {key: "on", label: "ON", num: true, value: r => r.scores.on, cell: r => numCell(r.scores.on, 3)},
    {key: "density", label: "Density", num: true, value: r => r.scores.density, cell: r => numCell(r.scores.density, 3)},
    {key: "nearest", label: "Nearest paper", value: r => (nearestOf(r)?.title || "").toLowerCase(), cell: r => nearestCell(batch, r)},
    {key: "year", label: "Year", num: true, value: r => yearOf(batch.papers.get(nearestOf(r)?.id)),
     cell: r => numCell(yearOf(batch.papers.get(nearestOf(r)?.id)), 0)},
    {key: "sim", label: "Sim.", num: true, value: r => nearestOf(r)?.sim ?? null, cell: r => numCell(nearestOf(r)?.sim ?? null, 3)},
  ];
  if (batch.triageJob) {
    cols.push({key: "cluster", label: "Cluster", num: true, value: r => batch.triage.get(r.id)?.cluster?.index ?? null,
               cell: r => numCell(batch.triage.get(r.id)?.cluster?.index ?? null, 0)});
    cols.push({key: "decision", label: "Decision", value: r => decisionOf(batch.triage.get(r.id)) || "",
               cell: r => decisionCell(batch.triage.get(r.id))});
  }
  return cols;
}

function titleOf(batch, id) {
  const idea = batch.ideas.get(id);
  return idea ? (idea.title || idea.text || idea.abstract || "") : "";
}

function ideaHref(id) { return "#/idea/" + encodeURIComponent(id); }

function ideaCell(batch, r) {
  const title = titleOf(batch, r.id);
  return el("td", {class: "title"}, el("a", {href: ideaHref(r.id)}, bdi(title ? clip(title, 200) : r.id)),
            title ? el("span", {class: "id"}, bdi(r.id)) : null);
}

function clip(text, n) { return text.length > n ? text.slice(0, n - 1) + "\u2026" : text; }

function nearestCell(batch, r) {
  const n = nearestOf(r);
  if (!n) return el("td", {class: "paper muted"}, "none");
  const p = batch.papers.get(n.id);
  return el("td", {class: "paper"}, paperLink(clip(n.title || n.id, 160), p && p.link));
}

function decisionCell(t) {
  const d = decisionOf(t);
  if (!d) return el("td", {}, "");
  const cls = d === "pass" ? "pass" : d === "fail" ? "fail" : "none";
  const by = t.decided_by && t.decided_by !== "none" ? ` (${t.decided_by})` : "";
  return el("td", {class: "decision", "data-value": JSON.stringify(d)}, el("span", {class: "badge " + cls}, d === "pass" ? "new" : d === "fail" ? "not new" : d), el("span", {class: "muted small"}, by));
}

function showBatch(results) {
  const batch = state.batch;
  results.replaceChildren();
  const fold = document.getElementById("new-batch");
  if (fold) fold.open = false;
  const n = batch.results.length;
  const bar = el("div", {class: "toolbar"},
    el("p", {class: "grow"}, `${n} idea${n === 1 ? "" : "s"} scored`,
       batch.triageSummary ? `, ${batch.triageSummary.clusters} clusters at cosine \u2265 ${batch.threshold ?? "?"}, ${batch.triageSummary.checked} checked with ClaimNov` : "",
       batch.results[0] ? ` (p = ${batch.results[0].provenance.p}, q = ${batch.results[0].provenance.q})` : ""),
    el("button", {id: "export-csv", type: "button", onclick: () => download("novelty.csv", "text/csv", toCsv(batch))}, "Export CSV"),
    el("button", {id: "export-jsonl", type: "button", onclick: () => download("novelty.jsonl", "application/x-ndjson", toJsonl(batch))}, "Export JSON Lines"),
    el("a", {id: "permalink", class: "button", href: permalink(batch)}, "Permalink"));
  results.append(bar);
  if (state.distribution) results.append(distributionChart(state.distribution, batch.results.map(r => r.scores.rnd), null));
  results.append(el("div", {class: "table-wrap", role: "region", "aria-label": "Scored ideas", tabindex: "0"}, batchTable(batch)));
}

function permalink(batch) {
  const q = new URLSearchParams({job: batch.scoreJob});
  if (batch.triageJob) { q.set("triage", batch.triageJob); if (batch.threshold !== null) q.set("threshold", String(batch.threshold)); }
  return "#/?" + q.toString();
}

function batchTable(batch) {
  const cols = columns(batch);
  const head = el("tr", {}, cols.map(c => {
    const th = el("th", {scope: "col", class: c.num ? "num" : null, "data-key": c.key},
                  el("button", {type: "button", class: "sort", "data-key": c.key}, c.label));
    return th;
  }));
  const tbody = el("tbody", {id: "rows"});
  const rows = batch.results.map(r => {
    const tr = el("tr", {"data-id": r.id}, cols.map(c => c.cell(r)));
    return {r, tr};
  });
  tbody.append(...rows.map(x => x.tr));
  const table = el("table", {id: "batch-table"}, el("caption", {class: "muted small"}, "Click a column header to sort; click an idea for its evidence."), el("thead", {}, head), tbody);
  head.addEventListener("click", ev => {
    const button = ev.target.closest("button.sort");
    if (!button) return;
    const col = cols.find(c => c.key === button.dataset.key);
    const t0 = performance.now();
    sortRows(rows, col, head, tbody);
    table.setAttribute("data-sort-ms", String(performance.now() - t0));
  });
  return table;
}

/// Sorts the rows on one column (a second click reverses); missing values go last either way,
/// ties keep the input order.
function sortRows(rows, col, head, tbody) {
  const dir = state.sort.key === col.key ? -state.sort.dir : (col.num ? -1 : 1);
  state.sort = {key: col.key, dir};
  const keyed = rows.map((x, i) => ({x, i, v: col.value(x.r)}));
  keyed.sort((a, b) => {
    const am = a.v === null || a.v === undefined || Number.isNaN(a.v), bm = b.v === null || b.v === undefined || Number.isNaN(b.v);
    if (am || bm) return am === bm ? a.i - b.i : am ? 1 : -1;
    if (a.v < b.v) return -dir;
    if (a.v > b.v) return dir;
    return a.i - b.i;
  });
  for (const th of head.children) th.removeAttribute("aria-sort");
  head.querySelector(`th[data-key="${col.key}"]`).setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
  tbody.append(...keyed.map(k => k.x.tr));
}

// --- export -----------------------------------------------------------------------------------

function csvField(v) {
  if (v === null || v === undefined) return "";
  let s = String(v);
  if (typeof v === "string" && /^[=+\-@\t\r]/.test(s)) s = "'" + s;  // not read as a formula by spreadsheets
  return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

function toCsv(batch) {
  const header = ["id", "title", "rnd", "hd", "on", "density", "nd", "nearest_id", "nearest_title", "nearest_year",
                  "nearest_sim", "nearest_link", "cluster", "decision", "decided_by"];
  const lines = [header.join(",")];
  for (const r of batch.results) {
    const n = nearestOf(r), p = n ? batch.papers.get(n.id) : null, t = batch.triage.get(r.id);
    lines.push([r.id, titleOf(batch, r.id), r.scores.rnd, r.scores.hd, r.scores.on, r.scores.density, r.nd,
                n?.id, n?.title, yearOf(p), n?.sim, p?.link, t?.cluster?.index, decisionOf(t), t?.decided_by].map(csvField).join(","));
  }
  return lines.join("\r\n") + "\r\n";
}

function toJsonl(batch) {
  return batch.results.map(r => {
    const out = {...r};
    const idea = batch.ideas.get(r.id);
    if (idea) out.idea = idea;
    const t = batch.triage.get(r.id);
    if (t) out.triage = t;
    return JSON.stringify(out);
  }).join("\n") + "\n";
}

function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], {type}));
  const a = el("a", {href: url, download: name, hidden: true});
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// --- the distribution chart -------------------------------------------------------------------

/// A histogram of the corpus sample's RND (bins of 5) with a tick per idea; `current` (an RND)
/// is drawn thicker.
function distributionChart(dist, ideaScores, current) {
  const W = 1180, H = 150, left = 50, right = 30, top = 10, bottom = 34;
  const bins = new Array(20).fill(0);
  for (const s of dist.scores) bins[Math.min(19, Math.floor(s.rnd / 5))] += 1;
  const most = niceCeiling(Math.max(1, ...bins));
  const x = v => left + (v / 100) * (W - left - right);
  const y = c => top + (H - top - bottom) * (1 - c / most);
  const g = svg("g");
  for (let i = 0; i <= 4; i++) {
    const c = most * i / 4;
    g.append(svg("line", {class: "grid", x1: left, x2: W - right, y1: y(c), y2: y(c)}),
             svg("text", {x: left - 6, y: y(c) + 4, "text-anchor": "end"}, String(c)));
  }
  g.append(svg("text", {x: 12, y: (top + H - bottom) / 2, "text-anchor": "middle",
                        transform: `rotate(-90 12 ${(top + H - bottom) / 2})`}, "papers"));
  bins.forEach((c, i) => g.append(svg("rect", {class: "bar", x: x(i * 5) + 1, y: y(c), width: x(5) - x(0) - 2, height: y(0) - y(c)},
                                      svg("title", {}, `RND ${i * 5}\u2013${i * 5 + 5}: ${c} corpus papers`))));
  for (const s of ideaScores) g.append(svg("line", {class: "tick", x1: x(s), x2: x(s), y1: H - bottom + 2, y2: H - bottom + 12}));
  if (current !== null && current !== undefined) {
    g.append(svg("line", {class: "tick-current", x1: x(current), x2: x(current), y1: top, y2: H - bottom + 12}));
  }
  g.append(svg("line", {class: "axis", x1: left, x2: W - right, y1: y(0), y2: y(0)}));
  for (let v = 0; v <= 100; v += 10) g.append(svg("text", {x: x(v), y: H - 6, "text-anchor": "middle"}, v === 100 ? "100 RND" : String(v)));
  const label = `Histogram of the RND of ${dist.sample} corpus papers scored as ideas; ticks below mark the ideas shown`;
  const chart = svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label}, g);
  return el("figure", {class: "chart", id: "distribution"},
    el("figcaption", {class: "caption"},
       `Where the ideas fall: bars are the RND of ${dist.sample} of the corpus's ${dist.papers} papers, each scored as an idea (p = ${dist.p}, q = ${dist.q}; median `,
       el("span", {"data-value": JSON.stringify(dist.quantiles.p50)}, fmt(dist.quantiles.p50, 1)),
       current !== null && current !== undefined ? "); the red line is this idea." : "); each blue tick below the axis is one of your ideas."),
    chart);
}

/// The smallest of 4, 8, 12, 20, 40, 80, ... (x 10^k) at or above n: axis steps of round numbers.
function niceCeiling(n) {
  for (let scale = 1; ; scale *= 10) {
    for (const m of [4, 8, 12, 20, 40, 60, 80]) if (m * scale >= n) return m * scale;
  }
}

function shareAtOrBelow(dist, value) {
  const n = dist.scores.filter(s => s.rnd <= value).length;
  return Math.round(100 * n / dist.scores.length);
}

// --- the idea page ----------------------------------------------------------------------------

async function ensureBatch() {
  if (state.batch) return state.batch;
  const last = JSON.parse(sessionStorage.getItem(LAST_KEY) || "null");
  if (!last) return null;
  const holder = el("div");
  document.getElementById("main").append(holder);
  await openBatch(holder, last.scoreJob, last.triageJob, last.threshold);
  holder.remove();
  return state.batch;
}

async function renderIdea(main, id) {
  document.title = "Idea \u2013 novelty";
  main.append(el("p", {}, el("a", {href: state.batch ? permalink(state.batch) : "#/"}, "\u2190 Back to the batch")));
  try {
    const batch = await ensureBatch();
    const r = batch && batch.results.find(x => x.id === id);
    if (!r) {
      main.append(el("h1", {text: "No such idea"}),
                  el("p", {class: "empty"}, `No idea '${id}' in the current batch. Score it on the Batch page first.`));
      return;
    }
    const idea = batch.ideas.get(id) || {id};
    main.append(el("h1", {}, bdi(idea.title || idea.id)));
    if (idea.title) main.append(el("p", {class: "muted small"}, "id ", bdi(id)));
    if (idea.text || idea.abstract) main.append(el("p", {class: "idea-text"}, bdi(idea.text || idea.abstract)));
    const dist = await loadDistribution().catch(() => null);
    main.append(scoreCards(r, dist));
    if (dist) main.append(distributionChart(dist, [], r.scores.rnd));
    const section = el("section", {id: "neighbours", "aria-label": "Nearest papers"});
    main.append(section);
    await renderNeighbours(section, batch, idea, r);
    const claims = el("section", {id: "claims", "aria-label": "Claim-level check"});
    main.append(claims);
    renderClaimsSection(claims, batch, idea, r);
    document.body.setAttribute("data-state", "ready");
  } catch (e) { fail(e); }
}

function scoreCards(r, dist) {
  const card = (label, key, value, digits, note) => el("div", {class: "score", id: "score-" + key},
    el("div", {class: "label"}, label),
    el("div", {class: "value", "data-value": JSON.stringify(value ?? null)}, fmt(value, digits)),
    note ? el("div", {class: "note"}, note) : null);
  const cutoff = r.provenance.cutoff;
  return el("div", {class: "scores"},
    card("RND (relative neighbour density)", "rnd", r.scores.rnd, 1,
         dist ? `at or above ${shareAtOrBelow(dist, r.scores.rnd)}% of the corpus sample` : null),
    card("ND (the idea's own density)", "nd", r.nd, 3, `mean distance to its ${r.provenance.q} nearest papers`),
    card("HD", "hd", r.scores.hd, 3, "mean distance to the 5 nearest"),
    card("ON", "on", r.scores.on, 3, r.scores.on === null ? "needs a split date" : null),
    card("Density", "density", r.scores.density, 3, null),
    el("div", {class: "score"}, el("div", {class: "label"}, "Cutoff"), el("div", {class: "value"}, cutoff || "none"),
       el("div", {class: "note"}, `${r.provenance.searchable} papers searchable`)));
}

async function renderNeighbours(section, batch, idea, r) {
  const cutoff = r.provenance.cutoff;
  let later = [];
  if (cutoff) {
    // The same idea without its cutoff: the papers the cutoff hides, shown greyed.
    const q = {id: idea.id};
    for (const k of ["title", "text", "abstract"]) if (idea[k]) q[k] = idea[k];
    if (idea.exclude) q.exclude = idea.exclude;
    const reply = await api("POST", "/v1/search", {queries: [q], k: r.neighbors.length || 10});
    const within = new Set(r.neighbors.map(n => n.id));
    later = reply.results[0].neighbors.filter(n => !within.has(n.id));
  }
  await loadPapers([...r.neighbors, ...later].map(n => n.id), batch.papers);
  const laterIds = new Set();
  for (const n of later) {
    const p = batch.papers.get(n.id);
    if (p && p.date && cutoffBefore(cutoff, p.date)) laterIds.add(n.id);
  }
  const rows = [...r.neighbors.map(n => ({n, later: false})), ...later.filter(n => laterIds.has(n.id)).map(n => ({n, later: true}))];
  rows.sort((a, b) => b.n.sim - a.n.sim);
  section.append(el("h2", {text: "Nearest papers"}),
    el("p", {class: "muted"}, `RND is the share of the idea's ${r.provenance.p} nearest papers whose own ND (mean distance to their `,
       `${r.provenance.q} nearest papers) is at most the idea's ND of ${fmt(r.nd, 3)}: an idea in a neighbourhood sparser than its neighbours' own scores high. `,
       `The ${r.neighbors.length} nearest of them are listed here, each with its own ND.`,
       cutoff ? ` Papers published after the cutoff (${cutoff}) are greyed out: they do not count.` : ""));
  section.append(scatter(rows, batch, cutoff));
  const tbody = el("tbody", {id: "neighbour-rows"});
  rows.forEach(({n, later}, i) => {
    const p = batch.papers.get(n.id) || {};
    tbody.append(el("tr", {class: later ? "after-cutoff" : null, "data-id": n.id},
      el("td", {class: "num"}, later ? "" : String(r.neighbors.indexOf(n) + 1)),
      el("td", {class: "paper"}, paperLink(n.title || n.id, p.link), later ? [" ", el("span", {class: "badge later"}, "after the cutoff")] : null),
      el("td", {}, p.date || ""), el("td", {}, bdi(p.venue || "")),
      numCell(n.sim, 3), numCell(later ? null : n.nd ?? null, 3),
      el("td", {}, later || n.nd === undefined ? "" : n.nd <= r.nd ? "yes" : "no")));
  });
  section.append(el("div", {class: "table-wrap", role: "region", "aria-label": "Nearest papers table", tabindex: "0"}, el("table", {id: "neighbour-table"},
    el("thead", {}, el("tr", {}, el("th", {scope: "col", class: "num"}, "#"), el("th", {scope: "col"}, "Paper"),
      el("th", {scope: "col"}, "Date"), el("th", {scope: "col"}, "Venue"), el("th", {scope: "col", class: "num"}, "Similarity"),
      el("th", {scope: "col", class: "num"}, "Its ND"), el("th", {scope: "col"}, `ND \u2264 idea's ${fmt(r.nd, 3)}`))),
    tbody)));
}

/// True when a paper's date (YYYY[-MM[-DD]]) lies after the cutoff (compared as the cutoff's
/// last day, as the engine does).
function cutoffBefore(cutoff, date) {
  const last = s => s.length === 4 ? s + "-12-31" : s.length === 7 ? s + "-31" : s;
  const first = s => s.length === 4 ? s + "-01-01" : s.length === 7 ? s + "-01" : s;
  return first(date) > last(cutoff);
}

function dateValue(date) {
  if (!date) return null;
  const [y, m, d] = date.split("-").map(Number);
  return y + ((m || 7) - 1) / 12 + ((d || 15) - 1) / 365;
}

/// Neighbours as points: x = publication date, y = similarity to the idea, area = density of
/// the paper's own neighbourhood (smaller ND, bigger circle). No projection of embeddings.
function scatter(rows, batch, cutoff) {
  const W = 1180, H = 300, left = 56, right = 20, top = 14, bottom = 40;
  const pts = rows.map(({n, later}) => ({n, later, x: dateValue((batch.papers.get(n.id) || {}).date)})).filter(p => p.x !== null);
  if (!pts.length) return el("p", {class: "muted"}, "No neighbour has a publication date to plot.");
  let x0 = Math.min(...pts.map(p => p.x)), x1 = Math.max(...pts.map(p => p.x));
  const cx = cutoff ? dateValue(cutoff.length === 4 ? cutoff + "-12-31" : cutoff) : null;
  if (cx !== null) { x0 = Math.min(x0, cx); x1 = Math.max(x1, cx); }
  x0 = Math.floor(x0) - 0.5; x1 = Math.ceil(x1) + 0.5;
  let y0 = Math.min(...pts.map(p => p.n.sim)), y1 = Math.max(...pts.map(p => p.n.sim));
  const pad = Math.max(0.02, (y1 - y0) * 0.1); y0 -= pad; y1 += pad;
  const X = v => left + (v - x0) / (x1 - x0) * (W - left - right);
  const Y = v => top + (1 - (v - y0) / (y1 - y0)) * (H - top - bottom);
  const nds = pts.filter(p => !p.later && p.n.nd !== undefined).map(p => p.n.nd);
  const ndMin = nds.length ? Math.min(...nds) : 0, ndMax = nds.length ? Math.max(...nds) : 1;
  const radius = p => p.later || p.n.nd === undefined ? 5 : 5 + 9 * (ndMax > ndMin ? (ndMax - p.n.nd) / (ndMax - ndMin) : 0.5);
  const g = svg("g");
  const step = Math.max(1, Math.ceil((x1 - x0) / 12));
  for (let yr = Math.ceil(x0); yr <= x1; yr += step) {
    g.append(svg("line", {class: "grid", x1: X(yr), x2: X(yr), y1: top, y2: H - bottom}),
             svg("text", {x: X(yr), y: H - bottom + 16, "text-anchor": "middle"}, String(yr)));
  }
  for (let i = 0; i <= 4; i++) {
    const v = y0 + (y1 - y0) * i / 4;
    g.append(svg("line", {class: "grid", x1: left, x2: W - right, y1: Y(v), y2: Y(v)}),
             svg("text", {x: left - 6, y: Y(v) + 4, "text-anchor": "end"}, v.toFixed(2)));
  }
  if (cx !== null) g.append(svg("line", {class: "cutoff", x1: X(cx), x2: X(cx), y1: top, y2: H - bottom}),
                            svg("text", {x: X(cx) + 4, y: top + 10}, "cutoff " + cutoff));
  for (const p of [...pts].sort((a, b) => radius(b) - radius(a))) {
    g.append(svg("circle", {class: p.later ? "dot dot-later" : "dot", cx: X(p.x), cy: Y(p.n.sim), r: radius(p), "data-id": p.n.id},
                 svg("title", {}, `${p.n.title} (${(batch.papers.get(p.n.id) || {}).date}); similarity ${fmt(p.n.sim, 3)}` +
                                  (p.later || p.n.nd === undefined ? "" : `; its ND ${fmt(p.n.nd, 3)}`))));
  }
  g.append(svg("text", {x: (left + W - right) / 2, y: H - 6, "text-anchor": "middle"}, "publication date"),
           svg("text", {x: 14, y: (top + H - bottom) / 2, "text-anchor": "middle", transform: `rotate(-90 14 ${(top + H - bottom) / 2})`}, "similarity to the idea"));
  const label = `Scatter of the ${pts.length} nearest papers: publication date against similarity to the idea; larger circles sit in denser neighbourhoods`;
  return el("figure", {class: "chart", id: "scatter"},
    el("figcaption", {class: "caption"}, "Each circle is a nearest paper: across, its publication date; up, its similarity to the idea; ",
       "a larger circle sits in a denser neighbourhood of its own (smaller ND). Grey circles are after the cutoff."),
    svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label}, g));
}

// --- the claim-level check on the idea page -----------------------------------------------------

function renderClaimsSection(section, batch, idea, r) {
  section.append(el("h2", {text: "Claim-level check (ClaimNov)"}));
  const t = batch.triage.get(idea.id);
  if (t && t.verdict) {
    section.append(el("p", {id: "triage-verdict"}, "Triage: ", decisionBadge(t.verdict.decision),
      ` decided by ${t.decided_by}${t.inherited ? " (inherited from its cluster's representative)" : ""}`,
      t.verdict.source ? ["; source paper ", bdi(t.verdict.source)] : ""));
  }
  const out = el("div", {id: "claims-result"});
  const button = el("button", {id: "run-claims", type: "button", class: "primary"}, "Run the claim-level check");
  section.append(el("p", {class: "muted"}, `Extracts the idea's claims and grades each against the claims of its ${POOL_PAPERS} nearest papers (the pool), then judges.`),
                 button, out);
  if (state.claims.has(idea.id)) showClaims(out, batch, state.claims.get(idea.id));
  button.addEventListener("click", () => runClaims(out, button, batch, idea, r).catch(e => {
    button.disabled = false; fail(e);
  }));
}

function decisionBadge(d) {
  return el("span", {class: "badge " + (d === "pass" ? "pass" : "fail")}, d === "pass" ? "new (pass)" : "not new (fail)");
}

async function runClaims(out, button, batch, idea, r) {
  button.disabled = true;
  const q = {id: idea.id};
  for (const k of ["title", "text", "abstract"]) if (idea[k]) q[k] = idea[k];
  if (!q.title && !q.text && !q.abstract) throw new Error("The claim-level check needs the idea's text, which this page does not have (submit the idea again).");
  const cutoff = r.provenance.cutoff;
  const search = await api("POST", "/v1/search", {queries: [{...q, ...(idea.exclude ? {exclude: idea.exclude} : {})}],
                                                  k: POOL_PAPERS, ...(cutoff ? {cutoff} : {})});
  const body = {proposals: [{...q, ...(cutoff ? {date: cutoff} : {})}], pool: search.results[0].neighbors.map(n => n.id)};
  if (idea.exclude) body.exclude = idea.exclude;
  const job = (await api("POST", "/v1/claims", body)).id;
  const progress = progressView();
  out.replaceChildren(progress.node);
  const done = await waitForJob(job, j => {
    const p = j.progress;
    progress.label.textContent = p ? `claims: ${p.stage} ${p.done} of ${p.total}` : `claims: ${j.status}`;
    if (p && p.total) { progress.bar.max = p.total; progress.bar.value = p.done; }
  });
  const record = {...done.result.results[0], approximate_run: done.result.approximate};
  state.claims.set(idea.id, record);
  button.disabled = false;
  await showClaims(out, batch, record);
  document.body.setAttribute("data-claims", "ready");
}

async function showClaims(out, batch, rec) {
  const ids = [];
  for (const c of rec.claims || []) for (const cand of c.candidates || []) ids.push(cand.paper);
  if (rec.verdict && rec.verdict.source) ids.push(rec.verdict.source);
  await loadPapers(ids, batch.papers);
  out.replaceChildren();
  if (rec.approximate || rec.approximate_run) {
    out.append(el("p", {class: "badge approx", id: "approximate"},
      "Offline approximation: heuristic claims and similarity-calibrated grades, not the LLM method"));
  }
  if (rec.error || !rec.verdict) {
    out.append(el("div", {class: "verdict error", id: "claims-error"},
      el("strong", {}, "The check failed; no verdict. "), "This is not a finding that the idea is new: ", bdi(rec.error || "no verdict was returned")));
  } else {
    const v = rec.verdict;
    const src = v.source ? batch.papers.get(v.source) : null;
    out.append(el("div", {class: "verdict " + (v.decision === "pass" ? "pass" : "fail"), id: "verdict"},
      el("p", {}, decisionBadge(v.decision), " N(P) = ", el("span", {"data-value": JSON.stringify(rec.novelty)}, fmt(rec.novelty, 3)),
         el("span", {class: "muted"}, ` \u2014 judge: ${v.judge}`)),
      v.source ? el("p", {}, "Source paper: ", paperLink(src && !src.error ? src.title : v.source, src && src.link),
                    src && yearOf(src) ? ` (${yearOf(src)})` : "") : null,
      v.rationale ? el("p", {class: "evidence"}, bdi(v.rationale)) : null,
      rec.judge_error ? el("p", {class: "muted"}, "The judge failed, the rule decided: ", bdi(rec.judge_error)) : null));
  }
  const list = el("div", {id: "claim-list"});
  (rec.claims || []).forEach((c, i) => list.append(claimView(c, i, batch)));
  if ((rec.claims || []).length) out.append(el("h3", {text: `${rec.claims.length} claims`}), list);
}

function claimView(c, i, batch) {
  const best = (c.candidates || []).reduce((m, x) => Math.max(m, x.level ?? 0), 0);
  const rows = (c.candidates || []).map(cand => {
    const p = batch.papers.get(cand.paper) || {};
    return el("tr", {}, el("td", {class: "paper"}, paperLink(p.title || cand.paper, p.link)),
      numCell(yearOf(p), 0), numCell(cand.level ?? null, 0), numCell(cand.sim ?? null, 3),
      el("td", {class: "evidence"}, bdi(cand.claim || "")));
  });
  return el("details", {class: "claim", "data-index": i},
    el("summary", {}, el("span", {class: "dim"}, c.dimension || ""), bdi(c.text || ""),
       el("span", {class: "grade", "data-value": JSON.stringify(best)}, best ? `best grade ${best}/5` : "no prior claim")),
    el("div", {class: "body"},
      rows.length ? el("table", {},
        el("thead", {}, el("tr", {}, el("th", {scope: "col"}, "Prior paper"), el("th", {scope: "col", class: "num"}, "Year"),
          el("th", {scope: "col", class: "num"}, "Grade"), el("th", {scope: "col", class: "num"}, "Sim."), el("th", {scope: "col"}, "Its claim (evidence)"))),
        el("tbody", {}, rows)) : el("p", {class: "muted"}, "No prior claim of this kind in the pool.")));
}

// --- the clusters page --------------------------------------------------------------------------

async function renderClusters(main) {
  document.title = "Clusters \u2013 novelty";
  main.append(el("h1", {text: "Near-duplicate clusters"}));
  try {
    const batch = await ensureBatch();
    if (!batch || !batch.triageJob) {
      main.append(el("p", {class: "empty"}, "No clusters yet: on the Batch page, tick \u201cAlso group near-duplicates and triage\u201d and score."));
      return;
    }
    const groups = new Map();
    for (const r of batch.results) {
      const t = batch.triage.get(r.id);
      if (!t || !t.cluster) continue;
      if (!groups.has(t.cluster.index)) groups.set(t.cluster.index, []);
      groups.get(t.cluster.index).push(t);
    }
    const clusters = [...groups.entries()].sort((a, b) => b[1].length - a[1].length || a[0] - b[0]);
    const shared = clusters.filter(([, m]) => m.length > 1), alone = clusters.filter(([, m]) => m.length === 1);
    main.append(el("p", {class: "muted"}, `${clusters.length} clusters of ${batch.results.length} ideas: ${shared.length} with near-duplicates, `,
      `${alone.length} ideas alone. Two ideas are linked at cosine similarity \u2265 `,
      el("strong", {id: "threshold-used"}, batch.threshold === null ? "(the server's default)" : String(batch.threshold)),
      "; a cluster is a connected group of links, largest first, its representative on top."));
    for (const [index, members] of shared) {
      members.sort((a, b) => (b.role === "representative") - (a.role === "representative") || (b.cluster.sim ?? 0) - (a.cluster.sim ?? 0));
      main.append(clusterSection(batch, `Cluster ${index} \u2014 ${members.length} ideas`, members, {"data-cluster": index}));
    }
    if (alone.length) {
      main.append(clusterSection(batch, `Ideas without a near-duplicate \u2014 ${alone.length}`, alone.map(([, m]) => m[0]),
                                 {"data-singletons": "true"}));
    }
    document.body.setAttribute("data-state", "ready");
  } catch (e) { fail(e); }
}

function clusterSection(batch, heading, members, attrs) {
  const tbody = el("tbody", {}, members.map(t => el("tr", {class: t.role === "representative" && !attrs["data-singletons"] ? "rep" : null,
                                                           "data-id": t.id, "data-cluster": t.cluster.index},
    el("td", {}, attrs["data-singletons"] ? `cluster ${t.cluster.index}` : t.role),
    el("td", {class: "title"}, el("a", {href: ideaHref(t.id)}, bdi(clip(titleOf(batch, t.id) || t.id, 200)))),
    numCell(t.cluster.sim ?? null, 3), decisionCell(t))));
  return el("section", {class: "cluster", "aria-label": heading, ...attrs},
    el("h2", {}, heading),
    el("table", {class: "cluster-table"}, el("thead", {}, el("tr", {}, el("th", {scope: "col", class: "c-role"}, attrs["data-singletons"] ? "Cluster" : "Role"),
      el("th", {scope: "col"}, "Idea"), el("th", {scope: "col", class: "num c-sim"}, "Sim. to representative"),
      el("th", {scope: "col", class: "c-decision"}, "Decision"))), tbody));
}

// --- start --------------------------------------------------------------------------------------

async function start() {
  const tokenInput = document.getElementById("token");
  tokenInput.value = token();
  document.getElementById("token-form").addEventListener("submit", ev => {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, tokenInput.value.trim());
    state.distribution = null;
    route();
  });
  window.addEventListener("hashchange", route);
  try {
    const res = await fetch("/healthz", {cache: "no-store"});
    state.health = await res.json();
    const c = state.health.corpus;
    document.getElementById("corpus-info").textContent =
      `corpus ${c.identity.slice(0, 12)}: ${c.papers.toLocaleString("en")} papers, ${c.embedder || "no encoder named"} (${c.dim}-d)`;
  } catch (e) { /* the API calls report it */ }
  route();
}

start();
