/* deepcite UI helpers shared by the pages. Untrusted text only ever reaches the DOM as text nodes
   (textContent / createTextNode), never parsed as markup; links are built from checked http(s) URLs. */
"use strict";

window.deepcite = (function () {
  const TOKEN_KEY = "deepcite.apiToken";

  /** Build an element: el("a", {class: "x", href: "..."}, "text", childNode, ...). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = String(value);
      else if (key === "href") {
        const safe = safeHref(value);
        if (safe) node.setAttribute("href", safe);
      } else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  /** The URL if it is http(s) (absolute or relative to this page), else null. */
  function safeHref(value) {
    try {
      const url = new URL(String(value), window.location.href);
      return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
    } catch (_) {
      return null;
    }
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function show(node, visible) {
    node.hidden = !visible;
  }

  function pubmedUrl(pmid) {
    return "https://pubmed.ncbi.nlm.nih.gov/" + encodeURIComponent(String(pmid).trim()) + "/";
  }

  function doiUrl(doi) {
    const clean = String(doi).trim().replace(/^https?:\/\/(dx\.)?doi\.org\//i, "").replace(/^doi:\s*/i, "");
    return "https://doi.org/" + clean.split("/").map(encodeURIComponent).join("/");
  }

  function authHeaders() {
    const token = window.sessionStorage.getItem(TOKEN_KEY);
    return token ? { Authorization: "Bearer " + token } : {};
  }

  /** On a 401, ask for a token once (kept for this tab only) so the next request can send it. */
  function askForToken(message) {
    const token = window.prompt(message + "\n\nEnter an API token for this server:");
    if (token && token.trim()) window.sessionStorage.setItem(TOKEN_KEY, token.trim());
  }

  /** The message of an error response body ({message} or FastAPI's {detail}), else the status. */
  function errorText(body, status) {
    if (body && typeof body === "object") {
      if (typeof body.message === "string" && body.message) return body.message;
      if (typeof body.detail === "string" && body.detail) return body.detail;
      if (Array.isArray(body.detail)) return body.detail.map((d) => d.problem || d.msg || JSON.stringify(d)).join("; ");
    }
    return "the server answered " + status;
  }

  async function readError(response) {
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      /* not JSON */
    }
    const message = errorText(body, response.status);
    if (response.status === 401) askForToken(message);
    return new Error(message);
  }

  async function getJSON(url) {
    const response = await fetch(url, { headers: { Accept: "application/json", ...authHeaders() } });
    if (!response.ok) throw await readError(response);
    return response.json();
  }

  async function postJSON(url, body) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json", ...authHeaders() },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw await readError(response);
    return response.json();
  }

  /** Read a Server-Sent Events response; onEvent(name, data) per event (data parsed as JSON when it is). */
  async function streamEvents(url, onEvent, signal) {
    const response = await fetch(url, { headers: { Accept: "text/event-stream", ...authHeaders() }, signal });
    if (!response.ok) throw await readError(response);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        dispatchFrame(frame, onEvent);
      }
    }
    if (buffer.trim()) dispatchFrame(buffer, onEvent);
  }

  function dispatchFrame(frame, onEvent) {
    let name = "message";
    const data = [];
    for (const line of frame.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
    }
    if (!data.length && name === "message") return;
    const raw = data.join("\n");
    let parsed = raw;
    try {
      parsed = JSON.parse(raw);
    } catch (_) {
      /* plain text data */
    }
    onEvent(name, parsed);
  }

  /* ---------- citations ---------- */

  const CITE_RE = /\[(\d+(?:\s*[,;]\s*\d+)*)\]/g;

  /** Text with [n] markers as a fragment of text nodes and citation buttons. */
  function citedFragment(text, citations) {
    const fragment = document.createDocumentFragment();
    const source = String(text || "");
    let last = 0;
    for (const match of source.matchAll(CITE_RE)) {
      if (match.index > last) fragment.append(document.createTextNode(source.slice(last, match.index)));
      for (const id of match[1].split(/\s*[,;]\s*/)) fragment.append(citeButton(Number(id), citations));
      last = match.index + match[0].length;
    }
    if (last < source.length) fragment.append(document.createTextNode(source.slice(last)));
    return fragment;
  }

  function isWeb(chunk) {
    return Boolean(chunk) && (chunk.source === "web" || (!chunk.pmid && !chunk.doi && Boolean(chunk.url)));
  }

  function citeButton(id, citations) {
    const chunk = citations.get(id);
    if (!chunk) return el("span", { class: "cite unknown", title: "no such source" }, "[" + id + "]");
    const label = "Source " + id + ": " + (chunk.title || "untitled passage");
    const button = el(
      "button",
      {
        type: "button",
        class: isWeb(chunk) ? "cite web" : "cite",
        "data-cite": id,
        "aria-label": label,
        "aria-haspopup": "dialog",
        "aria-expanded": "false",
        "aria-controls": "cite-pop",
      },
      "[" + id + "]"
    );
    button._chunk = chunk;
    return button;
  }

  /** Paragraphs of an answer: blank lines split paragraphs, "#"-prefixed or "**…**" lines become headings. */
  function renderAnswer(container, text, citations) {
    clear(container);
    const blocks = String(text || "").split(/\n\s*\n|\n(?=#)/);
    for (const block of blocks) {
      const trimmed = block.trim();
      if (!trimmed) continue;
      const lines = trimmed.split("\n");
      const heading = lines[0].match(/^(#{1,6})\s+(.*)$/) || lines[0].match(/^\*\*(.+)\*\*$/);
      if (heading) {
        container.append(el("h3", { text: heading[heading.length - 1].trim() }));
        const rest = lines.slice(1).join(" ").trim();
        if (rest) container.append(el("p", {}, citedFragment(rest, citations)));
      } else {
        container.append(el("p", {}, citedFragment(lines.join(" "), citations)));
      }
    }
  }

  /** "p. 7", "p. 7–8" for a passage that crosses a page break, or "" when the page is unknown. */
  function pageLabel(chunk) {
    if (typeof chunk.page !== "number") return "";
    const end = typeof chunk.page_end === "number" && chunk.page_end !== chunk.page ? "–" + chunk.page_end : "";
    return "p. " + chunk.page + end;
  }

  /** The page a passage's sentence holding character offset starts on (its stored sentence pages), else
      the passage's first page; null without pages. Mirrors Chunk.page_at. */
  function pageAt(chunk, offset) {
    const spans = chunk.sentence_spans;
    const pages = chunk.sentence_pages;
    if (Array.isArray(spans) && Array.isArray(pages)) {
      const index = spans.findIndex((span) => offset < span[1]);
      if (index >= 0 && typeof pages[index] === "number") return pages[index];
    }
    return typeof chunk.page === "number" ? chunk.page : null;
  }

  /** The page a citation opens at: the page its quote starts on (quote_page), else the passage's first page. */
  function openPage(chunk) {
    if (typeof chunk.quote_page === "number") return chunk.quote_page;
    return typeof chunk.page === "number" ? chunk.page : null;
  }

  /** Where a passage comes from: "pasa.pdf · p. 7", either part alone, or "". */
  function whereLabel(chunk) {
    return [chunk.file || "", pageLabel(chunk)].filter(Boolean).join(" · ");
  }

  /** The original file of a passage at the page it opens at: /files/{collection}/{document}#page=N (null without a
      file or a collection; the collection is the one the passage was searched in, kept as chunk._collection). */
  function fileHref(chunk) {
    if (!chunk.file || !chunk._collection || !chunk.doc_id || isWeb(chunk)) return null;
    const id = String(chunk.doc_id).split("/").map(encodeURIComponent).join("/");
    const page = openPage(chunk) === null ? "" : "#page=" + openPage(chunk);
    return "/files/" + encodeURIComponent(chunk._collection) + "/" + id + page;
  }

  /** The viewer of a passage's document, the citation's quote marked (web pages have none):
      /view/{collection}/{document}?passage={chunk id}&start={quote_start}&end={quote_end}&page={quote_page}, and
      &answer={answer id}&cite={n} when the answer is known (kept as chunk._answer), so the viewer can tell a
      document removed or changed since the answer was written. */
  function viewHref(chunk) {
    if (!chunk._collection || !chunk.doc_id || !chunk.chunk_id || isWeb(chunk)) return null;
    const id = String(chunk.doc_id).split("/").map(encodeURIComponent).join("/");
    const query = new URLSearchParams({ passage: chunk.chunk_id });
    if (chunk.quote) {
      query.set("start", String(chunk.quote_start));
      query.set("end", String(chunk.quote_end));
    }
    if (openPage(chunk) !== null) query.set("page", String(openPage(chunk)));
    if (chunk._answer) {
      query.set("answer", String(chunk._answer));
      query.set("cite", String(chunk.id));
    }
    return "/view/" + encodeURIComponent(chunk._collection) + "/" + id + "?" + query.toString();
  }

  /** Open a file link: a plain navigation when no token is kept; with a token (which a link cannot send)
      the file is fetched with it and opened from a blob URL at the same page. */
  function openFile(event) {
    const link = event.target instanceof Element ? event.target.closest("a.file-link") : null;
    const token = window.sessionStorage.getItem(TOKEN_KEY);
    if (!link || !token) return;
    event.preventDefault();
    const url = new URL(link.href);
    const opened = window.open("", "_blank");
    fetch(url.pathname, { headers: authHeaders() })
      .then(async (response) => {
        if (!response.ok) throw await readError(response);
        const blob = await response.blob();
        const target = URL.createObjectURL(blob) + url.hash;
        if (opened) opened.location.href = target;
        else window.location.href = target;
      })
      .catch((err) => {
        if (opened) opened.close();
        window.alert("Could not open the file: " + err.message);
      });
  }

  /** File and page, section, authors, year, venue and score of a passage, for lists and the popover. */
  function sourceMeta(chunk) {
    const parts = [];
    const where = whereLabel(chunk);
    if (where) parts.push(where);
    if (chunk.section) parts.push("Section: " + chunk.section);
    const authors = Array.isArray(chunk.authors) ? chunk.authors : [];
    if (authors.length) parts.push(authors.slice(0, 3).join(", ") + (authors.length > 3 ? " et al." : ""));
    if (chunk.year) parts.push(String(chunk.year));
    if (chunk.venue) parts.push(chunk.venue);
    if (typeof chunk.score === "number") parts.push("score " + chunk.score.toFixed(3));
    return parts.join(" · ");
  }

  /** "1 passage", "3 passages": a count with its noun in the right number (plural: the noun for many). */
  function plural(n, one, many) {
    return n + " " + (n === 1 ? one : many || one + "s");
  }

  /** A passage's links (viewer, original file, PMID, DOI, web page), separated by " · " so their texts never
      run together. */
  function sourceLinks(chunk) {
    const links = [];
    const view = viewHref(chunk);
    const page = openPage(chunk) === null ? "" : "p. " + openPage(chunk);
    if (view) {
      // rel=opener: the new tab gets a copy of this tab's sessionStorage, so the viewer can send the API token
      const label = (chunk.quote ? "Show the quote in " : "Show in ") + (chunk.file || "the document") + (page ? " at " + page : "");
      links.push(el("a", { href: view, class: "view-link", target: "_blank", rel: "opener" }, label));
    }
    const file = fileHref(chunk);
    if (file) links.push(el("a", { href: file, class: "file-link", target: "_blank", rel: "noopener" }, "Original file"));
    if (chunk.pmid) links.push(el("a", { href: pubmedUrl(chunk.pmid), target: "_blank", rel: "noopener" }, "PMID " + chunk.pmid));
    if (chunk.doi) links.push(el("a", { href: doiUrl(chunk.doi), target: "_blank", rel: "noopener" }, "DOI " + chunk.doi));
    if (chunk.url && safeHref(chunk.url)) {
      let host = chunk.url;
      try {
        host = new URL(chunk.url).host;
      } catch (_) {
        /* keep the raw url */
      }
      links.push(el("a", { href: chunk.url, target: "_blank", rel: "noopener" }, (isWeb(chunk) ? "Web: " : "") + host));
    }
    return links.flatMap((link, i) => (i ? [" · ", link] : [link]));
  }

  /** One source as a list item: [n] title, badges, meta, links (used by the sources and evidence lists). */
  function sourceItem(chunk, citations, withText) {
    const item = el(
      "li",
      { value: chunk.id, "data-source-id": chunk.id },
      citeButton(chunk.id, citations),
      " ",
      el("span", { class: "src-title" }, chunk.title || "Untitled passage"),
      " ",
      isWeb(chunk) ? el("span", { class: "badge web" }, "web") : null,
      el("br"),
      el("span", { class: "src-meta" }, sourceMeta(chunk)),
      " ",
      sourceLinks(chunk)
    );
    if (withText && chunk.text) item.append(el("p", { class: "src-meta" }, chunk.text));
    return item;
  }

  /* ---------- citation popover (hover, focus or click; Escape closes) ---------- */

  const pop = { node: null, button: null, pinned: false, hideTimer: null, returning: false };

  function popover() {
    if (pop.node) return pop.node;
    pop.node = document.getElementById("cite-pop");
    if (!pop.node) return null;
    pop.node.querySelector(".cite-pop-close").addEventListener("click", () => closePopover(true));
    pop.node.addEventListener("mouseenter", () => window.clearTimeout(pop.hideTimer));
    pop.node.addEventListener("mouseleave", () => scheduleHide());
    pop.node.addEventListener("focusout", (event) => {
      if (!pop.node.contains(event.relatedTarget) && event.relatedTarget !== pop.button) closePopover(false);
    });
    return pop.node;
  }

  function fillPopover(node, chunk) {
    node.querySelector(".cite-pop-id").textContent = "[" + chunk.id + "]" + (isWeb(chunk) ? " · web" : "");
    node.querySelector(".cite-pop-title").textContent = chunk.title || "Untitled passage";
    node.querySelector(".cite-pop-meta").textContent = sourceMeta(chunk);
    const links = node.querySelector(".cite-pop-links");
    clear(links);
    links.append(...sourceLinks(chunk));
    const quote = node.querySelector(".cite-pop-quote");
    quote.textContent = chunk.quote || "";
    quote.hidden = !chunk.quote;
    node.querySelector(".cite-pop-text").replaceChildren(markedText(chunk));
  }

  /** A passage's text with its quote (text[quote_start:quote_end], the words that support the claim) marked. */
  function markedText(chunk) {
    const text = String(chunk.text || "");
    const start = chunk.quote_start;
    const end = chunk.quote_end;
    if (!chunk.quote || text.slice(start, end) !== chunk.quote) return document.createTextNode(text);
    const fragment = document.createDocumentFragment();
    fragment.append(text.slice(0, start), el("mark", { class: "quote" }, chunk.quote), text.slice(end));
    return fragment;
  }

  function placePopover(node, button) {
    const rect = button.getBoundingClientRect();
    const width = node.offsetWidth;
    const left = Math.max(8, Math.min(rect.left + window.scrollX, window.scrollX + document.documentElement.clientWidth - width - 8));
    node.style.left = left + "px";
    node.style.top = rect.bottom + window.scrollY + 6 + "px";
  }

  function openPopover(button, pinned) {
    const node = popover();
    if (!node || !button._chunk) return;
    window.clearTimeout(pop.hideTimer);
    if (pop.button && pop.button !== button) pop.button.setAttribute("aria-expanded", "false");
    pop.button = button;
    pop.pinned = pinned || (pop.pinned && pop.button === button);
    fillPopover(node, button._chunk);
    node.hidden = false;
    placePopover(node, button);
    button.setAttribute("aria-expanded", "true");
  }

  function closePopover(returnFocus) {
    const node = popover();
    if (!node || node.hidden) return;
    node.hidden = true;
    pop.pinned = false;
    if (pop.button) {
      pop.button.setAttribute("aria-expanded", "false");
      if (returnFocus) {
        pop.returning = true; // focus goes back to the button without reopening the popover
        pop.button.focus();
        pop.returning = false;
      }
    }
  }

  function scheduleHide() {
    window.clearTimeout(pop.hideTimer);
    pop.hideTimer = window.setTimeout(() => {
      if (!pop.pinned && !(pop.node && pop.node.matches(":hover, :focus-within"))) closePopover(false);
    }, 250);
  }

  function citeFrom(target) {
    return target instanceof Element ? target.closest("button.cite") : null;
  }

  document.addEventListener("click", openFile);
  document.addEventListener("click", (event) => {
    const button = citeFrom(event.target);
    if (button) {
      event.preventDefault();
      if (pop.button === button && pop.pinned && !popover().hidden) closePopover(false);
      else {
        openPopover(button, true);
        popover().querySelector(".cite-pop-close").focus();
      }
    } else if (pop.node && !pop.node.hidden && !pop.node.contains(event.target)) {
      closePopover(false);
    }
  });
  document.addEventListener("mouseover", (event) => {
    const button = citeFrom(event.target);
    if (button && !pop.pinned) openPopover(button, false);
  });
  document.addEventListener("mouseout", (event) => {
    if (citeFrom(event.target)) scheduleHide();
  });
  document.addEventListener("focusin", (event) => {
    const button = citeFrom(event.target);
    if (button && !pop.returning && !(pop.pinned && pop.button === button)) openPopover(button, false);
  });
  document.addEventListener("focusout", (event) => {
    if (citeFrom(event.target) && !(pop.node && pop.node.contains(event.relatedTarget))) scheduleHide();
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && pop.node && !pop.node.hidden) {
      event.preventDefault();
      closePopover(true);
    }
  });

  /** A text box's length against a server limit, shown in ``counter`` ("1,234 / 2,000 characters", marked and the
      box invalid when over). Characters count as the server counts them: code points of the trimmed text.
      Returns { length(), check() }, check() true when within the limit; updated on every input. */
  function lengthCounter(box, counter, maxChars) {
    const number = (n) => n.toLocaleString();
    const length = () => Array.from(box.value.trim()).length;
    function check() {
      const count = length();
      const over = count > maxChars;
      counter.textContent =
        number(count) + " / " + number(maxChars) + " characters" + (over ? ": " + number(count - maxChars) + " over the limit" : "");
      counter.classList.toggle("over", over);
      if (over) box.setAttribute("aria-invalid", "true");
      else box.removeAttribute("aria-invalid");
      return !over;
    }
    box.addEventListener("input", check);
    check(); // a reload may bring the box's text back
    return { length, check };
  }

  return {
    el, clear, show, safeHref, getJSON, postJSON, streamEvents, errorText,
    citedFragment, renderAnswer, sourceItem, sourceMeta, sourceLinks, isWeb, pubmedUrl, doiUrl,
    pageLabel, pageAt, whereLabel, fileHref, viewHref, authHeaders, readError, lengthCounter, plural,
  };
})();
