// The explorer's page logic: tabs, forms, calls to the JSON API (CSRF header on every POST).
"use strict";
let ME = null, CATALOG = null, OVERVIEW = null;
const $ = id => document.getElementById(id);

async function call(path, body) {
  const opts = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json", "X-CSRF-Token": ME.csrf}, body: JSON.stringify(body)};
  const r = await fetch(path, opts);
  const data = await r.json().catch(() => ({error: `Error: HTTP ${r.status}`}));
  if (!r.ok) throw new Error(data.error || `Error: HTTP ${r.status}`);
  return data;
}
function formData(form) {
  const o = {};
  for (const e of form.elements) {
    if (!e.name) continue;
    if (e.type === "checkbox") o[e.name] = e.checked;
    else if (e.type === "radio") { if (e.checked) o[e.name] = e.value; }
    else o[e.name] = e.value;
  }
  return o;
}
function table(host, rows, columns) {
  host.replaceChildren();
  if (!rows.length) { host.textContent = "(none)"; return; }
  columns = columns || Object.keys(rows[0]);
  const t = document.createElement("table"), h = t.insertRow();
  for (const c of columns) { const th = document.createElement("th"); th.textContent = c; h.appendChild(th); }
  for (const r of rows) {
    const tr = t.insertRow();
    for (const c of columns) tr.insertCell().textContent = (Array.isArray(r) ? r[columns.indexOf(c)] : r[c]) ?? "";
  }
  host.appendChild(t);
}
function options(select, values) {
  select.replaceChildren(...values.map(v => { const o = document.createElement("option"); o.value = o.textContent = v; return o; }));
  if (select.dataset.blank !== undefined) {  // a form that must not act on the first table by default
    const o = document.createElement("option"); o.value = ""; o.textContent = select.dataset.blank;
    select.prepend(o); select.value = "";
  }
}
function showTab(name) {
  for (const s of document.querySelectorAll(".tab")) s.hidden = s.id !== name;
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.tab === name);
}
async function refreshBudget() {
  try {
    const b = await call("/api/budget");
    // a ρ or (ε, δ) budget's texts name their unit ("ρ = 0.5"); a pure-ε budget's are numbers
    $("budget").textContent = b.total === null ? "no budget set"
      : b.unit === "epsilon" ? `budget: ${b.remaining} of ${b.total} ε remaining`
      : `budget: ${b.remaining} remaining of ${b.total}`;
  } catch (e) { $("budget").textContent = e.message; }
}

// ------------------------------------------------------------------ curator
async function loadOverview() {
  OVERVIEW = await call("/api/curator/overview");
  const t = $("tables"); t.replaceChildren();
  for (const tb of OVERVIEW.tables) {
    const p = document.createElement("div");
    p.textContent = `${tb.name}(${tb.columns.map(c => `${c.name} ${c.type}`).join(", ")})`;
    t.appendChild(p);
  }
  table($("protected"), OVERVIEW.protected, ["table", "by_columns", "participant"]);
  table($("policies"), OVERVIEW.policies, ["name", "table", "columns", "graph", "domain", "presence"]);
  const draw = document.createElement("p");
  for (const pol of OVERVIEW.policies) for (const col of pol.columns.split(/,\s*/)) {
    const b = document.createElement("button");
    b.type = "button"; b.className = "draw-policy"; b.dataset.policy = pol.name; b.dataset.column = col;
    b.textContent = `draw ${pol.name} on ${col}`;
    b.addEventListener("click", () => drawDeclared(pol.name, col));
    draw.appendChild(b);
  }
  $("policies").appendChild(draw);
  table($("bounds"), OVERVIEW.bounds, ["table", "column", "lower", "upper"]);
  if (OVERVIEW.group_keys.length) table($("group-keys"), OVERVIEW.group_keys, ["table", "column", "keys", "source"]);
  else $("group-keys").replaceChildren();
  table($("budgets"), OVERVIEW.budgets);
  const first = !$("h-table").value;
  for (const s of document.querySelectorAll("select.tables")) {
    const keep = s.value; options(s, OVERVIEW.tables.map(x => x.name)); if (keep) s.value = keep;
  }
  if (first) demo1Default();
  histColumns();
}
// Demo 1 opens on the first declared one-column policy over a range (its table, column, domain and
// bins); without one, on the numeric column of widest range
function demo1Default() {
  const pol = OVERVIEW.policies.find(p => !p.columns.includes(",") && /^\[/.test(p.domain || ""));
  if (pol) {
    $("h-table").value = pol.table; options($("h-column"), [pol.columns]); $("h-column").value = pol.columns;
    if ([...$("h-graph").options].some(o => o.value === pol.graph)) $("h-graph").value = pol.graph;
    return;
  }
  let best = null;
  for (const t of OVERVIEW.tables) for (const c of t.columns)
    if (c.numeric && c.min !== undefined && c.min !== null && (!best || c.max - c.min > best.c.max - best.c.min)) best = {t, c};
  if (best) { $("h-table").value = best.t.name; options($("h-column"), [best.c.name]); $("h-column").value = best.c.name; }
}
function histColumns() {
  const tb = OVERVIEW.tables.find(x => x.name === $("h-table").value);
  if (!tb) return;
  const keep = $("h-column").value;
  options($("h-column"), tb.columns.filter(c => c.numeric).map(c => c.name));
  if (keep && [...$("h-column").options].some(o => o.value === keep)) $("h-column").value = keep;
  histDomain();
}
function histDomain() {
  const tb = OVERVIEW.tables.find(x => x.name === $("h-table").value);
  const c = tb && tb.columns.find(x => x.name === $("h-column").value);
  if (!c || c.min === undefined || c.min === null) return;
  const pol = OVERVIEW.policies.find(p => p.table === tb.name && p.columns === c.name);
  const m = pol && /^\[(-?[\d.e+]+), (-?[\d.e+]+)\)(?: WIDTH ([\d.e+]+))?/.exec(pol.domain);
  if (m) {
    $("h-lo").value = m[1]; $("h-hi").value = m[2];
    if (m[3]) $("h-bins").value = Math.round((m[2] - m[1]) / m[3]);
    return;
  }
  // a round domain around the column's range: the curator sees the data, and declares the result
  const span = c.max - c.min || 1, step = Math.pow(10, Math.floor(Math.log10(span)));
  const lo = Math.floor(c.min / step) * step, hi = (Math.floor(c.max / step) + 1) * step;
  $("h-lo").value = lo; $("h-hi").value = hi;
  // a whole-number column of few values: one bin per value, not 20 bins of a key column
  if (/INT/.test(c.type) && hi - lo < 20) $("h-bins").value = Math.max(2, hi - lo);
  else if (+$("h-bins").value < 2) $("h-bins").value = 20;
}
async function drawDeclared(name, column) {
  $("hist-error").textContent = "";
  try {
    const g = await call("/api/curator/policy_graph", {name, column});
    Charts.graph($("chart-graph"), g);
    $("graph-caption").textContent = `Declared policy ${g.meaning}`;
  } catch (e) { $("hist-error").textContent = e.message; }
}
async function declare(body) {
  $("declare-error").textContent = "";
  try {
    const r = await call("/api/curator/declare", body);
    $("declared").textContent = r.sql;
    await loadOverview();
  } catch (e) { $("declare-error").textContent = e.message; }
}
let LAST_HIST = null;
async function showHistogram(override) {
  $("hist-error").textContent = "";
  const f = Object.assign(formData($("f-hist")), override || {});
  try {
    const r = await call("/api/curator/histogram", f);
    LAST_HIST = f;
    const label = f.query === "cumulative" ? "cumulative count" : "count";
    Charts.bars($("chart-true"), {labels: r.labels, series: [{name: "true", values: r.true, color: "#54a24b"}], ylabel: label});
    Charts.bars($("chart-noisy"), {labels: r.labels, ititle: "95% interval", ylabel: label,
      series: [{name: "noisy", values: r.noisy, intervals: r.intervals, itext: r.interval_text}]});
    $("noisy-caption").textContent = `Noisy answer: ${f.graph} at ε = ${f.epsilon} (${r.strategy}; expected error ${r.expected_rmse.toPrecision(3)}; rules: 95% intervals of ${r.covers})`;
    Charts.graph($("chart-graph"), r.graph);
    $("graph-caption").textContent = `Policy graph: ${r.graph.meaning}`;
    $("policy-sql").textContent = r.policy_sql + ";";
    await showTradeoff(f);
  } catch (e) {  // no chart of an earlier request stays on screen under this error
    for (const id of ["chart-true", "chart-noisy", "chart-graph", "chart-tradeoff"]) $(id).replaceChildren();
    $("noisy-caption").textContent = "Noisy answer"; $("policy-sql").textContent = "";
    $("hist-error").textContent = e.message;
  }
}
async function showTradeoff(f) {
  const r = await call("/api/curator/tradeoff", {bins: f.bins, bounded: f.bounded, query: f.query, thetas: [1, 2, 4, 8], epsilons: [0.1, 0.25, 0.5, 1, 2]});
  const by = {};
  for (const row of r.rows) (by[row.policy] = by[row.policy] || {name: row.policy, points: [], dashed: row.theta === null}).points.push({x: row.epsilon, y: row.expected_rmse, data: row});
  Charts.lines($("chart-tradeoff"), {series: Object.values(by), xlabel: "ε", ylabel: "expected error (RMSE per query)", logx: true, logy: true,
    onclick: p => {
      const graph = p.data.theta === null ? "FULL" : (p.data.theta === 1 ? "LINE" : `THRESHOLD ${p.data.theta}`);
      $("h-eps").value = p.data.epsilon;
      if (![...$("h-graph").options].some(o => o.value === graph)) options($("h-graph"), [...[...$("h-graph").options].map(o => o.value), graph]);
      $("h-graph").value = graph;
      showHistogram({graph, epsilon: p.data.epsilon});
    }});
}

// ------------------------------------------------------------------ analyst
async function loadCatalog() {
  CATALOG = await call("/api/catalog");
  options($("a-table"), CATALOG.tables.map(t => t.name));
  const pol = CATALOG.policies[0];
  if (pol) $("a-table").value = pol.table;
  askColumns();
}
function askColumns() {
  const t = CATALOG.tables.find(x => x.name === $("a-table").value);
  if (!t) return;
  const cols = t.columns.map(c => c.name);
  options($("a-column"), cols); options($("a-column2"), cols);
  const pol = CATALOG.policies.find(p => p.table === t.name);
  if (pol) { const cs = pol.columns.split(/,\s*/); $("a-column").value = cs[0]; if (cs[1]) $("a-column2").value = cs[1]; }
}
function askTemplate() {
  const t = $("a-template").value;
  $("a-sql").hidden = t !== "sql";
  $("a-col2").hidden = t !== "histogram2d";
  $("a-gran").hidden = !(t === "histogram" || t === "cumulative");
  for (const id of ["a-table", "a-column"]) $(id).disabled = t === "sql";
  $("a-written").hidden = t !== "sql";  // the SQL editor may also read public tables as written
  if (t !== "sql" && $("a-mode-written").checked) $("a-mode-eps").checked = true;
}
const pct = a => `${((a.confidence || 0.95) * 100).toFixed(0)}%`;
function plotAnswer(host, a, title) {
  host.replaceChildren();
  if (!a.rows.length) { host.textContent = "(no rows)"; return; }
  const k = a.columns.length;
  // the released value plotted (the last one, wherever the select list puts it) and the
  // columns that label it: the GROUP BY keys, before or after it (public, no interval)
  const v = k + (a.value_column ?? -1);
  const nv = a.interval_text && a.interval_text.length ? a.interval_text[0].length : 1;
  const keys = [...Array(k).keys()].filter(i => i < k - nv || (a.public_columns || []).includes(i - (k - nv)));
  const numeric = a.rows.every(r => typeof r[v] === "number");
  if (!numeric) return;
  if (keys.length === 2 && a.private) {
    const [y, x] = keys;
    Charts.heatmap(host, {title, xlabels: [...new Set(a.rows.map(r => r[x]))], ylabels: [...new Set(a.rows.map(r => r[y]))],
      rows: a.rows.map(r => [r[y], r[x], r[v]]), xname: a.columns[x], yname: a.columns[y]});
    return;
  }
  // COUNT RANGES labels name the column in every range: keep the bounds only
  const short = c => a.columns[0] === "range" ? String(c).replace(/"[^"]*"\s*/g, "").replace(" AND ", " ") : c;
  const labels = a.rows.map(r => keys.length ? keys.map(i => short(r[i])).join(", ") : a.columns[v]);
  const at = rows => rows.map(r => r[r.length + (a.value_column ?? -1)]);
  Charts.bars(host, {title, labels, ylabel: a.columns[v], ititle: `${pct(a)} interval`,
    series: [{name: "answer", values: a.rows.map(r => r[v]),
              intervals: a.intervals ? at(a.intervals) : undefined,
              itext: a.interval_text ? at(a.interval_text) : undefined}]});
}
async function ask(ev) {
  ev.preventDefault();
  $("a-error").textContent = ""; $("a-statement").textContent = "";
  $("a-chart").replaceChildren(); $("a-table-out").replaceChildren();  // never an old answer under a new error
  const f = formData($("f-ask"));
  $("a-cancel").hidden = false;
  const t0 = Date.now(), timer = setInterval(() => { $("a-progress").textContent = `running… ${((Date.now() - t0) / 1000).toFixed(0)} s`; }, 500);
  try {
    const a = await call("/api/query", f);
    $("a-statement").textContent = a.statement + (a.private ? `  -- ${a.unit === "rho" ? "ρ" : "ε"} charged ${a.epsilon.toPrecision(3)} (${a.mechanism}${a.strategy ? ", " + a.strategy : ""}); ${pct(a)} intervals of ${(a.covers || []).join("; ")}` : "  -- public data, no ε");
    plotAnswer($("a-chart"), a, "");
    const show = v => typeof v === "number" && !Number.isInteger(v) ? +v.toPrecision(4) : v;
    const k = a.columns.length;
    const nv = a.interval_text && a.interval_text.length ? a.interval_text[0].length : 0;
    const pub = j => (a.public_columns || []).includes(j);  // a GROUP BY key: no interval
    const ivCols = a.columns.slice(k - nv).filter((c, j) => !pub(j)).map(c => `${c} ${pct(a)} interval`);
    table($("a-table-out"), a.rows.slice(0, 50).map((r, i) => {
      const cells = r.map((v, j) => j >= k - nv && a.private ? show(v) : v);
      return nv ? [...cells, ...a.interval_text[i].filter((t, j) => !pub(j))] : cells;
    }), nv ? [...a.columns, ...ivCols] : a.columns);
  } catch (e) { $("a-error").textContent = e.message; }
  finally { clearInterval(timer); $("a-progress").textContent = ""; $("a-cancel").hidden = true; }
  await refreshBudget(); await loadHistory();
}
async function loadHistory() {
  const h = await call("/api/history");
  const host = $("history"); host.replaceChildren();
  const t = document.createElement("table"), head = t.insertRow();
  for (const c of ["", "#", "when", "statement", "charged"]) { const th = document.createElement("th"); th.textContent = c; head.appendChild(th); }
  for (const e of h.entries) {
    const tr = t.insertRow();
    const box = document.createElement("input"); box.type = "checkbox"; box.value = e.id; box.className = "pick";
    tr.insertCell().appendChild(box);
    tr.insertCell().textContent = e.id; tr.insertCell().textContent = e.at;
    tr.insertCell().textContent = e.sql; tr.insertCell().textContent = e.epsilon ?? "";
  }
  host.appendChild(t);
}
async function compare() {
  const ids = [...document.querySelectorAll("input.pick:checked")].map(b => b.value);
  $("a-error").textContent = "";
  if (ids.length !== 2) { $("a-error").textContent = "Tick exactly two answers to compare."; return; }
  const [a, b] = await Promise.all(ids.map(i => call(`/api/history/${i}`)));
  plotAnswer($("cmp-a"), a.answer, `#${a.id}: ${a.sql}`.slice(0, 80));
  plotAnswer($("cmp-b"), b.answer, `#${b.id}: ${b.sql}`.slice(0, 80));
}

// ------------------------------------------------------------------ start
async function start() {
  ME = await call("/api/me").catch(() => { location.href = "/login"; });
  if (!ME) return;
  $("whoami").textContent = `${ME.user} (${ME.role})`;
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => showTab(b.dataset.tab));
  $("logout").addEventListener("click", async () => { await call("/api/logout", {}); location.href = "/login"; });
  if (ME.role === "curator") {
    $("h-table").addEventListener("change", histColumns);
    $("h-column").addEventListener("change", histDomain);
    $("f-hist").addEventListener("submit", ev => { ev.preventDefault(); showHistogram(); });
    $("h-declare").addEventListener("click", () => {
      const f = formData($("f-hist"));
      declare(Object.assign(f, {action: "create_policy", name: f.name || `${f.table}_${f.column}`}));
    });
    $("f-protect").addEventListener("submit", ev => { ev.preventDefault(); declare(Object.assign(formData($("f-protect")), {action: "protect"})); });
    document.querySelector("#f-protect [data-action=unprotect]").addEventListener("click", () => declare(Object.assign(formData($("f-protect")), {action: "unprotect"})));
    $("f-budget").addEventListener("submit", ev => { ev.preventDefault(); declare(Object.assign(formData($("f-budget")), {action: "set_budget"})); });
    $("f-drop").addEventListener("submit", ev => { ev.preventDefault(); declare(Object.assign(formData($("f-drop")), {action: "drop_policy"})); });
    await loadOverview();
    showTab("curator");
  } else {
    $("tab-curator").hidden = true;
    showTab("analyst");
  }
  $("a-table").addEventListener("change", askColumns);
  $("a-template").addEventListener("change", askTemplate);
  $("f-ask").addEventListener("submit", ask);
  $("a-cancel").addEventListener("click", () => call("/api/cancel", {}));
  $("compare").addEventListener("click", compare);
  await loadCatalog(); askTemplate();
  await refreshBudget(); await loadHistory();
}
start();
