// The floor page's shift panel (issue 23): every table's pace and hold against the exact
// theoretical for the current shift, and the hold alarms, from GET /report with the token
// typed into the page. Its own file; the page only loads it. Text nodes only.
"use strict";
(function () {
  const money = (m) => (m === null || m === undefined) ? "-" : (m / 100).toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const fix = (v, d) => (v === null || v === undefined) ? "-" : Number(v).toFixed(d);
  function tbl(head, rows, hot) {
    const t = document.createElement("table"), h = t.insertRow();
    for (const c of head) { const th = document.createElement("th"); th.textContent = c; h.appendChild(th); }
    for (const r of rows) { const tr = t.insertRow(); if (hot) tr.style.background = "#fde2e2";
      for (const c of r) tr.insertCell().textContent = String(c); }
    return t;
  }
  const box = document.createElement("div");
  box.id = "shift-report";
  const title = document.createElement("h2");
  title.textContent = "Shift: pace, hold and alarms";
  document.body.append(title, box);
  async function refresh() {
    const token = document.getElementById("token").value;
    if (!token) return;
    try {
      const r = await fetch("/report", { headers: { Authorization: "Bearer " + token } });
      if (!r.ok) throw new Error("/report: " + r.status);
      const rep = await r.json();
      const alarms = rep.alarms || [];
      const parts = [];
      const a = document.createElement("p");
      a.textContent = alarms.length ? `${alarms.length} hold alarm(s)` : "no hold alarm: every watched figure is inside its band";
      parts.push(a);
      if (alarms.length) parts.push(tbl(["group", "wager", "rounds", "actual", "theoretical", "sd", "z", "threshold", "tests"],
        alarms.map((x) => [`${x.group} ${x.key}`, x.row, x.rounds, money(x.actual), money(x.theoretical), money(x.sd), fix(x.z, 2), fix(x.threshold, 2), x.tests]), true));
      const rows = Object.entries((rep.groups || {}).table || {}).map(([t, g]) => {
        const p = g.pace || {}, c = (g.hold || {}).overall || {};
        return [t, p.rounds, fix(p.rounds_per_hour, 1), fix(p.cards_per_minute, 1), money(c.handle), money(c.actual), money(c.theoretical),
          fix(c.hold_pct, 2) + "%", fix(c.theoretical_pct, 2) + "%", c.z === null || c.z === undefined ? "-" : fix(c.z, 2)];
      });
      parts.push(tbl(["table", "rounds", "rounds/h", "cards/min", "handle", "actual", "theoretical", "hold", "theo.", "z"], rows, false));
      box.replaceChildren(...parts);
    } catch (e) { box.textContent = String(e); }
  }
  document.getElementById("go").addEventListener("click", () => { refresh(); setInterval(refresh, 30000); });
})();
