// Small SVG charts for the explorer (no third-party script: the page must work offline).
// Charts.bars(el, spec), Charts.lines(el, spec), Charts.graph(el, spec). Every text goes in
// through textContent, never as HTML.
"use strict";
const Charts = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const COLORS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#9d755d"];
  function el(tag, attrs, parent, text) {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function svg(host, w, h) {
    host.replaceChildren();
    return el("svg", {viewBox: `0 0 ${w} ${h}`, width: w, height: h, role: "img"}, host);
  }
  function ticks(lo, hi, n) {
    if (hi === lo) { hi = lo + 1; }
    const step0 = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(step0)));
    const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= step0);
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step) out.push(+v.toPrecision(12));
    return out;
  }
  const fmt = v => Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-2 && v !== 0) ? v.toExponential(1) : +v.toPrecision(4) + "";

  // spec: {labels, series: [{name, values, errors?}], ylabel, title}
  function bars(host, spec) {
    const W = 560, H = 320, L = 52, R = 10, T = 24, B = 84;
    const s = svg(host, W, H);
    const n = spec.labels.length, k = spec.series.length;
    let lo = 0, hi = 0;
    for (const se of spec.series) se.values.forEach((v, i) => {
      const e = se.errors ? se.errors[i] : 0;
      lo = Math.min(lo, v - e); hi = Math.max(hi, v + e);
    });
    const tk = ticks(lo, hi, 5); lo = Math.min(lo, tk[0]); hi = Math.max(hi, tk[tk.length - 1]);
    const y = v => T + (H - T - B) * (hi - v) / (hi - lo || 1);
    const bw = (W - L - R) / Math.max(n, 1);
    if (spec.title) el("text", {x: L, y: 14, "font-size": 12, "font-weight": "bold"}, s, spec.title);
    for (const t of tk) {
      el("line", {x1: L, x2: W - R, y1: y(t), y2: y(t), stroke: "#eee"}, s);
      el("text", {x: L - 4, y: y(t) + 4, "text-anchor": "end", "font-size": 10}, s, fmt(t));
    }
    el("line", {x1: L, x2: W - R, y1: y(0), y2: y(0), stroke: "#888"}, s);
    spec.series.forEach((se, j) => {
      const c = se.color || COLORS[j % COLORS.length];
      se.values.forEach((v, i) => {
        const x = L + i * bw + bw * 0.1 + j * (bw * 0.8 / k), w = bw * 0.8 / k;
        const r = el("rect", {x, y: Math.min(y(v), y(0)), width: Math.max(w, 1), height: Math.abs(y(v) - y(0)), fill: c,
                              class: "bar"}, s);
        el("title", {}, r, `${spec.labels[i]}: ${fmt(v)}` + (se.errors ? ` ± ${fmt(se.errors[i])}` : ""));
        if (se.errors) {
          const cx = x + w / 2;
          el("line", {x1: cx, x2: cx, y1: y(v - se.errors[i]), y2: y(v + se.errors[i]), stroke: "#333"}, s);
        }
      });
    });
    const every = Math.ceil(n / 20);
    spec.labels.forEach((lab, i) => {
      if (i % every) return;
      const x = L + i * bw + bw / 2;
      el("text", {x, y: H - B + 12, "font-size": 9, "text-anchor": "end", transform: `rotate(-45 ${x} ${H - B + 12})`}, s, String(lab).slice(0, 22));
    });
    if (spec.ylabel) el("text", {x: 12, y: T + (H - T - B) / 2, "font-size": 10, transform: `rotate(-90 12 ${T + (H - T - B) / 2})`, "text-anchor": "middle"}, s, spec.ylabel);
    if (k > 1) spec.series.forEach((se, j) => {
      el("rect", {x: W - R - 150, y: 4 + j * 12, width: 9, height: 9, fill: se.color || COLORS[j % COLORS.length]}, s);
      el("text", {x: W - R - 137, y: 12 + j * 12, "font-size": 10}, s, se.name);
    });
    return s;
  }

  // spec: {series: [{name, points: [{x, y, data}]}], xlabel, ylabel, logx, logy, onclick(point, series)}
  function lines(host, spec) {
    const W = 560, H = 300, L = 56, R = 110, T = 14, B = 40;
    const s = svg(host, W, H);
    const pts = spec.series.flatMap(se => se.points);
    const tx = v => spec.logx ? Math.log10(v) : v, ty = v => spec.logy ? Math.log10(v) : v;
    let x0 = Math.min(...pts.map(p => tx(p.x))), x1 = Math.max(...pts.map(p => tx(p.x)));
    let y0 = Math.min(...pts.map(p => ty(p.y))), y1 = Math.max(...pts.map(p => ty(p.y)));
    if (x1 === x0) x1 = x0 + 1; if (y1 === y0) y1 = y0 + 1;
    const X = v => L + (W - L - R) * (tx(v) - x0) / (x1 - x0), Y = v => T + (H - T - B) * (y1 - ty(v)) / (y1 - y0);
    const yt = spec.logy ? ticks(Math.floor(y0), Math.ceil(y1), 4).filter(t => Number.isInteger(t)).map(t => Math.pow(10, t)) : ticks(y0, y1, 5);
    for (const t of yt) {
      if (ty(t) < y0 - 1e-9 || ty(t) > y1 + 1e-9) continue;
      el("line", {x1: L, x2: W - R, y1: Y(t), y2: Y(t), stroke: "#eee"}, s);
      el("text", {x: L - 4, y: Y(t) + 4, "text-anchor": "end", "font-size": 10}, s, fmt(t));
    }
    const xs = [...new Set(pts.map(p => p.x))].sort((a, b) => a - b);
    for (const v of xs) el("text", {x: X(v), y: H - B + 14, "text-anchor": "middle", "font-size": 10}, s, fmt(v));
    el("text", {x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", "font-size": 11}, s, spec.xlabel || "");
    el("text", {x: 12, y: (T + H - B) / 2, "font-size": 11, transform: `rotate(-90 12 ${(T + H - B) / 2})`, "text-anchor": "middle"}, s, spec.ylabel || "");
    spec.series.forEach((se, j) => {
      const c = COLORS[j % COLORS.length];
      const sorted = [...se.points].sort((a, b) => a.x - b.x);
      el("polyline", {points: sorted.map(p => `${X(p.x)},${Y(p.y)}`).join(" "), fill: "none", stroke: c, "stroke-width": 2,
                      "stroke-dasharray": se.dashed ? "4 3" : ""}, s);
      for (const p of sorted) {
        const dot = el("circle", {cx: X(p.x), cy: Y(p.y), r: 5, fill: c, class: spec.onclick ? "point clickable" : "point",
                                  "data-series": se.name, "data-x": p.x}, s);
        el("title", {}, dot, `${se.name}, ε=${fmt(p.x)}: ${fmt(p.y)}`);
        if (spec.onclick) dot.addEventListener("click", () => spec.onclick(p, se));
      }
      el("rect", {x: W - R + 8, y: T + j * 14, width: 10, height: 10, fill: c}, s);
      el("text", {x: W - R + 22, y: T + 9 + j * 14, "font-size": 10}, s, se.name);
    });
    return s;
  }

  // spec: {nodes: [label], edges: [[i, j]]} — an arc diagram: values on a line, secrets as arcs.
  function graph(host, spec) {
    const W = 560, H = 240, L = 20, R = 20, base = H - 50;
    const s = svg(host, W, H);
    const n = spec.nodes.length, dx = (W - L - R) / Math.max(n - 1, 1);
    const X = i => L + i * dx;
    for (const [a, b] of spec.edges) {
      const xa = X(Math.min(a, b)), xb = X(Math.max(a, b)), r = (xb - xa) / 2;
      el("path", {d: `M ${xa} ${base} A ${r} ${Math.min(r, base - 10)} 0 0 1 ${xb} ${base}`, fill: "none",
                  stroke: "#4c78a8", "stroke-opacity": 0.45, class: "edge"}, s);
    }
    const every = Math.ceil(n / 20);
    spec.nodes.forEach((lab, i) => {
      el("circle", {cx: X(i), cy: base, r: 4, fill: lab === "⊥" ? "#e45756" : "#1f3b57", class: "node"}, s);
      if (i % every === 0 || lab === "⊥")
        el("text", {x: X(i), y: base + 14, "font-size": 9, "text-anchor": "end", transform: `rotate(-45 ${X(i)} ${base + 14})`}, s, String(lab));
    });
    el("text", {x: L, y: H - 4, "font-size": 10, fill: "#555"}, s, `${n} values, ${spec.edges.length} edges (secret pairs)`);
    return s;
  }
  // spec: {xlabels, ylabels, rows: [[y, x, value]], xname, yname, title} — a 2-D histogram
  function heatmap(host, spec) {
    const W = 560, H = 300, L = 60, R = 70, T = 22, B = 64;
    const s = svg(host, W, H);
    const nx = spec.xlabels.length, ny = spec.ylabels.length;
    const cw = (W - L - R) / Math.max(nx, 1), ch = (H - T - B) / Math.max(ny, 1);
    const vals = spec.rows.map(r => r[2]);
    const lo = Math.min(0, ...vals), hi = Math.max(1, ...vals);
    const shade = v => { const t = (v - lo) / (hi - lo || 1); return `rgb(${Math.round(247 - 171 * t)},${Math.round(251 - 131 * t)},${Math.round(255 - 87 * t)})`; };
    if (spec.title) el("text", {x: L, y: 14, "font-size": 12, "font-weight": "bold"}, s, spec.title);
    for (const [yv, xv, v] of spec.rows) {
      const i = spec.xlabels.indexOf(xv), j = spec.ylabels.indexOf(yv);
      const r = el("rect", {x: L + i * cw, y: T + j * ch, width: cw, height: ch, fill: shade(v), class: "bar cell"}, s);
      el("title", {}, r, `${spec.yname}=${yv}, ${spec.xname}=${xv}: ${fmt(v)}`);
    }
    const every = Math.ceil(nx / 20);
    spec.xlabels.forEach((lab, i) => {
      if (i % every) return;
      const x = L + i * cw + cw / 2;
      el("text", {x, y: H - B + 12, "font-size": 9, "text-anchor": "end", transform: `rotate(-45 ${x} ${H - B + 12})`}, s, String(lab));
    });
    spec.ylabels.forEach((lab, j) => el("text", {x: L - 4, y: T + j * ch + ch / 2 + 3, "font-size": 9, "text-anchor": "end"}, s, String(lab)));
    el("text", {x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle", "font-size": 11}, s, spec.xname);
    el("text", {x: 12, y: (T + H - B) / 2, "font-size": 11, transform: `rotate(-90 12 ${(T + H - B) / 2})`, "text-anchor": "middle"}, s, spec.yname);
    for (let t = 0; t <= 4; t++) {
      const v = lo + (hi - lo) * t / 4;
      el("rect", {x: W - R + 10, y: T + (4 - t) * 20, width: 14, height: 20, fill: shade(v)}, s);
      el("text", {x: W - R + 28, y: T + (4 - t) * 20 + 13, "font-size": 9}, s, fmt(v));
    }
    return s;
  }
  return {bars, lines, graph, heatmap};
})();
