// The live table page (cardshoe/api/page.py). No framework: it signs in for a session
// cookie, follows /events with EventSource, and redraws from GET /status and
// GET /rounds/{id} after each burst of events. It keeps no history of its own beyond a
// bounded event log, so a page open for a whole shift holds bounded memory.
//
// What a reader may see is decided by the server (the pit view: a face-down card's value is
// never sent). When a surveillance officer ticks "pit view", the page drops everything it
// holds and reads it all again with ?view=pit; answers asked for before the tick are thrown
// away when they arrive (`state.gen`).
"use strict";

const SUIT_SYMBOL = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
const LOG_MAX = 60;        // event log lines kept
const HISTORY_MAX = 200;   // earlier rounds listed
const BACKFILL = 400;      // journal entries read back to fill the event log (at open, a new view or journal)
const POLL_MS = 5000;      // /status is read at least this often (alarms whose events the page does not know)
const SVG_NS = "http://www.w3.org/2000/svg";

const GAME_NAMES = {
  "three-card-poker": "Three Card Poker",
  "megalink-three-card-poker": "Megalink Three Card Poker",
  "megalink-three-card-poker-xtreme": "Megalink Three Card Poker Xtreme",
  "megalink-let-it-ride": "Megalink Let It Ride",
  "megalink-singapore-stud-poker": "Megalink Singapore Stud Poker",
};
const WAGER_NAMES = {
  ante: "Ante", play: "Play", bet: "Bet", pair_plus: "Pair Plus", six_card_bonus: "6-Card Bonus",
  progressive: "Progressive", one: "Bet 1", two: "Bet 2", dollar: "Bet $", ante_bonus: "Ante bonus",
  envy_bonus: "Envy bonus",
};
// In a seat's box, where a line has 120 pixels: shorter names (the full one is its tooltip).
const WAGER_SHORT = { progressive: "Prog.", six_card_bonus: "6-Card" };
const CHOICE_NAMES = {
  play: "played", fold: "folded", bet: "bet", pull_1: "pulled back 1", ride_1: "let 1 ride",
  pull_2: "pulled back 2", ride_2: "let 2 ride", decline_comparison: "declined comparison",
};
const WAITING = {
  pending: "a count of the positions by the dealer (controller)",
  reconstruction_proposed: "a supervisor to confirm the reconstruction",
  placement_proposed: "a supervisor to pick a placement",
  referred: "the shift manager",
};
const OPEN_DECISIONS = new Set(Object.keys(WAITING));
const KEY_NAMES = { 1: "new round", 2: "deal complete", 3: "exposure", 4: "end of shoe" };

const state = {
  session: null,       // {roles, csrf}
  gen: 0,              // bumped when the view or the journal changes: older answers are dropped
  lastId: null,        // last event id seen (for resuming the stream)
  source: null,        // the EventSource
  journal: null,       // the journal id the page follows (a new one: a new gaming day)
  viewing: null,       // {journal, round} opened from the history (null: follow the live round)
  current: null,       // the live round id
  status: null,        // the last /status
  currency: { code: "", minor_per_major: 100 },
  layoutKey: null,     // what the layout frame was drawn for
  refreshing: false, again: false, refreshTimer: null, historyStale: true,
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v; else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// Cards arrive as text ("As"); null when face down in the pit view (or unread).
function cardText(card) {
  return typeof card === "string" ? card : null;
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

// Amounts are integers in minor units: formatted with integer arithmetic, the currency and
// thousands separators ("SGD 1,250.00"). `sign` puts "+" on a gain (nets).
function money(minor, sign, bare) {
  if (!Number.isInteger(minor)) return "-";
  const per = state.currency.minor_per_major || 1;
  const digits = String(per - 1).length * (per > 1 ? 1 : 0);
  const abs = Math.abs(minor);
  const major = Math.floor(abs / per).toLocaleString("en-US");
  const rest = digits ? "." + String(abs % per).padStart(digits, "0") : "";
  const prefix = minor < 0 ? "-" : (sign && minor > 0 ? "+" : "");
  return bare ? `${prefix}${major}${rest}` : `${prefix}${state.currency.code} ${major}${rest}`.trim();
}

function clock(tNs) {
  if (!tNs) return "";
  const d = new Date(Math.floor(tNs / 1e6));
  return d.toLocaleTimeString("en-GB", { hour12: false });
}

function hex(n, width) {
  return Number.isInteger(n) ? n.toString(16).toUpperCase().padStart(width || 8, "0") : "-";
}

// One card as placed: drawn (SVG, rank and suit at the corner so a fanned hand still shows
// them) with its shoe index under it. A face-down card has no value in the data the page
// received (the pit view), so it is drawn as a back.
function drawCard(index, card, placeLabel) {
  const text = cardText(card);
  const box = el("div", { class: "card", "data-index": index, "data-place": placeLabel, "data-card": text || "",
                          title: text ? `card ${index}, ${placeLabel}: ${text}` : `card ${index}, ${placeLabel}: face down` });
  const label = text ? `card ${index}: ${text[0]} of ${{ c: "clubs", d: "diamonds", h: "hearts", s: "spades" }[text[1]]}`
                     : `card ${index}: face down`;
  const pic = svg("svg", { viewBox: "0 0 50 70", role: "img", "aria-label": label });
  if (text) {
    const red = text[1] === "d" || text[1] === "h";
    const colour = red ? "#c00" : "#111";
    pic.append(svg("rect", { x: 1, y: 1, width: 48, height: 68, rx: 5, fill: "#fff", stroke: "#333" }));
    pic.append(svg("text", { x: 4, y: 25, "font-size": 25, "font-weight": "bold", fill: colour,
                             "font-family": "sans-serif" }, text[0] === "T" ? "10" : text[0]));
    pic.append(svg("text", { x: 5, y: 52, "font-size": 27, fill: colour }, SUIT_SYMBOL[text[1]]));
  } else {
    pic.append(svg("rect", { x: 1, y: 1, width: 48, height: 68, rx: 5, fill: "#1d3f7a", stroke: "#9cf" }));
    pic.append(svg("path", { d: "M8 8 L42 62 M42 8 L8 62", stroke: "#9cf", "stroke-width": 2 }));
  }
  box.append(pic, el("span", { class: "idx" }, `#${index}`));
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
    const err = new Error(`${d.message || r.statusText}${d.rule ? ` (rule ${d.rule})` : ""}`);
    err.status = r.status;
    throw err;
  }
  return data;
}

function seesFaceDown() {
  return state.session.roles.some((r) => r === "surveillance" || r === "controller");
}

function pitOnly() {
  return !seesFaceDown() || $("pit-only").checked;
}

function viewParam() {
  return pitOnly() ? "view=pit" : "view=all";
}

function isSupervisor() {
  return state.session.roles.includes("supervisor");
}

// -- sign-in ---------------------------------------------------------------------------
async function start() {
  let s;
  try { s = await api("GET", "/session"); } catch (e) { s = { signed_in: false }; }
  if (!s.signed_in) {
    showSignIn();
    return;
  }
  state.session = s;
  $("sign-in").hidden = true;
  $("live").hidden = false;
  $("sign-out").hidden = false;
  $("roles").textContent = "roles: " + s.roles.join(", ");
  $("view-choice").hidden = !seesFaceDown();
  $("supervisor-box").hidden = !isSupervisor();
  badge();
  await refresh();
  if (!state.source) openStream(backfillFrom());
  setInterval(() => scheduleRefresh(), POLL_MS);
}

// Nothing of the table is shown, or even drawn, before a session is open.
function showSignIn() {
  $("live").hidden = true;
  $("sign-out").hidden = true;
  $("view-choice").hidden = true;
  for (const id of ["table-name", "game", "day", "roles", "view-badge"]) $(id).textContent = "";
  $("view-badge").className = "badge";
  $("sign-in").hidden = false;
  $("token").focus();
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
    input.value = "";
    $("sign-in-error").textContent = e.status === 401 ? "Not a token of this table." : e.message;
    showSignIn();
  }
});

$("sign-out").addEventListener("click", async () => {
  try { await api("DELETE", "/session"); } finally { location.reload(); }
});

// The pit view switch: drop everything held (cards, flags, settlement, the log) at once, then
// read it all again in the new view, the stream included.
$("pit-only").addEventListener("change", () => {
  state.gen += 1;
  closeStream();
  clearHeld();
  badge();
  logMarker(pitOnly() ? "pit view: the page was cleared and read again with public cards only"
                      : "surveillance view: every card");
  openStream(backfillFrom());
  scheduleRefresh(0);
});

$("back-live").addEventListener("click", (ev) => {
  ev.preventDefault();
  state.viewing = null;
  scheduleRefresh(0);
});

// -- the stream ------------------------------------------------------------------------
function backfillFrom() {
  const last = state.status && state.status.journal ? state.status.journal.last_entry : state.lastId;
  return Number.isInteger(last) ? Math.max(0, last - BACKFILL) : null;
}

function closeStream() {
  if (state.source) state.source.close();
  state.source = null;
}

function openStream(after) {
  // Every event arrives as an unnamed message (`names=false`), whatever its type, so an
  // alarm or event this page does not know still reaches it. Resume after the last event
  // seen: EventSource sends Last-Event-ID itself when it reconnects; after a refused
  // reconnect (daemon restarting) a new source takes `after`.
  const from = after !== null && after !== undefined ? after : state.lastId;
  const gen = state.gen;
  const src = new EventSource(`/events?${viewParam()}&names=false${from === null ? "" : `&after=${from}`}`);
  state.source = src;
  src.onopen = () => {
    $("stream").textContent = "live";
    $("stream-state").className = "muted";
    scheduleRefresh(0);  // after a restart: the journal may be a new one
  };
  src.onmessage = (ev) => { if (state.source === src && gen === state.gen) onEvent(ev); };
  src.onerror = () => {
    if (state.source !== src) return;
    $("stream").textContent = "reconnecting";
    $("stream-state").className = "error";
    if (src.readyState === EventSource.CLOSED) {
      setTimeout(() => { if (state.source === src) openStream(null); }, 1000);
    }
  };
}

function onEvent(ev) {
  let msg = null;
  try { msg = JSON.parse(ev.data); } catch (e) { return; }
  if (ev.lastEventId) state.lastId = Number(ev.lastEventId);
  const data = msg.data || {};
  if (data.type === "round_opened" && msg.round_id && state.viewing === null) state.current = msg.round_id;
  logLine(msg);
  if (["round_opened", "round_settled", "round_voided", "settlement"].includes(data.type)) state.historyStale = true;
  scheduleRefresh();
}

function logLine(msg) {
  const log = $("log");
  const item = el("li", { "data-id": msg.id }, el("span", { class: "t" }, clock(msg.t_ns)), describe(msg));
  log.prepend(item);
  while (log.childElementCount > LOG_MAX) log.lastElementChild.remove();
}

function logMarker(text) {
  $("log").prepend(el("li", { class: "marker" }, text));
}

function placeLabel(p) {
  if (!p) return "?";
  if (p.kind === "seat") return `seat ${p.seat}`;
  return p.kind;
}

function placeText(p) {
  if (!p) return "";
  return `${placeLabel(p)} card ${p.number}`;
}

// An event in a person's words (its type for those the page has no words for).
function describe(msg) {
  const d = msg.data || {};
  const type = d.type || msg.kind;
  const card = (c) => cardText(c) || "face down";
  const rid = msg.round_id && msg.round_id !== state.current ? `${msg.round_id}: ` : "";
  switch (type) {
    case "card_placed": return `${rid}card ${d.index} to ${placeText(d.place)} (${card(d.card)})`;
    case "card_not_due": return `${rid}card ${d.index} NOT DUE (${card(d.card)})`;
    case "round_opened": return `round ${msg.round_id} opened: place your bets`;
    case "wager_accepted": return `${rid}seat ${d.seat} ${WAGER_NAMES[d.wager] || d.wager} ${money(d.amount)}`;
    case "bets_closed": return `${rid}no more bets`;
    case "decision_recorded": return `${rid}seat ${d.seat} ${CHOICE_NAMES[d.choice] || d.choice} (decision_recorded)`;
    case "hand_complete": return `${rid}${d.position ? placeLabel(d.position) : "hand"} complete`;
    case "flagged": case "flag_resolved": {
      const f = d.irregularity || {};
      return `${rid}flag #${f.id} ${f.kind} (rules ${(f.rules || []).join(", ")}): ${f.decision}`;
    }
    case "round_voided": return `${rid}ROUND VOID (rules ${(d.rules || []).join(", ")}): ${d.reason || ""}`;
    case "seat_voided": return `${rid}seat ${d.seat} void (rules ${(d.rules || []).join(", ")})`;
    case "settlement": {
      const t = d.settlement && d.settlement.totals;
      return `${rid}settled${t ? `: net to players ${money(t.net, true)}` : ""}`;
    }
    case "input_refused": return `${rid}REFUSED ${d.op || d.action || ""}: ${d.message || d.error || ""}`;
    case "shoe_key": return `shoe key: ${KEY_NAMES[d.key] || d.key}`;
    case "card_after_void": return `${rid}card ${d.index} AFTER THE VOID (${card(d.card)}), referred`;
    case "key_after_void": return `${rid}shoe key ${d.key_name || d.key} AFTER THE VOID, referred`;
    case "count_checked": return `${rid}count at ${(d.point || "").replace("_", " ")}: ${d.dealt} of ${plural(d.expected, "card", "cards")}`;
    case "hands_rebuilt": return `${rid}hands rebuilt (flag #${d.flag})`;
    case "round_settled": return `${rid}round closed${d.void ? " (void: wagers returned)" : ""}`;
    case "deck_status": return `shoe status: ${d.dealt} dealt, ${d.remaining} left` +
      (d.integrity ? `, integrity ${d.integrity}` : "");
    case "shoe_loaded": return `shoe no. ${d.shoe_no} loaded (deck ${hex(d.deck_id)})`;
    case "referral_acknowledged": return `referral #${d.entry} seen by ${d.by}, referred`;
    case "daemon_started": return "daemon started";
    // The gaming day's rollover (issue 25): the old day closed, the new one opened, the shoe carried over.
    case "day_closed": return `gaming day ${d.gaming_day || ""} closed`;
    case "day_opened": return `gaming day ${d.gaming_day || ""} opened (${d.file || "a new journal"})`;
    case "day_handover": return d.direction === "in" ? `handed over from ${d.from_day || "the day before"}`
      : `handed over to ${d.to_day || "the next day"}`;
    case "shoe_taken_over": return `shoe no. ${d.shoe_no} carried over from ${d.from_day || "the day before"}, next card ${d.next_index}`;
    default: {
      const text = d.message || d.detail || "";
      return `${rid}${type}${text ? ": " + text : ""}`;
    }
  }
}

function scheduleRefresh(delay) {
  if (state.refreshTimer !== null) {
    if (delay !== 0) return;
    clearTimeout(state.refreshTimer);
  }
  state.refreshTimer = setTimeout(() => { state.refreshTimer = null; refresh(); }, delay === 0 ? 0 : 120);
}

// -- drawing ---------------------------------------------------------------------------
// One refresh at a time: a refresh asked for meanwhile runs after it, so an older answer
// can never be drawn over a newer one.
async function refresh() {
  if (state.refreshing) { state.again = true; return; }
  state.refreshing = true;
  try {
    do {
      state.again = false;
      await refreshOnce();
    } while (state.again);
  } finally {
    state.refreshing = false;
  }
}

async function refreshOnce() {
  const gen = state.gen;
  const view = viewParam();
  let status;
  try {
    status = await api("GET", `/status?${view}`);
  } catch (e) {
    if (e.status === 401) { location.reload(); return; }
    $("link").textContent = "daemon unreachable";
    $("link").className = "bad";
    return;
  }
  if (gen !== state.gen) { state.again = true; return; }
  const journal = status.journal ? status.journal.id : null;
  if (state.journal !== null && journal !== state.journal) {
    newJournal(status);
    state.again = true;
    return;
  }
  state.journal = journal;
  state.status = status;
  state.current = status.current_round;
  if (status.currency) state.currency = status.currency;
  drawFrame(status);
  drawStatus(status);
  if (state.historyStale) {
    state.historyStale = false;
    await loadHistory(gen);
    if (gen !== state.gen) { state.again = true; return; }
  }
  const rid = state.viewing ? state.viewing.round : status.current_round;
  let snap = null;
  if (rid) {
    try {
      snap = await api("GET", `/rounds/${encodeURIComponent(rid)}?${view}&classes=true`);
    } catch (e) {
      $("round-state").textContent = `round ${rid}: ${e.message}`;
    }
    if (gen !== state.gen) { state.again = true; return; }
  }
  drawRound(snap, status);
  drawWaiting(status, snap);
}

// A daemon restarted on another journal (a new gaming day): everything held belongs to the
// old one. Round ids may repeat across journals, so nothing is kept.
function newJournal(status) {
  state.gen += 1;
  state.journal = status.journal.id;
  state.viewing = null;
  state.lastId = null;
  state.historyStale = true;
  closeStream();
  clearHeld();
  state.layoutKey = null;
  logMarker(`journal ${status.journal.id} (${status.journal.file}): a new journal, the page follows it`);
  openStream(Math.max(0, (status.journal.last_entry || 0) - BACKFILL));
}

// Empty every part of the page drawn from the table's data.
function clearHeld() {
  for (const c of document.querySelectorAll("#layout .card")) c.remove();
  fillSlots();
  for (const h of document.querySelectorAll("#layout .hand, #layout .net")) h.textContent = "";
  for (const id of ["flags", "waiting", "history", "log"]) $(id).replaceChildren();
  $("settlement").querySelector("tbody").replaceChildren();
  $("settlement").querySelector("tfoot").replaceChildren();
  $("round-state").textContent = "";
  $("integrity").textContent = "-";
  state.layoutKey = state.layoutKey === null ? null : state.layoutKey + "*";  // redraw the frame
}

// The layout's frame: the game's positions with an empty slot for every card each holds
// when every seat plays, drawn once per game and table (before the first round too), so
// nothing moves as cards arrive.
function drawFrame(status) {
  const layout = status.layout || { hand_size: 3, dealer: 3, community: 0, burn: 0, security: 0, wagers: [] };
  const key = JSON.stringify([status.game, status.seats, layout, status.journal && status.journal.id]);
  if (key === state.layoutKey) return;
  state.layoutKey = key;
  $("table-name").textContent = status.table;
  $("game").textContent = `${GAME_NAMES[status.game] || status.game}, ${plural(status.seats, "seat", "seats")}`;
  const root = $("layout");
  root.style.setProperty("--seats", String(status.seats));
  // Five-card hands are fanned (each card shows its rank and suit at the corner).
  root.style.setProperty("--cw", layout.hand_size > 3 ? "30px" : "36px");
  root.style.setProperty("--ch", layout.hand_size > 3 ? "42px" : "50px");
  root.style.setProperty("--overlap", layout.hand_size > 3 ? "11px" : "0px");
  root.style.setProperty("--wager-lines", String(Math.max(2, layout.wagers.length)));
  const row = $("dealer-row");
  row.replaceChildren();
  if (layout.dealer) row.append(area("area-dealer", "dealer", "Dealer", layout.dealer, true));
  if (layout.community) row.append(area("area-community", "community", "Community cards", layout.community, true));
  const burnTitle = [layout.security ? "Security card" : null, layout.burn ? "Burn" : null, "Discards"]
    .filter(Boolean).join(", ");
  row.append(area("area-burn", "burn", burnTitle, layout.security + layout.burn, false));
  const outside = area("area-outside", "outside", "Cards outside the procedure", 0, false);
  outside.hidden = true;
  row.append(outside);
  const seats = $("seats");
  seats.replaceChildren();
  for (let n = 1; n <= status.seats; n++) {
    const a = el("div", { class: "area seat idle", id: `seat-${n}`, "data-seat": n, "data-slots": layout.hand_size,
                          title: n === 1 ? "seat 1: on the dealer's left" : null },
      el("h3", {}, el("span", {}, `Seat ${n}`), el("span", { class: "chip" }, "")),
      el("div", { class: "cards" }), el("div", { class: "hand" }), el("ul", { class: "wagers" }),
      el("div", { class: "net" }));
    seats.append(a);
  }
  fillSlots();
  const rules = $("void-rules");
  rules.replaceChildren(...["6.1", "5.1", "5.2", "5.4"].map((r) => el("option", { value: r })));
}

function area(id, kind, title, slots, hand) {
  return el("div", { class: `area ${kind}`, id, "data-slots": slots },
    el("h3", {}, el("span", {}, title)), el("div", { class: "cards" }), hand ? el("div", { class: "hand" }) : null);
}

// Put empty slots after the cards of every area, up to the cards it holds when dealt.
function fillSlots() {
  for (const a of document.querySelectorAll("#layout .area")) {
    const cards = a.querySelector(".cards");
    for (const s of cards.querySelectorAll(".slot")) s.remove();
    const want = Number(a.getAttribute("data-slots") || 0) - cards.querySelectorAll(".card").length;
    for (let i = 0; i < want; i++) cards.append(el("div", { class: "slot", "aria-hidden": "true" }));
  }
}

function drawStatus(s) {
  const j = s.journal;
  $("day").textContent = j ? `journal ${j.file} (${String(j.id).slice(0, 6)})` : "";
  $("day").title = j ? `journal ${j.file}, id ${j.id}: a new journal is a new gaming day` : "";
  if (j) $("day").setAttribute("data-journal", j.id);
  $("link").textContent = s.link_up ? `up (${s.port})` : `DOWN (${s.port})`;
  $("link").className = s.link_up ? "" : "bad";
  const alarms = alarmsOf(s);
  $("alarms").textContent = alarms.length ? alarms.map((a) => a.type).join(", ") : "none";
  $("alarms").className = alarms.length ? "bad" : "";
  const shoe = currentShoe(s);
  $("dealt").textContent = shoe && shoe.shoe_no
    ? `${plural(Math.max(0, shoe.next_index - 1), "card", "cards")} dealt of shoe no. ${shoe.shoe_no}, deck ${hex(shoe.deck_id)}`
    : "none loaded";
  const integ = shoe && shoe.integrity;
  $("integrity").textContent = !integ ? "not reported" : integ.names.length ? integrityText(integ) : "ok";
  $("integrity").className = integ && integ.names.length ? "bad" : "";
  const faults = shoe && Array.isArray(shoe.faults) ? shoe.faults : [];
  $("faults").textContent = faults.length ? faults.join(", ") : "none";
  $("faults").className = faults.length ? "bad" : "";
  // A linked table shows the floor's pool, never one of its own (issue 14).
  const floor = s.floor || null;
  let pool;
  if (floor && floor.link) pool = floor.online ? `${money(floor.pool)} (link ${floor.link})` : "floor unreachable";
  else if (s.jackpot && s.jackpot.reset === null) pool = "no progressive at this table";
  else pool = s.jackpot && Number.isInteger(s.jackpot.pool) ? money(s.jackpot.pool) : "not set";
  $("jackpot").textContent = pool;
  $("settlement-currency").textContent = state.currency.code ? `(amounts in ${state.currency.code})` : "";
  $("link").title = $("link").textContent;
}

function currentShoe(s) {
  return s.shoe === null || s.shoe === undefined ? null : (s.shoes || {})[String(s.shoe)] || null;
}

function integrityText(integ) {
  const counts = [];
  for (const [name, key] of [["duplicate", "duplicates"], ["foreign", "foreign"], ["unread", "unread"], ["missing", "missing"]]) {
    if (integ.names.includes(name) && Number.isInteger(integ[key])) counts.push(`${integ[key]} ${name}`);
  }
  return integ.names.join(", ") + (counts.length ? ` (${counts.join(", ")})` : "");
}

// The daemon's alarms (any type, with its message), the journal, the floor, protocol versions.
function alarmsOf(s) {
  const out = (Array.isArray(s.alarms) ? s.alarms : []).map((a) => ({
    type: a.type || "alarm", message: a.message || JSON.stringify(a), since: a.since_ns }));
  if (s.journal_failed) out.push({ type: "journal_failed", message: `journal failed: ${s.journal_failed}` });
  if (s.floor && s.floor.message) out.push({ type: "floor", message: s.floor.message });
  for (const [shoe, v] of Object.entries(s.version_mismatch || {})) {
    out.push({ type: "version_mismatch", message: `shoe ${shoe}: ${v.message}` });
  }
  return out;
}

const STATUS_TEXT = { betting: "taking bets", dealing: "dealing", deciding: "deciding", dealer: "dealing the dealer",
                      complete: "ready to settle", settled: "settled" };

function drawRound(snap, status) {
  const layout = status.layout || { hand_size: 3 };
  const live = state.viewing === null;
  $("history-note").hidden = live;
  // Every area back to its empty slots; the round's cards go into them.
  for (const c of document.querySelectorAll("#layout .card")) c.remove();
  for (const h of document.querySelectorAll("#layout .hand, #layout .net")) h.textContent = "";
  for (const seat of document.querySelectorAll("#seats .seat")) {
    seat.className = "area seat idle";
    seat.querySelector(".chip").textContent = "";
    seat.querySelector(".chip").className = "chip";
    seat.querySelector(".wagers").replaceChildren();
  }
  const stateLine = $("round-state");
  if (!snap) {
    $("round-id").textContent = "-";
    $("layout").classList.remove("void");
    $("round-status").textContent = "";
    $("round-status").className = "badge";
    $("round-meta").textContent = "";
    stateLine.textContent = "No round yet: the seats are ready.";
    stateLine.className = "";
    fillSlots();
    drawFlags(null);
    drawSettlement(null);
    $("void-box").hidden = true;
    return;
  }
  $("round-id").textContent = snap.round_id;
  $("layout").classList.toggle("void", !!snap.void);
  const settled = snap.status === "settled" && !snap.void;
  $("round-status").textContent = snap.void ? "VOID" : (STATUS_TEXT[snap.status] || snap.status);
  $("round-status").className = "badge " + (snap.void ? "void" : settled ? "settled" : "");
  const cards = snap.cards || {};
  $("round-meta").textContent = plural(Object.keys(cards).length, "card", "cards");
  // The history lists each round's state as it was loaded: keep the shown round's current.
  const item = $("history").querySelector(`li[data-round="${CSS.escape(snap.round_id)}"] .status`);
  if (item) item.textContent = snap.void ? "void" : snap.status;

  // Seats: wagers as they stand (a play or bet once made), the decision, who still owes one
  // (once the deal is over or every card of it is out: a decision closes the deal).
  const seatState = snap.seat_state || {};
  const due = ((snap.procedure || {}).phases || []).reduce((n, ph) => n + (ph.places || []).length, 0);
  const placedCount = Object.keys(snap.placements || {}).length;
  const decisionsDue = snap.status !== "betting" && (snap.status !== "dealing" || placedCount >= due);
  for (const [n, st] of Object.entries(seatState)) {
    const seat = $(`seat-${n}`);
    if (!seat) continue;
    const chip = seat.querySelector(".chip");
    const list = seat.querySelector(".wagers");
    const classes = ["area", "seat"];
    const noWager = !Object.keys(st.wagers).length;
    if (noWager) classes.push("nowager");
    for (const [w, amount] of Object.entries(st.wagers)) {
      const made = (w === "play" || w === "bet");
      const withdrawn = (st.decided[w] === "withdraw");
      list.append(el("li", { class: made ? "made" : withdrawn ? "withdrawn" : null, "data-wager": w,
                             title: `${WAGER_NAMES[w] || w} ${money(amount)}${made ? " (made at the decision)" : ""}` },
        el("span", { class: "name" }, WAGER_SHORT[w] || WAGER_NAMES[w] || w), el("span", { class: "amount" }, money(amount))));
    }
    let chipText = "", chipClass = "";
    if (st.void) { chipText = "void"; chipClass = "void"; classes.push("void"); }
    else if (noWager) { chipText = "no wager"; chipClass = "void"; }
    else if (st.absent) { chipText = "absent"; chipClass = "absent"; }
    else if (st.folded) { chipText = "folded"; chipClass = "folded"; classes.push("folded"); }
    else if (st.owes_decision && !snap.void && decisionsDue) { chipText = "to decide"; chipClass = "owes"; classes.push("owes"); }
    else if (st.decisions.length) chipText = st.decisions.map((c) => CHOICE_NAMES[c] || c).join(", ");
    chip.textContent = chipText;
    chip.className = "chip " + chipClass;
    seat.className = classes.join(" ");
  }

  // Cards at their places; cards the procedure had no place for, where the pit sees them.
  const flagged = flaggedIndices(snap);
  const placements = snap.placements || {};
  const notDue = new Set(snap.not_due || []);
  let outside = 0;
  for (const [index, card] of Object.entries(cards)) {
    const place = placements[index];
    let target;
    if (!place) { target = $("area-outside"); outside += 1; }
    else if (place.kind === "seat") target = $(`seat-${place.seat}`);
    else if (place.kind === "dealer") target = $("area-dealer");
    else if (place.kind === "community") target = $("area-community");
    else target = $("area-burn");
    if (!target) target = $("area-outside");
    const drawn = drawCard(index, card.card, place ? placeText(place) : "outside the procedure");
    if (flagged.has(Number(index))) drawn.classList.add("flagged");
    if (notDue.has(Number(index))) drawn.classList.add("not-due");
    const holder = target.querySelector(".cards");
    const before = [...holder.querySelectorAll(".card")].find((c) => Number(c.getAttribute("data-index")) > Number(index));
    holder.insertBefore(drawn, before || holder.querySelector(".slot"));
  }
  $("area-outside").hidden = outside === 0;
  fillSlots();

  // Hands: a count while dealing, the class once complete (as far as this view shows its
  // cards), the settlement's ranking once settled: one name per hand.
  const classes = snap.hand_classes || {};
  for (const [label, held] of Object.entries(snap.hands || {})) {
    const target = label === "dealer" ? $("area-dealer") : $(`seat-${label.replace("seat ", "")}`);
    const h = target && target.querySelector(".hand");
    if (!h) continue;
    h.textContent = classes[label] || (held.length ? plural(held.length, "card", "cards") : "");
  }
  const settlement = snap.settlement || null;
  if (settlement) {
    if (settlement.dealer && $("area-dealer")) {
      $("area-dealer").querySelector(".hand").textContent =
        `${settlement.dealer.hand || ""}${settlement.dealer.qualifies === false ? " (does not qualify)" : ""}`;
    }
    for (const s of settlement.seats || []) {
      const seat = $(`seat-${s.seat}`);
      if (!seat) continue;
      const names = [...new Set(Object.values(s.hands || {}).map((x) => x.hand).filter(Boolean))];
      if (names.length) seat.querySelector(".hand").textContent = names.join(" / ");
      const net = seat.querySelector(".net");
      net.textContent = money(s.net, true);
      net.title = `seat ${s.seat}: net ${money(s.net, true)} (staked ${money(s.stake)}, paid ${money(s.paid)})`;
      net.className = "net " + (s.net > 0 ? "win" : s.net < 0 ? "lose" : "");
    }
  }

  // What the round waits for, in one line.
  const refused = (snap.refusals || []).filter((r) => r.latest);
  const last = refused.length ? refused[refused.length - 1] : null;
  const open = (snap.irregularities || []).filter((f) => OPEN_DECISIONS.has(f.decision));
  let line = "", cls = "";
  if (snap.void) { line = `VOID (rules ${(snap.void.rules || []).join(", ")}): ${snap.void.reason}`; cls = "bad"; }
  else if (settled) {
    const t = settlement && settlement.totals;
    line = t ? `Settled: players staked ${money(t.stake)}, were paid ${money(t.paid)}; net to players ${money(t.net, true)}` : "Settled";
  } else if (last) {
    line = `${last.op || last.action || "input"} REFUSED: ${last.message || last.error}${last.rule ? ` (rule ${last.rule})` : ""}`;
    cls = "bad";
  } else if (open.length) {
    line = `Waiting for ${WAITING[open[0].decision]} (flag #${open[0].id}, rules ${(open[0].rules || []).join(", ")})`;
    cls = "waiting";
  } else if (snap.status === "betting") line = "Taking bets";
  else if (snap.status === "dealing" || snap.status === "dealer") {
    line = `Dealing: ${placedCount} of ${plural(due, "card", "cards")} placed` +
      ((snap.owing || []).length ? `; then ${snap.owing.map((n) => `seat ${n}`).join(", ")} to decide` : "");
  }
  else if ((snap.owing || []).length) {
    line = `Waiting for ${snap.owing.length === 1 ? "the decision" : "decisions"} of ${snap.owing.map((n) => `seat ${n}`).join(", ")}`;
    cls = "waiting";
  } else line = "Ready to settle";
  stateLine.textContent = line;
  stateLine.title = line;
  stateLine.className = cls;

  drawFlags(snap);
  drawSettlement(settlement);
  $("void-box").hidden = !(isSupervisor() && live && !snap.void && snap.status !== "settled");
}

function flaggedIndices(snap) {
  const out = new Set();
  for (const f of snap.irregularities || []) {
    if (!OPEN_DECISIONS.has(f.decision) && !(f.decision === "void_round" || f.decision === "void_seat")) continue;
    for (const e of f.evidence || []) if (Number.isInteger(e.index)) out.add(e.index);
  }
  return out;
}

function drawFlags(snap) {
  const list = $("flags");
  list.replaceChildren();
  const flags = snap ? snap.irregularities || [] : [];
  $("no-flags").hidden = flags.length > 0;
  // Only a supervisor decides, only on the live round, and never on a round already void.
  const mayDecide = isSupervisor() && state.viewing === null && snap && !snap.void;
  for (const f of flags) {
    const open = OPEN_DECISIONS.has(f.decision);
    const li = el("li", { "data-flag": f.id, "data-decision": f.decision, class: open ? "open" : "closed" },
      el("strong", {}, `#${f.id} ${f.kind}`), " ",
      el("span", { class: "flag-rules" }, `rules ${(f.rules || []).join(", ")}`), ` - ${f.detail || ""} `,
      el("em", {}, open ? `waits for ${WAITING[f.decision]}` : `decision: ${f.decision}`));
    if (f.resolved_by) li.append(` (by ${f.resolved_by})`);
    const ev = (f.evidence || []).map((e) => `#${e.index} ${cardText(e.card) || "face down"}`);
    if (ev.length) li.append(el("div", { class: "evidence" }, "evidence: " + ev.join(", ")));
    if (f.proposal && f.proposal.length) {
      li.append(el("div", { class: "evidence" }, "proposal: " +
        f.proposal.map(([i, p]) => `#${i} to ${placeText(p)}`).join(", ")));
    }
    let pick = null;
    if (f.candidates && f.candidates.length) {
      const ol = el("ol", { class: "candidates" });
      for (const c of f.candidates) {
        const id = `flag-${f.id}-candidate-${c.number}`;
        const radio = mayDecide && f.decision === "placement_proposed"
          ? el("input", { type: "radio", name: `flag-${f.id}`, value: c.number, id }) : null;
        ol.append(el("li", {}, radio, el("label", { for: radio ? id : null }, ` ${c.description}`)));
      }
      li.append(ol);
      pick = () => { const r = li.querySelector("input[type=radio]:checked"); return r ? Number(r.value) : null; };
    }
    li.addEventListener("mouseenter", () => focusCards(f, true));
    li.addEventListener("mouseleave", () => focusCards(f, false));
    if (mayDecide && (f.decision === "reconstruction_proposed" || f.decision === "placement_proposed" ||
                      f.decision === "referred")) {
      const yes = el("button", { class: "confirm", "data-flag": f.id }, f.decision === "referred" ? "Let it stand" : "Confirm");
      const no = el("button", { class: "reject", "data-flag": f.id }, "Reject");
      yes.addEventListener("click", () => confirmFlag(snap.round_id, f, true, pick));
      no.addEventListener("click", () => confirmFlag(snap.round_id, f, false, null));
      li.append(el("div", { class: "actions" }, yes, no, el("span", { class: "error", role: "alert" })));
    }
    list.append(li);
  }
}

function focusCards(flag, on) {
  for (const e of flag.evidence || []) {
    const c = document.querySelector(`#layout .card[data-index="${e.index}"]`);
    if (c) c.classList.toggle("focus", on);
  }
}

function supervisorName(errorEl) {
  const who = $("supervisor-name").value.trim();
  if (!who) {
    if (errorEl) errorEl.textContent = "Enter the supervisor's name first (top of this panel).";
    $("supervisor-name").focus();
  }
  return who;
}

async function confirmFlag(rid, flag, confirmed, pick) {
  const li = document.querySelector(`#flags li[data-flag="${flag.id}"]`);
  const err = li && li.querySelector(".error");
  const who = supervisorName(err);
  if (!who) return;
  const body = { flag: flag.id, confirmed, supervisor: who };
  if (confirmed && pick) {
    const n = pick();
    if (n === null && flag.candidates.length > 1) { if (err) err.textContent = "Pick one of the placements."; return; }
    if (n !== null) body.candidate = n;
  }
  try {
    await api("POST", `/rounds/${encodeURIComponent(rid)}/confirmations`, body);
    scheduleRefresh(0);
  } catch (e) {
    if (err) err.textContent = e.message;
  }
}

$("void-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const err = $("void-error");
  err.textContent = "";
  const rule = $("void-rule").value.trim();
  const reason = $("void-reason").value.trim();
  // The same checks as the API's (VoidIn): a rule, a reason and who decided.
  if (!rule || rule.length > 20) { err.textContent = "Give the rule (at most 20 characters)."; return; }
  if (!reason || reason.length > 200) { err.textContent = "Give the reason (at most 200 characters)."; return; }
  const who = supervisorName(err);
  if (!who) return;
  const rid = state.current;
  if (!rid) return;
  try {
    await api("POST", `/rounds/${encodeURIComponent(rid)}/void`, { rule, reason, by: who });
    $("void-rule").value = "";
    $("void-reason").value = "";
    $("void-box").open = false;
    scheduleRefresh(0);
  } catch (e) {
    err.textContent = e.message;
  }
});

function drawSettlement(settlement) {
  const body = $("settlement").querySelector("tbody");
  const foot = $("settlement").querySelector("tfoot");
  body.replaceChildren();
  foot.replaceChildren();
  $("no-settlement").hidden = !!settlement;
  if (!settlement) return;
  const tone = (n) => (n > 0 ? "win" : n < 0 ? "lose" : "");
  // Each seat: a line with its totals, then each wager with its outcome, what it paid and
  // the rules applied. Amounts without the currency here: the heading names it.
  for (const s of settlement.seats || []) {
    body.append(el("tr", { class: "seat-total", "data-seat": s.seat },
      el("th", { scope: "rowgroup" }, `Seat ${s.seat}`), el("td", { class: "num" }, money(s.stake, false, true)),
      el("td", { class: "muted" }, "total"), el("td", { class: "num" }, money(s.paid, false, true)),
      el("td", { class: `num ${tone(s.net)}`, "data-minor": s.net }, money(s.net, true, true))));
    for (const w of s.wagers || []) {
      const pays = (w.lines || []).map((l) => (l.label === (WAGER_NAMES[w.wager] || w.wager) ? l.pays : `${l.label} ${l.pays}`));
      body.append(el("tr", { "data-seat": s.seat, "data-wager": w.wager, class: "wager" },
        el("td", {}, WAGER_NAMES[w.wager] || w.wager),
        el("td", { class: "stake num" }, money(w.stake, false, true)),
        el("td", { class: "outcome" }, `${w.outcome}${pays.length ? " " + pays.join("; ") : ""}`,
           el("span", { class: "rules" }, `rules ${(w.rules || []).join(", ")}`)),
        el("td", { class: "paid num", "data-minor": w.paid }, money(w.paid, false, true)),
        el("td", { class: `net num ${tone(w.net)}`, "data-minor": w.net }, money(w.net, true, true))));
    }
  }
  const t = settlement.totals;
  if (t) {
    foot.append(el("tr", { class: "table-total" },
      el("th", { scope: "row" }, "Table"), el("td", { class: "num" }, money(t.stake, false, true)),
      el("td", { class: "muted" }, "players' net"), el("td", { class: "num" }, money(t.paid, false, true)),
      el("td", { class: `num ${tone(t.net)}`, "data-minor": t.net }, money(t.net, true, true))));
  }
}

// Everything waiting for a person, in one list: alarms, the shoe's faults and integrity
// bits, referrals outside a round, the round's refused input and open flags.
function drawWaiting(status, snap) {
  const list = $("waiting");
  const items = [];
  const add = (kind, what, text, extra) => items.push(el("li", { class: kind, "data-kind": kind },
    el("span", { class: "what" }, what), " ", text, ...(extra || [])));
  const alarms = alarmsOf(status);
  if (!status.link_up && !alarms.length) add("alarm", "Shoe link down:", `the shoe on ${status.port} is not connected`);
  for (const a of alarms) {
    add("alarm", `Alarm ${a.type}:`, a.message, a.since ? [el("span", { class: "when" }, `since ${clock(a.since)}`)] : []);
  }
  const shoe = currentShoe(status);
  if (shoe && shoe.faults && shoe.faults.length) {
    add("fault", "Shoe fault:", shoe.faults.join(", "), clearButton(0, faultMask(shoe.faults)));
  }
  if (shoe && shoe.integrity && shoe.integrity.names.length) {
    add("integrity", "Shoe integrity:", integrityText(shoe.integrity), clearButton(shoe.integrity.bits, 0));
  }
  // Referrals, those of one kind for one round together (the cards after a void: one line).
  const groups = new Map();
  for (const r of status.referrals || []) {
    const key = `${r.type} ${r.round_id || r.after_round || ""}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(r);
  }
  for (const group of groups.values()) {
    const r = group[0];  // the newest
    const btn = isSupervisor() ? el("button", { class: "ack", "data-entry": group.map((x) => x.id).join(" ") },
                                    "Seen, referred") : null;
    if (btn) btn.addEventListener("click", () => acknowledge(group, btn));
    const what = `Referral (${(r.rules || []).join(", ")}) ${r.type}${group.length > 1 ? ` x${group.length}` : ""}:`;
    add("referral", what, r.detail || "",
        [el("span", { class: "when" }, clock(r.t_ns)), btn, el("span", { class: "error", role: "alert" })]);
  }
  if (snap && state.viewing === null && snap.status !== "settled") {
    const refused = (snap.refusals || []).filter((r) => r.latest);
    const last = refused.length ? refused[refused.length - 1] : null;
    if (last) {
      add("refusal", `${last.op || last.action || "Input"} refused:`,
          `${last.message || ""} (${last.error || last.type}${last.rule ? `, rule ${last.rule}` : ""})`,
          [el("span", { class: "when" }, clock(last.t_ns))]);
    }
    for (const f of (snap.void ? [] : snap.irregularities || []).filter((x) => OPEN_DECISIONS.has(x.decision))) {
      add("flag", `Flag #${f.id} ${f.kind} (rules ${(f.rules || []).join(", ")}):`, `waits for ${WAITING[f.decision]}`);
    }
  }
  list.replaceChildren(...items);
  $("nothing-waiting").hidden = items.length > 0;
}

const FAULT_CODES = { reader: 1, jam: 2, tamper: 3, sensor: 4, low_memory: 5, outbox_full: 6, storage: 7, manifest: 8 };

function faultMask(names) {
  return names.reduce((m, n) => m | (FAULT_CODES[n] ? 1 << FAULT_CODES[n] : 0), 0);
}

function clearButton(integrityMask, faultMaskBits) {
  if (!isSupervisor()) return [];
  const b = el("button", { class: "clear" }, "Clear on the shoe");
  const err = el("span", { class: "error", role: "alert" });
  b.addEventListener("click", async () => {
    try {
      await api("POST", "/shoe/clear", { integrity_mask: integrityMask, fault_mask: faultMaskBits });
      err.textContent = " sent";
    } catch (e) { err.textContent = " " + e.message; }
  });
  return [b, err];
}

async function acknowledge(referrals, button) {
  const err = button.parentElement.querySelector(".error");
  const who = supervisorName(err);
  if (!who) return;
  try {
    for (const r of referrals) await api("POST", `/referrals/${r.id}/acknowledge`, { by: who });
    scheduleRefresh(0);
  } catch (e) {
    if (err) err.textContent = " " + e.message;
  }
}

async function loadHistory(gen) {
  let data;
  try { data = await api("GET", `/rounds?limit=${HISTORY_MAX}`); } catch (e) { return; }
  if (gen !== state.gen) return;
  const list = $("history");
  list.replaceChildren();
  const journal = state.journal;
  // Earlier rounds: the round in play is the one drawn above, not listed here.
  for (const r of data.rounds.filter((x) => x.round_id !== state.current)) {
    const a = el("a", { href: "#", "data-round": r.round_id, "data-journal": journal }, r.round_id);
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      state.viewing = journal === state.journal ? { journal, round: r.round_id } : null;
      scheduleRefresh(0);
    });
    list.append(el("li", { "data-round": r.round_id, "data-journal": journal }, a, " ",
      el("span", { class: "status" + (r.void ? " void" : "") }, r.void ? "void" : r.status)));
  }
  $("no-history").hidden = list.childElementCount > 0;
}

start().catch((e) => { document.body.prepend(el("p", { class: "error" }, "cardshoe page: " + e.message)); });
