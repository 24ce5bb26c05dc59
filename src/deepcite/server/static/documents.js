/* "Add documents" panel: pick or drop files, upload them to a collection, then follow the ingest job's
   Server-Sent Events and show each file's status (ingested, unchanged, skipped with its reason). */
"use strict";

(function () {
  const { el, clear, show, getJSON, streamEvents, authHeaders, readError, plural } = window.deepcite;
  const form = document.getElementById("upload-form");
  if (!form) return;

  const $ = (id) => document.getElementById(id);
  const ui = {
    panel: $("add-documents"),
    collection: $("upload-collection"),
    choices: $("upload-collections"),
    zone: $("drop-zone"),
    input: $("upload-files"),
    list: $("upload-list"),
    button: $("upload-button"),
    clearButton: $("upload-clear"),
    status: $("upload-status"),
  };
  const limits = {
    fileBytes: Number(form.dataset.maxFileBytes),
    files: Number(form.dataset.maxFiles),
    requestBytes: Number(form.dataset.maxRequestBytes),
  };
  const COLLECTION_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
  const STATUS_TEXT = {
    ready: "Ready",
    uploading: "Uploading…",
    queued: "Waiting to be read…",
    reading: "Reading…",
    read: "Read",
    ingested: "Ingested",
    unchanged: "Unchanged: already in the collection",
    skipped: "Skipped",
    failed: "Not added",
    "too-large": "Too large",
  };

  /** Files of the current batch: {file, item, status, name (as the server named it)}. */
  let batch = [];
  let busy = false;

  ui.panel.addEventListener("toggle", () => {
    if (ui.panel.open) listCollections();
  });
  ui.input.addEventListener("change", () => {
    addFiles(ui.input.files);
    ui.input.value = "";
  });
  for (const name of ["dragenter", "dragover"]) {
    ui.zone.addEventListener(name, (event) => {
      event.preventDefault();
      ui.zone.classList.add("dragging");
    });
  }
  for (const name of ["dragleave", "drop"]) {
    ui.zone.addEventListener(name, () => ui.zone.classList.remove("dragging"));
  }
  ui.zone.addEventListener("drop", (event) => {
    event.preventDefault();
    if (event.dataTransfer) addFiles(event.dataTransfer.files);
  });
  ui.clearButton.addEventListener("click", () => {
    batch = [];
    clear(ui.list);
    ui.status.textContent = "";
    refresh();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    upload();
  });

  async function listCollections() {
    try {
      const body = await getJSON(form.dataset.collectionsUrl);
      clear(ui.choices);
      for (const info of body.collections || []) ui.choices.append(el("option", { value: info.name }));
    } catch (_) {
      /* the name can still be typed */
    }
  }

  function size(bytes) {
    if (bytes >= 1e6) return (bytes / 1e6).toFixed(1) + " MB";
    if (bytes >= 1e3) return Math.round(bytes / 1e3) + " kB";
    return bytes + " B";
  }

  function addFiles(files) {
    if (busy) return;
    if (batch.some((entry) => entry.status !== "ready" && entry.status !== "too-large")) {
      batch = []; // a finished batch: start a new list
      clear(ui.list);
    }
    for (const file of Array.from(files || [])) {
      if (batch.some((entry) => entry.file.name === file.name)) continue;
      const entry = { file, name: file.name, status: "ready", detail: "" };
      if (file.size > limits.fileBytes) {
        entry.status = "too-large";
        entry.detail = "over " + size(limits.fileBytes) + " per file (setting server.max_upload_file_bytes)";
      }
      entry.item = el("li", { class: "upload-item", "data-file": file.name });
      batch.push(entry);
      ui.list.append(entry.item);
      render(entry);
    }
    ui.status.textContent = "";
    refresh();
  }

  function render(entry) {
    clear(entry.item);
    entry.item.dataset.status = entry.status;
    entry.item.append(
      el("span", { class: "up-name" }, entry.name),
      " ",
      el("span", { class: "up-size" }, size(entry.file.size)),
      " ",
      el("span", { class: "up-status", "data-status": entry.status }, STATUS_TEXT[entry.status] + (entry.detail ? ": " + entry.detail : ""))
    );
  }

  function setStatus(entry, status, detail) {
    entry.status = status;
    entry.detail = detail || "";
    render(entry);
  }

  function refresh() {
    const ready = batch.filter((entry) => entry.status === "ready").length;
    ui.button.disabled = busy || ready === 0;
    ui.button.textContent = ready > 1 ? "Add " + ready + " documents" : "Add documents";
    show(ui.clearButton, batch.length > 0 && !busy);
  }

  function problem(message) {
    ui.status.textContent = message;
  }

  async function upload() {
    const collection = ui.collection.value.trim();
    if (!COLLECTION_RE.test(collection)) {
      problem("Give a collection name of letters, digits, '.', '_' or '-' (starting with a letter or digit).");
      ui.collection.focus();
      return;
    }
    const sending = batch.filter((entry) => entry.status === "ready");
    if (sending.length > limits.files) {
      problem("Choose at most " + limits.files + " files at a time (setting server.max_upload_files).");
      return;
    }
    const total = sending.reduce((sum, entry) => sum + entry.file.size, 0);
    if (total > limits.requestBytes) {
      problem("These files add up to " + size(total) + "; send at most " + size(limits.requestBytes) + " at a time.");
      return;
    }
    const body = new FormData();
    for (const entry of sending) {
      body.append("files", entry.file, entry.file.name);
      setStatus(entry, "uploading");
    }
    busy = true;
    refresh();
    problem("Uploading " + sending.length + (sending.length === 1 ? " file…" : " files…"));
    try {
      const response = await fetch("/api/collections/" + encodeURIComponent(collection) + "/documents", {
        method: "POST",
        headers: { Accept: "application/json", ...authHeaders() },
        body,
      });
      if (!response.ok) throw await readError(response);
      const job = await response.json();
      (job.uploaded || []).forEach((name, index) => {
        if (sending[index]) sending[index].name = name; // the server's (safe) name of that file
      });
      for (const entry of sending) setStatus(entry, "queued");
      await follow(job, sending, collection);
    } catch (err) {
      for (const entry of sending) if (!isFinal(entry.status)) setStatus(entry, "failed", err.message);
      problem("The upload failed: " + err.message);
    } finally {
      busy = false;
      refresh();
    }
  }

  function isFinal(status) {
    return status === "ingested" || status === "unchanged" || status === "skipped" || status === "failed";
  }

  /** A file's report in words: why it was skipped, or its pages and passages (when read, ``passages`` is what it
   * was cut into, not yet written: a number, or null when not counted yet). */
  function describe(file, passages) {
    if (file.status === "skipped") return file.message || file.reason || "";
    const parts = [];
    if (typeof file.pages === "number") parts.push(plural(file.pages, "page"));
    if (typeof passages === "number") parts.push(plural(passages, "passage") + " to embed and write…");
    else if (passages === null) parts.push("embedding and writing…");
    else if (typeof file.chunks === "number" && file.chunks) parts.push(plural(file.chunks, "passage") + " written");
    if (file.ocr_pages) parts.push(file.ocr_pages + " read by OCR");
    return parts.join(", ");
  }

  /** One file's stage from the job's ``file`` event: being read, read (or skipped), or done. */
  function fileEvent(entry, data) {
    if (data.stage === "reading") setStatus(entry, "reading");
    else if (data.stage === "read" && data.file.status === "skipped") setStatus(entry, "skipped", describe(data.file));
    else if (data.stage === "read") setStatus(entry, "read", describe(data.file, data.passages ?? null));
    else setStatus(entry, data.file.status, describe(data.file));
  }

  async function follow(job, sending, collection) {
    const byName = new Map(sending.map((entry) => [entry.name, entry]));
    let finished = null;
    await streamEvents("/api/jobs/" + encodeURIComponent(job.job_id) + "/events", (name, data) => {
      if (name === "state" && data && data.state === "running") {
        problem("Reading and indexing…");
      } else if (name === "file" && data) {
        const entry = byName.get(data.name);
        if (entry) fileEvent(entry, data);
        problem(data.done + " of " + data.total + " files done" + (data.stage === "reading" ? "; reading " + data.name : "") + "…");
      } else if (name === "done") {
        finished = data;
      }
    });
    if (!finished) throw new Error("the progress stream closed before the job finished; reload to see the collection");
    for (const file of finished.files || []) {
      const entry = byName.get(file.file);
      if (entry) setStatus(entry, file.status, describe(file));
    }
    if (finished.state === "failed") {
      for (const entry of sending) if (!isFinal(entry.status)) setStatus(entry, "failed", finished.error || "");
      problem("Nothing was added: " + (finished.error || "the ingest failed"));
      return;
    }
    const counts = {};
    for (const entry of sending) counts[entry.status] = (counts[entry.status] || 0) + 1;
    problem(
      "Done: " + ["ingested", "unchanged", "skipped", "failed"]
        .filter((status) => counts[status])
        .map((status) => counts[status] + " " + status)
        .join(", ") + " in collection " + collection + "."
    );
    document.dispatchEvent(new CustomEvent("deepcite:collections-changed", { detail: { collection } }));
  }
})();
