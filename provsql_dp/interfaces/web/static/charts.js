// The explorer's charts, drawn by Vega-Lite (Vega for the policy graph) through vega-embed, which the
// server sends from the installed vl-convert-python at /lib/vega-bundle.js (no CDN: works offline).
// Charts.bars(el, spec), Charts.lines(el, spec), Charts.graph(el, spec), Charts.heatmap(el, spec)
// return the embed's promise. Under the page's Content-Security-Policy: expressions run in vega's
// interpreter (ast: true, never eval), and no <style> element is injected (defaultStyle: false,
// the tooltip's rules are in style.css). What a chart shows comes only from its spec: bin labels
// and axis domains of an analyst's chart come from the released answer (and the public domain the
// server sent), never from anything else.
"use strict";
const Charts = (() => {
  const COLORS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#9d755d"];
  const OPTIONS = {actions: false, ast: true, defaultStyle: false, renderer: "svg",
                   tooltip: {disableDefaultStyle: true, theme: "light"}};
  const CONFIG = {view: {stroke: null}, axis: {labelFontSize: 10, titleFontSize: 11},
                  title: {fontSize: 12, anchor: "start"}, legend: {labelFontSize: 10, titleFontSize: 10}};
  const fmt = v => Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-2 && v !== 0) ? v.toExponential(1) : +v.toPrecision(4) + "";

  function embed(host, spec, mode) {
    host.replaceChildren();
    const full = mode === "vega" ? spec : Object.assign({config: CONFIG}, spec);
    return vegaEmbed(host, full, Object.assign({mode: mode || "vega-lite"}, OPTIONS)).catch(e => {
      host.textContent = `(chart failed: ${e.message})`;
      console.error(e);
    });
  }

  // spec: {labels, series: [{name, values, intervals?, itext?, color?}], ylabel, title} — bars in
  // the labels' order; a series with intervals ([lo, hi] per bar, null: unbounded on that side, as
  // the engine released them) gets a rule over its interval on each bar (a one-sided "≥ lo" from lo
  // up to the bar's value), the interval's text (itext) in the tooltip.
  function bars(host, spec) {
    const end = (x, v) => (x === null || x === undefined ? v : x);
    const values = spec.series.flatMap((se, j) => se.values.map((v, i) => {
      const iv = se.intervals ? se.intervals[i] : null;
      return {label: String(spec.labels[i]), i, series: se.name, value: v,
              lo: iv ? end(iv[0], v) : v, hi: iv ? end(iv[1], v) : v,
              pm: iv ? (se.itext ? se.itext[i] : `[${fmt(end(iv[0], v))}, ${fmt(end(iv[1], v))}]`) : null, j};
    }));
    const k = spec.series.length, y = spec.ylabel || "value";
    const x = {field: "label", type: "nominal", sort: spec.labels.map(String), title: null,
               axis: {labelAngle: -45, labelLimit: 110, labelOverlap: true}};
    const color = k > 1
      ? {field: "series", type: "nominal", scale: {range: spec.series.map((se, j) => se.color || COLORS[j % COLORS.length])},
         legend: {orient: "top-right", title: null}}
      : {value: spec.series[0].color || COLORS[0]};
    const tooltip = [{field: "label", title: "bin"}, {field: "value", title: y, format: ".4~g"}];
    if (spec.series.some(se => se.intervals)) tooltip.push({field: "pm", title: spec.ititle || "interval"});
    const layers = [{name: "bars", mark: {type: "bar"},
      encoding: {x, y: {field: "value", type: "quantitative", title: y}, color, tooltip,
                 ...(k > 1 ? {xOffset: {field: "series", type: "nominal", sort: spec.series.map(se => se.name)}} : {})}}];
    if (spec.series.some(se => se.intervals)) layers.push({name: "interval", mark: {type: "rule", color: "#333"},
      transform: [{filter: "datum.pm !== null"}],
      encoding: {x, y: {field: "lo", type: "quantitative"}, y2: {field: "hi"},
                 ...(k > 1 ? {xOffset: {field: "series", type: "nominal", sort: spec.series.map(se => se.name)}} : {})}});
    return embed(host, {width: 480, height: 200, ...(spec.title ? {title: spec.title} : {}),
                        data: {values}, layer: layers});
  }

  // spec: {series: [{name, points: [{x, y, data}], dashed?}], xlabel, ylabel, logx, logy,
  // onclick(point, series)} — one line per series, a point per x; clicking a point calls onclick.
  function lines(host, spec) {
    const rows = [];
    spec.series.forEach((se, j) => se.points.forEach((p, i) => rows.push({series: se.name, j, i, x: p.x, y: p.y,
      dashed: !!se.dashed})));
    const xs = [...new Set(rows.map(r => r.x))].sort((a, b) => a - b);
    const names = spec.series.map(se => se.name);
    const x = {field: "x", type: "quantitative", title: spec.xlabel || "x",
               scale: {type: spec.logx ? "log" : "linear", nice: false}, axis: {values: xs, format: "~g"}};
    const y = {field: "y", type: "quantitative", title: spec.ylabel || "y", scale: {type: spec.logy ? "log" : "linear"}};
    const color = {field: "series", type: "nominal", sort: names, title: null,
                   scale: {domain: names, range: names.map((_, j) => COLORS[j % COLORS.length])}};
    const out = embed(host, {width: 400, height: 230, data: {values: rows}, layer: [
      {name: "line", mark: {type: "line", strokeWidth: 2},
       encoding: {x, y, color, detail: {field: "series"},
                  strokeDash: {field: "dashed", type: "nominal", scale: {domain: [false, true], range: [[1, 0], [4, 3]]}, legend: null}}},
      {name: "point", mark: {type: "point", filled: true, size: 70, opacity: 1, cursor: spec.onclick ? "pointer" : "default"},
       encoding: {x, y, color, tooltip: [{field: "series", title: "policy"}, {field: "x", title: "ε", format: "~g"},
                                          {field: "y", title: spec.ylabel || "y", format: ".4~g"}]}},
    ]});
    if (spec.onclick) out.then(r => r.view.addEventListener("click", (ev, item) => {
      const d = item && item.datum;
      if (!d || d.j === undefined || !item.mark || item.mark.marktype !== "symbol") return;
      const se = spec.series[d.j];
      spec.onclick(se.points[d.i], se);
    }));
    return out;
  }

  // spec: {nodes: [label], edges: [[i, j]]} — an arc diagram: values on a line, secret pairs as arcs
  // (a Vega spec: Vega-Lite has no arc between two points).
  function graph(host, spec) {
    const W = 520, base = 150, n = spec.nodes.length, dx = W / Math.max(n - 1, 1);
    const X = i => i * dx, every = Math.ceil(n / 20);
    const edges = spec.edges.map(([a, b]) => {
      const xa = X(Math.min(a, b)), xb = X(Math.max(a, b)), r = (xb - xa) / 2;
      return {a, b, path: `M ${xa} ${base} A ${r} ${Math.min(r, base - 10)} 0 0 1 ${xb} ${base}`};
    });
    const nodes = spec.nodes.map((label, i) => ({i, x: X(i), label: String(label), bottom: label === "⊥",
                                                 shown: i % every === 0 || label === "⊥"}));
    return embed(host, {
      $schema: "https://vega.github.io/schema/vega/v6.json", width: W, height: 210, padding: 10,
      data: [{name: "edges", values: edges}, {name: "nodes", values: nodes},
             {name: "shown", source: "nodes", transform: [{type: "filter", expr: "datum.shown"}]}],
      marks: [
        {type: "path", name: "edge", from: {data: "edges"},
         encode: {enter: {path: {field: "path"}, stroke: {value: "#4c78a8"}, strokeOpacity: {value: 0.45}}}},
        {type: "symbol", name: "node", from: {data: "nodes"},
         encode: {enter: {x: {field: "x"}, y: {value: base}, size: {value: 50},
                          fill: {signal: "datum.bottom ? '#e45756' : '#1f3b57'"},
                          tooltip: {field: "label"}}}},
        {type: "text", name: "node-label", from: {data: "shown"},
         encode: {enter: {x: {field: "x"}, y: {value: base + 10}, text: {field: "label"}, angle: {value: -45},
                          align: {value: "right"}, baseline: {value: "top"}, fontSize: {value: 9}}}},
        {type: "text", name: "graph-note",
         encode: {enter: {x: {value: 0}, y: {value: 208}, fontSize: {value: 10}, fill: {value: "#555"},
                          text: {value: `${n} values, ${edges.length} edges (secret pairs)`}}}},
      ]}, "vega");
  }

  // spec: {xlabels, ylabels, rows: [[y, x, value]], xname, yname, title} — a 2-D histogram whose
  // axes are the (public) labels in their order and whose colour scale spans the released values.
  function heatmap(host, spec) {
    const values = spec.rows.map(([yv, xv, v]) => ({x: String(xv), y: String(yv), value: v}));
    return embed(host, {width: 440, height: 200, ...(spec.title ? {title: spec.title} : {}), data: {values}, layer: [
      {name: "cell", mark: {type: "rect"},
       encoding: {x: {field: "x", type: "nominal", sort: spec.xlabels.map(String), title: spec.xname,
                      axis: {labelAngle: -45, labelOverlap: true}},
                  y: {field: "y", type: "nominal", sort: spec.ylabels.map(String), title: spec.yname},
                  color: {field: "value", type: "quantitative", title: "count", scale: {scheme: "blues"}},
                  tooltip: [{field: "y", title: spec.yname}, {field: "x", title: spec.xname},
                            {field: "value", title: "count", format: ".4~g"}]}}]});
  }
  return {bars, lines, graph, heatmap};
})();
