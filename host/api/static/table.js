// The live table page (cardshoe/api/page.py). No framework: it signs in for a session
// cookie, follows /events with EventSource, and redraws from GET /status and
// GET /rounds/{id} after each burst of events. It keeps no history of its own beyond a
// bounded event log, so a page open for a whole shift holds bounded memory.
"use strict";

const SUIT_SYMBOL = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
const LOG_MAX = 50;        // event log lines kept
const HISTORY_MAX = 200;   // earlier rounds listed
const SVG_NS = "http://www.w3.org/2000/svg";

const state = {
  session: null,       // {roles, csrf}
  lastId: null,        // last event id seen (for resuming the stream)
  source: null,        // the EventSource
  viewing: null,       // a round id opened from the history (null: follow the live round)
  current: null,       // the live round id
  refreshTimer: null,
  shoeFlags: { integrity: null, faults: null },
  jackpot: null,
  floor: null,
};

const $ = (id) => document.getElementById(id);

// Cards arrive as text ("As"); null when face down in the pit view (or unread).
function cardText(card) {
  return typeof card === "string" ? card : null;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// One card as placed: drawn (SVG) and as text. A face-down card has no value in the data
// the page received (the pit view), so it is drawn as a back.
function drawCard(index, card, placeLabel) {
  const text = cardText(card);
  const box = el("div", { class: "card", "data-index": index, "data-place": placeLabel, "data-card": text || "" });
  const pic = svg("svg", { viewBox: "0 0 50 70", role: "img", "aria-label": text || "face down" });
  if (text) {
    const suit = text[1];
    const red = suit === "d" || suit === "h";
    pic.append(svg("rect", { x: 1, y: 1, width: 48, height: 68, rx: 5, fill: "#fff", stroke: "#333" }));
    const colour = red ? "#c00" : "#111";
    pic.append(svg("text", { x: 5, y: 17, "font-size": 15, fill: colour, "font-family": "sans-serif" }, text[0]));
    pic.append(svg("text", { x: 25, y: 50, "font-size": 26, fill: colour, "text-anchor": "middle" }, SUIT_SYMBOL[suit]));
  } else {
    pic.append(svg("rect", { x: 1, y: 1, width: 48, height: 68, rx: 5, fill: "#236", stroke: "#9cf" }));
    pic.append(svg("path", { d: "M8 8 L42 62 M42 8 L8 62", stroke: "#9cf", "stroke-width": 2 }));
  }
  box.append(pic, el("span", { class: "text" }, text ? `${index}: ${text}` : `${index}: face down`));
  return box;
}

async function api(method, path, body) {
  const headers = { "Accept": "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET" && state.session && state.session.csrf) headers["X-CSRF-Token"] = state.session.csrf;
  const r = await fetch(path, { method, headers, credentials: "same-origin",
                                body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await r.json().catch(() => ({}));
  if (!r.ok) {
    const d = data.detail || {};
    throw new Error(`${r.status} ${d.error || ""}: ${d.field || ""} ${d.message || r.statusText}`);
  }
  return data;
}

function pitOnly() {
  return !state.session.roles.some((r) => r === "surveillance" || r === "controller") || $("pit-only").checked;
}

function viewParam() {
  return pitOnly() ? "view=pit" : "view=all";
}

// -- sign-in ---------------------------------------------------------------------------
async function start() {
  const s = await api("GET", "/session");
  if (!s.signed_in) {
    $("sign-in").hidden = false;
    $("live").hidden = true;
    return;
  }
  state.session = s;
  $("sign-in").hidden = true;
  $("live").hidden = false;
  $("sign-out").hidden = false;
  $("roles").textContent = "roles: " + s.roles.join(", ");
  $("view-choice").hidden = pitOnlyByRole();
  badge();
  await refresh();
  await loadHistory();
  openStream();
}

function pitOnlyByRole() {
  return !state.session.roles.some((r) => r === "surveillance" || r === "controller");
}

function badge() {
  const b = $("view-badge");
  b.textContent = pitOnly() ? "PIT VIEW (public cards only)" : "SURVEILLANCE (every card)";
  b.className = "badge " + (pitOnly() ? "pit" : "surveillance");
}

$("sign-in-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const input = $("token");
  try {
    await api("POST", "/session", { token: input.value });
    input.value = "";
    $("sign-in-error").textContent = "";
    await start();
  } catch (e) {
    $("sign-in-error").textContent = e.message;
  }
});

$("sign-out").addEventListener("click", async () => {
  try { await api("DELETE", "/session"); } finally { location.reload(); }
});

$("pit-only").addEventListener("change", () => {
  badge();
  if (state.source) state.source.close();
  state.source = null;
  refresh();
  openStream();
});

$("back-live").addEventListener("click", (ev) => {
  ev.preventDefault();
  state.viewing = null;
  refresh();
});

// -- the stream ------------------------------------------------------------------------
function openStream() {
  // Resume after the last event seen: EventSource sends Last-Event-ID itself when it
  // reconnects; after a refused reconnect (daemon restarting) a new source takes `after`.
  const after = state.lastId === null ? "" : `&after=${state.lastId}`;
  const src = new EventSource(`/events?${viewParam()}${after}`);
  state.source = src;
  src.onopen = () => { $("stream").textContent = "live"; $("stream").className = ""; scheduleRefresh(); };
  src.onmessage = onEvent;
  src.onerror = () => {
    $("stream").textContent = "reconnecting";
    $("stream").className = "bad";
    if (src.readyState === EventSource.CLOSED) {
      setTimeout(() => { if (state.source === src) openStream(); }, 1000);
    }
  };
  // Named events (the daemon sends `event: <type>`): listen to every type we draw from.
  for (const type of KNOWN_TYPES) src.addEventListener(type, onEvent);
}

const KNOWN_TYPES = [
  "card_placed", "card_not_due", "hand_complete", "flagged", "flag_resolved", "hands_rebuilt", "seat_voided",
  "round_voided", "round_opened", "wager_accepted", "bets_closed", "decision_recorded", "exposure_recorded",
  "round_settled", "settlement", "count_checked", "link_up", "link_lost", "shoe_hello", "shoe_loaded",
  "daemon_started", "table_setup", "shoe_verified", "shoe_challenged", "jackpot_pool", "overflow",
  "maintenance_requested", "command_reply", "window_adopted", "silent_shoe", "shoe_silent", "shoe_silent_cleared", "shoe_version_mismatch", "alarm",
  "port_unavailable", "shoe_deck_status", "consistency", "card_after_void", "key_after_void", "input_refused",
];

function onEvent(ev) {
  if (ev.lastEventId) state.lastId = Number(ev.lastEventId);
  let msg = null;
  try { msg = JSON.parse(ev.data); } catch (e) { return; }
  const data = msg.data || {};
  if (data.type === "shoe_hello") state.shoeFlags = { integrity: data.integrity, faults: data.faults };
  if (data.type === "jackpot_pool" && Number.isInteger(data.amount)) state.jackpot = data.amount;
  logLine(msg);
  if (data.type === "round_opened" || data.type === "round_settled" || data.type === "round_voided") loadHistory();
  scheduleRefresh();
}

function logLine(msg) {
  const d = msg.data || {};
  const parts = [`#${msg.id}`, d.type || msg.kind];
  if (d.place) parts.push(`${d.place.kind}${d.place.seat ? " " + d.place.seat : ""} #${d.place.number}`);
  if (d.card !== undefined) parts.push(cardText(d.card) || "face down");
  if (d.rules) parts.push("rules " + d.rules.join(", "));
  const log = $("log");
  log.prepend(el("li", {}, parts.join(" ")));
  while (log.childElementCount > LOG_MAX) log.lastElementChild.remove();
}

function scheduleRefresh() {
  if (state.refreshTimer !== null) return;
  state.refreshTimer = setTimeout(() => { state.refreshTimer = null; refresh(); }, 120);
}

// -- drawing ---------------------------------------------------------------------------
async function refresh() {
  let status;
  try {
    status = await api("GET", "/status");
  } catch (e) {
    $("link").textContent = "daemon unreachable";
    $("link").className = "bad";
    return;
  }
  drawStatus(status);
  state.current = status.current_round;
  const rid = state.viewing || status.current_round || latestRound();
  if (!rid) return;
  try {
    const snap = await api("GET", `/rounds/${encodeURIComponent(rid)}?${viewParam()}&classes=true`);
    drawRound(snap, status);
  } catch (e) {
    $("round-id").textContent = `${rid} (${e.message})`;
  }
}

function latestRound() {
  const first = $("history").querySelector("a[data-round]");
  return first ? first.getAttribute("data-round") : null;
}

function drawStatus(s) {
  $("table-name").textContent = s.table;
  $("game").textContent = `${s.game}, ${s.seats} seats`;
  $("link").textContent = s.link_up ? `up (${s.port})` : `DOWN (${s.port})`;
  $("link").className = s.link_up ? "" : "bad";
  // The daemon's alarms (a silent shoe, the port), each with its message.
  const alarms = (Array.isArray(s.alarms) ? s.alarms : []).map((a) => a.message || a.type || JSON.stringify(a));
  if (s.journal_failed) alarms.push(`journal failed: ${s.journal_failed}`);
  // A linked table whose floor is away says so: progressive wagers are refused meanwhile.
  if (s.floor && s.floor.message) alarms.push(s.floor.message);
  // A linked table shows the floor's pool, never one of its own (issue 14).
  state.floor = s.floor || null;
  if (state.floor && state.floor.link) state.jackpot = state.floor.online ? state.floor.pool : null;
  for (const [shoe, v] of Object.entries(s.version_mismatch || {})) alarms.push(`shoe ${shoe}: ${v.message}`);
  $("alarms").textContent = alarms.length ? alarms.join("; ") : "none";
  $("alarms").className = alarms.length ? "bad" : "";
  const shoe = s.shoe === null || s.shoe === undefined ? null : (s.shoes || {})[String(s.shoe)];
  $("dealt").textContent = shoe ? `${Math.max(0, shoe.next_index - 1)} (shoe no. ${shoe.shoe_no}, deck ${shoe.deck_id})` : "-";
  const f = state.shoeFlags;
  const faults = shoe && Array.isArray(shoe.faults) ? shoe.faults : null;
  $("integrity").textContent = f.integrity === null ? "-" : (f.integrity ? `0x${f.integrity.toString(16)} (set)` : "ok");
  $("integrity").className = f.integrity ? "bad" : "";
  if (faults !== null) {
    $("faults").textContent = faults.length ? faults.join(", ") : "none";
    $("faults").className = faults.length ? "bad" : "";
  } else {
    $("faults").textContent = f.faults === null ? "-" : (f.faults ? `0x${f.faults.toString(16)}` : "none");
    $("faults").className = f.faults ? "bad" : "";
  }
}

function placeLabel(p) {
  if (p.kind === "seat") return `seat ${p.seat}`;
  return p.kind;
}

function drawRound(snap, status) {
  $("round-id").textContent = snap.round_id;
  $("round-status").textContent = snap.void ? "void" : snap.status;
  // The history lists each round's state as it was loaded: keep the shown round's current.
  const item = $("history").querySelector(`li[data-round="${CSS.escape(snap.round_id)}"] .status`);
  if (item) item.textContent = snap.void ? "void" : snap.status;
  $("history-note").hidden = state.viewing === null;
  const pool = snap.jackpot_pool !== null && snap.jackpot_pool !== undefined ? snap.jackpot_pool : state.jackpot;
  const linked = state.floor && state.floor.link;
  $("jackpot").textContent = pool === null || pool === undefined
    ? (linked && !state.floor.online ? "floor unreachable" : "-")
    : money(pool) + (linked ? ` (link ${state.floor.link})` : "");
  const settlement = snap.settlement || null;
  // Seats 1..N from the dealer's left (drawn right to left as the dealer faces the players).
  const seats = $("seats");
  seats.replaceChildren();
  const wagers = snap.wagers || {};
  for (let n = 1; n <= status.seats; n++) {
    const w = wagers[String(n)] || {};
    const area = el("div", { class: "area seat" + (Object.keys(w).length ? " active" : "") +
                                    ((snap.void_seats || {})[String(n)] ? " void" : ""),
                             id: `seat-${n}`, "data-seat": n },
      el("h3", {}, n === 1 ? "Seat 1 (dealer's left)" : `Seat ${n}`));
    const list = el("ul", { class: "wagers" });
    for (const [name, amount] of Object.entries(w)) list.append(el("li", {}, `${name} ${money(amount)}`));
    area.append(list, el("div", { class: "cards" }), el("div", { class: "hand" }));
    seats.append(area);
  }
  for (const id of ["area-dealer", "area-community", "area-burn"]) {
    $(id).querySelector(".cards").replaceChildren();
    const h = $(id).querySelector(".hand");
    if (h) h.textContent = "";
  }
  const cards = snap.cards || {};
  for (const [index, place] of Object.entries(snap.placements || {})) {
    const card = cards[index] || {};
    let target;
    if (place.kind === "seat") target = $(`seat-${place.seat}`);
    else if (place.kind === "dealer") target = $("area-dealer");
    else if (place.kind === "community") target = $("area-community");
    else target = $("area-burn");
    if (!target) continue;
    target.querySelector(".cards").append(drawCard(index, card.card, placeLabel(place)));
  }
  // Hands with their class once complete (as far as this view shows their cards), then as
  // the settlement ranks them.
  const classes = snap.hand_classes || {};
  for (const [label, cardsOfHand] of Object.entries(snap.hands || {})) {
    const target = label === "dealer" ? $("area-dealer") : $(`seat-${label.replace("seat ", "")}`);
    const h = target && target.querySelector(".hand");
    if (!h) continue;
    h.textContent = classes[label] || (cardsOfHand.length ? `${cardsOfHand.length} cards` : "");
  }
  if (settlement) {
    if (settlement.dealer && $("area-dealer")) {
      $("area-dealer").querySelector(".hand").textContent =
        `${settlement.dealer.hand || ""}${settlement.dealer.qualifies === false ? " (does not qualify)" : ""}`;
    }
    for (const s of settlement.seats || []) {
      const h = $(`seat-${s.seat}`) && $(`seat-${s.seat}`).querySelector(".hand");
      if (h) h.textContent = Object.values(s.hands || {}).map((x) => x.hand).join(", ");
    }
  }
  drawFlags(snap);
  drawSettlement(settlement);
}

function money(minor) {
  return (minor / 100).toFixed(2);
}

const WAITING = {
  pending: "a count of the positions (controller)",
  reconstruction_proposed: "a supervisor to confirm the reconstruction",
  placement_proposed: "a supervisor to confirm a placement",
  referred: "the shift manager",
};

function drawFlags(snap) {
  const list = $("flags");
  list.replaceChildren();
  const flags = snap.irregularities || [];
  $("no-flags").hidden = flags.length > 0;
  const supervisor = state.session.roles.includes("supervisor") && state.viewing === null;
  for (const f of flags) {
    const li = el("li", { "data-flag": f.id, "data-decision": f.decision },
      el("strong", {}, `#${f.id} ${f.kind}`), " ",
      el("span", { class: "flag-rules" }, `rules ${(f.rules || []).join(", ")}`), ` - ${f.detail || ""} `,
      el("em", {}, WAITING[f.decision] ? `waits for ${WAITING[f.decision]}` : `decision: ${f.decision}`));
    if (f.resolved_by) li.append(` (by ${f.resolved_by})`);
    const ev = (f.evidence || []).map((e) => `#${e.index} ${cardText(e.card) || "face down"}`);
    if (ev.length) li.append(el("div", { class: "evidence" }, "evidence: " + ev.join(", ")));
    if (f.proposal && f.proposal.length) {
      li.append(el("div", { class: "evidence" }, "proposal: " +
        f.proposal.map(([i, p]) => `#${i} -> ${placeLabel(p)} ${p.number}`).join(", ")));
    }
    if (supervisor && (f.decision === "reconstruction_proposed" || f.decision === "placement_proposed" ||
                       f.decision === "referred")) {
      const yes = el("button", { class: "confirm", "data-flag": f.id }, "Confirm");
      const no = el("button", { class: "reject", "data-flag": f.id }, "Reject");
      yes.addEventListener("click", () => confirmFlag(snap.round_id, f, true));
      no.addEventListener("click", () => confirmFlag(snap.round_id, f, false));
      li.append(" ", yes, " ", no, el("span", { class: "error" }));
    }
    list.append(li);
  }
}

async function confirmFlag(rid, flag, confirmed) {
  const who = $("supervisor-name").value.trim();
  const li = document.querySelector(`li[data-flag="${flag.id}"]`);
  const err = li && li.querySelector(".error");
  if (!who) { if (err) err.textContent = " enter the supervisor's name"; return; }
  try {
    await api("POST", `/rounds/${encodeURIComponent(rid)}/confirmations`,
              { flag: flag.id, confirmed, supervisor: who });
    scheduleRefresh();
  } catch (e) {
    if (err) err.textContent = " " + e.message;
  }
}

function drawSettlement(settlement) {
  const body = $("settlement").querySelector("tbody");
  body.replaceChildren();
  $("no-settlement").hidden = !!settlement;
  if (!settlement) return;
  for (const s of settlement.seats || []) {
    for (const w of s.wagers || []) {
      body.append(el("tr", { "data-seat": s.seat, "data-wager": w.wager },
        el("td", {}, s.seat), el("td", {}, w.wager), el("td", { class: "stake" }, money(w.stake)),
        el("td", { class: "outcome" }, w.outcome), el("td", { class: "paid", "data-minor": w.paid }, money(w.paid)),
        el("td", { class: "net", "data-minor": w.net }, money(w.net)), el("td", {}, (w.rules || []).join(", "))));
    }
  }
}

async function loadHistory() {
  let data;
  try { data = await api("GET", `/rounds?limit=${HISTORY_MAX}`); } catch (e) { return; }
  const list = $("history");
  list.replaceChildren();
  for (const r of data.rounds) {
    const a = el("a", { href: "#", "data-round": r.round_id }, r.round_id);
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      state.viewing = r.round_id === state.current ? null : r.round_id;
      refresh();
    });
    list.append(el("li", { "data-round": r.round_id }, a, " ", el("span", { class: "status" }, r.void ? "void" : r.status)));
  }
}

start().catch((e) => { document.body.prepend(el("p", { class: "error" }, "cardshoe page: " + e.message)); });
