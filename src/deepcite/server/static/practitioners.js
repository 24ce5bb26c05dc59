/* Practitioner page: sends the request (with the earlier requests of this conversation as messages), shows
   crisis/emergency guidance first, then result cards with their explanations, and the intent panel. */
"use strict";

(function () {
  const { el, clear, show, postJSON, lengthCounter } = window.deepcite;
  const form = document.getElementById("practitioner-form");
  if (!form) return;

  const $ = (id) => document.getElementById(id);
  const ui = {
    request: $("request"),
    city: $("city"),
    state: $("state"),
    button: $("find-button"),
    status: $("status"),
    error: $("error"),
    results: $("results"),
    note: $("results-note"),
    list: $("result-list"),
    intent: $("intent"),
    intentList: $("intent-list"),
  };
  // the request's length against the server's limit (practitioners.max_query_chars): refused here, never cut
  const maxChars = Number(ui.request.dataset.maxChars) || Infinity;
  const requestCounter = lengthCounter(ui.request, $("request-count"), maxChars);
  // earlier turns of this conversation, oldest first; "Start a new conversation" empties it
  const history = [];
  const emergency = el("section", { class: "error emergency", role: "alert", hidden: "" });
  ui.results.before(emergency);
  const conversation = el("p", { class: "conversation", hidden: "" });
  const restart = el("button", { type: "button", class: "secondary" }, "Start a new conversation");
  restart.addEventListener("click", () => {
    history.length = 0;
    show(conversation, false);
    ui.request.value = "";
    requestCounter.check();
    ui.request.focus();
  });
  conversation.append(el("span", { class: "conversation-turns" }), " ", restart);
  form.append(conversation);

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    search();
  });

  function showError(message) {
    clear(ui.error);
    ui.error.append(el("h2", {}, "Something went wrong"), el("p", {}, message));
    show(ui.error, true);
  }

  async function search() {
    const userQuery = ui.request.value.trim();
    show(ui.error, false);
    if (!userQuery) {
      showError("Please describe what you need first.");
      ui.request.focus();
      return;
    }
    if (!requestCounter.check()) {
      showError(
        "Your request has " + requestCounter.length().toLocaleString() + " characters; this server takes at most " +
          maxChars.toLocaleString() + ". Please shorten it: nothing was sent."
      );
      ui.request.focus();
      return;
    }
    const body = { userQuery, messages: history.slice() };
    const location = {};
    if (ui.city.value.trim()) location.city = ui.city.value.trim();
    if (ui.state.value.trim()) location.state = ui.state.value.trim().toUpperCase();
    if (Object.keys(location).length) body.location = location;
    ui.button.disabled = true;
    form.setAttribute("aria-busy", "true");
    ui.status.textContent = "Searching…";
    try {
      const response = await postJSON(form.dataset.searchUrl, body);
      history.push({ role: "user", content: userQuery });
      conversation.firstChild.textContent =
        "Follow-ups read the conversation so far (" + history.length + " request" + (history.length > 1 ? "s" : "") + ").";
      show(conversation, true);
      render(response);
      ui.status.textContent = (response.results || []).length + " practitioners found.";
    } catch (err) {
      show(ui.results, false);
      show(ui.intent, false);
      showError(err.message);
      ui.status.textContent = "";
    } finally {
      ui.button.disabled = false;
      form.setAttribute("aria-busy", "false");
    }
  }

  function list(value) {
    if (!value) return [];
    if (Array.isArray(value)) return value;
    if (typeof value === "object") return Object.entries(value).map(([k, v]) => ({ name: k, value: v }));
    return [value];
  }

  function chip(item, kind) {
    if (item && typeof item === "object") {
      const name = item.name || item.term || item.phrase || item.reason || item.kind || "";
      const value = typeof item.value === "number" ? item.value : item.weight ?? item.boost ?? item.penalty ?? item.amount;
      const text = typeof value === "number" ? name + " " + (value >= 0 ? "+" : "") + value.toFixed(2) : String(name);
      return el("li", { class: "chip " + kind }, text);
    }
    return el("li", { class: "chip " + kind }, String(item));
  }

  function reasonRow(label, items, kind) {
    const values = list(items);
    if (!values.length) return [];
    return [el("dt", {}, label), el("dd", {}, el("ul", { class: "chips" }, values.map((v) => chip(v, kind))))];
  }

  function address(p) {
    const street = p.address || "";
    const place = [p.city, [p.state, p.zip].filter(Boolean).join(" ")].filter(Boolean).join(", ");
    return [street, place].filter(Boolean).join(", ");
  }

  const KIND_LABELS = {
    bm25: "words of your request",
    rating: "rating",
    reviews: "reviews",
    experience: "experience",
    intent_term: "intent term",
    anchor_phrase: "phrase",
    negative_term: "off-topic term",
    specialty: "specialty",
    floor: "strong literal match kept",
    reserved_slot: "reserved place",
  };

  function adjustments(result, wantPositive) {
    return (result.adjustments || [])
      .filter((a) => a.kind !== "bm25" && (wantPositive ? a.value > 0 : a.value < 0))
      .map((a) => ({ name: (KIND_LABELS[a.kind] || a.kind) + (a.term ? " “" + a.term + "”" : ""), value: a.value }));
  }

  function card(result, index) {
    const p = result.practitioner || result;
    const name = [p.name, p.credential].filter(Boolean).join(", ");
    const specialties = p.specialties || [p.primary_specialty, ...(p.secondary_specialties || [])].filter(Boolean);
    const score = typeof result.score === "number" ? result.score : result.final_score;
    const found =
      result.source === "intent_fill"
        ? "Found through the intent terms (your own words matched no profile)"
        : result.source === "specialty_fill"
          ? "A practitioner of a specialty your request points to"
          : typeof result.bm25 === "number"
          ? "Your words matched the profile (BM25 " + result.bm25.toFixed(2) + ")"
          : null;
    const extra = [];
    if (typeof result.years_of_experience === "number") extra.push(result.years_of_experience + " years of experience");
    if (result.proximity) extra.push(String(result.proximity).replace("_", " "));
    return el(
      "li",
      { class: "result", "aria-labelledby": "result-" + index },
      typeof score === "number" ? el("span", { class: "score" }, "score " + score.toFixed(2)) : null,
      el("h3", { id: "result-" + index }, (index + 1) + ". " + (name || "Unnamed practitioner")),
      specialties.length ? el("p", { class: "specialty" }, specialties.join(" · ")) : null,
      result.specialty_definition ? el("p", { class: "definition" }, result.specialty_definition) : null,
      p.organisation || p.organization ? el("p", { class: "where" }, p.organisation || p.organization) : null,
      address(p) ? el("p", { class: "where" }, address(p)) : null,
      el("p", { class: "where" }, ["NPI " + p.npi, ...extra].join(" · ")),
      el(
        "dl",
        { class: "reasons", "aria-label": "Why this practitioner" },
        found ? [el("dt", {}, "Match"), el("dd", {}, found)] : [],
        reasonRow("Matched intent terms", result.matched_intent_terms || result.matched_terms, ""),
        reasonRow("Matched phrases", result.matched_anchor_phrases, "plus"),
        reasonRow("Boosts", adjustments(result, true), "plus"),
        reasonRow("Penalties", adjustments(result, false), "minus"),
        result.matched_intent ? [el("dt", {}, "Matched intent"), el("dd", {}, result.matched_intent)] : []
      ),
      (result.explanation || []).length
        ? el(
            "details",
            { class: "explanation" },
            el("summary", {}, "Why here, step by step"),
            el("ul", {}, result.explanation.map((line) => el("li", {}, line)))
          )
        : null
    );
  }

  function renderEmergency(info) {
    clear(emergency);
    if (info) {
      const title = info.level === "crisis" ? "If you are in crisis" : "This may be an emergency";
      emergency.append(el("h2", {}, title), el("p", {}, info.guidance));
    }
    show(emergency, Boolean(info));
  }

  function render(response) {
    renderEmergency(response.emergency);
    const results = response.results || [];
    clear(ui.list);
    results.forEach((result, index) => ui.list.append(card(result, index)));
    if (!results.length) ui.list.append(el("li", { class: "notice" }, "No practitioner in the directory matches this request."));
    const notes = [];
    if (response.reason) notes.push(response.reason);
    if (response.filled_from_intent && response.fill_reason) notes.push(response.fill_reason);
    if (Array.isArray(response.notes)) notes.push(...response.notes);
    ui.note.textContent = notes.join(" ");
    show(ui.note, notes.length > 0);
    show(ui.results, true);
    renderIntent({ ...response.intent, specialties: response.specialties }, response.analysis_used);
  }

  function intentRow(label, value) {
    if (value === undefined || value === null || value === "" || (Array.isArray(value) && !value.length)) return [];
    let shown;
    if (Array.isArray(value)) shown = el("ul", { class: "chips" }, value.map((v) => chip(v, "")));
    else if (typeof value === "object") shown = Object.entries(value).filter(([, v]) => v !== null && v !== "" && !(Array.isArray(v) && !v.length)).map(([k, v]) => k + ": " + (Array.isArray(v) ? v.join(", ") : typeof v === "object" ? JSON.stringify(v) : v)).join(" · ");
    else shown = typeof value === "boolean" ? (value ? "yes" : "no") : String(value);
    return [el("dt", {}, label), el("dd", {}, shown)];
  }

  function analysisText(used) {
    if (!used || typeof used !== "object") return null;
    return Object.entries(used)
      .map(([name, use]) => name + ": " + (use.source || "?") + (use.fallback_reason ? " (" + use.fallback_reason + ")" : ""))
      .join(" · ");
  }

  function renderIntent(intent, analysisUsed) {
    clear(ui.intentList);
    if (!intent) {
      show(ui.intent, false);
      return;
    }
    const general = intent.general || {};
    const clinical = intent.clinical || {};
    const insights = intent.insights || {};
    ui.intentList.append(
      ...intentRow("Your request, cleaned", intent.q_patient),
      ...intentRow("Summary", insights.summary),
      ...intentRow("Clinical intent", clinical.primary_intent),
      ...intentRow("Specificity", general.specificity),
      ...intentRow("Confidence", typeof general.confidence === "number" ? general.confidence.toFixed(2) : general.confidence),
      ...intentRow("Clear request (penalties on)", intent.clear),
      ...intentRow("Intent terms", intent.intent_terms),
      ...intentRow("Anchor phrases", intent.anchor_phrases),
      ...intentRow("Negative terms", intent.negative_terms),
      ...intentRow("Likely subspecialties", clinical.likely_subspecialties || general.likely_subspecialties),
      ...intentRow(
        "Specialties matched",
        (intent.specialties || []).map((m) => ({ name: m.specialty + " (" + m.source + ")", value: m.boost }))
      ),
      ...intentRow("For", insights.population),
      ...intentRow("Location mentioned", insights.location),
      ...intentRow("Symptoms", insights.symptoms),
      ...intentRow("Urgency", insights.urgency),
      ...intentRow("Analysis used", analysisText(analysisUsed))
    );
    show(ui.intent, true);
  }
})();
