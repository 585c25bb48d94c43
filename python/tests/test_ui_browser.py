"""The web page of `novelty serve` (docs/ui.md) in a real browser: headless Chromium driven by
selenium through every page, over the demo corpus, with the tests' fake OpenAI-compatible LLM
(tests/fake_llm_server.hpp, built as bench/fake_llm) behind the claim-level check.

Every number the batch table shows is compared with the API's JSON for the same job (the cells'
data-value attributes); a hostile title must render as text and run nothing; a wrong token must
say so; axe (the script shipped by the PyPI package selenium-axe-python) must find no
violations. NOVELTY_UI_SCREENSHOTS=DIR saves a 1280x900 screenshot of each page into DIR
(docs/ for docs/ui.md); NOVELTY_UI_DIR=web serves the page from the folder (`--ui-dir`) instead of the
copy compiled in, for working on it; the timings of 1,000 ideas are written to NOVELTY_UI_TIMINGS (a JSON
file) when set, for docs/benchmarks.md, and never asserted."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import BUILD, CLI, ROOT

selenium = pytest.importorskip("selenium", reason="selenium is installed by scripts/setup.sh")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

FAKE_LLM = BUILD / "bench" / "fake_llm"
TOKEN = "ui-test-token"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
HOSTILE = ('<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script>'
           "\u202e\u200f reversed? " + "very long " * 300)

if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    pytest.skip("Debian's chromium and chromium-driver are installed by scripts/setup.sh", allow_module_level=True)


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[str]:
    assert FAKE_LLM.exists(), f"{FAKE_LLM} is missing: build with the bench drivers (NOVELTY_BENCH=ON, the default)"
    server = subprocess.Popen([str(FAKE_LLM)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def server(demo_dir: str, fake_llm: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`novelty serve` on 127.0.0.1 on a free port, with a token; yields its base URL."""
    work = tmp_path_factory.mktemp("serve")
    (work / "token.txt").write_text(TOKEN + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOVELTY_LLM") and k != "OPENAI_API_KEY"}
    args = [str(CLI), "serve", "--corpus", demo_dir, "--host", "127.0.0.1", "--port", "0",
            "--token-file", str(work / "token.txt"), "--device", "cpu", "--threads", "2",
            "--llm", fake_llm, "--llm-model", "fake-model", "--judge", "llm"]
    if os.environ.get("NOVELTY_UI_DIR"):
        args += ["--ui-dir", os.environ["NOVELTY_UI_DIR"]]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    url = None
    log = []
    deadline = time.monotonic() + 120
    while url is None and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        log.append(line)
        m = re.search(r" on (http://127\.0\.0\.1:\d+) ", line)
        if m:
            url = m.group(1)
    assert url, "the server did not start:\n" + "".join(log)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def api(base: str, path: str, body: Any = None) -> Any:
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as res:
        return json.loads(res.read())


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(server: str, downloads: Path) -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
                "--hide-scrollbars", "--force-device-scale-factor=1", "--lang=en-GB"):
        options.add_argument(arg)
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_window_size(1280, 900)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    driver.set_script_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(driver: webdriver.Chrome, condition: str, timeout: float = 180) -> None:
    """Waits until the JavaScript expression `condition` is true, failing with the page's alert."""
    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: d.execute_script("return " + condition))
    except Exception:
        alert = driver.execute_script("return document.getElementById('alert').textContent")
        raise AssertionError(f"timed out waiting for {condition}; the page says: {alert!r}")


def open_page(driver: webdriver.Chrome, base: str, hash_: str = "#/") -> None:
    driver.get(base + "/ui/" + hash_)
    wait_for(driver, "document.getElementById('main').children.length > 0")


def set_token(driver: webdriver.Chrome, token: str) -> None:
    box = driver.find_element(By.ID, "token")
    box.clear()
    box.send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "#token-form button").click()


def submit(driver: webdriver.Chrome, text: str, triage: bool = False) -> None:
    driver.execute_script("document.body.removeAttribute('data-state')")
    if driver.find_element(By.ID, "new-batch").get_attribute("open") is None:
        driver.find_element(By.CSS_SELECTOR, "#new-batch > summary").click()  # folded while a batch is shown
    box = driver.find_element(By.ID, "ideas")
    driver.execute_script("arguments[0].value = arguments[1]", box, text)
    if triage:
        driver.find_element(By.ID, "triage").click()
    driver.find_element(By.ID, "submit").click()


def axe_violations(driver: webdriver.Chrome) -> list[dict]:
    import selenium_axe_python
    script = Path(selenium_axe_python.__file__).parent / "axe-core" / "axe.min.js"
    driver.execute_script(script.read_text(encoding="utf-8"))
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations), e => done([{id: String(e)}]));")
    return [{"id": v["id"], "help": v.get("help"), "nodes": [n.get("target") for n in v.get("nodes", [])][:5]}
            for v in result]


def screenshot(driver: webdriver.Chrome, name: str, at: str | None = None) -> None:
    """A 1280x900 screenshot into NOVELTY_UI_SCREENSHOTS, of the page's top or from element `at`."""
    folder = os.environ.get("NOVELTY_UI_SCREENSHOTS")
    if folder:
        if at:
            driver.execute_script("window.scrollTo(0, document.querySelector(arguments[0]).getBoundingClientRect().top"
                                  " + window.scrollY - 12)", at)
        else:
            driver.execute_script("window.scrollTo(0, 0)")
        time.sleep(0.2)
        driver.save_screenshot(str(Path(folder) / name))


def job_ids(driver: webdriver.Chrome) -> tuple[str, str | None]:
    href = driver.find_element(By.ID, "permalink").get_attribute("href")
    q = dict(re.findall(r"[?&](\w+)=([^&]+)", href))
    return q["job"], q.get("triage")


def values(driver: webdriver.Chrome, selector: str) -> list[Any]:
    """data-value of every element matching `selector`, parsed as JSON."""
    return [json.loads(v) for v in driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.getAttribute('data-value'))", selector)]


def demo_ideas() -> list[dict]:
    return [json.loads(line) for line in (ROOT / "data" / "ideas.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]


def test_a_missing_or_wrong_token_shows_a_clear_message(browser: webdriver.Chrome, server: str) -> None:
    open_page(browser, server)
    submit(browser, "An idea about sparse attention")
    wait_for(browser, "document.body.dataset.state === 'error'", 60)
    assert "needs an API token (401" in browser.find_element(By.ID, "alert").text
    set_token(browser, "not-the-token")
    submit(browser, "An idea about sparse attention")
    wait_for(browser, "document.body.dataset.state === 'error'", 60)
    message = browser.find_element(By.ID, "alert").text
    assert "refused the API token (401 Unauthorized)" in message
    assert "--token-file" in message
    # The token never travels in the URL.
    assert "not-the-token" not in browser.current_url
    set_token(browser, TOKEN)


def test_batch_table_equals_the_api_and_sorts_and_exports(browser: webdriver.Chrome, server: str,
                                                          downloads: Path) -> None:
    demo = demo_ideas()
    # Two near-copies, so that dedup makes clusters of more than one idea.
    copies = [{**demo[0], "id": "idea-01-again", "title": demo[0]["title"] + ", revisited"},
              {**demo[2], "id": "idea-03-again", "text": demo[2]["text"] + " Code is released."}]
    ideas = demo[:12] + copies + [{"id": "hostile", "title": HOSTILE, "text": "Attention for long documents."}]
    open_page(browser, server)
    submit(browser, "\n".join(json.dumps(i) for i in ideas), triage=True)
    wait_for(browser, "document.body.dataset.state === 'ready' && !!document.getElementById('batch-table')")
    score_job, triage_job = job_ids(browser)
    assert triage_job
    results = {r["id"]: r for r in api(server, "/v1/jobs/" + score_job)["result"]["results"]}
    triage = {r["id"]: r for r in api(server, "/v1/jobs/" + triage_job)["result"]["results"]}
    nearest = [r["neighbors"][0]["id"] for r in results.values()]
    papers = {p["id"]: p for p in api(server, "/v1/papers", {"ids": nearest})["results"]}
    rows = browser.execute_script("return [...document.querySelectorAll('#rows tr')].map(tr => tr.dataset.id)")
    assert rows == [i["id"] for i in ideas]
    for i, idea_id in enumerate(rows):
        r, t = results[idea_id], triage[idea_id]
        cells = values(browser, f"#rows tr:nth-child({i + 1}) td[data-value]")
        year = papers[r["neighbors"][0]["id"]]["year"]
        expected = [r["scores"]["rnd"], r["scores"]["hd"], r["scores"]["on"], r["scores"]["density"], year,
                    r["neighbors"][0]["sim"], t["cluster"]["index"], t["verdict"]["decision"]]
        assert cells == expected, idea_id

    # The hostile title is text: no element made from it, no script run, the text intact.
    assert browser.execute_script("return window.__pwned") is None
    assert browser.find_elements(By.CSS_SELECTOR, "main img") == []
    cell = browser.find_element(By.CSS_SELECTOR, "#rows tr[data-id='hostile'] td.title bdi")
    assert cell.get_attribute("textContent") == HOSTILE[:199] + "\u2026"

    # Sorting: RND descending, then ascending.
    browser.find_element(By.CSS_SELECTOR, "button.sort[data-key='rnd']").click()
    got = values(browser, "#rows tr td:nth-child(2)")
    assert got == sorted((r["scores"]["rnd"] for r in results.values()), reverse=True)
    assert browser.find_element(By.CSS_SELECTOR, "th[data-key='rnd']").get_attribute("aria-sort") == "descending"
    browser.find_element(By.CSS_SELECTOR, "button.sort[data-key='rnd']").click()
    assert values(browser, "#rows tr td:nth-child(2)") == sorted(r["scores"]["rnd"] for r in results.values())

    # Export: the CSV's numbers and the JSON Lines records are the API's.
    for f in downloads.glob("novelty.*"):
        f.unlink()
    browser.find_element(By.ID, "export-csv").click()
    browser.find_element(By.ID, "export-jsonl").click()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not ((downloads / "novelty.csv").exists() and (downloads / "novelty.jsonl").exists()):
        time.sleep(0.1)
    table = list(csv.DictReader(io.StringIO((downloads / "novelty.csv").read_text(encoding="utf-8"))))
    assert [row["id"] for row in table] == [i["id"] for i in ideas]
    for row in table:
        assert float(row["rnd"]) == results[row["id"]]["scores"]["rnd"]
        assert row["nearest_id"] == results[row["id"]]["neighbors"][0]["id"]
        assert row["decision"] == triage[row["id"]]["verdict"]["decision"]
    exported = [json.loads(line) for line in (downloads / "novelty.jsonl").read_text(encoding="utf-8").splitlines()]
    for rec in exported:
        assert rec["scores"] == results[rec["id"]]["scores"]
        assert rec["triage"] == triage[rec["id"]]

    # The distribution of the corpus's own RND is the API's.
    dist = api(server, "/v1/corpus/rnd")
    assert values(browser, "#distribution figcaption span[data-value]") == [dist["quantiles"]["p50"]]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#distribution line.tick")) == len(ideas)
    browser.find_element(By.CSS_SELECTOR, "button.sort[data-key='rnd']").click()  # descending again for the picture
    assert axe_violations(browser) == []
    screenshot(browser, "ui-batch.png")


def test_idea_page_shows_the_evidence_and_the_claim_check(browser: webdriver.Chrome, server: str) -> None:
    # idea-02 has its own date (a cutoff): later papers appear greyed.
    browser.find_element(By.CSS_SELECTOR, "#rows tr[data-id='idea-02'] td.title a").click()
    wait_for(browser, "document.body.dataset.state === 'ready' && !!document.getElementById('neighbour-table')")
    score_job = json.loads(browser.execute_script("return sessionStorage.getItem('novelty.last')"))["scoreJob"]
    r = next(x for x in api(server, "/v1/jobs/" + score_job)["result"]["results"] if x["id"] == "idea-02")
    for key in ("rnd", "hd", "on", "density"):
        assert values(browser, f"#score-{key} .value") == [r["scores"][key]]
    assert values(browser, "#score-nd .value") == [r["nd"]]
    within = browser.find_elements(By.CSS_SELECTOR, "#neighbour-rows tr:not(.after-cutoff)")
    assert [row.get_attribute("data-id") for row in within] == [n["id"] for n in r["neighbors"]]
    sims = values(browser, "#neighbour-rows tr:not(.after-cutoff) td:nth-child(5)")
    nds = values(browser, "#neighbour-rows tr:not(.after-cutoff) td:nth-child(6)")
    assert sims == [n["sim"] for n in r["neighbors"]] and nds == [n["nd"] for n in r["neighbors"]]
    later = [row.get_attribute("data-id") for row in browser.find_elements(By.CSS_SELECTOR, "#neighbour-rows tr.after-cutoff")]
    assert later, "idea-02's cutoff (2022-06-01) hides some of its nearest papers"
    for paper in api(server, "/v1/papers", {"ids": later})["results"]:
        assert paper["date"] > r["provenance"]["cutoff"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#scatter circle")) == len(r["neighbors"]) + len(later)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#scatter circle.dot-later")) == len(later)

    browser.find_element(By.ID, "run-claims").click()
    wait_for(browser, "document.body.dataset.claims === 'ready'")
    verdict = browser.find_element(By.ID, "verdict")
    assert "judge: llm:fake-model" in verdict.text
    assert browser.find_elements(By.ID, "approximate") == []  # the fake LLM is the LLM method, not the offline one
    first = browser.find_element(By.CSS_SELECTOR, "#claim-list details summary")
    first.click()
    rows = browser.find_elements(By.CSS_SELECTOR, "#claim-list details[open] tbody tr")
    assert rows, "an opened claim lists the prior claims it was graded against"
    grades = values(browser, "#claim-list details[open] tbody tr td:nth-child(3)")
    assert all(1 <= g <= 5 for g in grades)
    assert values(browser, "#claim-list details[open] .grade") == [max(grades)]
    assert axe_violations(browser) == []
    screenshot(browser, "ui-idea.png")
    screenshot(browser, "ui-idea-neighbours.png", "#neighbours")
    screenshot(browser, "ui-idea-claims.png", "#claims")


def test_clusters_page_lists_clusters_by_size(browser: webdriver.Chrome, server: str) -> None:
    browser.get(server + "/ui/#/clusters")
    wait_for(browser, "document.body.dataset.state === 'ready' && !!document.querySelector('.cluster')")
    last = json.loads(browser.execute_script("return sessionStorage.getItem('novelty.last')"))
    triage = api(server, "/v1/jobs/" + last["triageJob"])["result"]["results"]
    shared = browser.find_elements(By.CSS_SELECTOR, ".cluster[data-cluster]")
    sizes = [len(s.find_elements(By.CSS_SELECTOR, "tbody tr")) for s in shared]
    assert sizes and sizes == sorted(sizes, reverse=True) and min(sizes) > 1
    alone = browser.find_elements(By.CSS_SELECTOR, ".cluster[data-singletons] tbody tr")
    assert sum(sizes) + len(alone) == len(triage)
    assert {tr.get_attribute("data-id") for tr in alone} == {t["id"] for t in triage if t["cluster"]["size"] == 1}
    assert browser.find_element(By.ID, "threshold-used").text == "0.8"
    for section in shared:
        index = int(section.get_attribute("data-cluster"))
        members = [t for t in triage if t["cluster"]["index"] == index]
        first = section.find_element(By.CSS_SELECTOR, "tbody tr")
        assert first.get_attribute("data-id") == members[0]["cluster"]["representative"]
        shown = {tr.get_attribute("data-id"): json.loads(tr.find_element(By.CSS_SELECTOR, "td.num").get_attribute("data-value"))
                 for tr in section.find_elements(By.CSS_SELECTOR, "tbody tr")}
        assert shown == {t["id"]: t["cluster"]["sim"] for t in members}
    assert axe_violations(browser) == []
    screenshot(browser, "ui-clusters.png")


def test_a_thousand_ideas_render_and_sort(browser: webdriver.Chrome, server: str) -> None:
    """1,000 demo papers scored as ideas: the table is complete; the timings are reported."""
    ids = (ROOT / "data" / "demo" / "vector_ids.txt").read_text(encoding="utf-8").split()
    chosen = ids[:: max(1, len(ids) // 1000)][:1000]
    open_page(browser, server)
    set_token(browser, TOKEN)  # so that this test also runs alone (-k), without the token test before it
    submit(browser, "\n".join(json.dumps({"id": i}) for i in chosen))
    wait_for(browser, "document.body.dataset.state === 'ready' && !!document.getElementById('batch-table')")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#rows tr")) == 1000
    render_ms = float(browser.execute_script("return document.body.dataset.renderMs"))
    sorts = []
    for _ in range(3):
        browser.find_element(By.CSS_SELECTOR, "button.sort[data-key='rnd']").click()
        sorts.append(float(browser.find_element(By.ID, "batch-table").get_attribute("data-sort-ms")))
    got = values(browser, "#rows tr td:nth-child(2)")
    assert got == sorted(got, reverse=True)
    timings = {"ideas": 1000, "render_ms": render_ms, "sort_ms": sorts}
    print("ui timings:", json.dumps(timings))
    if os.environ.get("NOVELTY_UI_TIMINGS"):
        Path(os.environ["NOVELTY_UI_TIMINGS"]).write_text(json.dumps(timings) + "\n", encoding="utf-8")
