// The shift panel of the live table page (issue 23): who deals, the game's pace and the hold
// against the exact theoretical, with the hold alarms. Self-contained: it adds its own section
// to the page, reads GET /shift and GET /staff every 15 s, and signs staff on and players in
// through the table API with the page's session (its CSRF token from GET /session).
"use strict";
(function () {
  const REFRESH_MS = 15000;
  let csrf = null;
  const $ = (id) => document.getElementById(id);
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) { if (v !== null && v !== undefined) e.setAttribute(k, v); }
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }
  const money = (m) => (m === null || m === undefined) ? "-" : (m / 100).toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const fix = (v, d) => (v === null || v === undefined) ? "-" : Number(v).toFixed(d);
  function table(head, rows, alarmRow) {
    const t = el("table", { class: "shift-table" });
    t.append(el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))));
    const body = el("tbody");
    rows.forEach((r, i) => body.append(el("tr", alarmRow && alarmRow(i) ? { class: "shift-alarm" } : {}, ...r.map((c) => el("td", {}, c)))));
    t.append(body);
    return t;
  }
  async function call(method, path, body) {
    const headers = { "Accept": "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (method !== "GET" && csrf) headers["X-CSRF-Token"] = csrf;
    const r = await fetch(path, { method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) });
    const data = await r.json().catch(() => ({}));
    if (!r.ok) { const d = data.detail || {}; throw new Error(`${r.status} ${d.error || ""}: ${d.message || r.statusText}`); }
    return data;
  }
  function holdRows(hold) {
    const order = Object.keys(hold).sort((a, b) => (a === "overall") - (b === "overall"));
    return order.map((k) => { const c = hold[k]; return [k, c.rounds, money(c.handle), money(c.actual), money(c.theoretical),
      fix(c.hold_pct, 2) + "%", fix(c.theoretical_pct, 2) + "%", money(c.sd), c.z === null ? "-" : fix(c.z, 2),
      `${money(c.band[0])} .. ${money(c.band[1])}`]; });
  }
  const HOLD_HEAD = ["wager", "rounds", "handle", "actual", "theoretical", "hold", "theo.", "sd", "z", "band"];
  function draw(fig) {
    const box = $("shift-figures");
    box.replaceChildren();
    const staff = fig.staff || {};
    const seats = Object.entries(staff.players || {}).map(([s, p]) => `seat ${s}: ${p}`).join(", ") || "none";
    $("shift-staff").textContent = `dealer ${staff.dealer || "(none)"}; supervisor ${staff.supervisor || "(none)"}; players ${seats}`;
    const alarms = fig.alarms || [];
    box.append(el("h3", {}, `Alarms (${alarms.length})`));
    if (alarms.length) box.append(table(["group", "wager", "rounds", "actual", "theoretical", "sd", "z", "threshold"],
      alarms.map((a) => [`${a.group} ${a.key}`, a.row, a.rounds, money(a.actual), money(a.theoretical), money(a.sd), fix(a.z, 2), fix(a.threshold, 2)]), () => true));
    else box.append(el("p", { class: "muted" }, "none: every watched figure is inside its band"));
    const groups = fig.groups || {};
    for (const [name, g] of Object.entries(groups.table || {})) {
      const p = g.pace || {}, ph = p.phase_seconds || {};
      box.append(el("h3", {}, `Pace: ${name}`));
      box.append(table(["rounds", "rounds/h", "cards/min", "dealing cards/min", "betting s", "dealing s", "decisions s", "settling s", "between s", "shoes/h"],
        [[p.rounds, fix(p.rounds_per_hour, 1), fix(p.cards_per_minute, 1), fix(p.dealing_cards_per_minute, 1), fix(ph.betting, 1), fix(ph.dealing, 1),
          fix(ph.decisions, 1), fix(ph.settling, 1), fix(ph["between rounds"], 1), fix(p.shoes_per_hour, 2)]]));
      box.append(el("h3", {}, `Hold: ${name}`));
      box.append(table(HOLD_HEAD, holdRows(g.hold || {})));
    }
    const dealers = Object.entries(groups.dealer || {});
    if (dealers.length) {
      box.append(el("h3", {}, "Dealers"));
      box.append(table(["dealer", "rounds", "rounds/h", "handle", "actual", "theoretical", "z"], dealers.map(([d, g]) => {
        const c = (g.hold || {}).overall || {}; const p = g.pace || {};
        return [d, p.rounds, fix(p.rounds_per_hour, 1), money(c.handle), money(c.actual), money(c.theoretical), c.z === null || c.z === undefined ? "-" : fix(c.z, 2)]; })));
    }
    const players = Object.entries(groups.player || {}).filter(([, g]) => g.rating);
    if (players.length) {
      box.append(el("h3", {}, "Player ratings"));
      box.append(table(["player", "minutes", "rounds", "average bet", "handle", "actual", "theoretical"], players.map(([p, g]) => {
        const r = g.rating; return [p, fix(r.seated_s / 60, 0), r.rounds, money(r.average_bet), money(r.handle), money(r.actual), money(r.theoretical)]; })));
    }
    $("shift-updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
  }
  async function refresh() {
    try { draw(await call("GET", "/shift")); $("shift-error").textContent = ""; }
    catch (e) { $("shift-error").textContent = String(e.message || e); }
  }
  function form() {
    const role = el("select", { id: "shift-role" }, el("option", { value: "dealer" }, "dealer"), el("option", { value: "supervisor" }, "supervisor"));
    const sid = el("input", { id: "shift-staff-id", maxlength: "64", placeholder: "badge id", size: "12" });
    const on = el("button", { type: "button", id: "shift-sign-on" }, "Sign on");
    const off = el("button", { type: "button", id: "shift-sign-off" }, "Sign off");
    const seat = el("input", { id: "shift-seat", type: "number", min: "1", max: "7", value: "1", size: "2" });
    const pid = el("input", { id: "shift-player-id", maxlength: "64", placeholder: "player card", size: "12" });
    const seatBtn = el("button", { type: "button", id: "shift-seat-player" }, "Seat player");
    const leftBtn = el("button", { type: "button", id: "shift-player-left" }, "Player left");
    const act = (fn) => async () => { try { await fn(); $("shift-error").textContent = ""; refresh(); } catch (e) { $("shift-error").textContent = String(e.message || e); } };
    on.onclick = act(() => call("POST", "/staff/sign-on", { role: role.value, staff_id: sid.value.trim() }));
    off.onclick = act(() => call("POST", "/staff/sign-off", { role: role.value }));
    seatBtn.onclick = act(() => call("PUT", `/seats/${Number(seat.value)}/player`, { player_id: pid.value.trim() }));
    leftBtn.onclick = act(() => call("DELETE", `/seats/${Number(seat.value)}/player`));
    return el("div", { class: "shift-forms" }, role, sid, on, off, " | seat ", seat, pid, seatBtn, leftBtn);
  }
  async function start() {
    const main = $("live");
    if (!main || $("shift-panel")) return;
    const s = await call("GET", "/session").catch(() => ({}));
    if (!s.signed_in) { setTimeout(start, 2000); return; }
    csrf = s.csrf;
    const panel = el("section", { id: "shift-panel", class: "panel wide" },
      el("h2", {}, "Shift ", el("span", { id: "shift-updated", class: "muted" })),
      el("p", { id: "shift-staff" }, "-"), form(), el("p", { id: "shift-error", class: "error" }),
      el("div", { id: "shift-figures" }));
    main.append(panel);
    refresh();
    setInterval(refresh, REFRESH_MS);
  }
  document.addEventListener("DOMContentLoaded", start);
})();
