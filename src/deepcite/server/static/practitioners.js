/* Practitioner page: sends the request (with the earlier requests of this conversation as messages), shows
   crisis/emergency guidance first, then result cards with their reasons in plain words, and how the request
   was read. A follow-up re-runs the search with every earlier request. */
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

  function address(p) {
    const street = p.address || "";
    const place = [p.city, [p.state, p.zip].filter(Boolean).join(" ")].filter(Boolean).join(", ");
    return [street, place].filter(Boolean).join(", ");
  }

  const PROXIMITY = {
    same_zip: "in your ZIP code",
    same_city: "in your city",
    same_state: "in your state",
    elsewhere: "further away",
  };

  // what a patient reads: who, where, and why in words (the reasons); scores and the pipeline's terms stay in
  // the API (explanation, adjustments, debug)
  function card(result, index) {
    const name = [result.name, result.credential].filter(Boolean).join(", ");
    const specialties = [result.primary_specialty, ...(result.secondary_specialties || [])].filter(Boolean);
    const extra = [];
    if (typeof result.years_of_experience === "number") extra.push(result.years_of_experience + " years of experience");
    if (result.proximity) extra.push(PROXIMITY[result.proximity] || String(result.proximity).replace("_", " "));
    const reasons = result.reasons || [];
    return el(
      "li",
      { class: "result", "aria-labelledby": "result-" + index },
      el("h3", { id: "result-" + index }, (index + 1) + ". " + (name || "Unnamed practitioner")),
      specialties.length ? el("p", { class: "specialty" }, specialties.join(" · ")) : null,
      result.specialty_definition ? el("p", { class: "definition" }, result.specialty_definition) : null,
      result.organisation ? el("p", { class: "where" }, result.organisation) : null,
      address(result) ? el("p", { class: "where" }, address(result)) : null,
      el("p", { class: "where" }, ["NPI " + result.npi, ...extra].join(" · ")),
      reasons.length
        ? el(
            "div",
            { class: "reasons", "aria-label": "Why this practitioner" },
            el("h4", {}, "Why this practitioner"),
            el("ul", {}, reasons.map((line) => el("li", {}, line)))
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
    if (Array.isArray(response.notes)) notes.push(...response.notes);
    ui.note.textContent = notes.join(" ");
    show(ui.note, notes.length > 0);
    show(ui.results, true);
    renderIntent({ ...response.intent, specialties: response.specialties });
  }

  function intentRow(label, value) {
    if (value === undefined || value === null || value === "" || (Array.isArray(value) && !value.length)) return [];
    const shown = Array.isArray(value) ? el("ul", { class: "chips" }, value.map((v) => el("li", { class: "chip" }, v))) : String(value);
    return [el("dt", {}, label), el("dd", {}, shown)];
  }

  const HOW_SOON = {
    crisis: "Now: please use the crisis guidance above",
    emergency: "Now: please use the emergency guidance above",
    urgent: "Soon: within a day or two",
    routine: "A regular appointment",
  };
  const FOR_WHOM = { child: "A child", "older adult": "An older adult", pregnancy: "A pregnancy" };

  function title(text) {
    return text.toLowerCase().replace(/(^|[\s/(])([a-z])/g, (m, a, b) => a + b.toUpperCase());
  }

  // how the request was read, in the patient's terms: their words, whom it is for, how soon, which kinds of
  // practitioner fit (no confidence, terms or boosts)
  function renderIntent(intent) {
    clear(ui.intentList);
    if (!intent) {
      show(ui.intent, false);
      return;
    }
    const insights = intent.insights || {};
    const fitting = (intent.specialties || []).filter((m) => m.boost > 0).map((m) => title(m.specialty));
    ui.intentList.append(
      ...intentRow("Your words", intent.q_patient),
      ...intentRow("For", FOR_WHOM[insights.population] || insights.population),
      ...intentRow("How soon", HOW_SOON[insights.urgency] || insights.urgency),
      ...intentRow("Kinds of practitioner that fit", [...new Set(fitting)]),
      ...intentRow("Place mentioned", insights.location)
    );
    show(ui.intent, true);
  }
})();
