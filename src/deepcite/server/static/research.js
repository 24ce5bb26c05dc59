/* Research page: streams the hops, then shows the cited summary, answer, sub-question tabs, evidence table and
   report, and goes to the answer; lists the collection's saved answers to reopen (/answers/{id}), re-run or
   delete. The URL keeps the page's state: /?collection=<name> for the chosen collection, /answers/{id} for an
   open saved answer, so a reload (or a shared link) shows the same. The question box counts its characters
   against the server's limit and a longer question is refused in the page, never cut. */
"use strict";

(function () {
  const { el, clear, show, getJSON, streamEvents, renderAnswer, sourceItem, pageAt, lengthCounter, plural } = window.deepcite;
  const form = document.getElementById("research-form");
  if (!form) return;

  const $ = (id) => document.getElementById(id);
  const ui = {
    question: $("question"),
    questionCount: $("question-count"),
    collection: $("collection"),
    maxHops: $("max-hops"),
    button: $("ask-button"),
    status: $("status"),
    error: $("error"),
    hops: $("hops"),
    hopList: $("hop-list"),
    summary: $("summary"),
    summaryText: $("summary-text"),
    answer: $("answer"),
    answerText: $("answer-text"),
    check: $("citation-check"),
    subanswers: $("subanswers"),
    tabs: $("subq-tabs"),
    panels: $("subq-panels"),
    sources: $("sources"),
    sourceList: $("source-list"),
    report: $("report"),
    reportBody: document.querySelector("#report-table tbody"),
    reportMeta: $("report-meta"),
    past: $("past"),
    pastList: $("past-list"),
    pastEmpty: $("past-empty"),
    pastCollection: $("past-collection"),
    changes: $("changes"),
    changesList: $("changes-list"),
    changesMeta: $("changes-meta"),
    evidence: $("evidence"),
    evidenceBody: document.querySelector("#evidence-table tbody"),
  };

  /* ---------- the question's length against the server's limit (research.planning.max_question_chars) ---------- */

  const maxChars = Number(ui.question.dataset.maxChars) || Infinity;
  const number = (n) => n.toLocaleString();
  const questionCounter = lengthCounter(ui.question, ui.questionCount, maxChars);
  const questionLength = questionCounter.length;
  const countQuestion = questionCounter.check;
  const answersUrl = form.dataset.answersUrl;

  let run = { controller: null, collection: "", citations: new Map(), summary: null, answer: null, insufficient: false, savedId: null };

  /* ---------- "Download report": the saved answer's report (GET /api/answers/{id}/report), or the answer
     held here rendered by POST /api/report when it was not saved ---------- */
  const REPORT_FORMATS = [
    ["markdown", "Report (Markdown)"], ["bibtex", "References (BibTeX)"], ["ris", "References (RIS)"], ["csv", "Evidence table (CSV)"],
  ];
  const reportFormat = el(
    "select", { id: "report-format", "aria-label": "Report format" },
    REPORT_FORMATS.map(([value, label]) => el("option", { value }, label))
  );
  const reportButton = el("button", { type: "button", id: "download-report" }, "Download report");
  const evidenceButton = el("button", { type: "button", id: "download-evidence", class: "secondary" }, "Download evidence table (CSV)");
  const reportBar = el(
    "div", { id: "report-download", class: "report-download", hidden: true }, reportFormat, " ", reportButton, " ", evidenceButton
  );
  ui.answer.append(reportBar);
  reportButton.addEventListener("click", () => downloadReport(reportFormat.value, reportButton));
  evidenceButton.addEventListener("click", () => downloadReport("csv", evidenceButton));

  async function reportResponse(format) {
    const { authHeaders } = window.deepcite;
    if (run.savedId) {
      const url = answersUrl + "/" + encodeURIComponent(run.savedId) + "/report?format=" + encodeURIComponent(format);
      const response = await fetch(url, { headers: authHeaders() });
      if (response.status !== 404) return response;
    }
    // not saved (or deleted since): the answer held here; references need no passage texts, quotes do
    const keepTexts = format === "markdown" || format === "csv";
    const citations = (run.result.citations || []).map((c) => (keepTexts ? c : { ...c, text: "" }));
    const body = { ...run.result, citations, coverage: null, retrieval_report: [] };
    return fetch("/api/report?format=" + encodeURIComponent(format), {
      method: "POST",
      headers: { "Content-Type": "application/json", ...authHeaders() },
      body: JSON.stringify(body),
    });
  }

  async function downloadReport(format, button) {
    if (!run.result) return;
    const { readError } = window.deepcite;
    button.disabled = true;
    try {
      const response = await reportResponse(format);
      if (!response.ok) throw await readError(response);
      const named = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "");
      const link = el("a", { download: named ? named[1] : "deepcite-report" });
      link.href = URL.createObjectURL(await response.blob());
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 1000);
    } catch (err) {
      showError(err.message || String(err));
    } finally {
      button.disabled = false;
    }
  }

  loadCollections(collectionInUrl()).then(() => {
    const id = form.dataset.answerId;
    if (id) openSaved(id, false);
    else loadPast();
  });
  ui.collection.addEventListener("change", () => collectionChosen());
  window.addEventListener("popstate", () => {
    const found = /^\/answers\/([^/]+)$/.exec(window.location.pathname);
    if (found) openSaved(decodeURIComponent(found[1]), false);
    else {
      if (run.controller) run.controller.abort();
      resetResults();
      setBusy(false, "");
      const named = collectionInUrl();
      if (named) selectCollection(named);
      loadPast();
    }
  });
  // the "Add documents" panel announces a collection that gained documents: list it and select it
  document.addEventListener("deepcite:collections-changed", async (event) => {
    const before = ui.collection.value;
    await loadCollections(event.detail && event.detail.collection);
    if (ui.collection.value !== before) collectionChosen();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    start();
  });
  ui.question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });

  /* ---------- the page's state in its URL ---------- */

  /** The collection named in this page's URL (?collection=…), or "". */
  function collectionInUrl() {
    return new URLSearchParams(window.location.search).get("collection") || "";
  }

  function collectionUrl(name) {
    return "/?" + new URLSearchParams({ collection: name }).toString();
  }

  /** The user chose another collection: its URL (a new history entry when a saved answer was open), its
      saved answers. */
  function collectionChosen() {
    const url = collectionUrl(ui.collection.value);
    const onAnswer = window.location.pathname.startsWith("/answers/");
    if (window.location.pathname + window.location.search !== url) {
      if (onAnswer) window.history.pushState({ collection: ui.collection.value }, "", url);
      else window.history.replaceState({ collection: ui.collection.value }, "", url);
    }
    loadPast();
  }

  /* ---------- going to the answer ---------- */

  /** Scroll to and focus a result section (the summary, or a re-run's changes) once it is shown; not when the
   *  reader is there already (focus in the report, or a citation's popover open): their place is kept. */
  function goTo(section) {
    if (section.hidden) return;
    const pop = document.getElementById("cite-pop");
    if (ui.report.contains(document.activeElement) || (pop && !pop.hidden)) return;
    section.scrollIntoView({ block: "start" });
    section.focus({ preventScroll: true });
  }

  async function loadCollections(selected) {
    const wanted = selected || ui.collection.value || ui.collection.dataset.default;
    try {
      const body = await getJSON(form.dataset.collectionsUrl);
      const infos = (Array.isArray(body) ? body : body.collections || [])
        .map((c) => (typeof c === "string" ? { name: c } : c))
        .filter((c) => c && c.name && c.name !== ui.collection.dataset.hide); // not the practitioner index
      if (!infos.length) return;
      clear(ui.collection);
      for (const info of infos) {
        const label = info.name + (typeof info.chunks === "number" ? " (" + plural(info.chunks, "passage") + ")" : "");
        ui.collection.append(el("option", { value: info.name, selected: info.name === wanted }, label));
      }
    } catch (err) {
      ui.status.textContent = "Could not list collections (" + err.message + "); using " + wanted + ".";
    }
    // a collection the URL names stays chosen even when it is not listed (yet)
    if (wanted && wanted !== ui.collection.dataset.hide) selectCollection(wanted);
  }

  function setBusy(busy, message) {
    ui.button.disabled = busy;
    form.setAttribute("aria-busy", busy ? "true" : "false");
    ui.status.textContent = message || "";
  }

  function resetResults() {
    for (const section of [ui.error, ui.hops, ui.summary, ui.answer, ui.subanswers, ui.sources, ui.report, ui.changes, ui.evidence]) {
      show(section, false);
    }
    for (const node of [ui.hopList, ui.summaryText, ui.answerText, ui.tabs, ui.panels, ui.sourceList, ui.reportBody, ui.changesList, ui.evidenceBody]) {
      clear(node);
    }
    ui.check.textContent = "";
    ui.reportMeta.textContent = "";
    run.citations = new Map();
    run.summary = null;
    run.answer = null;
    run.insufficient = false;
    run.result = null;
    run.savedId = null;
    show(reportBar, false);
  }

  function showError(message) {
    clear(ui.error);
    ui.error.append(el("h2", {}, "Something went wrong"), el("p", {}, message));
    show(ui.error, true);
    bringIntoView(ui.error);
  }

  /** Scroll a live part of the page (an error, the first hop) into the screen when it is off it; the reader's
   *  place is kept when it is already in view. */
  function bringIntoView(node) {
    const box = node.getBoundingClientRect();
    if (box.top >= 0 && box.top < window.innerHeight - Math.min(box.height, window.innerHeight / 3)) return;
    node.scrollIntoView({ block: "nearest" });
  }

  async function start() {
    const query = ui.question.value.trim();
    if (!query) {
      resetResults();
      showError("Please type a question first.");
      ui.question.focus();
      return;
    }
    if (!countQuestion()) {
      resetResults();
      showError(
        "Your question has " + number(questionLength()) + " characters; this server takes at most " + number(maxChars) +
          ". Please shorten it: nothing was sent."
      );
      ui.question.focus();
      return;
    }
    if (run.controller) run.controller.abort();
    resetResults();
    run.controller = new AbortController();
    run.collection = ui.collection.value;
    const params = new URLSearchParams({ query, collection: ui.collection.value });
    if (ui.maxHops.value) params.set("max_hops", ui.maxHops.value);
    setBusy(true, "Researching…");
    let finished = false;
    let answered = null;
    try {
      await streamEvents(
        form.dataset.streamUrl + "?" + params.toString(),
        (name, data) => {
          if (name === "done" || name === "error") finished = true;
          if (name === "done" && data && data.request_id) answered = data.request_id;
          handleEvent(name, data);
        },
        run.controller.signal
      );
      if (!finished) showError("The connection closed before the answer was complete. Please try again.");
      if (answered) await remember(answered);
    } catch (err) {
      if (err.name !== "AbortError") showError(err.message);
    } finally {
      setBusy(false, ui.error.hidden ? "Done." : "");
    }
    if (finished && ui.error.hidden) goTo(ui.summary.hidden ? ui.answer : ui.summary);
  }

  function handleEvent(name, data) {
    if (name === "hop") addHop(data);
    else if (name === "summary") showSummary(data);
    else if (name === "answer") showLongAnswer(data);
    else if (name === "done") showResult(data);
    else if (name === "error") showError((data && (data.message || data.error)) || String(data));
  }

  /* ---------- hops ---------- */

  function aspectRows(coverage) {
    if (!coverage) return [];
    if (Array.isArray(coverage.aspects) && coverage.aspects.length && typeof coverage.aspects[0] === "object") {
      const scores = coverage.coverage_scores || {};
      return coverage.aspects.map((a) => ({
        aspect: a.aspect,
        score: typeof a.coverage_score === "number" ? a.coverage_score : scores[a.aspect] || 0,
      }));
    }
    return Object.entries(coverage.coverage_scores || {}).map(([aspect, score]) => ({ aspect, score }));
  }

  /** A coverage score in [0, 1] as the whole percent its text and its bar both show. */
  function percent(score) {
    return Math.round(Math.max(0, Math.min(1, score)) * 100);
  }

  /** One row of a hop's coverage (the hop's own, or an aspect's): its name, a bar and the percent, the bar drawn
   *  from the number the text shows. */
  function coverageRow(tag, label, name, score, threshold) {
    const value = percent(score);
    const bar = el(
      "div",
      {
        class: score >= threshold ? "bar covered" : "bar",
        role: "progressbar",
        "aria-valuemin": "0",
        "aria-valuemax": "100",
        "aria-valuenow": value,
        "aria-label": label,
      },
      el("span", { style: "width: " + value + "%" })
    );
    return el(tag, { class: "aspect" }, el("span", { class: "aspect-name" }, name), bar, el("span", { class: "aspect-pct" }, value + "%"));
  }

  function count(value) {
    return Array.isArray(value) ? value.length : value;
  }

  function addHop(hop) {
    show(ui.hops, true);
    const number = hop.hop || hop.round || ui.hopList.children.length + 1;
    const found = count(hop.documents_found ?? hop.selected ?? hop.new_evidence);
    const fresh = hop.new_evidence;
    const total = hop.total_evidence ?? hop.evidence_total;
    const coverage = hop.coverage || {};
    const threshold = coverage.threshold ?? 0.5;
    const covered = hop.weighted_coverage ?? coverage.weighted_coverage; // the one coverage figure of a hop
    const meta = [];
    if (found !== undefined) meta.push(plural(found, "document") + " found" + (typeof fresh === "number" ? " (" + fresh + " new)" : ""));
    if (total !== undefined) meta.push(total + " in evidence");
    if (hop.decision) meta.push("decision: " + hop.decision + (hop.reason ? " (" + hop.reason + ")" : ""));
    const aspects = el("ul", { class: "aspects", "aria-label": "Coverage by aspect after hop " + number });
    for (const row of aspectRows(coverage)) aspects.append(coverageRow("li", "Coverage of " + row.aspect, row.aspect, row.score, threshold));
    const overall = typeof covered === "number" ? coverageRow("div", "Coverage after hop " + number, "Coverage", covered, threshold) : null;
    ui.hopList.append(
      el(
        "li",
        { class: "hop", "data-hop": number },
        el("div", { class: "hop-head" }, el("span", { class: "hop-no" }, "Hop " + number), el("span", { class: "hop-sub" }, hop.subquestion || "")),
        el("p", { class: "hop-meta" }, meta.join(" · ")),
        overall,
        aspects
      )
    );
    ui.status.textContent = "Hop " + number + " done…";
    if (ui.hopList.children.length === 1) bringIntoView(ui.hops);
  }

  /* ---------- answers ---------- */

  function rememberCitations(list) {
    for (const chunk of list || []) run.citations.set(Number(chunk.id), { ...chunk, _collection: run.collection });
  }

  function textOf(data, key) {
    if (typeof data === "string") return data;
    return data ? data[key] ?? data.text ?? "" : "";
  }

  /* `insufficient` is the response's own flag: no evidence to answer from, the text is the template */
  function renderPart(section, container, text, insufficient) {
    show(section, true);
    if (insufficient) {
      clear(container);
      container.append(
        el("div", { class: "notice insufficient", role: "status" }, el("h3", {}, "Not enough evidence"), el("p", {}, text))
      );
    } else {
      renderAnswer(container, text, run.citations);
    }
  }

  /** The answer's decision above the summary: whether the sources state what was asked, and a yes/no verdict. */
  function renderDecision(decision) {
    const old = ui.summary.querySelector(".decision");
    if (old) old.remove();
    if (!decision) return;
    const stated = decision.status === "stated";
    const verdicts = { yes: "Yes", no: "No", sources_disagree: "The sources disagree" };
    const words = stated
      ? "Stated in the sources" + (decision.verdict ? " · verdict: " + verdicts[decision.verdict] : "")
      : "Not stated in the sources: the closest evidence follows";
    const badge = el("p", { class: "decision " + (stated ? "stated" : "not-stated"), role: "status" }, words);
    badge.dataset.status = decision.status;
    ui.summaryText.before(badge);
  }

  function showSummary(data) {
    rememberCitations(data && data.citations);
    run.summary = textOf(data, "summary");
    run.insufficient = Boolean(data && data.insufficient);
    renderPart(ui.summary, ui.summaryText, run.summary, run.insufficient);
    renderDecision(data && data.decision);
    ui.status.textContent = "Summary ready, writing the answer…";
  }

  function showLongAnswer(data) {
    rememberCitations(data && data.citations);
    run.answer = textOf(data, "answer");
    run.insufficient = Boolean(data && data.insufficient);
    renderPart(ui.answer, ui.answerText, run.answer, run.insufficient);
  }

  function showResult(result) {
    if (!result || result.success === false) {
      showError((result && (result.message || result.error)) || "The research failed.");
      return;
    }
    rememberCitations(result.citations);
    // the answer's id (its saved id): a citation's viewer link names it, to tell a changed or removed document
    for (const chunk of run.citations.values()) chunk._answer = result.request_id || null;
    if (result.summary !== undefined) run.summary = result.summary;
    if (result.answer !== undefined) run.answer = result.answer;
    run.insufficient = Boolean(result.insufficient);
    if (run.summary !== null) renderPart(ui.summary, ui.summaryText, run.summary, run.insufficient);
    if (result.decision !== undefined) renderDecision(result.decision);
    if (run.answer !== null) renderPart(ui.answer, ui.answerText, run.answer, run.insufficient);
    const check = result.citation_check;
    if (check) {
      ui.check.textContent =
        "Citation check: " + (check.sentences ?? "?") + " sentences, " + (check.cited ?? "?") + " cited, " +
        (check.repaired ?? 0) + " repaired, " + (check.dropped ?? 0) + " dropped, " + (check.invalid_ids ?? 0) + " invalid ids removed.";
    }
    renderSubanswers(result.subanswers || []);
    renderEvidence(result);
    renderSources(result.citations || []);
    run.result = result;
    show(reportBar, true);
    renderReport(result.retrieval_report || [], result);
    if (!ui.hopList.children.length) show(ui.hops, false);
  }

  function renderSources(citations) {
    clear(ui.sourceList);
    for (const cited of citations) {
      const chunk = run.citations.get(Number(cited.id)) || cited;
      const item = sourceItem(chunk, run.citations, false);
      const remove = removeDocumentButton(chunk);
      if (remove) item.append(" ", remove);
      ui.sourceList.append(item);
    }
    show(ui.sources, citations.length > 0);
  }

  /* ---------- removing a cited document from its collection (DELETE /api/collections/{c}/documents/{id}) ---------- */

  /** A "Remove document" button for a cited passage's document; none for a web page. */
  function removeDocumentButton(chunk) {
    if (!chunk.doc_id || !chunk._collection || window.deepcite.isWeb(chunk)) return null;
    const name = chunk.file || chunk.title || chunk.doc_id; // the file name: what the reader added
    const button = el("button", { type: "button", class: "secondary remove-document", "aria-label": "Remove document: " + name }, "Remove document");
    button.addEventListener("click", () => removeDocument(chunk, name, button));
    return button;
  }

  async function removeDocument(chunk, name, button) {
    const asked =
      "Remove \u201c" + name + "\u201d from the collection " + chunk._collection + "? Its passages and original file are deleted; " +
      "saved answers keep their quotes and say the document was removed.";
    if (!window.confirm(asked)) return;
    const { authHeaders, readError } = window.deepcite;
    button.disabled = true;
    const id = String(chunk.doc_id).split("/").map(encodeURIComponent).join("/");
    const url = "/api/collections/" + encodeURIComponent(chunk._collection) + "/documents/" + id;
    const response = await fetch(url, { method: "DELETE", headers: authHeaders() });
    if (!response.ok) {
      button.disabled = false;
      showError("Could not remove \u201c" + name + "\u201d: " + (await readError(response)).message);
      return;
    }
    markRemoved(chunk.doc_id);
    ui.status.textContent = "\u201c" + name + "\u201d was removed from " + chunk._collection + ".";
    await loadCollections(ui.collection.value); // the collection's passage count
  }

  /** Every source of the removed document says so (its quote and viewer link stay: the viewer shows it as cited). */
  function markRemoved(docId) {
    for (const item of document.querySelectorAll("li[data-source-id]")) {
      const cited = run.citations.get(Number(item.dataset.sourceId));
      if (!cited || cited.doc_id !== docId || item.querySelector(".removed-notice")) continue;
      const button = item.querySelector(".remove-document");
      if (button) button.remove();
      item.append(el("p", { class: "notice removed-notice" }, "This document was removed from the collection after the answer was written."));
    }
  }

  /* ---------- evidence table: each cited sentence, the quote of the passage it cites, the verdict ---------- */

  /** One claim per distinct sentence and citation, the first said (the summary's before the answer's): the
   *  rule of answer/evidence.py evidence_rows, which the downloads use. */
  function distinctClaims(claims) {
    const seen = new Set();
    return claims.filter((claim) => {
      const key = String(claim.claim).toLowerCase().split(/\s+/).filter(Boolean).join(" ") + "\u0000" + claim.id;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }

  function renderEvidence(result) {
    clear(ui.evidenceBody);
    const claims = distinctClaims((result.citation_check && result.citation_check.claims) || []);
    for (const claim of claims) {
      const chunk = run.citations.get(Number(claim.id));
      if (!chunk) continue;
      const quote = String(chunk.text || "").slice(claim.quote_start, claim.quote_end);
      ui.evidenceBody.append(
        el(
          "tr",
          { class: "verdict-" + claim.verdict },
          el("td", {}, claim.claim),
          el("td", {}, el("mark", { class: "quote" }, quote)),
          el("td", {}, "[" + claim.id + "] " + (chunk.title || chunk.doc_id)),
          el("td", { class: "num" }, pageAt(chunk, claim.quote_start) ?? ""),
          el("td", { class: "num" }, typeof claim.score === "number" ? claim.score.toFixed(2) : ""),
          el("td", {}, claim.verdict)
        )
      );
    }
    show(ui.evidence, ui.evidenceBody.children.length > 0);
  }

  /* ---------- saved answers: the collection's past questions, reopen, re-run, delete ---------- */

  function when(iso) {
    const date = new Date(iso);
    return Number.isNaN(date.getTime()) ? String(iso || "") : date.toLocaleString();
  }

  function answerUrl(id) {
    return answersUrl + "/" + encodeURIComponent(id);
  }

  /** List the selected collection's saved answers; resolves to their ids (newest first). */
  async function loadPast() {
    const collection = ui.collection.value;
    ui.pastCollection.textContent = collection ? "in " + collection : "";
    let answers = [];
    try {
      answers = (await getJSON(answersUrl + "?collection=" + encodeURIComponent(collection))).answers || [];
    } catch (err) {
      clear(ui.pastList);
      ui.pastEmpty.textContent = "Could not list the saved answers (" + err.message + ").";
      show(ui.pastEmpty, true);
      return [];
    }
    clear(ui.pastList);
    for (const info of answers) {
      const open = el("a", { href: "/answers/" + encodeURIComponent(info.id), class: "past-open" }, info.question);
      open.addEventListener("click", (event) => {
        event.preventDefault();
        openSaved(info.id, true);
      });
      const rerun = el("button", { type: "button", class: "secondary past-rerun", "aria-label": "Re-run: " + info.question }, "Re-run");
      rerun.addEventListener("click", () => rerunSaved(info.id));
      const remove = el("button", { type: "button", class: "secondary past-delete", "aria-label": "Delete: " + info.question }, "Delete");
      remove.addEventListener("click", () => deleteSaved(info.id));
      const meta = [when(info.created_at), plural(info.cited, "passage") + " cited"];
      if (info.rerun_of) meta.push("re-run");
      ui.pastList.append(
        el("li", { "data-answer-id": info.id }, open, " ", el("span", { class: "meta" }, meta.join(" · ")), " ", rerun, " ", remove)
      );
    }
    ui.pastEmpty.textContent = "No saved answers in this collection yet: every answer is saved here.";
    show(ui.pastEmpty, answers.length === 0);
    return answers.map((a) => a.id);
  }

  /** After an answer: its stable URL in the address bar when it was saved, and the list brought up to date. */
  async function remember(id) {
    const saved = await loadPast();
    if (!saved.includes(id)) return;
    run.savedId = id;
    window.history.pushState({ answer: id }, "", "/answers/" + encodeURIComponent(id));
  }

  function selectCollection(name) {
    if (![...ui.collection.options].some((o) => o.value === name)) ui.collection.append(el("option", { value: name }, name));
    ui.collection.value = name;
  }

  /** A reopened answer's research hops, one per round of its retrieval report (no live coverage bars). */
  function replayHops(rounds) {
    for (const round of rounds || []) addHop(round);
  }

  function showSaved(saved, push) {
    ui.question.value = saved.question;
    countQuestion();
    selectCollection(saved.collection);
    run.collection = saved.collection;
    ui.maxHops.value = (saved.request && saved.request.max_hops) || "";
    replayHops(saved.response && saved.response.retrieval_report);
    showResult(saved.response);
    run.savedId = saved.id;
    renderChanges(saved);
    if (push) window.history.pushState({ answer: saved.id }, "", "/answers/" + encodeURIComponent(saved.id));
  }

  async function openSaved(id, push) {
    if (run.controller) run.controller.abort();
    resetResults();
    setBusy(true, "Opening the saved answer…");
    try {
      const saved = await getJSON(answerUrl(id));
      showSaved(saved, push);
      setBusy(false, "Saved answer of " + when(saved.created_at) + ".");
      goTo(ui.summary.hidden ? ui.answer : ui.summary);
    } catch (err) {
      setBusy(false, "");
      showError(err.message);
    }
    await loadPast();
  }

  async function rerunSaved(id) {
    if (run.controller) run.controller.abort();
    resetResults();
    setBusy(true, "Asking the saved question again, against the collection as it is now…");
    try {
      const saved = await window.deepcite.postJSON(answerUrl(id) + "/rerun", {});
      showSaved(saved, true);
      setBusy(false, "Re-run done.");
      goTo(ui.changes.hidden ? ui.summary : ui.changes);
    } catch (err) {
      setBusy(false, "");
      showError(err.message);
    }
    await loadPast();
  }

  async function deleteSaved(id) {
    if (!window.confirm("Delete this saved answer? It cannot be reopened afterwards.")) return;
    const { authHeaders, readError } = window.deepcite;
    const response = await fetch(answerUrl(id), { method: "DELETE", headers: authHeaders() });
    if (!response.ok) showError((await readError(response)).message);
    else if (run.savedId === id) {
      run.savedId = null;
      window.history.replaceState(null, "", collectionUrl(ui.collection.value));
    }
    await loadPast();
  }

  /** Two texts as [same start, differing middle, same end], cut at word boundaries: what a change changed. */
  function difference(before, after) {
    const a = before.split(/(\s+)/);
    const b = after.split(/(\s+)/);
    let head = 0;
    while (head < a.length && head < b.length && a[head] === b[head]) head++;
    let tail = 0;
    while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
    const part = (words, from, to) => words.slice(from, to).join("");
    return {
      before: [part(a, 0, head), part(a, head, a.length - tail), part(a, a.length - tail, a.length)],
      after: [part(b, 0, head), part(b, head, b.length - tail), part(b, b.length - tail, b.length)],
    };
  }

  /** One side of a change: "Before, p. 3" (or "After") and the passage's text, what changed marked. */
  function changeText(side, page, parts, tag) {
    const label = (side === "before" ? "Before" : "After") + (typeof page === "number" ? ", p. " + page : "");
    return el(
      "div",
      { class: "change-text change-" + side },
      el("p", { class: "change-label" }, label),
      el("blockquote", {}, parts[0], parts[1] ? el(tag, {}, parts[1]) : null, parts[2])
    );
  }

  function renderChanges(saved) {
    clear(ui.changesList);
    if (!saved.rerun_of) return;
    const counts = { changed: 0, removed: 0, added: 0, unchanged: 0 };
    for (const change of saved.changes || []) {
      counts[change.status] += 1;
      const ids = [change.before ? "was [" + change.before + "]" : "", change.after ? "now [" + change.after + "]" : ""].filter(Boolean);
      const item = el(
        "li",
        { class: "change", "data-status": change.status },
        el("span", { class: "badge change-" + change.status }, change.status),
        " ",
        change.title || change.doc_id,
        ids.length ? el("span", { class: "meta" }, " (" + ids.join(", ") + ")") : null
      );
      const before = change.text_before || "";
      const after = change.text_after || "";
      if (change.status === "changed") {
        const diff = difference(before, after);
        item.append(changeText("before", change.page_before, diff.before, "del"), changeText("after", change.page_after, diff.after, "ins"));
      } else if (change.status === "removed" && before) {
        item.append(changeText("before", change.page_before, ["", "", before], "del"));
      } else if (change.status === "added" && after) {
        item.append(changeText("after", change.page_after, ["", "", after], "ins"));
      }
      ui.changesList.append(item);
    }
    clear(ui.changesMeta);
    ui.changesMeta.append(
      "Cited passages against ",
      el("a", { href: "/answers/" + encodeURIComponent(saved.rerun_of) }, "the earlier answer"),
      ": " + Object.entries(counts).map(([status, n]) => n + " " + status).join(", ") + "."
    );
    show(ui.changes, true);
  }

  /* ---------- sub-question tabs (WAI-ARIA tabs: arrows, Home, End) ---------- */

  function renderSubanswers(subanswers) {
    clear(ui.tabs);
    clear(ui.panels);
    if (!subanswers.length) return;
    subanswers.forEach((sub, index) => {
      const tabId = "subq-tab-" + index;
      const panelId = "subq-panel-" + index;
      const tab = el(
        "button",
        { type: "button", role: "tab", class: "tab", id: tabId, "aria-controls": panelId, "aria-selected": "false", tabindex: "-1", title: sub.subquestion },
        (index + 1) + ". " + sub.subquestion
      );
      tab.addEventListener("click", () => selectTab(index, false));
      tab.addEventListener("keydown", (event) => onTabKey(event, index, subanswers.length));
      ui.tabs.append(tab);

      const ids = (sub.evidence || sub.citations || []).map((c) => Number(typeof c === "object" ? c.id : c));
      const evidence = el("ol", { class: "evidence-list", "aria-label": "Evidence for this sub-question" });
      for (const id of ids) {
        const chunk = run.citations.get(id);
        if (chunk) evidence.append(sourceItem(chunk, run.citations, true));
      }
      const body = el("div", { class: "prose" });
      renderAnswer(body, sub.answer || "", run.citations);
      const panel = el(
        "div",
        { role: "tabpanel", class: "tabpanel", id: panelId, "aria-labelledby": tabId, tabindex: "0", hidden: true },
        el("h3", {}, sub.subquestion),
        body,
        el("h4", {}, ids.length ? "Its evidence" : "No evidence was found for this sub-question"),
        evidence
      );
      ui.panels.append(panel);
    });
    selectTab(0, false);
    show(ui.subanswers, true);
  }

  function selectTab(index, focus) {
    const tabs = ui.tabs.querySelectorAll('[role="tab"]');
    tabs.forEach((tab, i) => {
      const selected = i === index;
      tab.setAttribute("aria-selected", selected ? "true" : "false");
      tab.tabIndex = selected ? 0 : -1;
      document.getElementById(tab.getAttribute("aria-controls")).hidden = !selected;
      if (selected && focus) tab.focus();
    });
  }

  function onTabKey(event, index, total) {
    const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: total - 1 };
    if (!(event.key in moves)) return;
    event.preventDefault();
    selectTab((moves[event.key] + total) % total, true);
  }

  /* ---------- retrieval report ---------- */

  function renderReport(rounds, result) {
    clear(ui.reportBody);
    for (const round of rounds) {
      const queries = el("ul", {}, (round.queries || []).map((q) => el("li", {}, q)));
      const skipped = (round.skipped_queries || []).map((q) => el("li", { class: "skipped" }, "not run: " + q.text + " (" + q.reason + ")"));
      queries.append(...skipped);
      const selected = count(round.selected) ?? 0;
      const decision = String(round.decision || "");
      ui.reportBody.append(
        el(
          "tr",
          {},
          el("td", { class: "num" }, round.round),
          el("td", {}, el("strong", {}, round.subquestion || ""), queries),
          el("td", { class: "num" }, round.candidates_before_fusion ?? ""),
          el("td", { class: "num" }, round.candidates_after_fusion ?? ""),
          el("td", { class: "num" }, selected + (round.new_evidence !== undefined ? " (" + round.new_evidence + " new)" : "")),
          el(
            "td",
            { class: "num" },
            typeof round.weighted_coverage === "number" ? percent(round.weighted_coverage) + "%" : ""
          ),
          el("td", {}, el("span", { class: "decision-" + decision }, decision), round.reason ? el("br") : null, round.reason || "")
        )
      );
    }
    const meta = [];
    if (typeof result.retrieval_latency_ms === "number") meta.push("retrieval " + Math.round(result.retrieval_latency_ms) + " ms");
    if (typeof result.summary_latency_ms === "number") meta.push("summary " + Math.round(result.summary_latency_ms) + " ms");
    if (typeof result.answer_latency_ms === "number") meta.push("answer " + Math.round(result.answer_latency_ms) + " ms");
    if (Array.isArray(result.errors) && result.errors.length) meta.push(result.errors.length + " problems: " + result.errors.join("; "));
    ui.reportMeta.textContent = meta.join(" · ");
    show(ui.report, rounds.length > 0);
  }
})();
