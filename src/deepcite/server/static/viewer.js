/* The viewer: a cited document with the citation's quote marked.
   /view/{collection}/{document}?passage=<chunk id>&start=<n>&end=<n>&page=<n> (offsets into that passage's
   text; the page the quote starts on), and &answer=<saved answer id>&cite=<n> when the link comes from an
   answer. With the answer the viewer compares the document as it is now with the passage as the answer cited
   it: a document removed since says so (data-ready "removed") and shows the passage as cited; a changed one
   says so (data-ready "changed"), shows the passage as cited and links the current version (the passage now
   at the same place, its quote marked when its words are still there). Without the answer, a cited passage
   missing from the document is reported as changed, and a missing document in words that do not tell a
   removed document from one the reader may not read. A PDF renders from the quote's page (the passage's first page without
   one) to the passage's last with pdf.js (vendored, see the Makefile) and the quote is marked in
   pdf.js's text layer; any other file is shown as the passages deepcite stored, the quote marked in the
   cited one. Untrusted text reaches the DOM only as text nodes. When done, #viewer gets data-ready
   ("pdf" or "text") and data-highlight (the marked text), which the browser tests read. common.js (a
   deferred classic script, run before this module) provides window.deepcite. */
const { el, clear, getJSON, authHeaders, readError, plural } = window.deepcite;
const root = document.getElementById("viewer");
const status = document.getElementById("viewer-status");
const params = new URLSearchParams(window.location.search);
const passageId = params.get("passage");
const quoteStart = Number.parseInt(params.get("start") || "", 10);
const quoteEnd = Number.parseInt(params.get("end") || "", 10);
const quotePage = Number.parseInt(params.get("page") || "", 10);
const answerId = params.get("answer");
const citeId = Number.parseInt(params.get("cite") || "", 10);
const PDF_SCALE = 1.5;

/** A document path for a URL: each segment encoded, the slashes kept. */
function documentPath(docId) {
  return String(docId).split("/").map(encodeURIComponent).join("/");
}

/** What the quote comparison keeps of a character: letters and digits, case and ligatures folded. PDF text
    layers and deepcite's reader differ in spaces, hyphenation at line ends and punctuation, not in words. */
function folded(ch) {
  return ch.normalize("NFKC").toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");
}

function foldText(text) {
  return Array.from(text, folded).join("");
}

/** The quote's place in the page's text-layer spans: [first, last] as [span index, char index], or null. */
function findInSpans(spans, quote) {
  let text = "";
  const where = [];
  spans.forEach((span, si) => {
    const raw = span.textContent;
    for (let i = 0; i < raw.length; i++) {
      for (const ch of folded(raw[i])) {
        text += ch;
        where.push([si, i]);
      }
    }
  });
  const needle = foldText(quote);
  if (!needle) return null;
  let from = text.indexOf(needle);
  let to = from + needle.length - 1;
  if (from < 0) {
    // text extraction differs somewhere inside the quote: anchor on its opening and closing words
    const probe = Math.min(40, Math.floor(needle.length / 2));
    from = text.indexOf(needle.slice(0, probe));
    const tail = from < 0 ? -1 : text.indexOf(needle.slice(-probe), from);
    if (from < 0 || tail < 0 || tail - from > 2 * needle.length) return null;
    to = tail + probe - 1;
  }
  return [where[from], where[to]];
}

/** Wrap characters [start, end) of a text-layer span in <mark class="quote">. */
function markSpan(span, start, end) {
  const raw = span.textContent;
  if (start >= end) return;
  span.replaceChildren(raw.slice(0, start), el("mark", { class: "quote" }, raw.slice(start, end)), raw.slice(end));
}

/** Mark the quote in the rendered text layers under container (the pages in order, so a quote that runs
    over a page break is marked on both); the marks, or [] when the shown pages do not hold it. */
function markQuote(container, quote) {
  const spans = Array.from(container.querySelectorAll(".textLayer span")).filter(
    (span) => !span.classList.contains("markedContent") && span.childElementCount === 0 && span.textContent
  );
  const found = findInSpans(spans, quote);
  if (!found) return [];
  const [[firstSpan, firstChar], [lastSpan, lastChar]] = found;
  let end = lastChar + 1;
  const lastText = spans[lastSpan].textContent;
  while (end < lastText.length && /[.,;:!?)\]"'’”]/u.test(lastText[end])) end++; // closing punctuation
  for (let si = firstSpan; si <= lastSpan; si++) {
    const length = spans[si].textContent.length;
    markSpan(spans[si], si === firstSpan ? firstChar : 0, si === lastSpan ? end : length);
  }
  return Array.from(container.querySelectorAll("mark.quote"));
}

/** The page's scale: PDF_SCALE, or less so that the page fits the width it is shown in (a phone's 375 px). */
function fittingScale(page, container) {
  const natural = page.getViewport({ scale: 1 }).width;
  const room = container.clientWidth || window.innerWidth;
  return Math.min(PDF_SCALE, room / natural);
}

async function renderPage(pdfjs, pdf, number, container) {
  const page = await pdf.getPage(number);
  const viewport = page.getViewport({ scale: fittingScale(page, container) });
  const box = el("div", { class: "viewer-page", "data-page": number, "aria-label": "Page " + number });
  box.style.setProperty("--scale-factor", String(viewport.scale));
  box.style.setProperty("--total-scale-factor", String(viewport.scale));
  box.style.width = Math.floor(viewport.width) + "px";
  box.style.height = Math.floor(viewport.height) + "px";
  // drawn at the screen's pixel density, shown at the page's size: sharp text on a phone's small page
  const density = window.devicePixelRatio || 1;
  const canvas = el("canvas", { width: Math.floor(viewport.width * density), height: Math.floor(viewport.height * density) });
  canvas.style.width = Math.floor(viewport.width) + "px";
  canvas.style.height = Math.floor(viewport.height) + "px";
  const layer = el("div", { class: "textLayer" });
  box.append(canvas, layer);
  container.append(box);
  const transform = density === 1 ? null : [density, 0, 0, density, 0, 0];
  await page.render({ canvasContext: canvas.getContext("2d"), viewport, transform }).promise;
  const textLayer = new pdfjs.TextLayer({ textContentSource: await page.getTextContent(), container: layer, viewport });
  await textLayer.render();
}

async function showPdf(view, cited, quote) {
  const pdfjs = await import(root.dataset.pdfjs);
  pdfjs.GlobalWorkerOptions.workerSrc = root.dataset.pdfjsWorker;
  const url = root.dataset.filesUrl + "/" + encodeURIComponent(view.collection) + "/" + documentPath(view.doc_id);
  const response = await fetch(url, { headers: authHeaders() });
  if (!response.ok) throw await readError(response);
  const data = new Uint8Array(await response.arrayBuffer());
  const pdf = await pdfjs.getDocument({ data, standardFontDataUrl: root.dataset.pdfjsFonts }).promise;
  const start = (cited && cited.page) || 1;
  const end = (cited && cited.page_end) || start;
  // the quote's page when it lies within the passage's pages; a passage never opens before its first page
  const opening = Number.isInteger(quotePage) && quotePage >= start && quotePage <= end ? quotePage : start;
  const first = Math.min(Math.max(opening, 1), pdf.numPages);
  const last = Math.min(Math.max(end, first), pdf.numPages);
  const pages = document.getElementById("viewer-pages");
  clear(pages);
  pages.hidden = false;
  for (let number = first; number <= last; number++) await renderPage(pdfjs, pdf, number, pages);
  const marks = quote ? markQuote(pages, quote) : [];
  finish("pdf", marks, quote, "page " + (first === last ? first : first + "–" + last) + " of " + pdf.numPages);
}

function showText(view, cited, quote) {
  const article = document.getElementById("viewer-text");
  clear(article);
  article.hidden = false;
  let marks = [];
  let lastPage = null;
  for (const block of view.passages) {
    if (typeof block.page === "number" && block.page !== lastPage) {
      article.append(el("p", { class: "page-label" }, "Page " + block.page));
      lastPage = block.page;
    }
    const isCited = cited && block.chunk_id === cited.chunk_id;
    const paragraph = el("p", { class: isCited ? "passage cited" : "passage", "data-chunk-id": block.chunk_id });
    const start = quoteStart - block.offset;
    const end = quoteEnd - block.offset;
    if (isCited && quote && block.text.slice(start, end) === quote) {
      const mark = el("mark", { class: "quote" }, quote);
      paragraph.append(block.text.slice(0, start), mark, block.text.slice(end));
      marks = [mark];
    } else {
      paragraph.append(block.text);
    }
    article.append(paragraph);
  }
  finish("text", marks, quote, plural(view.passages.length, "stored passage"));
}

function finish(kind, marks, quote, where) {
  root.dataset.highlight = marks.map((mark) => mark.textContent).join(" ");
  root.dataset.ready = kind;
  if (marks.length) {
    marks[0].scrollIntoView({ block: "center" });
    status.textContent = "The quote is marked (" + where + ").";
  } else {
    status.textContent = quote ? "The quote was not found in the shown text (" + where + ")." : "Shown: " + where + ".";
  }
}

/** The citation as the answer named in the URL saved it, or null (no answer, or one the reader cannot open). */
async function citedAsSaved() {
  if (!answerId || !Number.isInteger(citeId)) return null;
  try {
    const saved = await getJSON(root.dataset.answersUrl + "/" + encodeURIComponent(answerId));
    const citation = (saved.response.citations || []).find((c) => c.id === citeId);
    return citation && citation.doc_id === root.dataset.document ? citation : null;
  } catch (_) {
    return null;
  }
}

/** The notice above the document: a heading and what the reader can do. */
function notice(heading, ...body) {
  const node = document.getElementById("viewer-notice");
  node.replaceChildren(el("h2", {}, heading), ...body);
  node.hidden = false;
}

/** The passage as the answer cited it: its page and text, its quote marked. */
function asCited(citation) {
  const text = String(citation.text || "");
  const quoted = citation.quote && text.slice(citation.quote_start, citation.quote_end) === citation.quote;
  const page = typeof citation.quote_page === "number" ? citation.quote_page : citation.page;
  const article = document.getElementById("viewer-text");
  article.replaceChildren(
    el("p", { class: "page-label" }, "As the answer cited it" + (typeof page === "number" ? " (page " + page + ")" : "") + ":"),
    el(
      "p",
      { class: "passage cited as-cited", "data-chunk-id": citation.chunk_id },
      quoted ? text.slice(0, citation.quote_start) : text,
      quoted ? el("mark", { class: "quote" }, citation.quote) : null,
      quoted ? text.slice(citation.quote_end) : null
    )
  );
  article.hidden = false;
  if (quoted) document.getElementById("viewer-quote").textContent = citation.quote;
  document.getElementById("viewer-quote").hidden = !quoted;
  if (citation.title) document.getElementById("viewer-title").textContent = citation.title;
  document.getElementById("viewer-meta").textContent = [citation.file, citation.section].filter(Boolean).join(" · ");
}

/** The viewer URL of this document now: the block (passage) at the cited place, its quote marked if found. */
function currentHref(view, citation) {
  const base = "/view/" + encodeURIComponent(view.collection) + "/" + documentPath(view.doc_id);
  const quote = citation && citation.quote;
  const holding = quote ? view.passages.find((block) => block.text.includes(quote)) : null;
  const block = holding || (citation && view.passages.find((b) => b.position === citation.position)) || view.passages[0];
  if (!block) return base;
  const query = new URLSearchParams({ passage: block.chunk_id });
  if (holding) {
    const start = block.offset + block.text.indexOf(quote);
    query.set("start", String(start));
    query.set("end", String(start + quote.length));
  }
  if (typeof block.page === "number") query.set("page", String(block.page));
  return base + "?" + query.toString();
}

function showRemoved(citation) {
  document.title = (citation.title || citation.doc_id) + " (removed) · deepcite";
  asCited(citation);
  notice(
    "This document was removed",
    el("p", {}, "This document was removed from the collection after the answer was written. Below is the passage as the answer cited it; the collection no longer holds it.")
  );
  status.textContent = "The document was removed from the collection after the answer was written.";
  root.dataset.ready = "removed";
}

function showChanged(view, citation) {
  const current = el("a", { href: currentHref(view, citation), class: "current-version" }, "Show the current version");
  if (citation) asCited(citation);
  notice(
    "This document changed",
    el(
      "p",
      {},
      "This document changed after the answer was written: the passage the answer cited is no longer in it as it was. ",
      citation ? "Below is the passage as the answer cited it. " : ""
    ),
    el("p", {}, current)
  );
  status.textContent = "The document changed after the answer was written.";
  root.dataset.ready = "changed";
}

async function main() {
  const query = new URLSearchParams({ collection: root.dataset.collection, document: root.dataset.document });
  if (passageId) query.set("passage", passageId);
  const response = await fetch(root.dataset.viewUrl + "?" + query.toString(), {
    headers: { Accept: "application/json", ...authHeaders() },
  });
  if (response.status === 404) {
    const citation = await citedAsSaved();
    if (citation) return showRemoved(citation);
    throw new Error(
      "this document is not in the collection: it may have been removed after the answer was written, or it is not shared with you."
    );
  }
  if (!response.ok) throw await readError(response);
  const view = await response.json();
  document.getElementById("viewer-title").textContent = view.title || view.file || view.doc_id;
  document.title = (view.title || view.file || view.doc_id) + " · deepcite";
  const cited = view.passages.find((block) => block.chunk_id === view.passage) || null;
  if (passageId && !cited) return showChanged(view, await citedAsSaved()); // the cited passage is gone
  const saved = await citedAsSaved();
  if (saved && saved.text !== cited.text) return showChanged(view, saved); // same id, other words (older ids)
  const quote =
    cited && Number.isInteger(quoteStart) && quoteEnd > quoteStart
      ? cited.text.slice(quoteStart - cited.offset, quoteEnd - cited.offset)
      : "";
  document.getElementById("viewer-meta").textContent = [view.file, cited && cited.section].filter(Boolean).join(" · ");
  const quoteNode = document.getElementById("viewer-quote");
  quoteNode.textContent = quote;
  quoteNode.hidden = !quote;
  if (view.media_type === "application/pdf" && root.dataset.pdfjs) await showPdf(view, cited, quote);
  else showText(view, cited, quote);
}

main().catch((error) => {
  status.textContent = "Could not show the source: " + error.message;
  root.dataset.ready = "error";
});
